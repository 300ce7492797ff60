package approval

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// Channels an answer can come through, as recorded in the audit log.
const (
	ChannelElicitation = "elicitation"
	ChannelConsole     = "console"
)

// ticket is one question waiting for a person. Every channel that can
// answer it (the client's elicitation, the console) calls resolve; the
// first call wins and the others are told so, which is how a console answer
// and an elicitation answer race safely.
type ticket struct {
	ID        string
	Kind      stateKind
	Tool      string
	Principal string
	Asks      []grants.Decision // approvals
	Context   callContext       // approvals: the call in full
	Question  *question         // ask_user
	Created   time.Time
	Deadline  time.Time
	// retried is set for a modern call's ticket: its answer is claimed by
	// the client's retry rather than read by a waiting goroutine.
	retried bool
	// alone is set when the ask waits on the console only (no client
	// form): when the console becomes unavailable it is denied.
	alone bool
	// route is set on the hub for an ask a joined server posted: answers
	// are forwarded to it (hub.go).
	route *route

	done    chan answer // receives the winning answer, once
	console *Console    // nil when the console is off

	mu       sync.Mutex
	resolved bool
	// awaiting is set on the hub while an answer forwarded to the peer
	// is not confirmed (route.forward): what the card says.
	awaiting string
}

// awaitingText is what the card says of an unconfirmed forwarded answer
// ("" when there is none).
func (t *ticket) awaitingText() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.awaiting
}

// isResolved says whether an answer won (for a joined server's ask: is
// in flight to it or taken, hub.go).
func (t *ticket) isResolved() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.resolved
}

func newTicket(id string, kind stateKind, tool, principal string, now time.Time, ttl time.Duration) *ticket {
	if id == "" {
		id = randomID()
	}
	return &ticket{ID: id, Kind: kind, Tool: tool, Principal: principal, Created: now, Deadline: now.Add(ttl),
		done: make(chan answer, 1)}
}

// resolve records a as the ticket's answer unless another came first.
func (t *ticket) resolve(a answer) bool {
	if t.route != nil {
		code, _ := t.route.forward(t, a)
		return code == http.StatusOK
	}
	if !t.take() {
		return false
	}
	t.done <- a
	if t.console != nil {
		t.console.finished(t, a, "")
	}
	return true
}

// withdraw closes the ticket without an answer (timeout, client gone). It
// reports false when an answer had already won, which must then be read.
func (t *ticket) withdraw(why string) bool {
	if !t.take() {
		return false
	}
	if t.console != nil {
		t.console.finished(t, answer{}, why)
	}
	return true
}

// take marks the ticket decided; false when it already was.
func (t *ticket) take() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.resolved {
		return false
	}
	t.resolved = true
	return true
}

func randomID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("approval: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
