package patch

import (
	"bytes"
	"fmt"
	"strings"
)

// Fuzz levels, the comparison a hunk needed to be placed.
const (
	FuzzNone     = 0 // lines matched exactly (line endings and a BOM aside)
	FuzzTrailing = 1 // trailing whitespace ignored
	FuzzSpace    = 2 // all whitespace runs ignored: leading and trailing removed, inner runs equal to one space
)

// Result is the outcome of Apply.
type Result struct {
	// Content is the new content; nil for a deletion.
	Content []byte
	// Hunks is the number of hunks applied; Added and Removed count lines.
	Hunks, Added, Removed int
	// Fuzz is the highest fuzz level any hunk needed (FuzzNone, FuzzTrailing
	// or FuzzSpace).
	Fuzz int
	// Offsets holds, per hunk, how many lines from the line its header named
	// (after earlier hunks' shifts) it was placed; 0 for envelope hunks.
	Offsets []int
}

// HunkError reports a hunk that could not be placed, with what a model needs
// to fix its patch: the hunk, the lines it expected and the closest text
// found in the file.
type HunkError struct {
	Path   string // the file's path as the patch names it
	Index  int    // 1-based index of the hunk in its file
	Header string // the hunk's header line
	// Line is the 1-based line of the file where the hunk was looked for.
	Line int
	// Reason says what went wrong.
	Reason string
	// Expected holds the first lines the hunk expected (context and removed
	// lines, or the anchor that was not found).
	Expected []string
	// ClosestLine is the 1-based line where the most similar text starts, 0
	// when none was found; Closest holds that text and Similarity its score
	// between 0 and 1.
	ClosestLine int
	Closest     []string
	Similarity  float64
}

const errorContextLines = 4

func (e *HunkError) Error() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s: hunk %d", e.Path, e.Index)
	if e.Header != "" {
		fmt.Fprintf(&b, " (%s)", e.Header)
	}
	fmt.Fprintf(&b, " does not apply: %s.", e.Reason)
	if len(e.Expected) > 0 {
		b.WriteString("\nexpected:")
		quoteLines(&b, 0, e.Expected)
	}
	if e.ClosestLine > 0 {
		fmt.Fprintf(&b, "\nclosest text in the file, at line %d (%.0f%% similar):", e.ClosestLine, 100*e.Similarity)
		quoteLines(&b, e.ClosestLine, e.Closest)
	} else {
		b.WriteString("\nno similar text was found in the file.")
	}
	return b.String()
}

// doc is a file's content split for patching.
type doc struct {
	bom     bool
	lines   []string  // without line endings
	eols    []eolKind // each line's own ending
	eol     string    // the ending for new lines
	finalNL bool      // the content ends with a line ending (true when empty)
	size    int       // bytes of the original content
	norm    [3][]string
	// compared counts line comparisons made placing hunks, so a hostile
	// patch (thousands of identical lines that never quite match) cannot
	// keep the server busy: past maxComparisons the search gives up.
	compared int
}

// maxComparisons bounds the line comparisons placing one file's hunks may
// make: far more than any real patch needs (a 1 MiB file with 1,000 hunks
// makes a few million), far less than a minute of work.
const maxComparisons = 200_000_000

const bomUTF8 = "\ufeff"

type eolKind uint8

const (
	eolNone eolKind = iota // a last line without a line ending
	eolLF
	eolCRLF
)

func newDoc(content []byte, crlfHint bool) *doc {
	s := string(content)
	d := &doc{finalNL: true, size: len(s)}
	if strings.HasPrefix(s, bomUTF8) {
		d.bom, s = true, s[len(bomUTF8):]
	}
	crlf, lf := 0, 0
	n := strings.Count(s, "\n") + 1
	d.lines, d.eols = make([]string, 0, n), make([]eolKind, 0, n)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			d.lines, d.eols = append(d.lines, s), append(d.eols, eolNone)
			d.finalNL = false
			break
		}
		line, eol := s[:i], eolLF
		if strings.HasSuffix(line, "\r") {
			line, eol = line[:len(line)-1], eolCRLF
			crlf++
		} else {
			lf++
		}
		d.lines, d.eols = append(d.lines, line), append(d.eols, eol)
		s = s[i+1:]
	}
	switch {
	case crlf > lf:
		d.eol = "\r\n"
	case lf > 0:
		d.eol = "\n"
	case crlfHint:
		d.eol = "\r\n"
	default:
		d.eol = "\n"
	}
	return d
}

// normalized returns the file's lines as compared at a fuzz level.
func (d *doc) normalized(fuzz int) []string {
	if fuzz == FuzzNone {
		return d.lines
	}
	if d.norm[fuzz] == nil {
		n := make([]string, len(d.lines))
		for i, l := range d.lines {
			n[i] = normalize(l, fuzz)
		}
		d.norm[fuzz] = n
	}
	return d.norm[fuzz]
}

func normalize(s string, fuzz int) string {
	switch fuzz {
	case FuzzTrailing:
		return strings.TrimRight(s, " \t\r\f\v")
	case FuzzSpace:
		return strings.Join(strings.Fields(s), " ")
	}
	return s
}

// placement is where one hunk goes, in the original's line numbers.
type placement struct {
	start  int // first original line replaced
	hunk   *Hunk
	oldN   int
	offset int
	fuzz   int
}

// Apply applies one FileChange to original and returns the new content.
// For OpAdd the original must be empty (nil); for OpDelete the hunks, if
// any, must match and remove the whole content, and Content is nil; an
// OpUpdate without hunks (a pure rename or mode change) returns original
// unchanged. Errors placing a hunk are *HunkError.
func Apply(original []byte, fc FileChange) (Result, error) {
	path := fc.OldPath // the file being read, for messages
	if path == "" {
		path = fc.NewPath
	}
	switch fc.Op {
	case OpAdd:
		if len(original) > 0 {
			return Result{}, fmt.Errorf("%s: cannot add the file: it already has content", path)
		}
	case OpUpdate, OpDelete:
	default:
		return Result{}, fmt.Errorf("%s: unknown operation %v", path, fc.Op)
	}
	if len(fc.Hunks) == 0 {
		if fc.Op == OpUpdate {
			return Result{Content: original}, nil
		}
		return Result{}, nil
	}
	d := newDoc(original, fc.CRLF)
	places, err := place(d, fc, path)
	if err != nil {
		return Result{}, err
	}
	res := Result{Hunks: len(places), Offsets: make([]int, len(places))}
	for i, p := range places {
		res.Offsets[i] = p.offset
		res.Fuzz = max(res.Fuzz, p.fuzz)
		for _, l := range p.hunk.Lines {
			switch l.Kind {
			case '+':
				res.Added++
			case '-':
				res.Removed++
			}
		}
	}
	content := render(d, places)
	if fc.Op == OpDelete {
		if len(content) > 0 {
			return Result{}, fmt.Errorf("%s: the deletion's hunks do not cover the whole file: %d bytes would remain", path, len(content))
		}
		return res, nil
	}
	if content == nil {
		content = []byte{}
	}
	res.Content = content
	return res, nil
}

// hunkSides returns a hunk's old side (context and removed lines) and new
// side (context and added lines), with a leading BOM dropped from patch lines
// when the file keeps its own.
func hunkSides(h *Hunk, bom bool) (oldT, newT []string) {
	for _, l := range h.Lines {
		t := l.Text
		if bom {
			t = strings.TrimPrefix(t, bomUTF8)
		}
		if l.Kind != '+' {
			oldT = append(oldT, t)
		}
		if l.Kind != '-' {
			newT = append(newT, t)
		}
	}
	return oldT, newT
}

// place finds where every hunk goes.
func place(d *doc, fc FileChange, path string) ([]placement, error) {
	n := len(d.lines)
	places := make([]placement, 0, len(fc.Hunks))
	lo := 0         // hunks may not start before the end of the previous one
	lastOffset := 0 // unified: the previous hunk's offset carries over
	prevStart := -1
	for hi := range fc.Hunks {
		h := &fc.Hunks[hi]
		oldT, _ := hunkSides(h, d.bom)
		m := len(oldT)
		herr := func(expectAt int, reason string, expected []string) *HunkError {
			e := &HunkError{Path: path, Index: hi + 1, Header: h.Header, Line: expectAt + 1, Reason: reason}
			e.Expected = expected[:min(len(expected), errorContextLines)]
			if start, score := closest(d, expected, expectAt); start >= 0 {
				e.ClosestLine, e.Similarity = start+1, score
				e.Closest = d.lines[start:min(n, start+min(len(expected), errorContextLines))]
			}
			return e
		}
		var expect int
		if fc.Format == FormatEnvelope {
			for _, a := range h.Anchors {
				at, _ := search(d, []string{a}, lo, lo, false)
				if at < 0 {
					return nil, herr(lo, fmt.Sprintf("its anchor line %q was not found%s", a, afterLine(lo)), []string{a})
				}
				lo = at + 1
			}
			expect = lo
			if m == 0 && len(h.Anchors) == 0 {
				expect = n // a pure addition without an anchor goes at the end
			}
		} else {
			expect = h.OldStart - 1
			if h.OldLines == 0 {
				expect = h.OldStart // insert after line OldStart
			}
			if hi > 0 {
				prev := &fc.Hunks[hi-1]
				prevEnd := prevStart + prev.OldLines
				if expect < prevStart {
					return nil, fmt.Errorf("%s: hunk %d (%s) is out of order: it starts before hunk %d (%s)", path, hi+1, h.Header, hi, prev.Header)
				}
				if expect < prevEnd {
					return nil, fmt.Errorf("%s: hunk %d (%s) overlaps hunk %d (%s)", path, hi+1, h.Header, hi, prev.Header)
				}
			}
			prevStart = expect
			expect += lastOffset
		}
		if m == 0 {
			at := min(max(expect, lo), n)
			if h.AtEOF {
				at = n
			}
			if expect > n && fc.Format == FormatUnified {
				return nil, herr(n, fmt.Sprintf("it inserts after line %d but the file has %d lines", h.OldStart, n), nil)
			}
			places = append(places, placement{start: at, hunk: h, offset: at - expect})
			lo = at
			continue
		}
		at, fuzz := search(d, oldT, expect, lo, h.AtEOF)
		if at < 0 && d.compared > maxComparisons {
			return nil, herr(expect, fmt.Sprintf("searching for its %d lines took over %d line comparisons; give the hunk more distinctive context or correct line numbers", m, maxComparisons), nil)
		}
		if at < 0 {
			reason := fmt.Sprintf("its %d context and removed lines were not found", m)
			if fc.Format == FormatEnvelope {
				reason += afterLine(lo)
			} else {
				reason += fmt.Sprintf(" near line %d", expect+1)
			}
			if h.AtEOF {
				reason += " at the end of the file"
			}
			if elsewhere, _ := search(d, oldT, expect, 0, false); elsewhere >= 0 && elsewhere < lo {
				reason += fmt.Sprintf("; they match at line %d, before the end of the previous hunk (line %d): hunks overlap or are out of order", elsewhere+1, lo)
			}
			return nil, herr(expect, reason, oldT)
		}
		off := 0
		if fc.Format == FormatUnified {
			off = at - expect
			lastOffset += off
		}
		places = append(places, placement{start: at, hunk: h, oldN: m, offset: off, fuzz: fuzz})
		lo = at + m
	}
	return places, nil
}

// search finds want in the file at or after line lo, nearest to line expect
// first, trying each fuzz level in turn. With atEOF only the position ending
// at the file's end is tried. It returns -1 when nothing matches.
func search(d *doc, want []string, expect, lo int, atEOF bool) (int, int) {
	n, m := len(d.lines), len(want)
	hiStart := n - m
	if hiStart < lo {
		return -1, 0
	}
	for fuzz := FuzzNone; fuzz <= FuzzSpace; fuzz++ {
		lines := d.normalized(fuzz)
		w := want
		if fuzz != FuzzNone {
			w = make([]string, m)
			for i, s := range want {
				w[i] = normalize(s, fuzz)
			}
		}
		match := func(s int) bool {
			for i := range w {
				if lines[s+i] != w[i] {
					d.compared += i + 1
					return false
				}
			}
			d.compared += len(w)
			return true
		}
		if atEOF {
			if match(hiStart) {
				return hiStart, fuzz
			}
			continue
		}
		e := min(max(expect, lo), hiStart)
		for dist := 0; ; dist++ {
			up, down := e-dist, e+dist
			if (up < lo && down > hiStart) || d.compared > maxComparisons {
				break
			}
			if down <= hiStart && match(down) {
				return down, fuzz
			}
			if dist > 0 && up >= lo && match(up) {
				return up, fuzz
			}
		}
	}
	return -1, 0
}

// render builds the new content from the original and the placements.
func render(d *doc, places []placement) []byte {
	var b bytes.Buffer
	b.Grow(d.size + d.size/8 + 64)
	finalNL := d.finalNL
	cur := 0
	eolOf := func(i int) string {
		switch d.eols[i] {
		case eolLF:
			return "\n"
		case eolCRLF:
			return "\r\n"
		}
		return d.eol
	}
	for _, p := range places {
		for ; cur < p.start; cur++ {
			b.WriteString(d.lines[cur])
			b.WriteString(eolOf(cur))
		}
		k := p.start
		for _, l := range p.hunk.Lines {
			switch l.Kind {
			case ' ':
				b.WriteString(d.lines[k]) // keep the file's own text under fuzz
				b.WriteString(eolOf(k))
				k++
			case '-':
				k++
			case '+':
				t := l.Text
				if d.bom {
					t = strings.TrimPrefix(t, bomUTF8)
				}
				b.WriteString(t)
				b.WriteString(d.eol)
			}
		}
		cur = k
		if k == len(d.lines) {
			// The hunk reaches the end: its "\ No newline" markers decide.
			oldMark, newMark := lastMarks(p.hunk.Lines)
			if oldMark || newMark {
				finalNL = !newMark
			}
		}
	}
	for ; cur < len(d.lines); cur++ {
		b.WriteString(d.lines[cur])
		b.WriteString(eolOf(cur))
	}
	out := b.Bytes()
	if len(out) == 0 {
		return nil
	}
	if !finalNL {
		out = bytes.TrimSuffix(out, []byte("\n"))
		out = bytes.TrimSuffix(out, []byte("\r"))
	}
	if d.bom {
		out = append([]byte(bomUTF8), out...)
	}
	return out
}

// lastMarks reports the NoNewline marks of the last old-side and the last
// new-side line of a hunk.
func lastMarks(ls []Line) (oldMark, newMark bool) {
	oldDone, newDone := false, false
	for k := len(ls) - 1; k >= 0 && !(oldDone && newDone); k-- {
		l := ls[k]
		if !oldDone && l.Kind != '+' {
			oldMark, oldDone = l.NoNewline, true
		}
		if !newDone && l.Kind != '-' {
			newMark, newDone = l.NoNewline, true
		}
	}
	return oldMark, newMark
}

// afterLine words where an envelope hunk was searched from.
func afterLine(lo int) string {
	if lo == 0 {
		return ""
	}
	return fmt.Sprintf(" after line %d", lo)
}
