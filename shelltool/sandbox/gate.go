//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"net"
	"os"
	"sync"

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
	gate ExecGate
	done chan struct{}
	once sync.Once
}

func newGateServer(conn net.Conn, gate ExecGate) *gateServer {
	g := &gateServer{conn: conn, gate: gate, done: make(chan struct{})}
	go g.serve()
	return g
}

func (g *gateServer) serve() {
	defer close(g.done)
	r := bufio.NewReaderSize(g.conn, 64<<10)
	var buf []byte
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
		verdict := []byte("n\n")
		if allow {
			verdict = []byte("y\n")
		}
		if _, err := g.conn.Write(verdict); err != nil {
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
