package patch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testDiff is a small LCS line diff that writes a unified diff (3 lines of
// context, counts of 1 omitted, "\ No newline at end of file" markers) from
// a to b, for round-trip tests independent of external tools.
func testDiff(a, b string) string {
	al, aNoNL := splitForDiff(a)
	bl, bNoNL := splitForDiff(b)
	key := func(lines []string, i int, noNL bool) string {
		if noNL && i == len(lines)-1 {
			return lines[i] + "\x00" // the last line without newline differs
		}
		return lines[i]
	}
	n, m := len(al), len(bl)
	// lcs[i][j] is the LCS length of al[i:] and bl[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if key(al, i, aNoNL) == key(bl, j, bNoNL) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind   byte
		ai, bi int // line indexes; ai for ' ' and '-', bi for ' ' and '+'
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && key(al, i, aNoNL) == key(bl, j, bNoNL):
			ops = append(ops, op{' ', i, j})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', i, j})
			j++
		default:
			ops = append(ops, op{'-', i, j})
			i++
		}
	}
	const ctx = 3
	var out strings.Builder
	out.WriteString("--- a/f\n+++ b/f\n")
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start := max(0, k-ctx)
		end := k // exclusive; extend while changes are within 2*ctx
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		oldN, newN := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				oldN++
			}
			if o.kind != '-' {
				newN++
			}
		}
		oldS, newS := ops[start].ai+1, ops[start].bi+1
		if oldN == 0 {
			oldS--
		}
		if newN == 0 {
			newS--
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oldS, oldN), hunkRange(newS, newN))
		for _, o := range ops[start:end] {
			switch o.kind {
			case ' ', '-':
				out.WriteString(string(o.kind) + al[o.ai] + "\n")
				if aNoNL && o.ai == n-1 {
					out.WriteString("\\ No newline at end of file\n")
				}
			case '+':
				out.WriteString("+" + bl[o.bi] + "\n")
				if bNoNL && o.bi == m-1 {
					out.WriteString("\\ No newline at end of file\n")
				}
			}
		}
		k = end
	}
	return out.String()
}

func hunkRange(start, count int) string {
	if count == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

func splitForDiff(s string) (lines []string, noNL bool) {
	if s == "" {
		return nil, false
	}
	noNL = !strings.HasSuffix(s, "\n")
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), noNL
}

// fuzzText makes a fuzz input a file in one line-ending style.
func fuzzText(s string, crlfStyle, bom bool, maxLines int) string {
	s = strings.NewReplacer("\r", "", "\x00", "", bomUTF8, "").Replace(s)
	if strings.Count(s, "\n") > maxLines {
		parts := strings.SplitAfter(s, "\n")
		s = strings.Join(parts[:maxLines], "")
	}
	if crlfStyle {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	if bom && s != "" {
		s = bomUTF8 + s
	}
	return s
}

func FuzzApply(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", false, false)
	f.Add("a\nb", "a\nb\n", false, false)
	f.Add("x\n", "", true, false)
	f.Add("", "new\nfile", true, true)
	f.Add(numbered(30, "k"), strings.Replace(numbered(30, "k"), "line 4\n", "", 1)+"tail\n", false, true)
	f.Fuzz(func(t *testing.T, a, b string, crlfStyle, bom bool) {
		a, b = fuzzText(a, crlfStyle, bom, 200), fuzzText(b, crlfStyle, bom, 200)
		if a == b {
			return
		}
		p := testDiff(a, b)
		fcs, err := Parse(p)
		if err != nil {
			t.Fatalf("Parse: %v\npatch:\n%s", err, p)
		}
		if len(fcs) != 1 {
			t.Fatalf("%d file changes", len(fcs))
		}
		res, err := Apply([]byte(a), fcs[0])
		if err != nil {
			t.Fatalf("Apply: %v\npatch:\n%s", err, p)
		}
		if string(res.Content) != b {
			t.Fatalf("round trip\n  a %q\n  b %q\ngot %q\npatch:\n%s", a, b, res.Content, p)
		}
		if res.Fuzz != 0 {
			t.Fatalf("fuzz %d on an exact patch", res.Fuzz)
		}
	})
}

func TestDiffRoundTripFixed(t *testing.T) {
	// The helper itself must produce what GNU diff accepts: check it against
	// the test's own Apply and, where the texts allow, against diff -u output.
	for _, c := range [][2]string{
		{"a\nb\nc\n", "a\nB\nc\n"},
		{numbered(50, "n"), strings.Replace(strings.Replace(numbered(50, "n"), "line 3\n", "", 1), "line 45\n", "x\ny\n", 1)},
		{"a\nb", "a\nb\nc"},
		{"", "x\n"},
		{"x\ny\n", ""},
	} {
		for _, p := range []string{testDiff(c[0], c[1]), udiff(t, c[0], c[1])} {
			res, err := Apply([]byte(c[0]), parseOne(t, p))
			if err != nil || string(res.Content) != c[1] {
				t.Errorf("%q -> %q: got %q, %v\n%s", c[0], c[1], res.Content, err, p)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")
	f.Add("diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to y\n")
	f.Add("*** Begin Patch\n*** Update File: f\n@@ a\n-b\n+c\n*** End of File\n*** End Patch\n")
	f.Add("--- a/f\r\n+++ b/f\r\n@@ -1,2 +1 @@\r\n-a\r\n-b\r\n\\ No newline at end of file\r\n+c\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		fcs, err := Parse(text)
		if err != nil {
			return
		}
		if len(fcs) == 0 {
			t.Fatal("no changes and no error")
		}
		for _, fc := range fcs {
			switch fc.Op {
			case OpAdd:
				if fc.OldPath != "" || fc.NewPath == "" {
					t.Fatalf("add with paths %q %q", fc.OldPath, fc.NewPath)
				}
			case OpDelete:
				if fc.OldPath == "" || fc.NewPath != "" {
					t.Fatalf("delete with paths %q %q", fc.OldPath, fc.NewPath)
				}
			case OpUpdate:
				if fc.OldPath == "" || fc.NewPath == "" {
					t.Fatalf("update with paths %q %q", fc.OldPath, fc.NewPath)
				}
			default:
				t.Fatalf("op %v", fc.Op)
			}
			for _, p := range []string{fc.OldPath, fc.NewPath} {
				if p != "" && checkPath(p) != nil {
					t.Fatalf("unsafe path %q", p)
				}
			}
			for _, h := range fc.Hunks {
				for _, l := range h.Lines {
					if l.Kind != ' ' && l.Kind != '-' && l.Kind != '+' {
						t.Fatalf("line kind %q", l.Kind)
					}
				}
			}
			// Applying to anything must not panic.
			orig := []byte(text)
			if fc.Op == OpAdd {
				orig = nil
			}
			Apply(orig, fc)
		}
		roundTrip(t, fcs)
	})
}

// roundTrip: unified file changes written back as a git diff parse into
// the same changes (envelope changes have no line numbers to write back
// and are checked by the envelope tests).
func roundTrip(t *testing.T, fcs []FileChange) {
	var uni []FileChange
	for _, fc := range fcs {
		if fc.Format != FormatUnified {
			return
		}
		for _, h := range fc.Hunks {
			for _, l := range h.Lines {
				if strings.ContainsRune(l.Text, '\r') {
					return // line endings are the transport's; not a property of the text
				}
			}
		}
		uni = append(uni, fc)
	}
	text := formatGit(uni)
	again, err := Parse(text)
	if err != nil {
		t.Fatalf("a parsed patch written back does not parse: %v\n%s", err, text)
	}
	if len(again) != len(uni) {
		t.Fatalf("%d changes, then %d\n%s", len(uni), len(again), text)
	}
	for i := range uni {
		a, b := uni[i], again[i]
		if a.Op != b.Op || a.OldPath != b.OldPath || a.NewPath != b.NewPath || a.OldMode != b.OldMode || a.NewMode != b.NewMode || len(a.Hunks) != len(b.Hunks) {
			t.Fatalf("change %d: %+v, then %+v\n%s", i, a, b, text)
		}
		for k := range a.Hunks {
			x, y := a.Hunks[k], b.Hunks[k]
			if x.OldStart != y.OldStart || x.OldLines != y.OldLines || x.NewStart != y.NewStart || x.NewLines != y.NewLines || x.AtEOF != y.AtEOF || !slices.Equal(x.Lines, y.Lines) {
				t.Fatalf("change %d hunk %d: %+v, then %+v\n%s", i, k, x, y, text)
			}
		}
	}
}

// formatGit writes file changes as `git diff` would.
func formatGit(fcs []FileChange) string {
	var b strings.Builder
	q := strconv.Quote
	for _, fc := range fcs {
		oldP, newP := fc.OldPath, fc.NewPath
		if oldP == "" {
			oldP = newP
		}
		if newP == "" {
			newP = oldP
		}
		fmt.Fprintf(&b, "diff --git %s %s\n", q("a/"+oldP), q("b/"+newP))
		switch {
		case fc.Op == OpAdd && fc.NewMode != 0:
			fmt.Fprintf(&b, "new file mode %o\n", fc.NewMode)
		case fc.Op == OpDelete && fc.OldMode != 0:
			fmt.Fprintf(&b, "deleted file mode %o\n", fc.OldMode)
		case fc.Op == OpUpdate && fc.OldMode != fc.NewMode:
			if fc.OldMode != 0 {
				fmt.Fprintf(&b, "old mode %o\n", fc.OldMode)
			}
			if fc.NewMode != 0 {
				fmt.Fprintf(&b, "new mode %o\n", fc.NewMode)
			}
		case fc.Op == OpUpdate && fc.OldMode != 0:
			fmt.Fprintf(&b, "index 0000000..1111111 %o\n", fc.OldMode)
		}
		if fc.IsRename() {
			fmt.Fprintf(&b, "rename from %s\nrename to %s\n", q(fc.OldPath), q(fc.NewPath))
		}
		from, to := q("a/"+oldP), q("b/"+newP)
		if fc.Op == OpAdd {
			from = devNull
		}
		if fc.Op == OpDelete {
			to = devNull
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		for _, h := range fc.Hunks {
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
			for _, l := range h.Lines {
				fmt.Fprintf(&b, "%c%s\n", l.Kind, l.Text)
				if l.NoNewline {
					b.WriteString("\\ No newline at end of file\n")
				}
			}
		}
	}
	return b.String()
}
