package fstools

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestEntryNames: the names of a folder's entries, hidden ones included;
// a folder reached through a symlink, a file and a missing path are errors.
func TestEntryNames(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for _, n := range []string{"a", ".h", "b"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names, err := EntryNames(dir)
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{".h", "a", "b"}) {
		t.Errorf("EntryNames = %q, %v", names, err)
	}
	link := filepath.Join(t.TempDir(), "l")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, filepath.Join(dir, "a"), filepath.Join(dir, "missing")} {
		if _, err := EntryNames(p); err == nil {
			t.Errorf("EntryNames(%s) did not fail", p)
		}
	}
}
