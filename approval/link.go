package approval

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// A peer's side of the inbox: its link to the hub (see inbox.go).

// handshakeTimeout bounds the hello/welcome exchange.
const handshakeTimeout = 3 * time.Second

// dial connects to the hub's rendezvous socket, checks that the hub runs as
// this user, and shakes hands. It fails with *foreignError when the socket
// is another user's.
func (in *inbox) dial() (*wireConn, *bufio.Reader, error) {
	if in.sockErr != nil {
		return nil, nil, in.sockErr
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: in.sock, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("no inbox socket answers at %s: %w", in.sock, err)
	}
	cred, err := peerCred(conn)
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("inbox socket %s: %w", in.sock, err)
	}
	if int(cred.Uid) != in.uid {
		conn.Close()
		in.c.log.Printf("approval console: refused the inbox socket %s: it is served by uid %d (pid %d), not this user", in.sock, cred.Uid, cred.Pid)
		return nil, nil, &foreignError{fmt.Sprintf("the inbox socket %s is served by uid %d, not this user", in.sock, cred.Uid)}
	}
	w := newWireConn(conn)
	r := bufio.NewReaderSize(conn, 64<<10)
	conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	w.send(&wireMessage{Type: "hello", Version: wireVersion, Addr: in.addr, Server: clipLabel(in.opts.Name)})
	m, err := readWire(r)
	if err == nil && (m.Type != "welcome" || m.Addr != in.addr) {
		err = fmt.Errorf("%w: want a welcome for %s, got %s", errWire, in.addr, m.Type)
	}
	if err != nil {
		w.close()
		return nil, nil, fmt.Errorf("inbox socket %s: %w", in.sock, err)
	}
	conn.SetReadDeadline(time.Time{})
	in.mu.Lock()
	in.token = m.Token // this server's console serves with its own when it takes over
	in.mu.Unlock()
	return w, r, nil
}

// clipLabel bounds a server name sent on the wire.
func clipLabel(s string) string {
	if len(s) > 120 {
		return s[:120]
	}
	return s
}

// serveLink posts this server's pending asks to the hub, then reads the
// hub's messages until the link ends.
func (in *inbox) serveLink(w *wireConn, r *bufio.Reader) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		w.close()
		return
	}
	in.link, in.role = w, rolePeer
	in.mu.Unlock()
	in.ready(rolePeer)
	in.c.repost(w)
	var err error
	for err == nil {
		var m *wireMessage
		if m, err = readWire(r); err != nil {
			break
		}
		switch m.Type {
		case "answer":
			in.answered(w, m)
		case "refused":
			in.c.refused(m.ID)
		default:
			err = fmt.Errorf("%w: a hub does not send %s", errWire, m.Type)
		}
	}
	w.close()
	in.mu.Lock()
	if in.link == w {
		in.link = nil
		if !in.closed {
			in.role, in.token = roleConnecting, "" // the hub's token dies with it
		}
	}
	closed := in.closed
	in.mu.Unlock()
	if !closed {
		in.c.log.Printf("approval console: the link to the console ended (%v); taking over or joining again", err)
	}
}

// answered takes an answer the hub's page gave to one of this server's
// asks: checked against the ask's own form, then resolved here; the hub is
// told what became of it.
func (in *inbox) answered(w *wireConn, m *wireMessage) {
	res := &wireMessage{Type: "result", ID: m.ID}
	t := in.c.lookup(m.ID)
	if t == nil {
		res.Outcome = "already decided, withdrawn or timed out"
		w.send(res)
		return
	}
	a, err := wireAnswer(t, m)
	switch {
	case err != nil:
		res.Outcome = "not an answer this question accepts"
	case t.resolve(a):
		res.OK, res.Outcome = true, describeAnswer(t, a)
	default:
		res.Outcome = "already decided through another channel"
	}
	w.send(res)
}

// wireAnswer is the answer m carries, if it fits t's form.
func wireAnswer(t *ticket, m *wireMessage) (answer, error) {
	a := answer{Channel: ChannelConsole, Action: mcp.ElicitationResponseAction(m.Action)}
	if m.Action != "accept" {
		if t.Kind == kindApproval && m.Action != "decline" {
			return a, errConsoleAnswer
		}
		return a, nil
	}
	if t.Kind == kindApproval {
		switch m.Decision {
		case AllowOnce, AllowForSession, Deny:
			a.Content = map[string]any{"decision": m.Decision}
			return a, nil
		}
		return a, errConsoleAnswer
	}
	if m.Answer == nil {
		return a, errConsoleAnswer
	}
	a.Content = map[string]any{"answer": *m.Answer}
	if _, _, ok := answerOf(*t.Question, a); !ok {
		return a, errConsoleAnswer
	}
	return a, nil
}

// added tells the hub about an ask listed here (called with c.mu held).
func (in *inbox) added(t *ticket, now time.Time) {
	if w := in.peerLink(); w != nil {
		w.send(&wireMessage{Type: "post", ID: t.ID, Ask: in.c.wireAskOf(t, now)})
	}
}

// finished tells the hub an ask left this server's list (called with c.mu
// held).
func (in *inbox) finished(t *ticket, outcome, channel string) {
	if w := in.peerLink(); w != nil {
		w.send(&wireMessage{Type: "withdraw", ID: t.ID, Outcome: outcome, Channel: channel})
	}
}

func (in *inbox) peerLink() *wireConn {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.link
}

// repost posts every pending ask (after joining a hub).
func (c *Console) repost(w *wireConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, t := range c.pending {
		w.send(&wireMessage{Type: "post", ID: t.ID, Ask: c.wireAskOf(t, now)})
	}
}

// refused: the hub will not list an ask; one that waits on the console
// alone is denied (approval_unavailable).
func (c *Console) refused(id string) {
	if t := c.lookup(id); t != nil && t.alone {
		t.resolve(answer{Channel: ChannelConsole, Err: errors.New("the shared console is full")})
	}
}

// wireAskOf is what the hub shows of t (called with c.mu held).
func (c *Console) wireAskOf(t *ticket, now time.Time) *wireAsk {
	pv := c.cardOf(t, now)
	pv.ID, pv.SecondsLeft, pv.Server = "", 0, "" // the hub's own
	return &wireAsk{pendingView: pv, DeadlineMS: t.Deadline.UnixMilli()}
}
