package approval

import (
	"context"
	"io"
	"log"
	"testing"
	"time"
)

// BenchmarkInboxJoin: a second server finds the address taken and joins
// the hub (dial, SO_PEERCRED, hello, welcome) until its console is ready.
func BenchmarkInboxJoin(b *testing.B) {
	addr := freeAddr(b)
	dir := runtimeDir(b)
	hub, err := OpenInbox(InboxOptions{Addr: addr, RuntimeDir: dir, Name: "hub", Log: log.New(io.Discard, "", 0), Ready: func(string, string, string) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer hub.Close()
	b.ResetTimer()
	for range b.N {
		ready := make(chan string, 1)
		c, err := OpenInbox(InboxOptions{Addr: addr, RuntimeDir: dir, Name: "peer", Log: log.New(io.Discard, "", 0),
			Ready: func(role, _, _ string) { ready <- role }})
		if err != nil {
			b.Fatal(err)
		}
		if r := <-ready; r != rolePeer {
			b.Fatalf("role %s", r)
		}
		b.StopTimer()
		c.Close()
		b.StartTimer()
	}
}

// BenchmarkInboxAnswerRouted: an answer given on the hub's page for a
// joined server's ask travels to that server, is checked and taken there,
// and the result comes back (the page's wait), without HTTP.
func BenchmarkInboxAnswerRouted(b *testing.B) {
	addr, dir := freeAddr(b), runtimeDir(b)
	quiet := log.New(io.Discard, "", 0)
	hub, err := OpenInbox(InboxOptions{Addr: addr, RuntimeDir: dir, Log: quiet, Ready: func(string, string, string) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer hub.Close()
	ready := make(chan string, 1)
	peer, err := OpenInbox(InboxOptions{Addr: addr, RuntimeDir: dir, Log: quiet, Ready: func(r, _, _ string) { ready <- r }})
	if err != nil {
		b.Fatal(err)
	}
	defer peer.Close()
	<-ready
	br, err := New(Options{Console: peer})
	if err != nil {
		b.Fatal(err)
	}
	m := &member{c: peer, broker: br}
	b.ResetTimer()
	for range b.N {
		done := m.approve(context.Background(), "/a.txt")
		var t *ticket
		for t == nil {
			hub.mu.Lock()
			for _, p := range hub.pending {
				t = p
			}
			hub.mu.Unlock()
			if t == nil {
				time.Sleep(50 * time.Microsecond)
			}
		}
		a, _ := consoleAnswer(t, map[string][]string{"decision": {AllowOnce}})
		if !t.resolve(a) {
			b.Fatal("not taken")
		}
		if o := <-done; !o.Approved {
			b.Fatalf("%+v", o)
		}
	}
}
