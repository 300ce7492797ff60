package approval

import (
	"context"
	"sync"

	"github.com/godbus/dbus/v5"
)

// The notification's action opens the ask's page on the console. Only the
// sandbox may start processes, so the server starts no browser: it asks the
// XDG desktop portal (org.freedesktop.portal.OpenURI, on the same session
// bus) to open the address, and the desktop opens it in the person's browser.
// Without a portal nothing fails; it is said once on stderr.
const (
	portalDest    = "org.freedesktop.portal.Desktop"
	portalPath    = "/org/freedesktop/portal/desktop"
	portalOpenURI = "org.freedesktop.portal.OpenURI.OpenURI"
	actionSignal  = notifyDest + ".ActionInvoked"
	actionKey     = "default"
	// maxNotified bounds the notification ids remembered for their action.
	maxNotified = 256
)

// opener is the notifier's part that answers its notifications' action.
type opener struct {
	url func(askID string) string

	mu   sync.Mutex
	sent []sentNote // our notifications, newest last
	// recorded is closed and replaced on every notification recorded, so
	// that a waiter learns of it without polling.
	recorded chan struct{}
	failed   sync.Once
}

// sentNote is one of our notifications and the console ask it shows
// ("": none).
type sentNote struct {
	id    uint32
	askID string
}

// OpenWith makes the action of the notifications ("Open the approval
// console") open url(askID) (Console.AskLoginURL: the console's login that
// lands on the ask's page) through the desktop portal. Only ActionInvoked
// signals for one of this notifier's notifications, sent by the
// notification daemon itself, count.
func (n *Notifier) OpenWith(url func(askID string) string) {
	if n == nil || url == nil {
		return
	}
	o := &opener{url: url, recorded: make(chan struct{})}
	n.mu.Lock()
	n.open = o
	conn := n.conn
	n.mu.Unlock()
	if conn != nil {
		n.listen(conn, o) // connected already; otherwise connection listens
	}
}

// listen subscribes to the notifications' ActionInvoked signals for o,
// before any notification is sent on conn.
func (n *Notifier) listen(conn *dbus.Conn, o *opener) {
	if err := conn.AddMatchSignal(dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(notifyDest),
		dbus.WithMatchMember("ActionInvoked")); err != nil {
		n.logf("approval: the notification's action will not open the console: %v", err)
		n.mu.Lock()
		if n.open == o {
			n.open = nil
		}
		n.mu.Unlock()
		return
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)
	go n.actions(conn, o, ch) // ends when the connection closes (godbus closes ch)
}

// sent records one of our notifications.
func (n *Notifier) sent(id uint32, askID string) {
	n.mu.Lock()
	o := n.open
	n.mu.Unlock()
	if o == nil || id == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, sentNote{id, askID})
	if len(o.sent) > maxNotified {
		o.sent = o.sent[1:]
	}
	close(o.recorded)
	o.recorded = make(chan struct{})
}

// ours returns the ask of our notification id; ok is false for another's.
func (o *opener) ours(id uint32) (askID string, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.sent) - 1; i >= 0; i-- { // ids may be reused: the newest counts
		if o.sent[i].id == id {
			return o.sent[i].askID, true
		}
	}
	return "", false
}

func (n *Notifier) actions(conn *dbus.Conn, o *opener, ch <-chan *dbus.Signal) {
	for sig := range ch {
		if sig.Name != actionSignal || len(sig.Body) != 2 {
			continue
		}
		id, ok := sig.Body[0].(uint32)
		key, _ := sig.Body[1].(string)
		if !ok || key != actionKey {
			continue
		}
		askID, mine := o.ours(id)
		if !mine || !fromDaemon(conn, sig.Sender) {
			continue
		}
		if uri := o.url(askID); uri != "" { // "": the console is unavailable now
			n.openURI(conn, o, uri)
		}
	}
}

// canOpen is false when the notification's action would open no login
// (OpenWith was called and its url is "": the shared console is
// unavailable, and its address may be anyone's).
func (n *Notifier) canOpen(askID string) bool {
	n.mu.Lock()
	o := n.open
	n.mu.Unlock()
	return o == nil || o.url(askID) != ""
}

// fromDaemon: the signal comes from the owner of the notifications name
// (any client of the bus can emit a signal that looks like one).
func fromDaemon(conn *dbus.Conn, sender string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	var owner string
	err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, notifyDest).Store(&owner)
	return err == nil && owner == sender
}

func (n *Notifier) openURI(conn *dbus.Conn, o *opener, uri string) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	var handle dbus.ObjectPath
	err := conn.Object(portalDest, portalPath).CallWithContext(ctx, portalOpenURI, 0,
		"", uri, map[string]dbus.Variant{}).Store(&handle)
	if err != nil {
		o.failed.Do(func() {
			n.logf("approval: cannot open the console from the notification (no desktop portal %s: %v); open the address on stderr", portalDest, err)
		})
	}
}
