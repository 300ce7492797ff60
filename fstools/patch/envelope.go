package patch

import (
	"strings"
)

// parseEnvelope reads a "*** Begin Patch" … "*** End Patch" envelope whose
// "*** Begin Patch" line is lines[begin].
func parseEnvelope(lines []string, begin int) ([]FileChange, error) {
	var out []FileChange
	i := begin + 1
	for {
		if i >= len(lines) {
			return nil, lineErr(len(lines), "the patch ends without \"*** End Patch\"")
		}
		raw, _ := trimCR(lines[i])
		l := strings.TrimSpace(raw)
		switch {
		case l == "":
			i++
		case l == "*** End Patch":
			for k := i + 1; k < len(lines); k++ {
				if t := strings.TrimSpace(lines[k]); !closingLine(t) {
					return nil, lineErr(k+1, "text after \"*** End Patch\": %q", t)
				}
			}
			if len(out) == 0 {
				return nil, lineErr(i+1, "the patch changes no file")
			}
			return out, nil
		case strings.HasPrefix(l, "*** Add File:"):
			fc := FileChange{Op: OpAdd, Format: FormatEnvelope, Line: i + 1, NewPath: fieldPath(l, "*** Add File:")}
			if fc.NewPath == "" {
				return nil, lineErr(i+1, "\"*** Add File:\" needs a path")
			}
			h := Hunk{Header: "*** Add File: " + fc.NewPath, Line: i + 1}
			crlf := 0
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "***"); i++ {
				text, cr := trimCR(lines[i])
				if !strings.HasPrefix(text, "+") {
					return nil, lineErr(i+1, "every line of an added file must start with '+', got %q", text)
				}
				if cr {
					crlf++
				}
				h.Lines = append(h.Lines, Line{Kind: '+', Text: text[1:]})
			}
			if len(h.Lines) > 0 {
				h.NewStart, h.NewLines = 1, len(h.Lines)
				fc.Hunks = []Hunk{h}
			}
			fc.CRLF = crlf*2 > len(h.Lines)
			out = append(out, fc)
		case strings.HasPrefix(l, "*** Delete File:"):
			fc := FileChange{Op: OpDelete, Format: FormatEnvelope, Line: i + 1, OldPath: fieldPath(l, "*** Delete File:")}
			if fc.OldPath == "" {
				return nil, lineErr(i+1, "\"*** Delete File:\" needs a path")
			}
			out = append(out, fc)
			i++
		case strings.HasPrefix(l, "*** Update File:"):
			fc, next, err := parseEnvelopeUpdate(lines, i)
			if err != nil {
				return nil, err
			}
			out = append(out, fc)
			i = next
		default:
			return nil, lineErr(i+1, "expected \"*** Add File:\", \"*** Update File:\", \"*** Delete File:\" or \"*** End Patch\", got %q", raw)
		}
	}
}

func fieldPath(line, prefix string) string {
	return strings.TrimSpace(strings.TrimPrefix(line, prefix))
}

// parseEnvelopeUpdate reads "*** Update File: p", an optional "*** Move to: q"
// and the hunks after them.
func parseEnvelopeUpdate(lines []string, start int) (FileChange, int, error) {
	head, _ := trimCR(lines[start])
	fc := FileChange{Op: OpUpdate, Format: FormatEnvelope, Line: start + 1, OldPath: fieldPath(strings.TrimSpace(head), "*** Update File:")}
	if fc.OldPath == "" {
		return fc, 0, lineErr(start+1, "\"*** Update File:\" needs a path")
	}
	fc.NewPath = fc.OldPath
	i := start + 1
	if i < len(lines) {
		l, _ := trimCR(lines[i])
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "*** Move to:") {
			if fc.NewPath = fieldPath(t, "*** Move to:"); fc.NewPath == "" {
				return fc, 0, lineErr(i+1, "\"*** Move to:\" needs a path")
			}
			i++
		}
	}
	var (
		cur        *Hunk
		bare       int // trailing lines that were empty in the patch
		crlf, plus int
	)
	closeHunk := func() error {
		if cur == nil {
			return nil
		}
		cur.Lines = cur.Lines[:len(cur.Lines)-bare]
		bare = 0
		if len(cur.Lines) == 0 {
			return lineErr(cur.Line, "hunk %q has no lines", cur.Header)
		}
		for _, l := range cur.Lines {
			if l.Kind != ' ' {
				fc.Hunks = append(fc.Hunks, *cur)
				cur = nil
				return nil
			}
		}
		return lineErr(cur.Line, "hunk %q changes nothing: it has no '-' or '+' lines", cur.Header)
	}
	for ; i < len(lines); i++ {
		l, cr := trimCR(lines[i])
		if strings.HasPrefix(l, "***") {
			if strings.TrimSpace(l) != "*** End of File" {
				break
			}
			if cur == nil {
				return fc, 0, lineErr(i+1, "\"*** End of File\" must end a hunk")
			}
			cur.AtEOF = true
			if err := closeHunk(); err != nil {
				return fc, 0, err
			}
			continue
		}
		if strings.HasPrefix(l, "@@") {
			anchor := strings.TrimSpace(l[2:])
			if cur != nil && len(cur.Lines) == 0 {
				// Stacked anchors: "@@ class A" then "@@ def f".
				if anchor != "" {
					cur.Anchors = append(cur.Anchors, anchor)
				}
				continue
			}
			if err := closeHunk(); err != nil {
				return fc, 0, err
			}
			cur = &Hunk{Header: l, Line: i + 1}
			if anchor != "" {
				cur.Anchors = []string{anchor}
			}
			continue
		}
		if cur == nil { // the first hunk may omit its "@@"
			cur = &Hunk{Header: "@@", Line: i + 1}
		}
		if l == "" {
			cur.Lines = append(cur.Lines, Line{Kind: ' '})
			bare++
			continue
		}
		switch l[0] {
		case ' ', '-', '+':
		default:
			return fc, 0, lineErr(i+1, "hunk lines must start with ' ', '-' or '+', got %q (an anchor line needs \"@@ \" before it)", l)
		}
		bare = 0
		if l[0] == '+' {
			plus++
			if cr {
				crlf++
			}
		}
		cur.Lines = append(cur.Lines, Line{Kind: l[0], Text: l[1:]})
	}
	if err := closeHunk(); err != nil {
		return fc, 0, err
	}
	if len(fc.Hunks) == 0 && fc.NewPath == fc.OldPath {
		return fc, 0, lineErr(start+1, "\"*** Update File: %s\" has no hunks", fc.OldPath)
	}
	fc.CRLF = crlf*2 > plus
	return fc, i, nil
}

// closingLine reports a line allowed after "*** End Patch": blank, a
// markdown fence, or a heredoc terminator such as EOF.
func closingLine(t string) bool {
	if t == "" || strings.HasPrefix(t, "```") {
		return true
	}
	for _, r := range t {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
}
