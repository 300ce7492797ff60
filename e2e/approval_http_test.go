package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The approval tests over real streamable HTTP: the binary serves
// `serve --http` with a bearer token, and mcp-go clients of both eras
// (legacy: elicitation/create on the POST's event stream; modern: an
// input-required result and a retry) answer the approval form.

// TestApprovalHTTPOnce: allow_once runs the call once; the next identical
// call asks again. deny and decline refuse with "declined".
func TestApprovalHTTPOnce(t *testing.T) {
	f := newFixture(t, sessionConfig+httpConfig)
	outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
	srv := startHTTP(t, f)
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			e := &elicitor{answer: decide("allow_once")}
			c := httpClient(t, srv.URL, srv.Token, era, client.WithElicitationHandler(e))
			for i := 1; i <= 2; i++ {
				res := call(t, c, "read_file", map[string]any{"path": outside})
				if res.IsError || text(res) != "O\n" {
					t.Fatalf("call %d approved once: %q", i, text(res))
				}
				if e.count() != i {
					t.Fatalf("after call %d asked %d times: allow_once was remembered", i, e.count())
				}
				if msg := e.lastMessage(); !strings.Contains(msg, outside) || !strings.Contains(msg, "ask-outside") {
					t.Errorf("form message %q lacks the path or the rule", msg)
				}
			}
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approved" || l["approval_channel"] != "elicitation" {
				t.Fatalf("audit: %v", l)
			}
			if sess, _ := lastDecision(t, f, "read_file")["session"].(string); !strings.HasPrefix(sess, "http:") {
				t.Errorf("audit session %q is not an HTTP principal", sess)
			}

			for _, tc := range []struct {
				name   string
				answer func(int, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
			}{
				{"deny", decide("deny")},
				{"decline", reply(mcp.ElicitationResponseActionDecline, nil)},
			} {
				e.answer = tc.answer
				before := e.count()
				res := call(t, c, "read_file", map[string]any{"path": outside})
				if !res.IsError || !strings.Contains(text(res), "declined") || strings.Contains(text(res), "O\n") {
					t.Fatalf("%s: %q", tc.name, text(res))
				}
				if e.count() != before+1 {
					t.Fatalf("%s: asked %d times", tc.name, e.count()-before)
				}
				if l := lastDecision(t, f, "read_file"); l["reason_code"] != "declined" {
					t.Fatalf("%s: audit %v", tc.name, l)
				}
			}
		})
	}
}

// TestApprovalHTTPForSession: allow_for_session holds for the next
// identical call (not asked), not for a different one, and not for another
// client (another principal: a legacy client's MCP session).
func TestApprovalHTTPForSession(t *testing.T) {
	f := newFixture(t, sessionConfig+httpConfig)
	a := f.write(t, filepath.Join(f.Root, "a.txt"), "A\n")
	b := f.write(t, filepath.Join(f.Root, "b.txt"), "B\n")
	srv := startHTTP(t, f)
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			e := &elicitor{answer: decide("allow_for_session")}
			c := httpClient(t, srv.URL, srv.Token, era, client.WithElicitationHandler(e))
			// In the modern era the principal is the token alone; the legacy
			// subtest's approval was bound to that client's MCP session, so
			// it does not reach here: the first read asks.
			if res := call(t, c, "read_file", map[string]any{"path": a}); res.IsError || text(res) != "A\n" || e.count() != 1 {
				t.Fatalf("first read: %q, asked %d", text(res), e.count())
			}
			e.answer = decide("deny") // a second ask now refuses
			if res := call(t, c, "read_file", map[string]any{"path": a}); res.IsError || text(res) != "A\n" || e.count() != 1 {
				t.Fatalf("remembered read: %q, asked %d times", text(res), e.count())
			}
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approved_for_session" {
				t.Fatalf("audit: %v", l)
			}
			if res := call(t, c, "read_file", map[string]any{"path": b}); !res.IsError || !strings.Contains(text(res), "declined") || e.count() != 2 {
				t.Fatalf("other path: %q, asked %d times", text(res), e.count())
			}
			if era == Legacy {
				// Another legacy client with the same token is another MCP
				// session: it is asked again.
				e2 := &elicitor{answer: decide("deny")}
				c2 := httpClient(t, srv.URL, srv.Token, Legacy, client.WithElicitationHandler(e2))
				if res := call(t, c2, "read_file", map[string]any{"path": a}); !res.IsError || e2.count() != 1 {
					t.Fatalf("another legacy session reused the approval: %q, asked %d", text(res), e2.count())
				}
			}
		})
	}
}

// TestApprovalHTTPWithoutElicitation: a client that did not declare
// elicitation is never asked; the call is refused with approval_unavailable.
func TestApprovalHTTPWithoutElicitation(t *testing.T) {
	f := newFixture(t, sessionConfig+httpConfig)
	outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
	srv := startHTTP(t, f)
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			c := httpClient(t, srv.URL, srv.Token, era)
			res := call(t, c, "read_file", map[string]any{"path": outside})
			if !res.IsError || !strings.Contains(text(res), "approval_unavailable") || strings.Contains(text(res), "O\n") {
				t.Fatalf("read: %q", text(res))
			}
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approval_unavailable" {
				t.Fatalf("audit: %v", l)
			}
		})
	}
}

// TestApprovalHTTPTimeout: a person who never answers in time: denied with
// approval_timeout after approval.timeout_seconds = 1, and the server keeps
// serving when the late answer lands.
func TestApprovalHTTPTimeout(t *testing.T) {
	f := newFixture(t, sessionConfig+"\n[approval]\ntimeout_seconds = 1\n"+httpConfig)
	outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
	f.write(t, "in.txt", "in\n")
	srv := startHTTP(t, f)
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			// Too late (lateAnswer): legacy, held back until the call came
			// back refused; modern, given past the timeout.
			late, answered := lateAnswer(era)
			c := httpClient(t, srv.URL, srv.Token, era, client.WithElicitationHandler(&elicitor{answer: late}))
			start := time.Now()
			res := call(t, c, "read_file", map[string]any{"path": outside})
			took := time.Since(start)
			if !res.IsError || !strings.Contains(text(res), "approval_timeout") || strings.Contains(text(res), "O\n") {
				t.Fatalf("late answer: %q", text(res))
			}
			t.Logf("%s: refused with approval_timeout after %s", era, took.Round(time.Millisecond))
			if l := lastDecision(t, f, "read_file"); l["reason_code"] != "approval_timeout" {
				t.Fatalf("audit: %v", l)
			}
			answered() // the late answer arrives
			if res := call(t, c, "read_file", map[string]any{"path": "in.txt"}); res.IsError || text(res) != "in\n" {
				t.Fatalf("after the late answer: %q", text(res))
			}
		})
	}
}
