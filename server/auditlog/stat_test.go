package auditlog

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStatIsLstat: the statx the log uses says what lstat and fstat say,
// for the files the log meets at its path.
func TestStatIsLstat(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard")
	if err := os.Link(file, hard); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{file, link, hard, dir, filepath.Join(dir, "missing")} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var want unix.Stat_t
			werr := unix.Lstat(path, &want)
			got, err := lstatPath(path)
			if (err == nil) != (werr == nil) {
				t.Fatalf("lstatPath: %v, lstat: %v", err, werr)
			}
			if err != nil {
				return
			}
			if got.dev != uint64(want.Dev) || got.ino != want.Ino || got.nlink != uint64(want.Nlink) ||
				got.size != want.Size || got.regular != (want.Mode&unix.S_IFMT == unix.S_IFREG) {
				t.Fatalf("lstatPath %+v, lstat %+v", got, want)
			}
			f, err := os.Open(path)
			if err != nil {
				return // the symlink's target is opened instead: not this case
			}
			defer f.Close()
			var wantF unix.Stat_t
			if err := unix.Fstat(int(f.Fd()), &wantF); err != nil {
				t.Fatal(err)
			}
			gotF, err := fstat(int(f.Fd()))
			if err != nil || gotF.dev != uint64(wantF.Dev) || gotF.ino != wantF.Ino || gotF.nlink != uint64(wantF.Nlink) || gotF.size != wantF.Size {
				t.Fatalf("fstat %+v %v, Fstat %+v", gotF, err, wantF)
			}
		})
	}
}
