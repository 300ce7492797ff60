package webtools

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSecretHostPatterns: a secret's hosts are read by the policy's host
// matcher, so a pattern config validation accepts is one that attaches
// (`api-*.example.com` used to pass validation and never match).
func TestSecretHostPatterns(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"api-*.example.com", "api-v1.example.com", true},
		{"api-*.example.com", "api-.example.com", true},
		{"api-*.example.com", "api.example.com", false},
		{"api-*.example.com", "x.api-v1.example.com", false},
		{"*.github.com", "api.github.com", true},
		{"*.github.com", "a.b.github.com", true},
		{"*.github.com", "github.com", false},
		{"api.github.com", "API.GitHub.com.", true},
		{"api.github.com", "api.github.com.evil.test", false},
		{"api?.test", "api1.test", true},
		{"[::1]", "::1", true},
		{"bad/pattern", "bad", false},
		{"", "", false},
	}
	for _, tt := range tests {
		s := Secret{Name: "s", Hosts: []string{tt.pattern}}
		if got := s.MatchesHost(tt.host); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

// TestSecretReadOnlyWhenAttached: a secret's value is read only once a hop
// that attaches it was allowed, never for a refused hop or another host,
// and once per call; a secret whose value cannot be read is not sent.
func TestSecretReadOnlyWhenAttached(t *testing.T) {
	var sawAuth atomic.Value
	sawAuth.Store("")
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		sawAuth.Store(r.Header.Get("Authorization"))
		w.Write([]byte("ok " + r.Header.Get("Authorization")))
	})
	c := client(newDNS(map[string]string{"api-1.a.test": "127.0.0.1", "b.test": "127.0.0.1"}))
	var reads atomic.Int32
	load := func() (string, error) { reads.Add(1); return "tok-123456789", nil }
	secrets := func(l func() (string, error)) []Secret {
		return []Secret{{Name: "gh", Hosts: []string{"api-*.a.test"}, Format: "Bearer {value}", Load: l}}
	}
	ctx := context.Background()

	refuse := &recorder{allowPrivate: true, refuse: func(Hop) error { return errors.New("no") }}
	if _, err := c.Do(ctx, Request{URL: srv.url("api-1.a.test", "/"), Secrets: secrets(load)}, refuse.decide); err == nil {
		t.Fatal("refused hop went through")
	}
	if _, err := c.Do(ctx, Request{URL: srv.url("b.test", "/"), Secrets: secrets(load)}, (&recorder{allowPrivate: true}).decide); err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 0 {
		t.Fatalf("value read %d times before any hop attaching it was allowed", n)
	}
	resp, err := c.Do(ctx, Request{URL: srv.url("api-1.a.test", "/"), Secrets: secrets(load)}, (&recorder{allowPrivate: true}).decide)
	if err != nil {
		t.Fatal(err)
	}
	if reads.Load() != 1 || sawAuth.Load() != "Bearer tok-123456789" {
		t.Fatalf("reads %d, server saw %q", reads.Load(), sawAuth.Load())
	}
	if resp.Body != "ok Bearer [REDACTED:gh]" {
		t.Fatalf("lazily read value not redacted: %q", resp.Body)
	}
	// A secret without a value stops the hop: it is neither sent empty nor
	// is the request sent without it.
	sawAuth.Store("not reached")
	failing := func() (string, error) { return "", errors.New("secret gh has no value on the server") }
	_, err = c.Do(ctx, Request{URL: srv.url("api-1.a.test", "/"), Secrets: secrets(failing)}, (&recorder{allowPrivate: true}).decide)
	if err == nil || !strings.Contains(err.Error(), "secret gh has no value") || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("err %v", err)
	}
	if sawAuth.Load() != "not reached" {
		t.Fatalf("a request whose secret has no value was sent (Authorization %q)", sawAuth.Load())
	}
}
