package webtools

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

const egressPolicy = `mode = "strict"

[[rules.allow]]
rule_id    = "api"
capability = "network.http.*"
target     = { host = "api.test" }

[[rules.allow]]
rule_id    = "docs-get"
capability = "network.http.get"
target     = { host = "docs.test" }

[[rules.allow]]
rule_id    = "local"
capability = "network.*"
target     = { host = "127.0.0.1" }
conditions = { allow_private = true }

[[rules.allow]]
rule_id    = "other-tool"
capability = "network.http.*"
target     = { host = "only-http-request.test", tool_name = "http_request" }

[[rules.deny]]
rule_id    = "no-admin"
capability = "network.http.post"
target     = { host = "api.test", path = "/admin/**" }
`

func compilePolicy(t *testing.T, body string) *grants.Policy {
	t.Helper()
	dir := t.TempDir()
	cfg, err := grants.Parse([]byte(body), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReachableHostsAndTunnelPaths(t *testing.T) {
	p := compilePolicy(t, egressPolicy)
	got := ReachableHosts(p, "execute_terminal_command")
	want := []string{
		"api.test (any method, https included)",
		"docs.test (GET; plain http only)",
		"127.0.0.1 (any method, https included) [private addresses allowed]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("reachable %q, want %q", got, want)
	}
	paths := TunnelPaths(p, "execute_terminal_command")
	if !slices.Equal(paths, []string{"/admin/x"}) {
		t.Fatalf("tunnel paths %q", paths)
	}
	// With the real policy: the path deny refuses tunnels to api.test,
	// docs.test gets GET but no tunnel, 127.0.0.1 gets a tunnel.
	decide := func(_ context.Context, r grants.Request) grants.Decision { return p.Decide(r) }
	pol := ProxyPolicy(gateOf(decide), "execute_terminal_command", paths)
	ctx := context.Background()
	if _, err := pol(ctx, Hop{Method: "CONNECT", Host: "api.test", Port: 443}); !errors.Is(err, ErrProxyRefused) {
		t.Errorf("tunnel to a host with a path deny: %v", err)
	}
	if _, err := pol(ctx, Hop{Method: "GET", Host: "api.test", Port: 80, Path: "/admin/x"}); err != nil {
		t.Errorf("GET api.test/admin: %v", err)
	}
	if _, err := pol(ctx, Hop{Method: "POST", Host: "api.test", Port: 80, Path: "/admin/x"}); err == nil {
		t.Errorf("POST api.test/admin allowed")
	}
	if _, err := pol(ctx, Hop{Method: "GET", Host: "docs.test", Port: 80, Path: "/"}); err != nil {
		t.Errorf("GET docs.test: %v", err)
	}
	if _, err := pol(ctx, Hop{Method: "CONNECT", Host: "docs.test", Port: 443}); err == nil {
		t.Errorf("tunnel to a GET-only host allowed")
	}
	if ap, err := pol(ctx, Hop{Method: "CONNECT", Host: "127.0.0.1", Port: 8443, Private: true}); err != nil || !ap {
		t.Errorf("tunnel to 127.0.0.1: %v %v", ap, err)
	}
	if _, err := pol(ctx, Hop{Method: "GET", Host: "only-http-request.test", Port: 80, Path: "/"}); err == nil {
		t.Errorf("a rule for another tool opened the proxy")
	}
	if _, err := pol(ctx, Hop{Method: "GET", Host: "10.0.0.1", Port: 80, Path: "/", Private: true}); err == nil {
		t.Errorf("unnamed private host allowed")
	}
}

// gateOf is a mid-action gate over a decide function, as the server's
// refuses: Allow passes, an ask is approval_unavailable, the rest refused.
func gateOf(decide func(context.Context, grants.Request) grants.Decision) toolkit.MidAction {
	return func(ctx context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		d := decide(ctx, r)
		if d.Effect == grants.Ask {
			d.Effect, d.Reason = grants.Deny, grants.ReasonApprovalUnavailable
		}
		if d.Effect != grants.Allow {
			return d, &toolkit.MidActionRefused{Decision: d}
		}
		return d, nil
	}
}
