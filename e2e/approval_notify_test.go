package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// desktop plays the person's desktop on a private session bus: the
// notification daemon and the XDG portal's OpenURI.
type desktop struct {
	notes  chan [2]string // summary, body
	opened chan string
}

func (d *desktop) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	d.notes <- [2]string{summary, body}
	return 1, nil
}

func (d *desktop) OpenURI(parent, uri string, options map[string]dbus.Variant) (dbus.ObjectPath, *dbus.Error) {
	d.opened <- uri
	return "/org/freedesktop/portal/desktop/request/1_1/t", nil
}

// startDesktop starts dbus-daemon --session for the test with a desktop on
// it, and returns the bus address and the desktop's connection.
func startDesktop(t *testing.T) (string, *dbus.Conn, *desktop) {
	t.Helper()
	addr := testkit.SessionBus(t)
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	d := &desktop{notes: make(chan [2]string, 4), opened: make(chan string, 4)}
	for _, s := range []struct{ path, iface, name string }{
		{"/org/freedesktop/Notifications", "org.freedesktop.Notifications", "org.freedesktop.Notifications"},
		{"/org/freedesktop/portal/desktop", "org.freedesktop.portal.OpenURI", "org.freedesktop.portal.Desktop"},
	} {
		if err := conn.Export(d, dbus.ObjectPath(s.path), s.iface); err != nil {
			t.Fatal(err)
		}
		if reply, err := conn.RequestName(s.name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
			t.Fatalf("claiming %s: %v %v", s.name, reply, err)
		}
	}
	return addr, conn, d
}

// TestApprovalDesktopNotification: the real server, given a session bus,
// tells the person of an ask pending on the console with a notification
// that links the ask's own page (no token in it); the notification's action
// has the portal open the console's login landing on that page, where the
// person can answer.
func TestApprovalDesktopNotification(t *testing.T) {
	bus, conn, d := startDesktop(t)
	port := freePort(t)
	f := newFixture(t, sessionConfig+fmt.Sprintf("\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
	f.Env = append(f.Env, "DBUS_SESSION_BUS_ADDRESS="+bus)
	outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
	c := stdioClient(t, f, Legacy) // no elicitation: the console alone answers
	cc := openConsole(t, f, port)

	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- call(t, c, "read_file", map[string]any{"path": outside}) }()
	id := cc.waitPending(1).Pending[0].ID
	var note [2]string
	select {
	case note = <-d.notes:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification reached the session bus")
	}
	page := fmt.Sprintf("http://127.0.0.1:%d/ask/%s", port, id)
	if !strings.Contains(note[0], "read_file") || !strings.Contains(note[1], outside) || !strings.Contains(note[1], "Answer on the console: "+page) {
		t.Fatalf("notification %q / %q: want the tool, the path and %s", note[0], note[1], page)
	}
	if strings.Contains(note[1], cc.tok) {
		t.Fatal("the notification shows the console's token")
	}

	// The person clicks it. The server records the notification's id only
	// once the daemon's reply reaches it, which nothing outside the server
	// signals: the click is repeated (at most 5 times, a second apart)
	// until the portal is asked.
	var uri string
	for i := 0; uri == "" && i < 5; i++ {
		if err := conn.Emit("/org/freedesktop/Notifications", "org.freedesktop.Notifications.ActionInvoked", uint32(1), "default"); err != nil {
			t.Fatal(err)
		}
		select {
		case uri = <-d.opened:
		case <-time.After(time.Second):
		}
	}
	want := fmt.Sprintf("http://127.0.0.1:%d/?token=%s&ask=%s", port, cc.tok, id)
	if uri != want {
		t.Fatalf("the portal was asked to open %q, want %q", uri, want)
	}
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasSuffix(resp.Request.URL.Path, "/ask/"+id) || !strings.Contains(string(body), "o.txt") {
		t.Fatalf("the action's address led to %d %s: %.300s", resp.StatusCode, resp.Request.URL, body)
	}
	if code := cc.decide(url.Values{"id": {id}, "decision": {"allow_once"}}); code != 200 {
		t.Fatalf("decide: %d", code)
	}
	if res := <-done; res.IsError || text(res) != "O\n" {
		t.Fatalf("approved after the notification: %q", text(res))
	}
}
