package imagepages

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestReadOnlyMapping(t *testing.T) {
	f := fileID{dev: unix.Mkdev(0xfd, 0x01), ino: 1234}
	tests := []struct {
		name string
		line string
		want span
		ok   bool
	}{
		{"code", "00400000-00dc1000 r-xp 00000000 fd:01 1234  /bin/x", span{0x400000, 0xdc1000}, true},
		{"read-only data", "00dc1000-017c2000 r--p 009c1000 fd:01 1234  /bin/x", span{0xdc1000, 0x17c2000}, true},
		{"writable data", "017c2000-018d6000 rw-p 013c2000 fd:01 1234  /bin/x", span{}, false},
		{"shared", "00dc1000-017c2000 r--s 009c1000 fd:01 1234  /bin/x", span{}, false},
		{"another inode", "00400000-00dc1000 r-xp 00000000 fd:01 1235  /bin/y", span{}, false},
		{"another device", "00400000-00dc1000 r-xp 00000000 fd:02 1234  /bin/x", span{}, false},
		{"anonymous", "7f77843be000-7f7784600000 rw-p 00000000 00:00 0", span{}, false},
		{"empty range", "00400000-00400000 r-xp 00000000 fd:01 1234  /bin/x", span{}, false},
		{"malformed range", "00400000 r-xp 00000000 fd:01 1234  /bin/x", span{}, false},
		{"short", "00400000-00dc1000 r-xp", span{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := readOnlyMapping(tc.line, f)
			if ok != tc.ok || got != tc.want {
				t.Errorf("readOnlyMapping(%q) = %#x, %v; want %#x, %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestRelease maps a file private and read-only, faults its pages in and
// releases them: a clean mapping is dropped (its pages no longer mapped,
// their content read back from the file), one holding a copy-on-write page
// is kept whole (dropping it would lose what was written).
func TestRelease(t *testing.T) {
	page := os.Getpagesize()
	tests := []struct {
		name    string
		written bool // a page was written (copied) before the mapping was made read-only
		dropped bool
	}{
		{"clean", false, true},
		{"copy-on-write page", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "image")
			content := make([]byte, 4*page)
			for i := range content {
				content[i] = 'f'
			}
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			m := mapPrivate(t, path, len(content), tc.written)
			want := content[0]
			if tc.written {
				want = 'w'
			}
			s := span{uintptr(unsafe.Pointer(&m[0])), uintptr(unsafe.Pointer(&m[0])) + uintptr(len(m))}
			pagemap, err := os.Open("/proc/self/pagemap")
			if err != nil {
				t.Fatal(err)
			}
			defer pagemap.Close()
			if n := present(t, s, pagemap); n != 4 {
				t.Fatalf("%d pages mapped before the release, want 4", n)
			}
			n, err := release([]span{s}, pagemap)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := n > 0, tc.dropped; got != want {
				t.Errorf("released %d bytes; want dropped %v", n, want)
			}
			if n := present(t, s, pagemap); (n == 0) != tc.dropped {
				t.Errorf("%d pages mapped after the release; want dropped %v", n, tc.dropped)
			}
			if m[0] != want || m[len(m)-1] != 'f' {
				t.Errorf("content after the release %q…%q, want %q…%q", m[0], m[len(m)-1], want, 'f')
			}
		})
	}
}

// TestReleaseSelf releases the test binary's own pages: code runs on, and
// some of them are released.
func TestReleaseSelf(t *testing.T) {
	n, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no mapping of the executable released")
	}
}

// mapPrivate maps the file private and faults every page in, writing the
// first (a copy-on-write copy) when written, then makes the mapping
// read-only.
func mapPrivate(t *testing.T, path string, size int, written bool) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	if written {
		m[0] = 'w'
	}
	for i := 0; i < size; i += os.Getpagesize() {
		if m[i] != 'f' && m[i] != 'w' {
			t.Fatalf("page %d reads %q", i/os.Getpagesize(), m[i])
		}
	}
	if err := unix.Mprotect(m, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	return m
}

// present counts the pages of s mapped in this process.
func present(t *testing.T, s span, pagemap *os.File) int {
	t.Helper()
	page := uintptr(os.Getpagesize())
	buf := make([]byte, 8*((s.hi-s.lo)/page))
	if _, err := pagemap.ReadAt(buf, int64(s.lo/page*8)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])&pagePresent != 0 {
			n++
		}
	}
	return n
}
