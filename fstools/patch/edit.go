package patch

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// maxListedOccurrences is how many line numbers an "occurs N times" error lists.
const maxListedOccurrences = 5

// ApplyEdit replaces oldText with newText in original and returns the new
// content and the number of replacements. oldText must occur exactly once
// unless replaceAll. When the file uses CRLF and oldText does not, the match
// is made on LF-normalised text and newText is written with CRLF (and the
// reverse for an LF file and CRLF texts). A UTF-8 BOM is kept. An empty
// oldText creates content (newText) only when original is nil, the caller's
// "missing file" case; otherwise it is an error.
func ApplyEdit(original []byte, oldText, newText string, replaceAll bool) ([]byte, int, error) {
	if oldText == "" {
		if original == nil {
			return []byte(newText), 1, nil
		}
		return nil, 0, errors.New("old_text is empty: an empty old_text only creates a file that does not exist yet")
	}
	body := original
	bom := bytes.HasPrefix(body, []byte(bomUTF8))
	if bom {
		body = body[len(bomUTF8):]
		oldText = strings.TrimPrefix(oldText, bomUTF8)
		newText = strings.TrimPrefix(newText, bomUTF8)
		if oldText == "" {
			return nil, 0, errors.New("old_text is only a byte order mark")
		}
	}
	fileCRLF := bytes.Contains(body, []byte("\r\n"))
	var (
		out   []byte
		count int
		err   error
	)
	prefix := ""
	if bom {
		prefix = bomUTF8
	}
	switch {
	case bytes.Contains(body, []byte(oldText)):
		out, count, err = replaceExact(prefix, body, oldText, newText, replaceAll)
	case fileCRLF && !strings.Contains(oldText, "\r") && strings.Contains(oldText, "\n"):
		// An LF edit of a CRLF file: match on LF text, write CRLF.
		if !strings.Contains(newText, "\r") {
			newText = strings.ReplaceAll(newText, "\n", "\r\n")
		}
		out, count, err = replaceNormalized(prefix, body, oldText, newText, replaceAll)
	case strings.Contains(oldText, "\r\n") && !fileCRLF:
		// A CRLF edit of an LF file.
		lfOld := strings.ReplaceAll(oldText, "\r\n", "\n")
		lfNew := strings.ReplaceAll(newText, "\r\n", "\n")
		out, count, err = replaceExact(prefix, body, lfOld, lfNew, replaceAll)
	default:
		out, count, err = replaceExact(prefix, body, oldText, newText, replaceAll)
	}
	if err != nil {
		return nil, 0, err
	}
	return out, count, nil
}

// replaceExact replaces oldText in body, refusing zero occurrences and, unless
// all, several; the result starts with prefix.
func replaceExact(prefix string, body []byte, oldText, newText string, all bool) ([]byte, int, error) {
	idx := indexAll(body, oldText)
	if err := checkCount(body, oldText, idx, all); err != nil {
		return nil, 0, err
	}
	if !all {
		idx = idx[:1]
	}
	spans := make([]int, 0, 2*len(idx))
	for _, i := range idx {
		spans = append(spans, i, i+len(oldText))
	}
	return splice(prefix, body, spans, newText), len(idx), nil
}

// replaceNormalized replaces LF oldText in a body whose CRLFs are read as LF,
// keeping every byte outside the matches as it was.
func replaceNormalized(prefix string, body []byte, oldText, newText string, all bool) ([]byte, int, error) {
	norm := bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	idx := indexAll(norm, oldText)
	if err := checkCount(norm, oldText, idx, all); err != nil {
		return nil, 0, err
	}
	if !all {
		idx = idx[:1]
	}
	spans := make([]int, 0, 2*len(idx))
	for _, i := range idx {
		spans = append(spans, i, i+len(oldText))
	}
	return splice(prefix, body, mapOffsets(body, spans), newText), len(idx), nil
}

// splice returns prefix + body with each [start, end) span replaced by text.
func splice(prefix string, body []byte, spans []int, text string) []byte {
	size := len(prefix) + len(body)
	for k := 0; k < len(spans); k += 2 {
		size += len(text) - (spans[k+1] - spans[k])
	}
	out := make([]byte, 0, size)
	out = append(out, prefix...)
	prev := 0
	for k := 0; k < len(spans); k += 2 {
		out = append(out, body[prev:spans[k]]...)
		out = append(out, text...)
		prev = spans[k+1]
	}
	return append(out, body[prev:]...)
}

// mapOffsets maps ascending offsets in body-with-CRLF-as-LF back to body.
func mapOffsets(body []byte, offs []int) []int {
	res := make([]int, len(offs))
	j, bi := 0, 0
	for k := 0; k < len(offs); {
		if j == offs[k] {
			res[k] = bi
			k++
			continue
		}
		if body[bi] == '\r' && bi+1 < len(body) && body[bi+1] == '\n' {
			bi++ // this CR is not in the normalised text
			continue
		}
		bi++
		j++
	}
	return res
}

// indexAll returns the offsets of the non-overlapping occurrences of sub.
func indexAll(s []byte, sub string) []int {
	var idx []int
	b := []byte(sub)
	for off := 0; ; {
		i := bytes.Index(s[off:], b)
		if i < 0 {
			return idx
		}
		idx = append(idx, off+i)
		off += i + len(sub)
	}
}

func checkCount(body []byte, oldText string, idx []int, all bool) error {
	switch {
	case len(idx) == 0:
		var b bytes.Buffer
		b.WriteString("old_text was not found in the file (0 occurrences)")
		want := strings.Split(strings.TrimSuffix(strings.ReplaceAll(oldText, "\r\n", "\n"), "\n"), "\n")
		d := newDoc(body, false)
		if start, sim := closest(d, want, 0); start >= 0 {
			fmt.Fprintf(&b, "; the most similar text is at line %d (%.0f%% similar):", start+1, 100*sim)
			quoteLines(&b, start+1, d.lines[start:min(len(d.lines), start+min(len(want), errorContextLines))])
		}
		return errors.New(b.String())
	case len(idx) > 1 && !all:
		lines := make([]string, 0, maxListedOccurrences)
		for _, i := range idx[:min(len(idx), maxListedOccurrences)] {
			lines = append(lines, fmt.Sprint(1+bytes.Count(body[:i], []byte("\n"))))
		}
		more := ""
		if len(idx) > maxListedOccurrences {
			more = ", …"
		}
		return fmt.Errorf("old_text occurs %d times (at lines %s%s); include more surrounding text to make it unique, or set replace_all",
			len(idx), strings.Join(lines, ", "), more)
	}
	return nil
}
