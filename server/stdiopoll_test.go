package server

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPollableReader: a pipe is read through a second, non-blocking
// description of it, which sees what is written and the end; the
// client's descriptor keeps its flags. Anything else is read as given.
func TestPollableReader(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	flags0, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, closeP, err := pollableReader(r)
	if err != nil {
		t.Fatal(err)
	}
	defer closeP()
	if p == r {
		t.Fatal("a pipe was not reopened")
	}
	if flags, _ := unix.FcntlInt(p.Fd(), unix.F_GETFL, 0); flags&unix.O_NONBLOCK == 0 {
		t.Fatal("the reopened pipe blocks")
	}
	if flags, _ := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0); flags != flags0 {
		t.Fatalf("the client's descriptor changed flags: %#x, was %#x", flags, flags0)
	}
	go func() {
		io.WriteString(w, "one\n")
		io.WriteString(w, "two\n")
		w.Close()
	}()
	got, err := io.ReadAll(p) // a non-blocking read would fail with EAGAIN were it not polled
	if err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("read %q, %v", got, err)
	}

	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock := os.NewFile(uintptr(fds[0]), "sock")
	defer sock.Close()
	defer unix.Close(fds[1])
	// A pipe's write end as stdin, and a FIFO opened read-write: reopened
	// for reading beside them, the server would hold a writer and never
	// see end-of-file.
	wr, ww, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer wr.Close()
	defer ww.Close()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rw, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	for _, other := range []*os.File{f, sock, ww, rw} {
		got, closeGot, err := pollableReader(other)
		if err != nil || got != other {
			t.Fatalf("%s: %v, %v: not read as given", other.Name(), got, err)
		}
		closeGot()
	}
}
