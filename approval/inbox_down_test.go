package approval

import (
	"net"
	"net/http"
	"testing"
)

// TestInboxDownTokenNotReused: nothing that logged in before the console
// went down logs in on the console that comes back. The server was joined
// to a hub (it learnt the hub's token); the hub left and a stranger took
// the address (it may have been sent the person's cookie, or opened a
// login URL); when the stranger lets go, the server becomes the hub with a
// token of its own.
func TestInboxDownTokenNotReused(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := join(t, addr, dir, "alpha", nil)
	a.role(t)
	b := join(t, addr, dir, "beta", nil)
	if r := b.role(t); r != rolePeer {
		t.Fatalf("beta: %s", r)
	}
	seen := apiOf(t, b.c) // what beta handed out while joined
	if seen.tok != apiOf(t, a.c).tok {
		t.Fatal("the joined server does not hand out the hub's token")
	}
	// The stranger takes the address while the hub leaves: the hub stops
	// serving the page, the stranger listens, then the hub's socket goes
	// and beta's link ends; beta can neither listen nor join.
	a.c.srv.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	a.c.inbox.hub.close()
	b.log.await(t, "ERROR")
	if u := b.c.AskLoginURL(goodID); u != "" {
		t.Fatalf("a login URL while a stranger holds the address: %q", u)
	}
	ln.Close()
	if r := b.role(t); r != roleHub {
		t.Fatalf("beta after the stranger left: %s", r)
	}
	seen.hub = b.c
	if _, err := seen.pending(); err == nil {
		t.Fatal("the token handed out before the stranger held the address logs in on the console that came back")
	}
	now := apiOf(t, b.c)
	if _, err := now.pending(); err != nil || now.tok == seen.tok {
		t.Fatalf("the console that came back: %v (same token %v)", err, now.tok == seen.tok)
	}
	if code := browserGet(t, b.c.URL(), &http.Cookie{Name: cookieName, Value: seen.tok}); code != http.StatusForbidden {
		t.Fatalf("the old token as a cookie: %d", code)
	}
}
