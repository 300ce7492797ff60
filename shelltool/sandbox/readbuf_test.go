//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadBuf: the exec stop's reads through one reused buffer return
// exactly the file or link, refuse what is over the limit, and are not
// disturbed by what an earlier read left in the buffer.
func TestReadBuf(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{0, 1, 4095, 4096, 4097, 9000, 20000}
	for _, n := range sizes {
		data := bytes.Repeat([]byte{byte('a' + n%26)}, n)
		if err := os.WriteFile(filepath.Join(dir, "f"+itoa(n)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("x/", 2000) + "end" // near PATH_MAX
	if err := os.Symlink(long, filepath.Join(dir, "long")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("short", filepath.Join(dir, "short")); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var rb readBuf
	// Largest first, then smaller: a read never returns stale bytes.
	for i := len(sizes) - 1; i >= 0; i-- {
		n := sizes[i]
		for _, limit := range []int{n, n + 1, n - 1, 4096} {
			if limit < 0 {
				continue
			}
			got, err := rb.readCappedAt(fd, "f"+itoa(n), limit)
			switch {
			case n > limit:
				if !errors.Is(err, errTooBig) {
					t.Errorf("size %d, limit %d: err %v, want errTooBig", n, limit, err)
				}
			case err != nil || len(got) != n || bytes.Count(got, []byte{byte('a' + n%26)}) != n:
				t.Errorf("size %d, limit %d: got %d bytes, err %v", n, limit, len(got), err)
			}
		}
		for _, l := range []struct{ name, want string }{{"long", long}, {"short", "short"}} {
			if got, err := rb.readlink(rb.cpath(filepath.Join(dir, l.name))); err != nil || got != l.want {
				t.Errorf("readlink %s = %d bytes, %v", l.name, len(got), err)
			}
		}
	}
	if _, err := rb.readCappedAt(fd, "missing", 10); !errors.Is(err, unix.ENOENT) {
		t.Errorf("missing file: err %v, want ENOENT", err)
	}
	if _, err := rb.readlink(rb.cpath(filepath.Join(dir, "missing"))); !errors.Is(err, unix.ENOENT) {
		t.Errorf("missing link: err %v, want ENOENT", err)
	}
	// A process's entries: "/proc/PID/name", NUL-terminated.
	p := procEntries(1234567)
	if got := string(p.path("exe")); got != "/proc/1234567/exe\x00" {
		t.Errorf("path %q", got)
	}
	if got := string(p.path("cwd")); got != "/proc/1234567/cwd\x00" || string(p.dir()) != "/proc/1234567" {
		t.Errorf("path %q, dir %q", got, p.dir())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
