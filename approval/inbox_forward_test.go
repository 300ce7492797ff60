package approval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawPeer is a joined server played by the test on the hub's socket: it
// keeps every byte the hub sends it and hands over the messages.
type rawPeer struct {
	conn net.Conn
	msgs chan *wireMessage

	mu  sync.Mutex
	got bytes.Buffer
}

func dialRaw(t *testing.T, hub *member, addr string) *rawPeer {
	t.Helper()
	conn, err := net.Dial("unix", hub.c.inbox.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	p := &rawPeer{conn: conn, msgs: make(chan *wireMessage, 64)}
	p.send(t, fmt.Sprintf(`{"type":"hello","version":%d,"addr":%q,"server":"raw"}`, wireVersion, addr))
	go func() {
		defer close(p.msgs)
		r := bufio.NewReader(io.TeeReader(conn, p))
		for {
			m, err := readWire(r)
			if err != nil {
				return
			}
			p.msgs <- m
		}
	}()
	if m := p.next(t); m.Type != "welcome" {
		t.Fatalf("the hub's first message: %+v", m)
	}
	return p
}

func (p *rawPeer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got.Write(b)
}

func (p *rawPeer) received() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got.String()
}

func (p *rawPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := p.conn.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
}

// post posts an approval with id, due in a minute.
func (p *rawPeer) post(t *testing.T, id string) {
	t.Helper()
	p.send(t, fmt.Sprintf(`{"type":"post","id":%q,"ask":{"kind":"approval","tool":"read_file","items":[{"what":"w","rule":"r","risk":"low","session":"once"}],"context":{},"deadline_ms":%d}}`,
		id, time.Now().Add(time.Minute).UnixMilli()))
}

// next is the hub's next message (10 s is a failure bound).
func (p *rawPeer) next(t *testing.T) *wireMessage {
	t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			t.Fatal("the hub hung up")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message from the hub")
		return nil
	}
}

// barrier makes the hub send one more message (the refusal of a post
// under an id the hub's own ask holds) and returns what it sent before.
func (p *rawPeer) barrier(t *testing.T, hubID string) []*wireMessage {
	t.Helper()
	p.post(t, hubID)
	var before []*wireMessage
	for {
		m := p.next(t)
		if m.Type == "refused" && m.ID == hubID {
			return before
		}
		before = append(before, m)
	}
}

// decideText posts an answer on the API and returns the status and message.
func (a *consoleAPI) decideText(id, decision string) (int, string) {
	a.t.Helper()
	resp, err := a.do("POST", "/api/decide", url.Values{"id": {id}, "decision": {decision}})
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Message string }
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Message
}

// recentOutcome waits until the hub's recent decisions hold one about the
// peer's ask and returns its outcome.
func recentOutcome(t *testing.T, c *Console) string {
	t.Helper()
	var got string
	awaitConsole(t, c, "the ask in the recent decisions", func() bool {
		for _, r := range c.view().Recent {
			if r.What == "w" {
				got = r.Outcome
				return true
			}
		}
		return false
	})
	return got
}

// TestInboxUnconfirmedAnswer: an answer the joined server does not confirm
// within the forward timeout is never undone on the hub, because the
// server may still take it: the page is told it is not confirmed, the card
// says so, a second answer is refused without being sent (else the first
// one's result would be read as the second's: a deny shown as recorded
// while the server allowed), and the server's late result, or its
// connection's end, settles the ask with what really became of it.
func TestInboxUnconfirmedAnswer(t *testing.T) {
	const askID = "BBBBBBBBBBBBBBBBBBBBBB"
	setup := func(t *testing.T) (*member, *rawPeer, *consoleAPI, *ticket) {
		addr, dir := freeAddr(t), runtimeDir(t)
		a := joinWith(t, addr, dir, "alpha", func(o *InboxOptions) { o.forward = 200 * time.Millisecond })
		a.role(t)
		own := pendingTicket(a.c)
		p := dialRaw(t, a, addr)
		p.post(t, askID)
		api := apiOf(t, a.c)
		api.csr = a.c.csrf
		api.waitPending(2)
		code, msg := api.decideText(askID, AllowOnce)
		if code != http.StatusAccepted || !strings.Contains(msg, "not confirmed") {
			t.Fatalf("an answer the server did not confirm: %d %q, want 202 saying it is not confirmed", code, msg)
		}
		if m := p.next(t); m.Type != "answer" || m.ID != askID || m.Decision != AllowOnce {
			t.Fatalf("the server got %+v", m)
		}
		card := byServer(api.waitPending(2), "raw")
		if card == nil || !strings.Contains(card.Awaiting, "not confirmed") {
			t.Fatalf("the card does not say the answer is unconfirmed: %+v", card)
		}
		return a, p, api, own
	}

	t.Run("late result", func(t *testing.T) {
		a, p, api, own := setup(t)
		code, msg := api.decideText(askID, Deny)
		if code != http.StatusConflict || !strings.Contains(msg, "not confirmed") {
			t.Fatalf("a second answer while the first is unconfirmed: %d %q", code, msg)
		}
		if sent := p.barrier(t, own.ID); len(sent) != 0 {
			t.Fatalf("the second answer reached the server: %+v", sent)
		}
		p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"allow once"}`, askID))
		if got := recentOutcome(t, a.c); got != "allow once" {
			t.Fatalf("outcome %q", got)
		}
		if list := a.c.view().Pending; len(list) != 1 || list[0].ID != own.ID {
			t.Fatalf("pending after the result: %+v", list)
		}
	})

	t.Run("refused late", func(t *testing.T) {
		// A definite refusal opens the ask again: the next answer is sent.
		a, p, api, _ := setup(t)
		p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"outcome":"not an answer this question accepts"}`, askID))
		awaitConsole(t, a.c, "the card open again", func() bool {
			c := byServer(a.c.view().Pending, "raw")
			return c != nil && c.Awaiting == ""
		})
		done := make(chan int, 1)
		go func() {
			code, _ := api.decideText(askID, Deny)
			done <- code
		}()
		if m := p.next(t); m.Type != "answer" || m.Decision != Deny {
			t.Fatalf("the server got %+v", m)
		}
		p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"denied"}`, askID))
		// Recorded at once, or (on a machine slow enough to pass the
		// short forward timeout) settled by the result all the same.
		if code := <-done; code != http.StatusOK && code != http.StatusAccepted {
			t.Fatalf("the confirmed answer: %d", code)
		}
		if got := recentOutcome(t, a.c); got != "denied" {
			t.Fatalf("outcome %q", got)
		}
	})

	t.Run("server gone", func(t *testing.T) {
		a, p, _, _ := setup(t)
		p.conn.Close()
		if got := recentOutcome(t, a.c); !strings.Contains(got, "never confirmed") {
			t.Fatalf("outcome %q: want it to say the answer was never confirmed", got)
		}
	})
}

// TestInboxPeerGetsNoBrowserSecrets: a joined server is given the token it
// says to its person, and nothing of the person's browser: not the CSRF
// token, nor a login's path or cookie, whatever the person does on the
// page (log in, load it, answer that server's ask).
func TestInboxPeerGetsNoBrowserSecrets(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := joinWith(t, addr, dir, "alpha", func(o *InboxOptions) { o.forward = time.Minute }) // a failure bound, not a speed target
	a.role(t)
	p := dialRaw(t, a, addr)
	p.post(t, goodID)
	cookie, loc := browserLogin(t, a.c)
	if code := browserGet(t, "http://"+addr+loc, cookie); code != 200 {
		t.Fatalf("the page: %d", code)
	}
	awaitConsole(t, a.c, "the peer's ask", func() bool { return a.c.lookup(goodID) != nil })
	done := make(chan int, 1)
	go func() {
		form := url.Values{"id": {goodID}, "decision": {AllowOnce}, "csrf": {a.c.csrf}}
		req, _ := http.NewRequest("POST", "http://"+addr+loc+"api/decide", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://"+addr)
		req.Header.Set("X-CSRF-Token", a.c.csrf)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	if m := p.next(t); m.Type != "answer" || m.ID != goodID {
		t.Fatalf("the peer got %+v", m)
	}
	p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"allow once"}`, goodID))
	if code := <-done; code != http.StatusOK {
		t.Fatalf("the answer: %d", code)
	}
	sid := strings.Split(strings.TrimPrefix(loc, "/s/"), "/")[0]
	got := p.received()
	for what, secret := range map[string]string{"the CSRF token": a.c.csrf, "the login cookie": cookie.Value, "the login's path": sid} {
		if strings.Contains(got, secret) {
			t.Errorf("a joined server was sent %s: %q", what, got)
		}
	}
	if !strings.Contains(got, a.c.Token()) {
		t.Errorf("the joined server was not given the token it says to its person")
	}
}
