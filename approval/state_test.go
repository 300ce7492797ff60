package approval

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func askOn(path, rule string) grants.Decision {
	return grants.Decision{Request: grants.Request{Capability: grants.CapFilesystemRead,
		Target: grants.Target{ToolName: "read_file", Path: path}, Risk: grants.RiskHigh},
		Effect: grants.Ask, Reason: grants.ReasonMatchedAsk, RuleID: rule}
}

func testBinding() binding {
	return binding{Kind: kindApproval, Tool: "read_file", Args: argsDigest(json.RawMessage(`{"path":"/etc/hosts"}`)),
		Principal: "stdio", Asks: asksDigest([]grants.Decision{askOn("/etc/hosts", "r1")})}
}

func TestStateOpen(t *testing.T) {
	good := testBinding()
	tamper := func(state string, f func(*claims)) string {
		body, _, _ := strings.Cut(state, ".")
		raw, _ := base64.RawURLEncoding.DecodeString(body)
		var c claims
		json.Unmarshal(raw, &c)
		f(&c)
		nb, _ := json.Marshal(c)
		_, mac, _ := strings.Cut(state, ".")
		return base64.RawURLEncoding.EncodeToString(nb) + "." + mac // old MAC over new claims
	}
	with := func(f func(*binding)) binding { b := good; f(&b); return b }
	cases := []struct {
		name   string
		state  func(s *sealer) string
		bind   binding
		wait   time.Duration
		want   error
		reason grants.Reason
	}{
		{"good", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, good, 0, nil, ""},
		{"empty", func(*sealer) string { return "" }, good, 0, errForged, grants.ReasonDeclined},
		{"garbage", func(*sealer) string { return "not.base64!" }, good, 0, errForged, grants.ReasonDeclined},
		{"forged MAC", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st[:len(st)-3] + "AAA" }, good, 0, errForged, grants.ReasonDeclined},
		{"claims changed", func(s *sealer) string {
			st, _ := s.seal(good, time.Minute)
			return tamper(st, func(c *claims) { c.Exp += 3600_000 })
		}, good, 0, errForged, grants.ReasonDeclined},
		{"another server's key", func(*sealer) string {
			other := newSealer(time.Now, 10)
			st, _ := other.seal(good, time.Minute)
			return st
		}, good, 0, errForged, grants.ReasonDeclined},
		{"wrong tool", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, with(func(b *binding) { b.Tool = "apply_patch" }), 0, errMismatch, grants.ReasonDeclined},
		{"wrong args", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, with(func(b *binding) { b.Args = argsDigest(json.RawMessage(`{"path":"/etc/passwd"}`)) }), 0, errMismatch, grants.ReasonDeclined},
		{"wrong principal", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, with(func(b *binding) { b.Principal = "tok2/s9" }), 0, errMismatch, grants.ReasonDeclined},
		{"wrong requests", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, with(func(b *binding) {
			b.Asks = asksDigest([]grants.Decision{askOn("/etc/hosts", "r1"), askOn("/etc/shadow", "r1")})
		}), 0, errMismatch, grants.ReasonDeclined},
		{"other rule", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, with(func(b *binding) {
			b.Asks = asksDigest([]grants.Decision{askOn("/etc/hosts", "r2")})
		}), 0, errMismatch, grants.ReasonDeclined},
		{"question, not approval", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, with(func(b *binding) { b.Kind = kindQuestion }), 0, errMismatch, grants.ReasonDeclined},
		{"expired", func(s *sealer) string { st, _ := s.seal(good, time.Minute); return st }, good, time.Minute, errExpired, grants.ReasonApprovalTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			s := newSealer(clk.now, 100)
			st := tc.state(s)
			clk.advance(tc.wait)
			_, err := s.open(st, tc.bind)
			if !errors.Is(err, tc.want) {
				t.Fatalf("open: %v, want %v", err, tc.want)
			}
			if err != nil && stateReason(err) != tc.reason {
				t.Fatalf("reason %s, want %s", stateReason(err), tc.reason)
			}
		})
	}
}

// TestStateKeyMadeOnce: the key is made on first use, so the first seals
// may race; every state they make opens with the one key that won, from
// the first open on, in any order.
func TestStateKeyMadeOnce(t *testing.T) {
	s := newSealer(time.Now, 1024)
	b := testBinding()
	const n = 16
	states := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			st, _ := s.seal(b, time.Minute)
			states <- st
		})
	}
	wg.Wait()
	close(states)
	for st := range states {
		if _, err := s.open(st, b); err != nil {
			t.Fatalf("a state sealed while the key was being made does not open: %v", err)
		}
	}
}

func TestStateSingleUse(t *testing.T) {
	clk := newClock()
	s := newSealer(clk.now, 2)
	b := testBinding()
	st, nonce := s.seal(b, time.Minute)
	got, err := s.open(st, b)
	if err != nil || got.nonce != nonce || got.page {
		t.Fatalf("first open: %v %+v", err, got)
	}
	if _, err := s.open(st, b); !errors.Is(err, errReplayed) {
		t.Fatalf("replay: %v", err)
	}
	// A mismatched opening does not spend the nonce of a good state...
	st2, _ := s.seal(b, time.Minute)
	other := b
	other.Tool = "x"
	if _, err := s.open(st2, other); !errors.Is(err, errMismatch) {
		t.Fatal(err)
	}
	if _, err := s.open(st2, b); err != nil {
		t.Fatalf("after a mismatch: %v", err)
	}
	// ...and the bounded set refuses new states while full of live nonces,
	// then takes them again once those expire.
	st3, _ := s.seal(b, time.Minute)
	if _, err := s.open(st3, b); !errors.Is(err, errTooMany) {
		t.Fatalf("full set: %v", err)
	}
	clk.advance(2 * time.Minute)
	st4, _ := s.seal(b, time.Minute)
	if _, err := s.open(st4, b); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
}

func TestArgsDigestCanonical(t *testing.T) {
	same := []string{`{"path":"a","limit":1}`, `{ "limit":1 , "path":"a" }`, "{\n\"limit\": 1,\"path\":\"a\"}"}
	for _, s := range same[1:] {
		if string(argsDigest(json.RawMessage(s))) != string(argsDigest(json.RawMessage(same[0]))) {
			t.Errorf("%s digests differently from %s", s, same[0])
		}
	}
	differ := []string{`{"path":"a","limit":2}`, `{"path":"a"}`, `{"path":"a","limit":1,"x":null}`, `{"path":"a","limit":1.0}`, `[1]`, `not json`}
	for _, s := range differ {
		if string(argsDigest(json.RawMessage(s))) == string(argsDigest(json.RawMessage(same[0]))) {
			t.Errorf("%s digests like %s", s, same[0])
		}
	}
	if string(argsDigest(nil)) != string(argsDigest(json.RawMessage(`{}`))) {
		t.Error("no arguments should digest as {}")
	}
}

func BenchmarkSeal(b *testing.B) {
	s := newSealer(time.Now, 1<<20)
	bind := testBinding()
	b.ReportAllocs()
	for b.Loop() {
		s.seal(bind, time.Minute)
	}
}

func BenchmarkOpen(b *testing.B) {
	s := newSealer(time.Now, 1<<30)
	bind := testBinding()
	states := make([]string, b.N)
	for i := range states {
		states[i], _ = s.seal(bind, time.Hour)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.open(states[i], bind); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArgsDigest(b *testing.B) {
	raw := json.RawMessage(`{"path":"/home/me/project/src/main.go","offset":10,"limit":200}`)
	b.ReportAllocs()
	for b.Loop() {
		argsDigest(raw)
	}
}

// TestStatePageMark: a state sealed for a URL elicitation opens as one, so
// its retry is never answered from the client's content.
func TestStatePageMark(t *testing.T) {
	s := newSealer(time.Now, 8)
	b := testBinding()
	st, nonce := s.sealAs(b, time.Minute, true)
	if o, err := s.open(st, b); err != nil || !o.page || o.nonce != nonce {
		t.Fatalf("page state opened as %+v, %v", o, err)
	}
	st, _ = s.seal(b, time.Minute)
	if o, err := s.open(st, b); err != nil || o.page {
		t.Fatalf("form state opened as %+v, %v", o, err)
	}
}
