package approval

import (
	"errors"
	"io"
	"log"
	"net"
	"testing"
)

// TestBecomeHubFresh: a server that becomes the hub other than by its first
// start on a free address serves with a new token and CSRF token and no
// logins, whatever its console held before; the first start keeps them.
func TestBecomeHubFresh(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		c := newConsole([]string{testHost})
		c.log = log.New(io.Discard, "", 0)
		sid, _ := c.newSession()
		tok, csrf := c.token, c.csrf
		in := &inbox{c: c, sockErr: errors.New("not shared in this test"), stop: make(chan struct{}), ended: make(chan struct{}), role: roleConnecting}
		c.inbox = in
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		in.becomeHub(ln, fresh)
		close(in.ended) // as the first start does: no run loop to wait for
		c.mu.Lock()
		renewed := c.token != tok && c.csrf != csrf && len(c.sessions) == 0
		kept := c.token == tok && c.csrf == csrf && len(c.sessions) == 1 && c.sessions[sid] != ""
		c.mu.Unlock()
		if fresh && !renewed {
			t.Errorf("after a takeover the console kept its token, CSRF token or logins")
		}
		if !fresh && !kept {
			t.Errorf("the first start changed the console's credentials")
		}
		in.mu.Lock()
		if in.token != c.token {
			t.Errorf("the inbox hands out %q, the console serves %q", in.token, c.token)
		}
		in.mu.Unlock()
		c.Close()
	}
}
