package approval

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/onellm/onellm-mcp/internal/display"
	"github.com/onellm/onellm-mcp/internal/statedir"
)

// The hub's side of the inbox: the rendezvous socket, the peers joined to
// it, and their asks on this console's page (see inbox.go).

type hub struct {
	in *inbox
	ln *net.UnixListener

	mu     sync.Mutex
	peers  map[*peer]bool
	closed bool
}

// peer is one joined server, as the hub sees it.
type peer struct {
	h     *hub
	w     *wireConn
	label string
	pid   int32 // from SO_PEERCRED

	mu      sync.Mutex
	tickets map[string]*ticket // the peer's ask id → its ticket here
	waiting map[string]*waiter // forwarded answers awaiting a result
}

// waiter is one answer forwarded to a peer, awaiting its result. Whoever
// takes it out of peer.waiting settles it, once: the peer's result
// (peer.take, which replies on done), a later answer to a re-posted ask
// of the same id (route.forward, which replies on done), or its own
// forward or await when the wait ends without a result (peer.unwait).
type waiter struct {
	r    *route
	t    *ticket
	a    answer
	done chan reply // the page's reply, sent once by whoever took the waiter
}

type reply struct {
	code int
	msg  string
}

// route is what a ticket posted by a peer carries: whom to forward an
// answer to, and what the peer asked to show.
type route struct {
	p    *peer
	id   string // the ask's id on the peer
	view pendingView
}

// forwardTimeout bounds how long the page waits for a peer to confirm an
// answer (route.forward).
const forwardTimeout = 5 * time.Second

func (in *inbox) forwardTimeout() time.Duration {
	if in.opts.forward > 0 {
		return in.opts.forward
	}
	return forwardTimeout
}

// maxPeers bounds the servers joined to one hub.
const maxPeers = 64

// maxRemoteTTL bounds the deadline a peer may give an ask.
const maxRemoteTTL = 24 * time.Hour

// listenHub opens the rendezvous socket in the runtime folder, checked
// again as statedir.Runtime made it (this user's, closed to others: the one
// check, statedir.CheckRuntime), replacing a stale socket left by a hub
// that died: only the holder of the console's address gets here.
func listenHub(in *inbox) (*hub, error) {
	if in.sockErr != nil {
		return nil, in.sockErr
	}
	if err := statedir.CheckRuntime(filepath.Dir(in.sock)); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(in.sock); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", in.sock)
		}
		if err := os.Remove(in.sock); err != nil {
			return nil, fmt.Errorf("removing the stale socket: %w", err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: in.sock, Net: "unix"})
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(in.sock, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	h := &hub{in: in, ln: ln, peers: map[*peer]bool{}}
	go h.accept()
	return h, nil
}

func (h *hub) accept() {
	for {
		conn, err := h.ln.AcceptUnix()
		if err != nil {
			h.mu.Lock()
			closed := h.closed
			h.mu.Unlock()
			if !closed {
				h.in.c.log.Printf("approval console: the inbox socket stopped: %v", err)
			}
			return
		}
		go h.serve(conn)
	}
}

// serve is one peer's connection: its uid checked, the handshake, then its
// posts and withdrawals until it goes away, which takes its asks off the
// page.
func (h *hub) serve(conn *net.UnixConn) {
	c := h.in.c
	cred, err := peerCred(conn)
	if err != nil || int(cred.Uid) != h.in.uid {
		if err == nil {
			err = fmt.Errorf("uid %d (pid %d) is not this user", cred.Uid, cred.Pid)
		}
		c.log.Printf("approval console: refused a connection to the inbox: %v", err)
		conn.Close()
		return
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	conn.SetReadDeadline(time.Now().Add(handshakeTimeout))
	m, err := readWire(r)
	if err == nil && (m.Type != "hello" || m.Addr != h.in.addr) {
		err = fmt.Errorf("%w: want a hello for %s", errWire, h.in.addr)
	}
	if err != nil {
		c.log.Printf("approval console: refused pid %d at the inbox: %v", cred.Pid, err)
		conn.Close()
		return
	}
	conn.SetReadDeadline(time.Time{})
	p := &peer{h: h, w: newWireConn(conn), label: serverLabel(int(cred.Pid), m.Server), pid: cred.Pid,
		tickets: map[string]*ticket{}, waiting: map[string]*waiter{}}
	h.mu.Lock()
	if h.closed || len(h.peers) >= maxPeers {
		full := !h.closed
		h.mu.Unlock()
		p.w.close()
		if full {
			c.log.Printf("approval console: refused %s: %d servers are joined already", p.label, maxPeers)
		}
		return
	}
	h.peers[p] = true
	h.mu.Unlock()
	p.w.send(c.welcome(h.in.addr))
	c.log.Printf("approval console: %s joined", p.label)
	for {
		m, err := readWire(r)
		if err == nil {
			err = p.take(m)
		}
		if err != nil {
			break
		}
	}
	p.gone()
}

// welcome carries the console's token (the peer says it to its person and
// writes its console.token file), and nothing else of the console's: the
// CSRF token and the logins' cookies stay with the person's browser.
func (c *Console) welcome(addr string) *wireMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &wireMessage{Type: "welcome", Version: wireVersion, Addr: addr, Token: c.token}
}

// take handles one message from the peer.
func (p *peer) take(m *wireMessage) error {
	switch m.Type {
	case "post":
		p.post(m)
	case "withdraw":
		p.mu.Lock()
		t := p.tickets[m.ID]
		delete(p.tickets, m.ID)
		p.mu.Unlock()
		if t != nil {
			outcome := display.Escape(m.Outcome)
			if outcome == "" {
				outcome = "withdrawn"
			}
			p.h.in.c.finished(t, answer{Channel: display.Escape(m.Channel)}, outcome)
		}
	case "result":
		// Settled here, before the next message is read: a result that
		// came before the connection's end is never lost to it (gone).
		p.mu.Lock()
		w := p.waiting[m.ID]
		delete(p.waiting, m.ID)
		p.mu.Unlock()
		if w != nil {
			code, msg := w.r.settle(w.t, w.a, m)
			w.done <- reply{code, msg}
		}
	default:
		return fmt.Errorf("%w: a peer does not send %s", errWire, m.Type)
	}
	return nil
}

// post lists a peer's ask (a repeated id is ignored: a re-post after
// joining can race a new ask's post).
func (p *peer) post(m *wireMessage) {
	c := p.h.in.c
	p.mu.Lock()
	if _, dup := p.tickets[m.ID]; dup {
		p.mu.Unlock()
		return
	}
	if p.waiting[m.ID] != nil {
		// An answer to the ask this id named is unconfirmed: a result
		// names the id only, so that answer's result would be read as
		// one to the new ask. Refused until it is settled.
		p.mu.Unlock()
		p.w.send(&wireMessage{Type: "refused", ID: m.ID, Error: "an answer to an ask with this id is not confirmed yet"})
		return
	}
	t := p.remoteTicket(m.ID, m.Ask, c.now())
	p.tickets[m.ID] = t
	p.mu.Unlock()
	err := c.add(t)
	if old := c.lookup(m.ID); errors.Is(err, errDuplicateAsk) && old != nil && old.route != nil && old.route.p != p && old.route.p.pid == p.pid {
		// The same server, joined again before its old connection's end
		// was seen: the ask moves to the new connection.
		c.finished(old, answer{}, "moved to the server's new connection")
		err = c.add(t)
	}
	if err != nil {
		p.mu.Lock()
		delete(p.tickets, m.ID)
		p.mu.Unlock()
		p.w.send(&wireMessage{Type: "refused", ID: m.ID, Error: err.Error()})
	}
}

// remoteTicket is a peer's ask as a ticket here: what it shows, escaped
// again; the peer's own id (so the link of a URL elicitation the peer sent,
// Console.AskURL, finds it here; Console.add refuses an id already listed,
// so no peer can take over another's ask); a deadline within bounds; and
// the route its answer takes.
func (p *peer) remoteTicket(id string, a *wireAsk, now time.Time) *ticket {
	t := newTicket(id, stateKind(a.Kind), display.Escape(a.Tool), "", now, 0)
	t.Deadline = time.UnixMilli(a.DeadlineMS)
	if t.Deadline.After(now.Add(maxRemoteTTL)) {
		t.Deadline = now.Add(maxRemoteTTL)
	}
	v := pendingView{Kind: a.Kind, Tool: t.Tool, Question: display.Escape(a.Question), Choices: escapeAll(a.Choices),
		Default: display.Escape(a.Default), Level: display.Escape(a.Level), Session: a.Session, Server: p.label,
		Context: callContext{Line: display.Escape(a.Context.Line), Cwd: display.Escape(a.Context.Cwd),
			Client: display.Escape(a.Context.Client), Workspace: display.Escape(a.Context.Workspace)}}
	for _, it := range a.Items {
		v.Items = append(v.Items, itemView{What: display.Escape(it.What), Rule: display.Escape(it.Rule), Risk: display.Escape(it.Risk),
			Session: display.Escape(it.Session)})
	}
	if t.Kind == kindQuestion {
		t.Question = &question{Text: v.Question, Choices: v.Choices, Default: v.Default}
	}
	t.route = &route{p: p, id: id, view: v}
	return t
}

// forward gives an answer from the page to the peer that posted the ask
// (the only one that decides on it) and says what became of it, as the
// page's reply: 200 when the peer took it; 409 when it did not (the ask
// is open again, or it was decided there and the peer withdraws it); 503
// when the connection ended first (its end withdraws the ask). When the
// peer does not reply within forwardTimeout the answer may still be taken
// there, so it is not undone: the page is told (202) that it is sent and
// not confirmed, the card says so, no other answer is taken meanwhile
// (two answers in flight could both be sent and the first one's result
// read as the second's), and the peer's result, its withdrawal or its
// connection's end settles the ask later (settle).
func (r *route) forward(t *ticket, a answer) (code int, msg string) {
	if !t.take() {
		if w := t.awaitingText(); w != "" {
			return http.StatusConflict, w + "; its outcome will show under Recent decisions"
		}
		return http.StatusConflict, "already decided through another channel"
	}
	m := &wireMessage{Type: "answer", ID: r.id, Action: string(a.Action)}
	if content, ok := a.Content.(map[string]any); ok {
		if d, ok := content["decision"].(string); ok {
			m.Decision = d
		}
		if s, ok := content["answer"].(string); ok {
			m.Answer = &s
		}
	}
	p := r.p
	w := &waiter{r: r, t: t, a: a, done: make(chan reply, 1)}
	p.mu.Lock()
	if old := p.waiting[r.id]; old != nil {
		// Not reached (post refuses an id with an answer unconfirmed);
		// should it be, the first is settled, withdrawn.
		old.done <- reply{http.StatusConflict, "withdrawn by " + p.label + " before it confirmed the answer"}
	}
	p.waiting[r.id] = w
	p.mu.Unlock()
	if !p.w.send(m) { // not sent: the connection is ending, which withdraws the ask
		if !p.unwait(r.id, w) {
			return w.reply()
		}
		return http.StatusServiceUnavailable, p.label + " went away; the ask is withdrawn"
	}
	timer := time.NewTimer(p.h.in.forwardTimeout())
	defer timer.Stop()
	p.h.in.beforeWait(false, p.w.ended)
	select {
	case res := <-w.done:
		return res.code, res.msg
	case <-p.w.ended:
		if !p.unwait(r.id, w) { // its result came first
			return w.reply()
		}
		return http.StatusServiceUnavailable, p.label + " went away before confirming the answer; the ask is withdrawn"
	case <-timer.C:
	}
	p.mu.Lock()
	mine := p.waiting[r.id] == w
	if mine {
		t.mu.Lock()
		t.awaiting = "an answer was sent to " + p.label + ", which has not confirmed it yet"
		t.mu.Unlock()
	}
	p.mu.Unlock()
	if !mine { // its result came as the time ran out
		return w.reply()
	}
	p.h.in.c.touch()
	go r.await(w)
	return http.StatusAccepted, "sent to " + p.label + ", which has not confirmed it yet; no other answer is taken until it does, and its outcome will show under Recent decisions"
}

// reply is the page's reply for w, given by whoever took it out of
// peer.waiting.
func (w *waiter) reply() (int, string) {
	res := <-w.done
	return res.code, res.msg
}

// unwait takes w out of p.waiting if it is still there, and reports
// whether it was: false when another took it (and settles it).
func (p *peer) unwait(id string, w *waiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting[id] != w {
		return false
	}
	delete(p.waiting, id)
	return true
}

// beforeWait lets a test hold a forward (late false) or an await (late
// true) until it has made the peer's result and the connection's end both
// ready.
func (in *inbox) beforeWait(late bool, ended <-chan struct{}) {
	if in.opts.beforeWait != nil {
		in.opts.beforeWait(late, ended)
	}
}

// await settles an answer the peer did not confirm in time: its result
// (peer.take settles it), or its connection's end (gone withdraws the
// ask), or, at the latest, the ask's deadline.
func (r *route) await(w *waiter) {
	p, t := r.p, w.t
	timer := time.NewTimer(time.Until(t.Deadline) + p.h.in.forwardTimeout())
	defer timer.Stop()
	p.h.in.beforeWait(true, p.w.ended)
	select {
	case <-w.done:
	case <-p.w.ended:
		p.unwait(r.id, w)
	case <-timer.C:
		if p.unwait(r.id, w) {
			p.h.in.c.finished(t, answer{}, "answer sent to "+p.label+", never confirmed")
		}
	}
}

// settle takes the peer's result for a forwarded answer (its waiter taken
// out of peer.waiting already): taken, it finishes the ask; refused, the
// ask is open again.
func (r *route) settle(t *ticket, a answer, res *wireMessage) (int, string) {
	p := r.p
	outcome := display.Escape(res.Outcome)
	if res.OK {
		p.h.in.c.finished(t, a, outcome)
		return http.StatusOK, "recorded"
	}
	t.mu.Lock()
	t.resolved, t.awaiting = false, ""
	t.mu.Unlock()
	p.h.in.c.touch()
	return http.StatusConflict, outcome
}

// gone takes a peer that went away, and its asks, off the page.
func (p *peer) gone() {
	p.w.close()
	h := p.h
	h.mu.Lock()
	delete(h.peers, p)
	h.mu.Unlock()
	p.mu.Lock()
	tickets := p.tickets
	p.tickets = map[string]*ticket{}
	p.mu.Unlock()
	for _, t := range tickets {
		why := "withdrawn: " + p.label + " went away"
		if t.awaitingText() != "" {
			why = "answer sent, never confirmed: " + p.label + " went away"
		}
		h.in.c.finished(t, answer{}, why)
	}
	h.in.c.log.Printf("approval console: %s left (%d pending asks withdrawn)", p.label, len(tickets))
}

// close removes the socket and drops every peer.
func (h *hub) close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	var peers []*peer
	for p := range h.peers {
		peers = append(peers, p)
	}
	h.mu.Unlock()
	h.ln.Close() // unlinks the socket
	for _, p := range peers {
		p.w.close()
	}
}

// summary is a peer's ask in the page's recent decisions.
func (r *route) summary() string {
	if r.view.Question != "" {
		return r.view.Question
	}
	var parts []string
	for _, it := range r.view.Items {
		parts = append(parts, it.What)
	}
	return strings.Join(parts, "; ")
}
