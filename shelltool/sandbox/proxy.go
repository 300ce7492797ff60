//go:build linux

package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// proxySocketpair returns the helper's end (to pass as fd 5) and the
// server's end of the socketpair the listener is handed over on.
func proxySocketpair() (child *os.File, parent *net.UnixConn, err error) {
	child, c, err := socketpair(unix.SOCK_SEQPACKET, "proxy")
	if err != nil {
		return nil, nil, err
	}
	return child, c.(*net.UnixConn), nil
}

// proxyReceiver waits for the listener on the server's end of the
// socketpair and runs the handler on it until stop.
type proxyReceiver struct {
	conn    *net.UnixConn
	handler ProxyHandler
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{} // closed when the receiving goroutine (and the handler) returned

	mu sync.Mutex
	ln net.Listener
}

func newProxyReceiver(conn *net.UnixConn, h ProxyHandler) *proxyReceiver {
	ctx, cancel := context.WithCancel(context.Background())
	pr := &proxyReceiver{conn: conn, handler: h, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go pr.run()
	return pr
}

func (pr *proxyReceiver) run() {
	defer close(pr.done)
	ln, err := receiveListener(pr.conn)
	pr.conn.Close()
	if err != nil {
		return // the helper failed before handing it over: it reports why
	}
	pr.mu.Lock()
	if pr.ctx.Err() != nil { // stopped meanwhile
		pr.mu.Unlock()
		ln.Close()
		return
	}
	pr.ln = ln
	pr.mu.Unlock()
	pr.handler(pr.ctx, ln)
	ln.Close()
}

// stop ends the wait for the listener, cancels the handler's context,
// closes the listener and waits for the handler to return. Idempotent.
func (pr *proxyReceiver) stop() {
	pr.mu.Lock()
	pr.cancel()
	if pr.ln != nil {
		pr.ln.Close()
	}
	pr.mu.Unlock()
	_ = pr.conn.SetReadDeadline(time.Now())
	<-pr.done
}

// receiveListener reads one message carrying one descriptor (close-on-exec
// on arrival) and checks that it is a TCP listener on 127.0.0.1:ProxyPort.
func receiveListener(c *net.UnixConn) (net.Listener, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	var n, oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, got...)
		}
	}
	if n != 1 || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("sandbox: no proxy listener received")
	}
	f := os.NewFile(uintptr(fds[0]), "proxy-listener")
	ln, err := net.FileListener(f) // dups the descriptor
	f.Close()
	if err != nil {
		return nil, err
	}
	a, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !a.IP.Equal(net.IPv4(127, 0, 0, 1)) || a.Port != ProxyPort {
		ln.Close()
		return nil, errors.New("sandbox: the received socket is not the proxy listener")
	}
	return ln, nil
}
