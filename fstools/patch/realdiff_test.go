package patch

import (
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// file is one file of a test tree.
type file struct {
	content string
	exec    bool
}

type tree map[string]file

// writeTree writes t under dir.
func writeTree(tb testing.TB, dir string, t tree) {
	tb.Helper()
	for name, f := range t {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if f.exec {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(f.content), mode); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			tb.Fatal(err)
		}
	}
}

// run runs a command in dir; exit status 1 is what diff tools use for
// "differences found" and is not a failure.
func run(tb testing.TB, dir string, name string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		tb.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// gitDiffTrees diffs two trees with `git diff --no-index`; the folders are
// named a and b and --no-prefix is given, so the paths look like a normal
// `git diff`'s.
func gitDiffTrees(tb testing.TB, before, after tree) string {
	tb.Helper()
	dir := tb.TempDir()
	writeTree(tb, filepath.Join(dir, "a"), before)
	writeTree(tb, filepath.Join(dir, "b"), after)
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	return run(tb, dir, "git", "diff", "--no-index", "--no-prefix", "a", "b")
}

// diffUTrees diffs two trees with GNU `diff -ruN`.
func diffUTrees(tb testing.TB, before, after tree) string {
	tb.Helper()
	dir := tb.TempDir()
	writeTree(tb, filepath.Join(dir, "a"), before)
	writeTree(tb, filepath.Join(dir, "b"), after)
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	return run(tb, dir, "diff", "-ruN", "a", "b")
}

// applyTree does what the caller of this package does, in memory.
func applyTree(tb testing.TB, before tree, fcs []FileChange) (tree, []Result) {
	tb.Helper()
	out := maps.Clone(before)
	var results []Result
	for _, fc := range fcs {
		var orig []byte
		var old file
		if fc.Op != OpAdd {
			var ok bool
			if old, ok = out[fc.OldPath]; !ok {
				tb.Fatalf("patch changes %q, which is not in the tree", fc.OldPath)
			}
			orig = []byte(old.content)
		}
		res, err := Apply(orig, fc)
		if err != nil {
			tb.Fatalf("Apply %s %s: %v", fc.Op, fc.Path(), err)
		}
		results = append(results, res)
		switch fc.Op {
		case OpDelete:
			delete(out, fc.OldPath)
			continue
		case OpUpdate:
			delete(out, fc.OldPath)
		}
		nf := file{content: string(res.Content), exec: old.exec}
		if fc.NewMode != 0 {
			nf.exec = fc.NewMode&0o111 != 0
		}
		out[fc.NewPath] = nf
	}
	return out, results
}

func compareTrees(tb testing.TB, got, want tree, modes bool) {
	tb.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[name]
		if !ok {
			tb.Errorf("%s: missing", name)
			continue
		}
		if g.content != want[name].content {
			tb.Errorf("%s: content\n got %q\nwant %q", name, g.content, want[name].content)
		}
		if modes && g.exec != want[name].exec {
			tb.Errorf("%s: exec bit %v, want %v", name, g.exec, want[name].exec)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			tb.Errorf("%s: should not exist", name)
		}
	}
}

func numbered(n int, prefix string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(prefix)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(" line ")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("\n")
	}
	return b.String()
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// treeCases are before/after trees diffed by git and by diff -u.
var treeCases = []struct {
	name          string
	before, after tree
	gitOnly       bool // diff -u cannot express it (modes, empty new files)
}{
	{
		name:   "several files",
		before: tree{"a.txt": {content: "one\ntwo\nthree\n"}, "dir/b.go": {content: numbered(40, "b")}, "c.md": {content: "same\n"}},
		after: tree{"a.txt": {content: "one\n2\nthree\nfour\n"}, "dir/b.go": {content: strings.Replace(strings.Replace(numbered(40, "b"), "line 3\n", "line three\n", 1), "line 37\n", "line 37\nnew line\n", 1)},
			"c.md": {content: "same\n"}},
	},
	{
		name:   "new and deleted files",
		before: tree{"keep": {content: "k\n"}, "gone.txt": {content: "bye\nnow\n"}},
		after:  tree{"keep": {content: "k\n"}, "sub/new.txt": {content: "hello\nworld\n"}},
	},
	{
		name:    "empty new file",
		before:  tree{"keep": {content: "k\n"}},
		after:   tree{"keep": {content: "k\n"}, "empty": {}},
		gitOnly: true,
	},
	{
		name:    "mode change only and with edit",
		before:  tree{"run.sh": {content: "#!/bin/sh\necho hi\n"}, "tool": {content: "a\n", exec: true}},
		after:   tree{"run.sh": {content: "#!/bin/sh\necho hi\n", exec: true}, "tool": {content: "b\n"}},
		gitOnly: true,
	},
	{
		name:   "crlf files",
		before: tree{"win.txt": {content: crlf(numbered(20, "w"))}},
		after:  tree{"win.txt": {content: crlf(strings.Replace(numbered(20, "w"), "line 10\n", "line ten\nextra\n", 1))}},
	},
	{
		name:   "no newline at end, both sides",
		before: tree{"f": {content: "a\nb\nc"}},
		after:  tree{"f": {content: "a\nB\nc"}},
	},
	{
		name:   "no newline at end, last line changed",
		before: tree{"f": {content: "a\nb\nc"}},
		after:  tree{"f": {content: "a\nb\nC"}},
	},
	{
		name:   "newline added at end",
		before: tree{"f": {content: "a\nb"}},
		after:  tree{"f": {content: "a\nb\n"}},
	},
	{
		name:   "newline removed at end",
		before: tree{"f": {content: "a\nb\n"}},
		after:  tree{"f": {content: "a\nb"}},
	},
	{
		name:   "lines appended to a file without final newline",
		before: tree{"f": {content: "a\nb"}},
		after:  tree{"f": {content: "a\nb\nc\nd\n"}},
	},
	{
		name:   "bom",
		before: tree{"bom.txt": {content: "\ufefffirst\nsecond\nthird\n"}},
		after:  tree{"bom.txt": {content: "\ufefffirst\nSECOND\nthird\n"}},
	},
	{
		name:   "bom first line changed",
		before: tree{"bom.txt": {content: "\ufefffirst\nsecond\n"}},
		after:  tree{"bom.txt": {content: "\ufeffFIRST\nsecond\n"}},
	},
	{
		name:   "omitted counts",
		before: tree{"one": {content: "only\n"}, "two": {content: "x"}},
		after:  tree{"one": {content: "changed\n"}, "two": {content: "y"}},
	},
	{
		name:   "quoted names",
		before: tree{"with space.txt": {content: "a\n"}, "ünï.txt": {content: "x\n"}, "t\tab": {content: "q\n"}},
		after:  tree{"with space.txt": {content: "b\n"}, "ünï.txt": {content: "y\n"}, "t\tab": {content: "r\n"}},
	},
	{
		name:   "whole file rewritten and emptied",
		before: tree{"f": {content: "1\n2\n3\n"}, "g": {content: "g\n"}},
		after:  tree{"f": {content: "4\n5\n"}, "g": {content: ""}},
	},
	{
		name:   "many hunks",
		before: tree{"big.txt": {content: numbered(300, "l")}},
		after: tree{"big.txt": {content: func() string {
			s := numbered(300, "l")
			for _, n := range []string{"line 5\n", "line 50\n", "line 51\n", "line 120\n", "line 299\n"} {
				s = strings.Replace(s, n, "changed "+n+"and another\n", 1)
			}
			return strings.Replace(s, "xxx line 200\n", "", 1)
		}()}},
	},
}

func TestRealDiffs(t *testing.T) {
	for _, tc := range treeCases {
		for _, tool := range []string{"git", "diff-u"} {
			if tool == "diff-u" && tc.gitOnly {
				continue
			}
			t.Run(tc.name+"/"+tool, func(t *testing.T) {
				var text string
				if tool == "git" {
					text = gitDiffTrees(t, tc.before, tc.after)
				} else {
					text = diffUTrees(t, tc.before, tc.after)
				}
				fcs, err := Parse(text)
				if err != nil {
					t.Fatalf("Parse: %v\n%s", err, text)
				}
				got, results := applyTree(t, tc.before, fcs)
				compareTrees(t, got, tc.after, tool == "git")
				for i, r := range results {
					if r.Fuzz != 0 || slices.ContainsFunc(r.Offsets, func(o int) bool { return o != 0 }) {
						t.Errorf("file %d: exact patch applied with fuzz %d offsets %v", i, r.Fuzz, r.Offsets)
					}
				}
				if t.Failed() {
					t.Logf("patch:\n%s", text)
				}
				// The same patch with CRLF line endings throughout applies the same.
				fcs, err = Parse(crlf(text))
				if err != nil {
					t.Fatalf("Parse CRLF patch: %v", err)
				}
				got, _ = applyTree(t, tc.before, fcs)
				compareTrees(t, got, tc.after, tool == "git")
			})
		}
	}
}

func TestRealDiffPaths(t *testing.T) {
	text := gitDiffTrees(t, treeCases[1].before, treeCases[1].after)
	fcs, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fc := range fcs {
		got = append(got, fc.Op.String()+" "+fc.OldPath+" -> "+fc.NewPath)
	}
	want := []string{"delete gone.txt -> ", "add  -> sub/new.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	text = gitDiffTrees(t, treeCases[3].before, treeCases[3].after)
	fcs, err = Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(fcs) != 2 || fcs[0].OldMode != 0o100644 || fcs[0].NewMode != 0o100755 || len(fcs[0].Hunks) != 0 || fcs[0].OldPath != "run.sh" {
		t.Errorf("mode change parsed as %+v", fcs[0])
	}
}

// gitRepoDiff commits before in a new repository, runs change in it and
// returns `git diff -M HEAD`.
func gitRepoDiff(t *testing.T, before tree, change func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, before)
	run(t, dir, "git", "init", "-q")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "-m", "before")
	change(dir)
	return run(t, dir, "git", "diff", "-M", "HEAD")
}

func TestGitRenames(t *testing.T) {
	body := numbered(30, "r")
	before := tree{"old/name.txt": {content: body}, "pure.txt": {content: "pure\ncontent\nhere\n"}, "x": {content: "x\n"}}
	text := gitRepoDiff(t, before, func(dir string) {
		run(t, dir, "git", "mv", "old/name.txt", "new name.txt")
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		run(t, dir, "git", "mv", "pure.txt", "sub/pure.txt")
		os.WriteFile(filepath.Join(dir, "new name.txt"), []byte(strings.Replace(body, "line 15\n", "line fifteen\n", 1)), 0o644)
		os.Chmod(filepath.Join(dir, "x"), 0o755)
	})
	fcs, err := Parse(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	renames := 0
	for _, fc := range fcs {
		if fc.IsRename() {
			renames++
		}
	}
	if renames != 2 {
		t.Fatalf("want 2 renames, got %d in %+v\n%s", renames, fcs, text)
	}
	got, _ := applyTree(t, before, fcs)
	want := tree{
		"new name.txt": {content: strings.Replace(body, "line 15\n", "line fifteen\n", 1)},
		"sub/pure.txt": {content: "pure\ncontent\nhere\n"},
		"x":            {content: "x\n", exec: true},
	}
	compareTrees(t, got, want, true)
}

func TestGitDiffFromRepoWithPrefixes(t *testing.T) {
	before := tree{"src/main.go": {content: numbered(12, "m")}}
	text := gitRepoDiff(t, before, func(dir string) {
		os.WriteFile(filepath.Join(dir, "src/main.go"), []byte(strings.Replace(numbered(12, "m"), "line 6\n", "line six\n", 1)), 0o644)
		os.WriteFile(filepath.Join(dir, "added.txt"), []byte("new\n"), 0o644)
		run(t, dir, "git", "add", "added.txt")
	})
	if !strings.Contains(text, "--- a/src/main.go") {
		t.Fatalf("expected a/ b/ prefixes:\n%s", text)
	}
	fcs, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := applyTree(t, before, fcs)
	compareTrees(t, got, tree{
		"src/main.go": {content: strings.Replace(numbered(12, "m"), "line 6\n", "line six\n", 1)},
		"added.txt":   {content: "new\n"},
	}, true)
}

func TestBinaryPatchRefused(t *testing.T) {
	before := tree{"bin": {content: "\x00\x01\x02"}}
	after := tree{"bin": {content: "\x00\x01\x03"}}
	dir := t.TempDir()
	writeTree(t, filepath.Join(dir, "a"), before)
	writeTree(t, filepath.Join(dir, "b"), after)
	for _, args := range [][]string{
		{"diff", "--no-index", "--no-prefix", "a", "b"},
		{"diff", "--no-index", "--no-prefix", "--binary", "a", "b"},
	} {
		text := run(t, dir, "git", args...)
		_, err := Parse(text)
		if err == nil || !strings.Contains(err.Error(), "binary patches are not supported") {
			t.Errorf("git %v: got %v\n%s", args, err, text)
		}
	}
	_, err := Parse("Binary files a/x and b/x differ\n")
	if err == nil || !strings.Contains(err.Error(), "binary patches are not supported") {
		t.Errorf("diff's binary message: got %v", err)
	}
}
