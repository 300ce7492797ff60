//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadSpecLine: the helper takes the spec up to its newline, however
// the pipe cuts it, and refuses one that ends before it (the server
// stopped part-way: nothing is decoded).
func TestReadSpecLine(t *testing.T) {
	long := `{"command":"` + strings.Repeat("x", 3*4096+17) + `"}`
	for _, tc := range []struct {
		name, in, want string
		oneByte        bool
		err            error
	}{
		{name: "whole", in: `{"shell":"/bin/sh"}` + "\n", want: `{"shell":"/bin/sh"}`},
		{name: "whole, close after", in: `{}` + "\n", want: `{}`},
		{name: "byte by byte", in: `{"command":"a b"}` + "\n", want: `{"command":"a b"}`, oneByte: true},
		{name: "longer than the first buffer", in: long + "\n", want: long},
		{name: "longer, byte by byte", in: long + "\n", want: long, oneByte: true},
		{name: "empty", in: "", err: io.ErrUnexpectedEOF},
		{name: "no newline", in: `{"command":"true"}`, err: io.ErrUnexpectedEOF},
		{name: "no newline, long", in: long, err: io.ErrUnexpectedEOF, oneByte: true},
		{name: "only what precedes the newline", in: "{}\n{\"x\":1}\n", want: "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tc.in)
			if tc.oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := readSpecLine(r)
			if !errors.Is(err, tc.err) || (tc.err == nil && string(got) != tc.want) {
				t.Fatalf("got %.40q, %v; want %.40q, %v", got, err, tc.want, tc.err)
			}
		})
	}
	// A read error other than end-of-file is the error.
	if _, err := readSpecLine(iotest.ErrReader(io.ErrClosedPipe)); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("error reader: %v", err)
	}
}

// TestSpecLineHasNoNewline: json.Marshal escapes every control byte, so a
// spec whose strings hold newlines (a command line, an environment
// value) is still one line.
func TestSpecLineHasNoNewline(t *testing.T) {
	b, err := json.Marshal(helperSpec{Command: "a\nb\r\n", Env: []string{"X=1\n2"}, Dir: "/tmp/\n"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.IndexByte(b, '\n') >= 0 {
		t.Fatalf("newline in %q", b)
	}
}

// TestLongSpecRuns: a spec longer than the pipe holds (100 KiB) is written
// from a goroutine while the helper reads it (a warm helper and a cold
// one), and the command it carries runs whole.
func TestLongSpecRuns(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	// Two lines: a newline in the command is escaped in the spec.
	s := ws.spec("x=" + strings.Repeat("y", 100<<10) + "\nprintf %s \"$x\" | wc -c; echo two")
	r := NewRunner(NetworkNone)
	defer r.Close()
	waitWarm(t, r, NetworkNone)
	for _, run := range []func(context.Context, Spec) (Result, error){r.Run, Run} {
		res, err := run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if want := "102400\ntwo\n"; res.Stdout != want || res.ExitCode != 0 {
			t.Fatalf("got %q (exit %d, stderr %q), want %q", res.Stdout, res.ExitCode, res.Stderr, want)
		}
	}
	if r.warmRuns.Load() != 1 {
		t.Fatalf("%d warm runs, want 1", r.warmRuns.Load())
	}
}

// TestAwaitExit: the channel closes when the child exits (through its
// pidfd) and the child is left unreaped, so its pid (and pgid) stay its
// own until the caller waits for it.
func TestAwaitExit(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", "read x; exit 0")
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := awaitExit(cmd.Process.Pid)
	select {
	case <-exited:
		t.Fatal("closed while the child runs")
	default:
	}
	w.Close() // the child's read ends: it exits
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("not closed after the child exited")
	}
	if !hasExited(unix.P_PID, cmd.Process.Pid, unix.WNOHANG) {
		t.Fatal("the child is gone: awaitExit reaped it")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}
