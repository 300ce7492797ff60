package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mark3labs/mcp-go/client"
)

// localIssuer is an identity provider on 127.0.0.1: keys made in the test,
// its JWKS served locally, tokens minted on demand.
type localIssuer struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	key *ecdsa.PrivateKey
	kid string
}

const oauthIssuer = "https://idp.e2e.example"

func newLocalIssuer(t *testing.T) *localIssuer {
	is := &localIssuer{t: t}
	is.rotate("k1")
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &is.key.PublicKey, KeyID: is.kid, Use: "sig"}}})
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *localIssuer) rotate(kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		is.t.Fatal(err)
	}
	is.mu.Lock()
	is.key, is.kid = k, kid
	is.mu.Unlock()
}

func (is *localIssuer) token(sub, aud, scope string, ttl time.Duration) string {
	is.mu.Lock()
	key, kid := is.key, is.kid
	is.mu.Unlock()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
	if err != nil {
		is.t.Fatal(err)
	}
	now := time.Now()
	raw, err := jwt.Signed(signer).Claims(map[string]any{
		"iss": oauthIssuer, "sub": sub, "aud": aud, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(ttl).Unix(),
	}).Serialize()
	if err != nil {
		is.t.Fatal(err)
	}
	return raw
}

// TestOAuthResourceServer: with http.auth = "oauth" the server takes only
// access tokens its issuer signed for it, with the scopes it needs; it
// serves its protected resource metadata and points clients at it; the
// token's subject is the principal, so two subjects never share an
// approval.
func TestOAuthResourceServer(t *testing.T) {
	is := newLocalIssuer(t)
	f := newFixture(t, sessionConfig+fmt.Sprintf(`
[http]
auth            = "oauth"
issuer          = %q
audience        = "https://mcp.e2e.example/mcp"
jwks_url        = %q
required_scopes = ["mcp:tools"]
`, oauthIssuer, is.srv.URL+"/jwks"))
	srv := startHTTP(t, f)
	if !strings.Contains(srv.stderr.String(), "OAuth resource server: tokens from "+oauthIssuer) {
		t.Errorf("start-up does not say how it authenticates:\n%s", srv.stderr)
	}
	const aud = "https://mcp.e2e.example/mcp"

	// Protected resource metadata, at the well-known path and its /mcp form.
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(srv.Base + path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 200 || m["resource"] != aud || fmt.Sprint(m["authorization_servers"]) != "["+oauthIssuer+"]" ||
			fmt.Sprint(m["scopes_supported"]) != "[mcp:tools]" {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, m)
		}
	}

	post := func(token string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	prm := `resource_metadata="https://mcp.e2e.example/.well-known/oauth-protected-resource/mcp"`
	refusals := []struct {
		name, token string
		status      int
		want        string // in WWW-Authenticate
	}{
		{"no token", "", 401, prm + `, scope="mcp:tools"`},
		{"expired", is.token("alice", aud, "mcp:tools", -5*time.Minute), 401, `error="invalid_token"`},
		{"for another resource", is.token("alice", "https://other.example/mcp", "mcp:tools", time.Hour), 401, "another resource"},
		{"missing scope", is.token("alice", aud, "mcp:read", time.Hour), 403, `error="insufficient_scope"`},
		{"the static token of token auth", e2eToken, 401, `error="invalid_token"`},
	}
	for _, tc := range refusals {
		resp, body := post(tc.token)
		if resp.StatusCode != tc.status || !strings.Contains(resp.Header.Get("WWW-Authenticate"), tc.want) ||
			!strings.Contains(resp.Header.Get("WWW-Authenticate"), prm) {
			t.Errorf("%s: %d %q (WWW-Authenticate %q)", tc.name, resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
		}
	}

	// Two subjects, each with a valid token: each completes a call, and an
	// approval "for the session" of one never holds for the other.
	outside := f.write(t, filepath.Join(f.Root, "o.txt"), "O\n")
	ea := &elicitor{answer: decide("allow_for_session")}
	ca := httpClient(t, srv.URL, is.token("alice", aud, "mcp:tools", time.Hour), Legacy, client.WithElicitationHandler(ea))
	if res := call(t, ca, "read_file", map[string]any{"path": outside}); res.IsError || text(res) != "O\n" || ea.count() != 1 {
		t.Fatalf("alice: %s (asked %d)", text(res), ea.count())
	}
	if res := call(t, ca, "read_file", map[string]any{"path": outside}); res.IsError || ea.count() != 1 {
		t.Fatalf("alice again: %s (asked %d)", text(res), ea.count())
	}
	eb := &elicitor{answer: decide("deny")}
	cb := httpClient(t, srv.URL, is.token("bob", aud, "mcp:tools other", time.Hour), Legacy, client.WithElicitationHandler(eb))
	if res := call(t, cb, "read_file", map[string]any{"path": outside}); !res.IsError || eb.count() != 1 {
		t.Fatalf("bob shared alice's approval: %s (asked %d)", text(res), eb.count())
	}
	// The official TypeScript clients complete a call with an access token.
	dir := tsDir(t)
	f.write(t, "src/a.txt", "hello over oauth\n")
	for _, mode := range []string{"sdk-http", "v2-http"} {
		out, errOut, code := runNode(t, dir, []string{"HOME=" + f.Root}, "clients.mjs", mode, srv.URL,
			is.token("dana", aud, "mcp:tools", time.Hour), "src/a.txt", "src/missing.txt")
		if code != 0 || !strings.Contains(out, "hello over oauth") {
			t.Errorf("%s with an access token: exit %d\n%s\n%s", mode, code, out, errOut)
		}
	}

	// Key rotation is tested in server/oauth against a local issuer with a
	// clock the test moves (a refetch waits 30 s here).
}
