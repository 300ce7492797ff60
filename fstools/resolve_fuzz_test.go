package fstools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeNames are the names a fuzzed tree is built from; treeTargets the
// symlink targets (relative, absolute, into the workspace and out of it,
// dangling, looping, through "..").
var (
	treeNames   = []string{"a", "b", "c", ".env", "d"}
	treeTargets = []string{"a", "b", "../b", "..", ".", "a/b", "$WS", "$WS/a", "$OUT", "$OUT/x", "$ROOT", "missing",
		"missing/deeper", "c", "/", "../../..", "$WS/c/../a"}
)

// buildTree fills ws (emptied first) from spec, three bytes per entry: the
// kind (folder, file, symlink), the name, and the parent (an earlier
// folder) or, for a symlink, the target. outside gets a file and a folder.
func buildTree(t *testing.T, root, ws, outside string, spec []byte) {
	t.Helper()
	for _, d := range []string{ws, outside} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(d, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(outside, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "x"), []byte("outside"), 0o644)
	dirs := []string{ws}
	expand := strings.NewReplacer("$WS", ws, "$OUT", outside, "$ROOT", root)
	for i := 0; i+2 < len(spec) && i < 3*16; i += 3 {
		kind, name, arg := spec[i]%3, treeNames[int(spec[i+1])%len(treeNames)], int(spec[i+2])
		parent := dirs[arg%len(dirs)]
		p := filepath.Join(parent, name)
		switch kind {
		case 0:
			if os.Mkdir(p, 0o755) == nil {
				dirs = append(dirs, p)
			}
		case 1:
			os.WriteFile(p, []byte("x"), 0o644)
		case 2:
			os.Symlink(expand.Replace(treeTargets[arg%len(treeTargets)]), filepath.Join(dirs[int(spec[i+1])%len(dirs)], name))
		}
	}
}

// referenceResolve is an independent model of Resolve: clean the path
// lexically, resolve the longest prefix that exists (following symlinks)
// with filepath.EvalSymlinks, and append the rest.
func referenceResolve(abs string) (real string, exists bool, ok bool) {
	return referenceResolveLinks(abs, 0)
}

func referenceResolveLinks(abs string, links int) (real string, exists bool, ok bool) {
	abs = filepath.Clean(abs)
	var rest []string
	for cur := abs; ; cur = filepath.Dir(cur) {
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if _, err := os.Stat(cur); err != nil && (errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "not a directory")) {
				// A dangling link: where it points, from its folder's real path.
				if links > 40 {
					return "", false, false
				}
				target, err := os.Readlink(cur)
				if err != nil {
					return "", false, false
				}
				if !filepath.IsAbs(target) {
					dir, _, ok := referenceResolveLinks(filepath.Dir(cur), links+1)
					if !ok {
						return "", false, false
					}
					target = filepath.Join(dir, target)
				}
				r, _, ok := referenceResolveLinks(filepath.Join(append([]string{target}, rest...)...), links+1)
				return r, false, ok
			}
		}
		if _, err := os.Stat(cur); err == nil {
			r, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", false, false
			}
			return filepath.Join(append([]string{r}, rest...)...), len(rest) == 0, true
		} else if !errors.Is(err, os.ErrNotExist) && !strings.Contains(err.Error(), "not a directory") {
			return "", false, false // a loop, or a permission error: the model has no answer
		}
		if cur == "/" {
			return abs, false, true
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
	}
}

// FuzzResolveSymlinks builds a tree with symlinks (inside and out of the
// workspace, dangling, looping) and resolves a path in it. Properties: the
// result is absolute and clean, passes through no symlink that leads
// anywhere (what is decided is what the symlink-refusing open reaches), is
// in the workspace exactly when it lies beneath it, and equals the
// reference resolution.
func FuzzResolveSymlinks(f *testing.F) {
	seeds := []struct {
		tree []byte
		arg  string
	}{
		{[]byte{0, 0, 0, 2, 1, 8}, "b/x"},           // b → $OUT: a read outside through a link
		{[]byte{2, 0, 6, 2, 1, 0}, "a"},             // a → $WS, b → a
		{[]byte{2, 0, 13, 2, 3, 12}, "a/../b"},      // a → c (dangling), .. removed lexically
		{[]byte{2, 0, 1, 2, 1, 0}, "a/b"},           // a → b → a: a loop
		{[]byte{0, 0, 0, 2, 1, 2}, "a/b/c"},         // a/b → ../b
		{[]byte{2, 3, 9}, ".env"},                   // .env → $OUT/x
		{[]byte{0, 0, 0, 0, 1, 1, 2, 2, 16}, "c"},   // $WS/c/../a
		{[]byte{2, 0, 14}, "a/etc/passwd"},          // a → /
		{[]byte{2, 0, 15, 1, 1, 0}, "a/../../../x"}, // a → ../../..
		{nil, "~/x"},
	}
	for _, s := range seeds {
		f.Add(s.tree, s.arg)
	}
	p, root := testPolicy(f, `profile = "interactive-dev"`)
	ws := p.Workspace
	outside := filepath.Join(root, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tree []byte, arg string) {
		buildTree(t, root, ws, outside, tree)
		res, err := Resolve(p, arg)
		if err != nil {
			return
		}
		if !filepath.IsAbs(res.Real) || filepath.Clean(res.Real) != res.Real {
			t.Fatalf("Resolve(%q) = %q: not absolute and clean", arg, res.Real)
		}
		// A dangling symlink is followed to where it points (a writer would
		// create that file), so the result passes through no symlink.
		for cur := res.Real; cur != "/"; cur = filepath.Dir(cur) {
			if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				t.Fatalf("Resolve(%q) = %q: component %s is a symlink", arg, res.Real, cur)
			}
		}
		beneath := res.Real == ws || strings.HasPrefix(res.Real, ws+"/")
		if res.InWorkspace != beneath {
			t.Fatalf("Resolve(%q) = %q: InWorkspace %v, beneath the workspace %v", arg, res.Real, res.InWorkspace, beneath)
		}
		abs := arg
		switch {
		case arg == "~" || strings.HasPrefix(arg, "~/"):
			abs = filepath.Join(p.Home, strings.TrimPrefix(arg[1:], "/"))
		case !filepath.IsAbs(arg):
			abs = filepath.Join(ws, arg)
		}
		want, exists, ok := referenceResolve(abs)
		if !ok {
			return
		}
		if res.Real != want || res.Exists != exists {
			t.Fatalf("Resolve(%q) = %q (exists %v); the reference resolves it to %q (exists %v)", arg, res.Real, res.Exists, want, exists)
		}
	})
}
