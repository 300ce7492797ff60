package approval

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzOpenState: an attacker-made requestState never opens, never panics;
// a state sealed here opens exactly once for its own binding, and any
// change to it is refused.
func FuzzOpenState(f *testing.F) {
	// The clock moves a minute per input, so spent nonces expire and the
	// bounded nonce set never fills up across iterations.
	var clock atomic.Int64
	clock.Store(time.Now().UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()) }
	s := newSealer(now, 1024)
	b := binding{Kind: kindApproval, Tool: "read_file", Args: digest(`{"path":"a"}`), Principal: "stdio", Asks: digest("k")}
	good, _ := s.seal(b, time.Minute)
	for _, seed := range []string{"", ".", "a.b", good, good + "x", strings.Replace(good, ".", "..", 1), strings.Repeat("A", 5000)} {
		f.Add(seed, 0)
	}
	f.Fuzz(func(t *testing.T, state string, flip int) {
		clock.Add(int64(time.Minute / time.Millisecond))
		if _, err := s.open(state, b); err == nil && state != good {
			t.Fatalf("a state this sealer never issued opened: %q", state)
		}
		sealed, _ := s.seal(b, 30*time.Second)
		if flip != 0 {
			i := (flip%len(sealed) + len(sealed)) % len(sealed)
			mutated := sealed[:i] + string(sealed[i]^0x01) + sealed[i+1:]
			if _, err := s.open(mutated, b); err == nil && mutated != sealed {
				t.Fatalf("a changed state opened: %q", mutated)
			}
		}
		other := b
		other.Principal = "someone else"
		if _, err := s.open(sealed, other); err == nil {
			t.Fatal("a state opened for another principal")
		}
		if _, err := s.open(sealed, b); err != nil {
			t.Fatalf("a fresh state did not open: %v", err)
		}
		if _, err := s.open(sealed, b); err == nil {
			t.Fatal("a state opened twice")
		}
	})
}
