package approval

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/display"
)

// Desktop notifications (freedesktop Notifications over the session bus).
const (
	notifyDest   = "org.freedesktop.Notifications"
	notifyPath   = "/org/freedesktop/Notifications"
	notifyMethod = notifyDest + ".Notify"
	// notifyTimeout bounds one Notify call: a slow notification daemon never
	// holds up an ask.
	notifyTimeout = 2 * time.Second
)

// Notifier tells the person on the desktop that an ask is pending, naming
// the tool, the command and the risk, with the address of the ask's own
// page on the console when it is listed there. It never
// fails an ask: without a session bus, or when the daemon does not answer,
// nothing is shown and the ask waits as before.
type Notifier struct {
	address string
	logf    func(string, ...any)

	connect sync.Once // connection's dial, once

	mu     sync.Mutex
	conn   *dbus.Conn // nil until connected, and when the bus cannot be reached
	open   *opener    // the action's handler (notify_open.go), once OpenWith is called
	closed bool
}

// NewNotifier returns the notifier for the session bus at address (the
// value of DBUS_SESSION_BUS_ADDRESS), or nil when there is no bus address.
// It connects at its first notification, not here: connecting is a round
// trip with the bus daemon (1-3 ms measured, unbounded when the daemon
// hangs) that the server's first answer must not wait for, and a session
// that never asks never connects. A bus that cannot be reached is said
// once, then; the asks wait as before.
func NewNotifier(address string, logf func(string, ...any)) *Notifier {
	if address == "" {
		return nil
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Notifier{address: address, logf: logf}
}

// connection connects on its first call and returns the connection; nil
// when the bus cannot be reached or the notifier was closed first.
func (n *Notifier) connection() *dbus.Conn {
	n.connect.Do(func() {
		conn, err := dbus.Connect(n.address)
		if err != nil {
			n.logf("approval: no desktop notifications (session bus: %v)", err)
			return
		}
		n.mu.Lock()
		if n.closed {
			n.mu.Unlock()
			conn.Close()
			return
		}
		n.conn = conn
		o := n.open
		n.mu.Unlock()
		if o != nil {
			n.listen(conn, o) // OpenWith came first
		}
	})
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.conn
}

// Close closes the bus connection, when there is one; a notifier closed
// before connecting never connects.
func (n *Notifier) Close() error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	n.closed = true
	conn := n.conn
	n.mu.Unlock()
	if conn == nil {
		return nil
	}
	return conn.Close()
}

// notify shows one pending ask, in the background. askID and askURL are
// the ask's id and page on the console ("": not listed there, answered in
// the client).
func (n *Notifier) notify(tool string, cc callContext, asks []grants.Decision, askID, askURL string) {
	if n == nil {
		return
	}
	summary, body, urgency := notification(tool, cc, asks, askURL)
	go func() {
		conn := n.connection()
		if conn == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		defer cancel()
		actions := []string{actionKey, "Open this ask on the approval console"}
		if !n.canOpen(askID) {
			actions = []string{} // the console is unavailable: no login to open
		}
		call := conn.Object(notifyDest, notifyPath).CallWithContext(ctx, notifyMethod, 0,
			"onellm-mcp", uint32(0), "dialog-warning", summary, body,
			actions,
			map[string]dbus.Variant{"urgency": dbus.MakeVariant(urgency)}, int32(-1))
		var id uint32
		if err := call.Store(&id); err != nil {
			n.logf("approval: desktop notification: %v", err)
			return
		}
		n.sent(id, askID)
	}()
}

// notification is what the desktop shows: the tool and highest risk in
// the summary; the call, each ask and the ask's page in the body
// (markup-escaped: notification bodies may be rendered as markup).
func notification(tool string, cc callContext, asks []grants.Decision, askURL string) (summary, body string, urgency byte) {
	var top grants.Risk
	for _, d := range asks {
		top = max(top, d.Request.Risk)
	}
	urgency = 1
	if top >= grants.RiskHigh {
		urgency = 2
	}
	summary = fmt.Sprintf("Approval needed: %s (risk %s)", display.Escape(tool), top)
	var b strings.Builder
	if cc.Line != "" {
		b.WriteString(cc.Line + "\n")
	}
	for _, d := range asks {
		b.WriteString(d.Request.Describe() + "\n")
	}
	if askURL != "" {
		b.WriteString("Answer on the console: " + askURL)
	} else {
		b.WriteString("Answer in " + cc.Client)
	}
	return summary, markupEscape(b.String()), urgency
}

func markupEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
