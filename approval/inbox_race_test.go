package approval

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// holdUntilEnded is a beforeWait hook that holds the wait named by late
// until the peer's connection has ended, so that the peer's result and the
// connection's end are both ready when the wait starts (10 s is a failure
// bound).
func holdUntilEnded(late bool) func(bool, <-chan struct{}) {
	return func(l bool, ended <-chan struct{}) {
		if l != late {
			return
		}
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
		}
	}
}

// hubAndRawPeer is a hub whose forward timeout is forward (and whose
// options set changes further), a raw peer joined to it, and the hub's API.
func hubAndRawPeer(t *testing.T, forward time.Duration, set func(*InboxOptions)) (*member, *rawPeer, *consoleAPI) {
	t.Helper()
	addr, dir := freeAddr(t), runtimeDir(t)
	a := joinWith(t, addr, dir, "alpha", func(o *InboxOptions) {
		o.forward = forward
		if set != nil {
			set(o)
		}
	})
	a.role(t)
	p := dialRaw(t, a, addr)
	api := apiOf(t, a.c)
	api.csr = a.c.csrf
	return a, p, api
}

// postDue posts an approval with id, showing what, due at deadline.
func (p *rawPeer) postDue(t *testing.T, id, what string, deadline time.Time) {
	t.Helper()
	p.send(t, fmt.Sprintf(`{"type":"post","id":%q,"ask":{"kind":"approval","tool":"read_file","items":[{"what":%q,"rule":"r","risk":"low","session":"once"}],"context":{},"deadline_ms":%d}}`,
		id, what, deadline.UnixMilli()))
}

type pageReply struct {
	code int
	msg  string
}

// answerInFlight answers the ask id on the page and returns, once the peer
// got the answer, where the page's reply will arrive.
func answerInFlight(t *testing.T, api *consoleAPI, p *rawPeer, id, decision string) chan pageReply {
	t.Helper()
	done := make(chan pageReply, 1)
	go func() {
		code, msg := api.decideText(id, decision)
		done <- pageReply{code, msg}
	}()
	if m := p.next(t); m.Type != "answer" || m.ID != id || m.Decision != decision {
		t.Fatalf("the peer got %+v", m)
	}
	return done
}

// TestInboxResultThenHangUp: a joined server that sends its result and
// then hangs up took the answer: the page says it was recorded (not that
// the server went away and the ask is withdrawn) and the recent decisions
// say what it took, whether the result came within the forward timeout or
// after the page was told the answer is unconfirmed, and whether it
// withdrew the ask first (as a server of ours does) or not. The hook makes both
// ready before the wait looks; a wait that picks between them by chance
// fails one round in two, so several rounds are run.
func TestInboxResultThenHangUp(t *testing.T) {
	const askID = "CCCCCCCCCCCCCCCCCCCCCC"
	for _, tc := range []struct{ late, withdraw bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		late := tc.late
		t.Run(fmt.Sprintf("late=%v,withdraw=%v", tc.late, tc.withdraw), func(t *testing.T) {
			for round := 0; round < 8; round++ {
				forward := time.Minute // a failure bound
				if late {
					forward = 200 * time.Millisecond // passed for sure: the peer says nothing before the 202
				}
				a, p, api := hubAndRawPeer(t, forward, func(o *InboxOptions) { o.beforeWait = holdUntilEnded(late) })
				p.post(t, askID)
				api.waitPending(1)
				done := answerInFlight(t, api, p, askID, AllowOnce)
				if late {
					if got := <-done; got.code != http.StatusAccepted {
						t.Fatalf("round %d: an answer the peer did not confirm yet: %d %q", round, got.code, got.msg)
					}
				}
				if tc.withdraw { // as a server of ours does: the ask leaves its list, then it says it took the answer
					p.send(t, fmt.Sprintf(`{"type":"withdraw","id":%q,"outcome":"allow once","channel":"console"}`, askID))
				}
				p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"allow once"}`, askID))
				p.conn.Close()
				if !late {
					if got := <-done; got.code != http.StatusOK || got.msg != "recorded" {
						t.Fatalf("round %d: the page was told %d %q, but the peer took the answer", round, got.code, got.msg)
					}
				}
				if got := recentOutcome(t, a.c); got != "allow once" {
					t.Fatalf("round %d: recorded %q, but the peer took the answer", round, got)
				}
			}
		})
	}
}

// TestInboxExpireKeepsAnAnswerInFlight: a joined server's ask whose
// deadline passes while the page's answer is on its way to the server is
// not dropped as timed out: the server's result settles it, and what the
// page is told ("recorded") is what the recent decisions say.
func TestInboxExpireKeepsAnAnswerInFlight(t *testing.T) {
	const askID = "DDDDDDDDDDDDDDDDDDDDDD"
	a, p, api := hubAndRawPeer(t, time.Minute, nil) // a failure bound
	p.post(t, askID)
	api.waitPending(1)
	done := answerInFlight(t, api, p, askID, AllowOnce)
	// The deadline passes while the answer is in flight (set, rather than
	// waited for: every reader of a hub ticket's deadline holds c.mu
	// until the forward times out, a minute from now).
	tk := a.c.lookup(askID)
	a.c.mu.Lock()
	tk.Deadline = time.Now().Add(-time.Minute)
	a.c.mu.Unlock()
	if list := a.c.view().Pending; len(list) != 1 || list[0].ID != askID {
		t.Fatalf("an ask with an answer in flight was dropped at its deadline: pending %+v, recent %+v", list, a.c.view().Recent)
	}
	p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"allow once"}`, askID))
	if got := <-done; got.code != http.StatusOK {
		t.Fatalf("the answer: %d %q", got.code, got.msg)
	}
	if got := recentOutcome(t, a.c); got != "allow once" {
		t.Fatalf("recorded %q, but the peer took the answer", got)
	}
	// Past its deadline and settled, a later ask of the same kind is
	// dropped as before.
	p.postDue(t, goodID, "late", time.Now().Add(-time.Minute))
	awaitConsole(t, a.c, "the expired ask dropped", func() bool {
		for _, r := range a.c.view().Recent {
			if r.What == "late" && r.Outcome == "timed out" {
				return true
			}
		}
		return false
	})
}

// TestInboxUnconfirmedUntilTheDeadline: an answer the joined server never
// confirms, on a connection that stays up, is recorded as sent and never
// confirmed once the ask's deadline (plus the forward timeout) has passed,
// and a result after that changes nothing.
func TestInboxUnconfirmedUntilTheDeadline(t *testing.T) {
	const askID = "EEEEEEEEEEEEEEEEEEEEEE"
	a, p, api := hubAndRawPeer(t, 200*time.Millisecond, nil)
	own := pendingTicket(a.c)
	// Due in 3 s, the peer's own short deadline: the page answers well
	// before it (a failure bound), and the hub's timer ends the wait.
	p.postDue(t, askID, "w", time.Now().Add(3*time.Second))
	api.waitPending(2)
	if code, msg := api.decideText(askID, AllowOnce); code != http.StatusAccepted {
		t.Fatalf("an answer the peer does not confirm: %d %q", code, msg)
	}
	if m := p.next(t); m.Type != "answer" || m.ID != askID {
		t.Fatalf("the peer got %+v", m)
	}
	got := recentOutcome(t, a.c)
	if !strings.Contains(got, "never confirmed") || strings.Contains(got, "went away") {
		t.Fatalf("recorded %q: want the answer sent and never confirmed, the peer still joined", got)
	}
	p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"allow once"}`, askID))
	p.barrier(t, own.ID) // the result was read before the barrier's refusal
	for _, r := range a.c.view().Recent {
		if r.Outcome == "allow once" {
			t.Fatalf("a result after the deadline was recorded: %+v", a.c.view().Recent)
		}
	}
}

// TestInboxRepostWhileUnconfirmed: a server that withdraws an ask and
// posts its id again while an answer to the first is unconfirmed has the
// post refused: its result names the id only, so the first answer's
// result would be read as one to the second. Once the first is settled
// the id may be posted again, and the new answer's result is its own.
func TestInboxRepostWhileUnconfirmed(t *testing.T) {
	const askID = "FFFFFFFFFFFFFFFFFFFFFF"
	a, p, api := hubAndRawPeer(t, 200*time.Millisecond, nil)
	p.postDue(t, askID, "first", time.Now().Add(time.Minute))
	api.waitPending(1)
	if code, msg := api.decideText(askID, AllowOnce); code != http.StatusAccepted {
		t.Fatalf("the first answer: %d %q", code, msg)
	}
	if m := p.next(t); m.Type != "answer" {
		t.Fatalf("the peer got %+v", m)
	}
	p.send(t, fmt.Sprintf(`{"type":"withdraw","id":%q,"outcome":"withdrawn"}`, askID))
	awaitConsole(t, a.c, "the first ask withdrawn", func() bool { return len(a.c.view().Pending) == 0 })
	p.post(t, askID) // "w", due in a minute
	if m := p.next(t); m.Type != "refused" || m.ID != askID {
		t.Fatalf("a post over an unconfirmed answer: the hub sent %+v", m)
	}
	// The connection's messages are read in order: the result settles the
	// first answer before the next post is read.
	p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"allowed"}`, askID))
	p.post(t, askID)
	api.waitPending(1)
	if code, msg := api.decideText(askID, Deny); code != http.StatusAccepted {
		t.Fatalf("the answer to the ask posted again: %d %q", code, msg)
	}
	if m := p.next(t); m.Type != "answer" || m.Decision != Deny {
		t.Fatalf("the peer got %+v", m)
	}
	p.send(t, fmt.Sprintf(`{"type":"result","id":%q,"ok":true,"outcome":"denied"}`, askID))
	if got := recentOutcome(t, a.c); got != "denied" {
		t.Fatalf("the answer to the ask posted again: recorded %q", got)
	}
}
