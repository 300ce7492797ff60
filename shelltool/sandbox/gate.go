//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxEventBytes bounds one exec event on the gate channel (the kernel
// bounds argv to a quarter of the stack limit, 2 MiB by default; the
// tracer caps what it reads at maxArgvBytes).
const maxEventBytes = 3 * maxArgvBytes

// gateSocketpair returns the helper's end (its fd 6) and the server's end
// of the channel exec events and verdicts travel on.
func gateSocketpair() (child *os.File, parent net.Conn, err error) {
	return socketpair(unix.SOCK_STREAM, "gate")
}

// socketpair returns the two ends of a close-on-exec unix socketpair of type
// typ: the helper's as a file to pass it, the server's as a connection.
func socketpair(typ int, name string) (child *os.File, parent net.Conn, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	child = os.NewFile(uintptr(fds[0]), name+"-child")
	pf := os.NewFile(uintptr(fds[1]), name+"-parent")
	c, err := net.FileConn(pf) // dups the descriptor
	pf.Close()
	if err != nil {
		child.Close()
		return nil, nil, err
	}
	return child, c, nil
}

// gateServer answers the helper's exec events (frames, eventwire.go) with
// gate's verdicts until the channel closes. A malformed or oversized event
// is refused; so is every event when gate is nil (the helper asks only when
// the spec turned the gate on, so that is a bug, and it fails closed).
type gateServer struct {
	conn net.Conn
	ch   io.ReadWriter // conn's socket, read and written by rawSocket
	gate ExecGate
	done chan struct{}
	once sync.Once
}

func newGateServer(conn net.Conn, gate ExecGate) *gateServer {
	g := &gateServer{conn: conn, ch: conn, gate: gate, done: make(chan struct{})}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			g.ch = rawSocket{rc}
		}
	}
	go g.serve()
	return g
}

// rawSocket reads and writes a non-blocking socket with raw system calls,
// waiting for it through the runtime's poller (a read that would block
// parks the goroutine, as net.Conn's does). A short non-blocking call needs
// none of what the runtime does around a system call that may block, and
// that bookkeeping woke the runtime's monitor thread (sysmon, asleep while
// the server idles) on every read and write: one futex wake-up and a few of
// its 20 µs polls per exec, about a quarter of the server's share.
type rawSocket struct{ rc syscall.RawConn }

func (s rawSocket) Read(p []byte) (int, error) {
	return s.do(unix.SYS_READ, p)
}

func (s rawSocket) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := s.do(unix.SYS_WRITE, p[done:])
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// do issues one read or write (nr) of p, waiting while the socket would
// block.
func (s rawSocket) do(nr uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	call := func(fd uintptr) bool {
		for {
			n, _, errno = unix.RawSyscall(nr, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if errno != unix.EINTR {
				return errno != unix.EAGAIN
			}
		}
	}
	var err error
	if nr == unix.SYS_READ {
		err = s.rc.Read(call)
	} else {
		err = s.rc.Write(call)
	}
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case nr == unix.SYS_READ && n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

func (g *gateServer) serve() {
	defer close(g.done)
	r := bufio.NewReaderSize(g.ch, 64<<10)
	var buf []byte
	yes, no := []byte("y\n"), []byte("n\n")
	for {
		frame, err := readFrame(r, maxEventBytes, buf)
		if err != nil && !errors.Is(err, errFrameTooLong) {
			return // closed: the command is over
		}
		allow := false
		if err == nil {
			buf = frame // reused: the event holds copies
		}
		if err == nil && g.gate != nil {
			if ev, err := decodeEvent(frame); err == nil {
				allow = g.gate(ev)
			}
		}
		verdict := no
		if allow {
			verdict = yes
		}
		if _, err := g.ch.Write(verdict); err != nil {
			return
		}
	}
}

// stop closes the channel (the helper is dead by then) and waits for serve
// to return.
func (g *gateServer) stop() {
	g.once.Do(func() { g.conn.Close() })
	<-g.done
}
