package fstools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRegular: a project file is read as the installer meets it, but a
// symlink (dangling or not, at the name or at a folder on its way), a fifo,
// a folder or a file over the bound is refused as ErrNotRegular or an error
// (never followed, never blocking), and a missing one is fs.ErrNotExist.
func TestReadRegular(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, ".npmrc")
	if err := os.WriteFile(f, []byte("@s:registry=https://s.example/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": f, "dangling": filepath.Join(dir, "later"), "linkdir": dir} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadRegular(f, 64); err != nil || !strings.Contains(string(b), "s.example") {
		t.Errorf("read %q: %v", b, err)
	}
	if err := StatRegular(f); err != nil {
		t.Errorf("stat: %v", err)
	}
	for _, bad := range []string{"link", "dangling", "linkdir/.npmrc", "linkdir/missing", "fifo", "."} {
		p := filepath.Join(dir, bad)
		if _, err := ReadRegular(p, 64); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: read or taken as absent: %v", bad, err)
		}
		if err := StatRegular(p); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: stat: %v", bad, err)
		}
	}
	if _, err := ReadRegular(f, 8); err == nil {
		t.Error("a file over the bound was read")
	}
	if _, err := ReadRegular(filepath.Join(dir, "missing"), 64); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
