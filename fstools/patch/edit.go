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
	body := string(original)
	bom := strings.HasPrefix(body, bomUTF8)
	if bom {
		body = body[len(bomUTF8):]
		oldText = strings.TrimPrefix(oldText, bomUTF8)
		newText = strings.TrimPrefix(newText, bomUTF8)
		if oldText == "" {
			return nil, 0, errors.New("old_text is only a byte order mark")
		}
	}
	fileCRLF := strings.Contains(body, "\r\n")
	var (
		out   string
		count int
		err   error
	)
	switch {
	case strings.Contains(body, oldText):
		out, count, err = replaceExact(body, oldText, newText, replaceAll)
	case fileCRLF && !strings.Contains(oldText, "\r") && strings.Contains(oldText, "\n"):
		// An LF edit of a CRLF file: match on LF text, write CRLF.
		if !strings.Contains(newText, "\r") {
			newText = strings.ReplaceAll(newText, "\n", "\r\n")
		}
		out, count, err = replaceNormalized(body, oldText, newText, replaceAll)
	case strings.Contains(oldText, "\r\n") && !fileCRLF:
		// A CRLF edit of an LF file.
		lfOld := strings.ReplaceAll(oldText, "\r\n", "\n")
		lfNew := strings.ReplaceAll(newText, "\r\n", "\n")
		out, count, err = replaceExact(body, lfOld, lfNew, replaceAll)
	default:
		out, count, err = replaceExact(body, oldText, newText, replaceAll)
	}
	if err != nil {
		return nil, 0, err
	}
	if bom {
		out = bomUTF8 + out
	}
	return []byte(out), count, nil
}

// replaceExact replaces oldText in body, refusing zero occurrences and, unless
// all, several.
func replaceExact(body, oldText, newText string, all bool) (string, int, error) {
	idx := indexAll(body, oldText)
	if err := checkCount(body, oldText, idx, all); err != nil {
		return "", 0, err
	}
	if !all {
		idx = idx[:1]
	}
	var b strings.Builder
	b.Grow(len(body) + len(idx)*(len(newText)-len(oldText)))
	prev := 0
	for _, i := range idx {
		b.WriteString(body[prev:i])
		b.WriteString(newText)
		prev = i + len(oldText)
	}
	b.WriteString(body[prev:])
	return b.String(), len(idx), nil
}

// replaceNormalized replaces LF oldText in a body whose CRLFs are read as LF,
// keeping every byte outside the matches as it was.
func replaceNormalized(body, oldText, newText string, all bool) (string, int, error) {
	norm := strings.ReplaceAll(body, "\r\n", "\n")
	idx := indexAll(norm, oldText)
	if err := checkCount(norm, oldText, idx, all); err != nil {
		return "", 0, err
	}
	if !all {
		idx = idx[:1]
	}
	bounds := make([]int, 0, 2*len(idx))
	for _, i := range idx {
		bounds = append(bounds, i, i+len(oldText))
	}
	orig := mapOffsets(body, bounds)
	var b strings.Builder
	prev := 0
	for k := 0; k < len(orig); k += 2 {
		b.WriteString(body[prev:orig[k]])
		b.WriteString(newText)
		prev = orig[k+1]
	}
	b.WriteString(body[prev:])
	return b.String(), len(idx), nil
}

// mapOffsets maps ascending offsets in body-with-CRLF-as-LF back to body.
func mapOffsets(body string, offs []int) []int {
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
func indexAll(s, sub string) []int {
	var idx []int
	for off := 0; ; {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return idx
		}
		idx = append(idx, off+i)
		off += i + len(sub)
	}
}

func checkCount(body, oldText string, idx []int, all bool) error {
	switch {
	case len(idx) == 0:
		var b bytes.Buffer
		b.WriteString("old_text was not found in the file (0 occurrences)")
		want := strings.Split(strings.TrimSuffix(strings.ReplaceAll(oldText, "\r\n", "\n"), "\n"), "\n")
		d := newDoc([]byte(body), false)
		if start, sim := closest(d, want, 0); start >= 0 {
			fmt.Fprintf(&b, "; the most similar text is at line %d (%.0f%% similar):", start+1, 100*sim)
			quoteLines(&b, start+1, d.lines[start:min(len(d.lines), start+min(len(want), errorContextLines))])
		}
		return errors.New(b.String())
	case len(idx) > 1 && !all:
		lines := make([]string, 0, maxListedOccurrences)
		for _, i := range idx[:min(len(idx), maxListedOccurrences)] {
			lines = append(lines, fmt.Sprint(1+strings.Count(body[:i], "\n")))
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
