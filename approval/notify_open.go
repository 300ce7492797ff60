package approval

import (
	"context"
	"sync"

	"github.com/godbus/dbus/v5"
)

// The notification's action opens the console. Only the sandbox may start
// processes, so the server starts no browser: it asks the XDG desktop
// portal (org.freedesktop.portal.OpenURI, on the same session bus) to open
// the console's address, and the desktop opens it in the person's browser.
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
	url func() string

	mu     sync.Mutex
	ids    []uint32 // our notifications, newest last
	failed sync.Once
}

// OpenWith makes the action of the notifications ("Open the approval
// console") open url() (the console's address with its login token)
// through the desktop portal. Only ActionInvoked signals for one of this
// notifier's notifications, sent by the notification daemon itself, count.
func (n *Notifier) OpenWith(url func() string) {
	if n == nil || url == nil {
		return
	}
	if err := n.conn.AddMatchSignal(dbus.WithMatchObjectPath(notifyPath), dbus.WithMatchInterface(notifyDest),
		dbus.WithMatchMember("ActionInvoked")); err != nil {
		n.logf("approval: the notification's action will not open the console: %v", err)
		return
	}
	o := &opener{url: url}
	n.mu.Lock()
	n.open = o
	n.mu.Unlock()
	ch := make(chan *dbus.Signal, 16)
	n.conn.Signal(ch)
	go n.actions(o, ch) // ends when the connection closes (godbus closes ch)
}

// sent records one of our notifications.
func (n *Notifier) sent(id uint32) {
	n.mu.Lock()
	o := n.open
	n.mu.Unlock()
	if o == nil || id == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ids = append(o.ids, id)
	if len(o.ids) > maxNotified {
		o.ids = o.ids[1:]
	}
}

func (o *opener) ours(id uint32) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, v := range o.ids {
		if v == id {
			return true
		}
	}
	return false
}

func (n *Notifier) actions(o *opener, ch <-chan *dbus.Signal) {
	for sig := range ch {
		if sig.Name != actionSignal || len(sig.Body) != 2 {
			continue
		}
		id, ok := sig.Body[0].(uint32)
		key, _ := sig.Body[1].(string)
		if !ok || key != actionKey || !o.ours(id) || !n.fromDaemon(sig.Sender) {
			continue
		}
		n.openURI(o)
	}
}

// fromDaemon: the signal comes from the owner of the notifications name
// (any client of the bus can emit a signal that looks like one).
func (n *Notifier) fromDaemon(sender string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	var owner string
	err := n.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, notifyDest).Store(&owner)
	return err == nil && owner == sender
}

func (n *Notifier) openURI(o *opener) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	var handle dbus.ObjectPath
	err := n.conn.Object(portalDest, portalPath).CallWithContext(ctx, portalOpenURI, 0,
		"", o.url(), map[string]dbus.Variant{}).Store(&handle)
	if err != nil {
		o.failed.Do(func() {
			n.logf("approval: cannot open the console from the notification (no desktop portal %s: %v); open the address on stderr", portalDest, err)
		})
	}
}
