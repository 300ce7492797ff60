package patch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gitApplyCases are parser rules as git apply behaves, on the file
// gitApplyBase (or base when set). corrupt is the line git apply names in
// "corrupt patch at line N" (0: it applies, giving want). strict marks the
// rules where this parser is stricter than git by design: git ignores lines
// after a complete hunk and rewrites odd modes to 100644/100755; here both
// are refused, since a patch whose counts are wrong was not meant as written.
var gitApplyCases = []struct {
	name, base, patch string
	corrupt           int
	want              string
	strict            bool
}{
	{name: "hunk shorter than its header, at the end", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n", corrupt: 7},
	{name: "hunk shorter than its header, then a hunk", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n@@ -5,1 +5,1 @@\n-e\n+E\n", corrupt: 7},
	{name: "hunk shorter than its header, then a file", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\ndiff --git a/g b/g\n", corrupt: 7},
	{name: "diff --git inside a hunk", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\ndiff --git a/x b/x\n c\n", corrupt: 5},
	{name: "a --- line inside a hunk is a removed line", base: "a\n-- b\nc\n", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,2 @@\n a\n--- b\n c\n", want: "a\nc\n"},
	{name: "a +++ line inside a hunk is an added line", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+++ b\n c\n", want: "a\n++ b\nc\nd\ne\n"},
	{name: "a file header inside a hunk is content", base: "a\n-- a/g\nc\n", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n--- a/g\n+++ b/g\n c\n", want: "a\n++ b/g\nc\n"},
	{name: "an empty line is an empty context line", base: "a\nb\n\nd\n", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n\n d\n", want: "a\nB\n\nd\n"},
	{name: "zero-context replacement", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-b\n+B\n", want: "a\nB\nc\nd\ne\n"},
	{name: "zero-context addition", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -2,0 +3,2 @@\n+x\n+y\n", want: "a\nb\nx\ny\nc\nd\ne\n"},
	{name: "zero-context addition at the top", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1 @@\n+top\n", want: "top\na\nb\nc\nd\ne\n"},
	{name: "zero-context deletion", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -3,2 +2,0 @@\n-c\n-d\n", want: "a\nb\ne\n"},
	{name: "lines after a complete hunk", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n d\n", corrupt: 8, strict: true},
	{name: "a removed line after a complete hunk", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n-d\n", corrupt: 8, strict: true},
	{name: "an added line past the new count", patch: "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n+C\n c\n", corrupt: 7, strict: true},
}

const gitApplyBase = "a\nb\nc\nd\ne\n"

var corruptLine = regexp.MustCompile(`corrupt patch at line (\d+)`)

// gitApply runs git apply on patch against base in a fresh folder and
// returns the file after it, or git's error.
func gitApply(t *testing.T, base, patch string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte(base), 0o644)
	os.WriteFile(filepath.Join(dir, "p.diff"), []byte(patch), 0o644)
	// --unidiff-zero: as `git diff -U0` output must be applied with git.
	cmd := exec.Command("git", "apply", "--unidiff-zero", "p.diff")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", string(out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
	return string(b), ""
}

// TestParseLikeGitApply checks each rule, and, where git is installed, that
// git apply agrees (except where this parser is stricter by design).
func TestParseLikeGitApply(t *testing.T) {
	_, gitErr := exec.LookPath("git")
	for _, tc := range gitApplyCases {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			if base == "" {
				base = gitApplyBase
			}
			if gitErr == nil && !tc.strict {
				got, msg := gitApply(t, base, tc.patch)
				if m := corruptLine.FindStringSubmatch(msg); tc.corrupt > 0 && (m == nil || m[1] != fmt.Sprint(tc.corrupt)) {
					t.Fatalf("git apply says %q; the table says corrupt at line %d", msg, tc.corrupt)
				}
				if tc.corrupt == 0 && got != tc.want {
					t.Fatalf("git apply gives %q (%s); the table says %q", got, msg, tc.want)
				}
			}
			fcs, err := Parse(tc.patch)
			if tc.corrupt > 0 {
				want := fmt.Sprintf("corrupt patch at line %d", tc.corrupt)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Parse: %v; want %q", err, want)
				}
				return
			}
			if err != nil || len(fcs) != 1 {
				t.Fatalf("Parse: %v %+v", err, fcs)
			}
			res, err := Apply([]byte(base), fcs[0])
			if err != nil || string(res.Content) != tc.want {
				t.Fatalf("Apply: %v %q; want %q", err, res.Content, tc.want)
			}
		})
	}
}

// TestParseModes: only 100644 and 100755, as git writes them; setuid,
// setgid, sticky, odd permissions, symlinks and submodules are refused.
func TestParseModes(t *testing.T) {
	for mode, ok := range map[string]bool{"100644": true, "100755": true, "100664": false, "104755": false, "102755": false, "101755": false, "100777": false, "120000": false, "160000": false, "040000": false, "777": false} {
		for _, p := range []string{
			"diff --git a/f.txt b/f.txt\nold mode 100644\nnew mode " + mode + "\n",
			"diff --git a/n.sh b/n.sh\nnew file mode " + mode + "\n--- /dev/null\n+++ b/n.sh\n@@ -0,0 +1 @@\n+x\n",
			"diff --git a/f.txt b/f.txt\nindex 1234567..89abcde " + mode + "\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n",
		} {
			fcs, err := Parse(p)
			if ok != (err == nil) {
				t.Errorf("mode %s: %v\n%s", mode, err, p)
			}
			if err == nil && fcs[0].NewMode&^0o100777 != 0 {
				t.Errorf("mode %s kept special bits: %o", mode, fcs[0].NewMode)
			}
		}
	}
}

// TestGitDiffU0 applies `git diff -U0` output (no context at all: pure
// additions, deletions and replacements, at the top, the middle and the
// end, several per file) and compares with the file git diffed against.
func TestGitDiffU0(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed under CI")
		}
		t.Skip("git not installed")
	}
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "l %d\n", i)
	}
	before := b.String()
	edits := []struct{ name, after string }{
		{"add top", "new 1\nnew 2\n" + before},
		{"add end", before + "tail\n"},
		{"add middle", strings.Replace(before, "l 10\n", "l 10\ninserted\n", 1)},
		{"delete top", strings.Replace(before, "l 1\nl 2\n", "", 1)},
		{"delete end", strings.TrimSuffix(before, "l 40\n")},
		{"delete middle", strings.Replace(before, "l 20\nl 21\nl 22\n", "", 1)},
		{"replace", strings.Replace(before, "l 5\n", "five\n", 1)},
		{"many", strings.NewReplacer("l 3\n", "", "l 7\n", "seven\nsept\n", "l 8\n", "", "l 30\n", "l 30\nextra\n", "l 40\n", "forty\n").Replace(before)},
		{"adjacent", strings.NewReplacer("l 11\n", "eleven\n", "l 12\n", "", "l 13\n", "l 13\nafter 13\n").Replace(before)},
		{"no newline at end", strings.TrimSuffix(before, "\n")},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, filepath.Join(dir, "a"), tree{"f.txt": {content: before}})
			writeTree(t, filepath.Join(dir, "b"), tree{"f.txt": {content: e.after}})
			text := run(t, dir, "git", "diff", "--no-index", "--no-prefix", "-U0", "a", "b")
			if got, msg := gitApply(t, before, text); got != e.after {
				t.Fatalf("git apply itself gives %q (%s)", got, msg)
			}
			fcs, err := Parse(text)
			if err != nil || len(fcs) != 1 {
				t.Fatalf("Parse: %v\n%s", err, text)
			}
			res, err := Apply([]byte(before), fcs[0])
			if err != nil || string(res.Content) != e.after {
				t.Fatalf("Apply: %v\ngot  %q\nwant %q\n%s", err, res.Content, e.after, text)
			}
		})
	}
}
