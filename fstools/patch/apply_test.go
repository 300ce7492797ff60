package patch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// udiff runs `diff -u` over two contents, labelled a/f and b/f.
func udiff(tb testing.TB, before, after string, extra ...string) string {
	tb.Helper()
	dir := tb.TempDir()
	os.WriteFile(filepath.Join(dir, "old"), []byte(before), 0o644)
	os.WriteFile(filepath.Join(dir, "new"), []byte(after), 0o644)
	args := append([]string{"-u", "--label", "a/f", "--label", "b/f"}, extra...)
	return run(tb, dir, "diff", append(args, "old", "new")...)
}

// parseOne parses a patch that must change exactly one file.
func parseOne(tb testing.TB, text string) FileChange {
	tb.Helper()
	fcs, err := Parse(text)
	if err != nil {
		tb.Fatalf("Parse: %v\n%s", err, text)
	}
	if len(fcs) != 1 {
		tb.Fatalf("want 1 file change, got %d", len(fcs))
	}
	return fcs[0]
}

func mustApply(tb testing.TB, original string, fc FileChange) Result {
	tb.Helper()
	res, err := Apply([]byte(original), fc)
	if err != nil {
		tb.Fatalf("Apply: %v", err)
	}
	return res
}

func TestApplyOffset(t *testing.T) {
	before := numbered(60, "o")
	after := strings.Replace(strings.Replace(before, "line 20\n", "line 20 changed\n", 1), "line 40\n", "line 40 changed\n", 1)
	fc := parseOne(t, udiff(t, before, after))
	// The file the patch meets has 5 lines more above the first hunk.
	moved := "extra 1\nextra 2\nextra 3\nextra 4\nextra 5\n" + before
	res := mustApply(t, moved, fc)
	if want := "extra 1\nextra 2\nextra 3\nextra 4\nextra 5\n" + after; string(res.Content) != want {
		t.Fatalf("content:\n%s", res.Content)
	}
	if len(res.Offsets) != 2 || res.Offsets[0] != 5 || res.Offsets[1] != 0 {
		// The second hunk follows the first one's offset, so it is 0 beyond it.
		t.Errorf("offsets %v, want [5 0]", res.Offsets)
	}
	if res.Fuzz != 0 || res.Hunks != 2 || res.Added != 2 || res.Removed != 2 {
		t.Errorf("stats %+v", res)
	}
	// Lines removed above: a negative offset.
	res = mustApply(t, strings.Replace(before, "xxx line 3\n", "", 1), fc)
	if res.Offsets[0] != -1 {
		t.Errorf("offsets %v, want [-1 0]", res.Offsets)
	}
}

func TestApplyFuzz(t *testing.T) {
	before := "func f() {\n\tif x {\n\t\treturn 1\n\t}\n\treturn 2\n}\n"
	after := "func f() {\n\tif x {\n\t\treturn 10\n\t}\n\treturn 2\n}\n"
	fc := parseOne(t, udiff(t, before, after))

	trailing := strings.Replace(before, "\tif x {\n", "\tif x {  \n", 1)
	res := mustApply(t, trailing, fc)
	if res.Fuzz != FuzzTrailing {
		t.Errorf("fuzz %d, want %d", res.Fuzz, FuzzTrailing)
	}
	// Context keeps the file's own text; only the changed line is new.
	if want := strings.Replace(after, "\tif x {\n", "\tif x {  \n", 1); string(res.Content) != want {
		t.Errorf("content %q, want %q", res.Content, want)
	}

	spaces := strings.ReplaceAll(before, "\t", "    ")
	res = mustApply(t, spaces, fc)
	if res.Fuzz != FuzzSpace {
		t.Errorf("fuzz %d, want %d", res.Fuzz, FuzzSpace)
	}
	if want := "func f() {\n    if x {\n\t\treturn 10\n    }\n    return 2\n}\n"; string(res.Content) != want {
		t.Errorf("content %q, want %q", res.Content, want)
	}
}

func TestApplyUnplaceable(t *testing.T) {
	before := numbered(30, "u")
	after := strings.Replace(before, "line 15\n", "line 15 changed\n", 1)
	fc := parseOne(t, udiff(t, before, after))
	// The file changed under the patch: line 15's text differs.
	drifted := strings.Replace(before, "u line 14\n", "u line fourteen\n", 1)
	_, err := Apply([]byte(drifted), fc)
	var he *HunkError
	if !errors.As(err, &he) {
		t.Fatalf("want *HunkError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"f: hunk 1", fc.Hunks[0].Header, `"uxxxxx line 12"`, "closest text in the file, at line 12", "u line fourteen"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if he.Index != 1 || he.ClosestLine != 12 || he.Similarity <= 0.5 || he.Similarity >= 1 {
		t.Errorf("error fields %+v", he)
	}

	// Nothing like the hunk in the file: no exact line matches, only a
	// similar one.
	fc2 := parseOne(t, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n alpha beta gamma\n-delta\n+epsilon\n")
	_, err = Apply([]byte("one\ntwo\nalpha beta gamme\nthree\n"), fc2)
	if !errors.As(err, &he) || he.ClosestLine != 3 || !strings.Contains(err.Error(), `3: "alpha beta gamme"`) {
		t.Errorf("got %v", err)
	}
}

func TestApplyOverlapAndOrder(t *testing.T) {
	orig := numbered(20, "v")
	overlap := "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n vx line 1\n-vxx line 2\n+two\n vxxx line 3\n@@ -3,2 +3,2 @@\n vxxx line 3\n-vxxxx line 4\n+four\n"
	_, err := Apply([]byte(orig), parseOne(t, overlap))
	if err == nil || !strings.Contains(err.Error(), "overlaps hunk 1") {
		t.Errorf("overlap: %v", err)
	}
	order := "--- a/f\n+++ b/f\n@@ -10,1 +10,1 @@\n-vxxx line 10\n+ten\n@@ -2,1 +2,1 @@\n-vxx line 2\n+two\n"
	_, err = Apply([]byte(orig), parseOne(t, order))
	if err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Errorf("order: %v", err)
	}
	// Line numbers in order, but the second hunk's text is above the first.
	swapped := "--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-vxxx line 10\n+ten\n@@ -10,1 +10,1 @@\n-vxx line 2\n+two\n"
	_, err = Apply([]byte(orig), parseOne(t, swapped))
	if err == nil || !strings.Contains(err.Error(), "before the end of the previous hunk") {
		t.Errorf("swapped: %v", err)
	}
}

func TestApplyLineEndings(t *testing.T) {
	before := "a\nb\nc\n"
	after := "a\nB\nc\nd\n"
	lfPatch := udiff(t, before, after)

	res := mustApply(t, crlf(before), parseOne(t, lfPatch))
	if string(res.Content) != crlf(after) {
		t.Errorf("LF patch on CRLF file: %q", res.Content)
	}
	res = mustApply(t, before, parseOne(t, crlf(lfPatch)))
	if string(res.Content) != after {
		t.Errorf("CRLF patch on LF file: %q", res.Content)
	}
	// Mixed endings: untouched lines keep theirs.
	mixed := "a\r\nb\nc\r\n"
	res = mustApply(t, mixed, parseOne(t, lfPatch))
	if want := "a\r\nB\r\nc\r\nd\r\n"; string(res.Content) != want {
		t.Errorf("mixed: %q, want %q", res.Content, want)
	}
	// No final newline is kept when the patch does not talk about it.
	envelope := "*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n*** End Patch\n"
	res = mustApply(t, "a\r\nb", parseOne(t, envelope))
	if string(res.Content) != "a\r\nB" {
		t.Errorf("final newline state: %q", res.Content)
	}
}

func TestApplyBOMContextWithoutIt(t *testing.T) {
	// A hand-written patch whose context does not carry the file's BOM.
	p := "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n first\n-second\n+SECOND\n"
	res := mustApply(t, "\ufefffirst\r\nsecond\r\n", parseOne(t, p))
	if string(res.Content) != "\ufefffirst\r\nSECOND\r\n" {
		t.Errorf("%q", res.Content)
	}
}

func TestApplyAddDelete(t *testing.T) {
	fcs, err := Parse("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n")
	if err != nil {
		t.Fatal(err)
	}
	if fcs[0].Op != OpAdd || fcs[0].NewPath != "new.txt" || fcs[1].Op != OpDelete || fcs[1].OldPath != "old.txt" {
		t.Fatalf("%+v", fcs)
	}
	res := mustApply(t, "", fcs[0])
	if string(res.Content) != "x\ny" || res.Added != 2 {
		t.Errorf("add: %+v", res)
	}
	if _, err := Apply([]byte("exists\n"), fcs[0]); err == nil {
		t.Error("add over content: no error")
	}
	res = mustApply(t, "z\n", fcs[1])
	if res.Content != nil || res.Removed != 1 {
		t.Errorf("delete: %+v", res)
	}
	if _, err := Apply([]byte("z\nmore\n"), fcs[1]); err == nil || !strings.Contains(err.Error(), "do not cover the whole file") {
		t.Errorf("delete of a longer file: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	big := "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+" + strings.Repeat("x", MaxPatchBytes) + "\n"
	cases := []struct{ name, patch, want string }{
		{"empty", "", "not a patch: expected a unified diff"},
		{"garbage", "hello\nworld\n", "not a patch"},
		{"nul", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\x00\n+b\n", "line 4: patch contains a NUL byte"},
		{"absolute", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "is absolute"},
		{"absolute git", "diff --git a/x b/x\nrename from x\nrename to /tmp/x\n", "is absolute"},
		{"dotdot", "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n", `".." component`},
		{"dotdot envelope", "*** Begin Patch\n*** Add File: a/../../x\n+y\n*** End Patch\n", "line 2"},
		{"copy", "diff --git a/x b/y\nsimilarity index 100%\ncopy from x\ncopy to y\n", "line 3: copy patches are not supported"},
		{"binary", "diff --git a/x b/x\nindex 1..2 100644\nGIT binary patch\nliteral 3\n", "line 3: binary patches are not supported"},
		{"bad hunk header", "--- a/f\n+++ b/f\n@@ -a +1 @@\n-a\n+b\n", `line 3: bad hunk header "@@ -a +1 @@"`},
		{"hunk without header", "@@ -1 +1 @@\n-a\n+b\n", "not a patch"},
		{"no hunks", "--- a/f\n+++ b/f\n", "no @@ hunks"},
		{"bad hunk line", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\nb\n", `corrupt patch at line 5: hunk "@@ -1,3 +1,3 @@" (line 3) expects`},
		{"too big", big, "more than the limit"},
		{"envelope no end", "*** Begin Patch\n*** Add File: x\n+y\n", "without \"*** End Patch\""},
		{"envelope bad line", "*** Begin Patch\n*** Update File: x\n@@\n-a\nb\n*** End Patch\n", `line 5: hunk lines must start with`},
		{"envelope bad add", "*** Begin Patch\n*** Add File: x\ny\n*** End Patch\n", `line 3: every line of an added file must start with '+'`},
		{"envelope unknown", "*** Begin Patch\n*** Frobnicate: x\n*** End Patch\n", `line 2: expected "*** Add File:"`},
		{"envelope empty update", "*** Begin Patch\n*** Update File: x\n*** End Patch\n", "has no hunks"},
		{"envelope empty", "*** Begin Patch\n*** End Patch\n", "changes no file"},
		{"envelope trailing", "*** Begin Patch\n*** Delete File: x\n*** End Patch\n*** Begin Patch\n", "line 4: text after"},
		{"rename half", "diff --git a/x b/y\nrename from x\n", "rename needs both"},
		{"no-index roots", "diff --git a/one/x b/two/x\n--- a/one/x\n+++ b/two/x\n@@ -1 +1 @@\n-a\n+b\n", "no \"rename from\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.patch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseGitHeaders(t *testing.T) {
	p := "From 123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\n x | 2 +-\n\n" +
		"diff --git a/old b/new\nsimilarity index 90%\nrename from old\nrename to new\nindex 1..2 100755\n--- a/old\n+++ b/new\n@@ -1 +1 @@\n-a\n+b\n" +
		"diff --git a/m b/m\nold mode 100644\nnew mode 100755\n" +
		"diff --git \"a/s p\" \"b/s p\"\ndeleted file mode 100644\nindex 1..0\n" +
		"diff --git a/with space b/with space\nnew file mode 100755\n--- /dev/null\n+++ b/with space\t\n@@ -0,0 +1 @@\n+hi\n" +
		"-- \n2.39.5\n"
	fcs, err := Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{
		{Op: OpUpdate, OldPath: "old", NewPath: "new", OldMode: 0o100755, NewMode: 0o100755},
		{Op: OpUpdate, OldPath: "m", NewPath: "m", OldMode: 0o100644, NewMode: 0o100755},
		{Op: OpDelete, OldPath: "s p", OldMode: 0o100644},
		{Op: OpAdd, NewPath: "with space", NewMode: 0o100755},
	}
	if len(fcs) != len(want) {
		t.Fatalf("got %d changes: %+v", len(fcs), fcs)
	}
	for i, w := range want {
		g := fcs[i]
		if g.Op != w.Op || g.OldPath != w.OldPath || g.NewPath != w.NewPath || g.OldMode != w.OldMode || g.NewMode != w.NewMode {
			t.Errorf("%d: got %v %q %q %o %o, want %v %q %q %o %o", i, g.Op, g.OldPath, g.NewPath, g.OldMode, g.NewMode, w.Op, w.OldPath, w.NewPath, w.OldMode, w.NewMode)
		}
	}
	if res := mustApply(t, "", fcs[3]); string(res.Content) != "hi\n" {
		t.Errorf("%q", res.Content)
	}
}

func TestParseMarkdownFence(t *testing.T) {
	p := "Here is the fix:\n```diff\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n```\n"
	res := mustApply(t, "a\n", parseOne(t, p))
	if string(res.Content) != "b\n" {
		t.Errorf("%q", res.Content)
	}
}

// TestHostilePatchGivesUp: a hunk of many identical lines that never quite
// matches a large file of the same lines fails within the work limit.
func TestHostilePatchGivesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("does a bounded but large search")
	}
	file := strings.Repeat("same\n", 40000)
	var hunk strings.Builder
	hunk.WriteString("--- a/f\n+++ b/f\n@@ -1,4001 +1,4001 @@\n")
	for range 4000 {
		hunk.WriteString(" same\n")
	}
	hunk.WriteString("-different\n+changed\n")
	fcs, err := Parse(hunk.String())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Apply([]byte(file), fcs[0])
	var he *HunkError
	if !errors.As(err, &he) || !strings.Contains(he.Reason, "line comparisons") {
		t.Fatalf("want the search to give up at its work limit, got %v", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("the search took %s", took)
	}
	t.Logf("gave up or failed in %s: %v", time.Since(start), err)
}
