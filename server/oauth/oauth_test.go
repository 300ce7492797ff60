package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// testIssuer is an identity provider on 127.0.0.1: keys made in the test,
// its JWKS served by a local server.
type testIssuer struct {
	t   testing.TB
	srv *httptest.Server

	mu    sync.Mutex
	keys  map[string]any // kid -> private key
	pub   jose.JSONWebKeySet
	hits  int
	clock time.Time
}

const (
	issuer   = "https://idp.test.example"
	resource = "https://mcp.test.example/mcp"
)

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	is := &testIssuer{t: t, keys: map[string]any{}, clock: time.Unix(1_800_000_000, 0)}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.hits++
		_ = json.NewEncoder(w).Encode(is.pub)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *testIssuer) addKey(kid string, priv any) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys[kid] = priv
	var pub any
	switch k := priv.(type) {
	case *rsa.PrivateKey:
		pub = &k.PublicKey
	case *ecdsa.PrivateKey:
		pub = &k.PublicKey
	case ed25519.PrivateKey:
		pub = k.Public()
	}
	is.pub.Keys = append(is.pub.Keys, jose.JSONWebKey{Key: pub, KeyID: kid, Use: "sig"})
}

func (is *testIssuer) rotate(kid string, priv any) {
	is.mu.Lock()
	is.pub.Keys = nil
	is.mu.Unlock()
	is.addKey(kid, priv)
}

func (is *testIssuer) now() time.Time {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.clock
}

func (is *testIssuer) advance(d time.Duration) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.clock = is.clock.Add(d)
}

func (is *testIssuer) verifier(t *testing.T, scopes ...string) *Verifier {
	t.Helper()
	v, err := New(Config{Issuer: issuer, Audience: resource, JWKSURL: is.srv.URL, RequiredScopes: scopes, Now: is.now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type tokenClaims struct {
	jwt.Claims
	Scope string   `json:"scope,omitempty"`
	Scp   []string `json:"scp,omitempty"`
}

// sign makes an access token (typ at+jwt) with the key kid (which need not
// be published).
func (is *testIssuer) sign(kid string, alg jose.SignatureAlgorithm, priv any, edit func(*tokenClaims)) string {
	is.t.Helper()
	return is.signTyp(kid, alg, priv, "at+jwt", edit)
}

// signTyp is sign with another typ header ("": none).
func (is *testIssuer) signTyp(kid string, alg jose.SignatureAlgorithm, priv any, typ string, edit func(*tokenClaims)) string {
	is.t.Helper()
	now := is.now()
	c := tokenClaims{Claims: jwt.Claims{
		Issuer: issuer, Subject: "alice", Audience: jwt.Audience{resource},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
	}, Scope: "mcp:tools mcp:read"}
	if edit != nil {
		edit(&c)
	}
	opts := (&jose.SignerOptions{}).WithHeader("kid", kid)
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: priv}, opts)
	if err != nil {
		is.t.Fatal(err)
	}
	raw, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		is.t.Fatal(err)
	}
	return raw
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustEC(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestVerify(t *testing.T) {
	is := newTestIssuer(t)
	rsaKey, ecKey := mustRSA(t), mustEC(t)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	is.addKey("rsa1", rsaKey)
	is.addKey("ec1", ecKey)
	is.addKey("ed1", edKey)
	stranger := mustRSA(t)
	pubDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)

	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pubDER}, (&jose.SignerOptions{}).WithHeader("kid", "rsa1"))
	hsTok, _ := jwt.Signed(hs).Claims(jwt.Claims{Issuer: issuer, Subject: "alice", Audience: jwt.Audience{resource},
		Expiry: jwt.NewNumericDate(is.now().Add(time.Hour))}).Serialize()
	good := is.sign("rsa1", jose.RS256, rsaKey, nil)
	parts := strings.Split(good, ".")
	noneTok := b64(`{"alg":"none","kid":"rsa1"}`) + "." + parts[1] + "."
	tampered := parts[0] + "." + b64(`{"iss":"`+issuer+`","sub":"mallory","aud":"`+resource+`","exp":9999999999,"scope":"mcp:tools mcp:read"}`) + "." + parts[2]

	tests := []struct {
		name    string
		token   string
		scopes  []string
		status  int    // 0: accepted
		want    string // in the error text
		subject string
		// allowJWT is [http] allow_typ_jwt = true.
		allowJWT bool
	}{
		{name: "valid RS256", token: good, scopes: []string{"mcp:tools"}, subject: "alice"},
		{name: "valid ES256 with scp list", token: is.sign("ec1", jose.ES256, ecKey, func(c *tokenClaims) {
			c.Scope, c.Scp, c.Subject = "", []string{"mcp:tools"}, "bob"
		}), scopes: []string{"mcp:tools"}, subject: "bob"},
		{name: "valid EdDSA", token: is.sign("ed1", jose.EdDSA, edKey, nil), subject: "alice"},
		{name: "expired", token: is.sign("rsa1", jose.RS256, rsaKey, func(c *tokenClaims) {
			c.Expiry = jwt.NewNumericDate(is.now().Add(-2 * time.Minute))
		}), status: 401, want: "expired"},
		{name: "expired within the skew", token: is.sign("rsa1", jose.RS256, rsaKey, func(c *tokenClaims) {
			c.Expiry = jwt.NewNumericDate(is.now().Add(-30 * time.Second))
		}), subject: "alice"},
		{name: "not valid yet", token: is.sign("rsa1", jose.RS256, rsaKey, func(c *tokenClaims) {
			c.NotBefore = jwt.NewNumericDate(is.now().Add(5 * time.Minute))
		}), status: 401, want: "not valid yet"},
		{name: "wrong audience", token: is.sign("rsa1", jose.RS256, rsaKey, func(c *tokenClaims) {
			c.Audience = jwt.Audience{"https://other.example/mcp"}
		}), status: 401, want: "another resource"},
		{name: "wrong issuer", token: is.sign("rsa1", jose.RS256, rsaKey, func(c *tokenClaims) {
			c.Issuer = "https://evil.example"
		}), status: 401, want: "issued by"},
		{name: "no exp", token: is.sign("rsa1", jose.RS256, rsaKey, func(c *tokenClaims) { c.Expiry = nil }), status: 401, want: "no exp"},
		{name: "no sub", token: is.sign("rsa1", jose.RS256, rsaKey, func(c *tokenClaims) { c.Subject = "" }), status: 401, want: "no sub"},
		{name: "missing scopes", token: good, scopes: []string{"mcp:tools", "mcp:write", "mcp:admin"}, status: 403, want: "mcp:write mcp:admin"},
		{name: "alg none", token: noneTok, status: 401, want: "accepted algorithm"},
		{name: "HS256 keyed with the public key", token: hsTok, status: 401, want: "accepted algorithm"},
		{name: "signed by a key the issuer never published", token: is.sign("rsa9", jose.RS256, stranger, nil), status: 401, want: "no key"},
		{name: "published kid, stranger's signature", token: is.sign("rsa1", jose.RS256, stranger, nil), status: 401, want: "does not verify"},
		{name: "payload changed after signing", token: tampered, status: 401, want: "does not verify"},
		{name: "garbage", token: "not.a.jwt", status: 401},
		// RFC 9068 typ: an ID token (typ JWT, aud this server) of the same
		// issuer is not an access token.
		{name: "typ application/at+jwt", token: is.signTyp("rsa1", jose.RS256, rsaKey, "application/at+jwt", nil), subject: "alice"},
		{name: "typ AT+JWT (media types ignore case)", token: is.signTyp("rsa1", jose.RS256, rsaKey, "AT+JWT", nil), subject: "alice"},
		{name: "ID token (typ JWT)", token: is.signTyp("rsa1", jose.RS256, rsaKey, "JWT", nil), status: 401, want: "not at+jwt"},
		{name: "no typ", token: is.signTyp("rsa1", jose.RS256, rsaKey, "", nil), status: 401, want: "not at+jwt"},
		{name: "another typ", token: is.signTyp("rsa1", jose.RS256, rsaKey, "dpop+jwt", nil), status: 401, want: "not at+jwt"},
		{name: "typ JWT with allow_typ_jwt", token: is.signTyp("rsa1", jose.RS256, rsaKey, "JWT", nil), allowJWT: true, subject: "alice"},
		{name: "no typ with allow_typ_jwt", token: is.signTyp("rsa1", jose.RS256, rsaKey, "", nil), allowJWT: true, subject: "alice"},
		{name: "another typ with allow_typ_jwt", token: is.signTyp("rsa1", jose.RS256, rsaKey, "dpop+jwt", nil), allowJWT: true, status: 401, want: "not at+jwt"},
		{name: "typ JWT with allow_typ_jwt, wrong audience", token: is.signTyp("rsa1", jose.RS256, rsaKey, "JWT", func(c *tokenClaims) {
			c.Audience = jwt.Audience{"client-id-123"}
		}), allowJWT: true, status: 401, want: "another resource"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := is.verifier(t, tt.scopes...)
			v.cfg.AllowTypJWT = tt.allowJWT
			p, err := v.Verify(context.Background(), tt.token)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.Subject != tt.subject {
					t.Fatalf("subject %q, want %q", p.Subject, tt.subject)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("accepted (principal %+v), want status %d", p, tt.status)
			}
			if e.Status != tt.status || !strings.Contains(e.Error(), tt.want) {
				t.Fatalf("got %d %q, want %d containing %q", e.Status, e.Error(), tt.status, tt.want)
			}
		})
	}
}

func TestKeyRotation(t *testing.T) {
	is := newTestIssuer(t)
	oldKey, newKey := mustRSA(t), mustRSA(t)
	is.addKey("old", oldKey)
	v := is.verifier(t)
	ctx := context.Background()
	oldTok := is.sign("old", jose.RS256, oldKey, nil)
	if _, err := v.Verify(ctx, oldTok); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	is.rotate("new", newKey)
	newTok := is.sign("new", jose.RS256, newKey, nil)
	// An unknown kid right after a fetch does not refetch (bounded load on
	// the issuer) ...
	if _, err := v.Verify(ctx, newTok); err == nil {
		t.Fatal("a kid fetched less than minRefetch ago was fetched again")
	}
	// ... but once minRefetch has passed it does.
	is.advance(minRefetch + time.Second)
	if _, err := v.Verify(ctx, newTok); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	// A token verified before stays trusted for verifiedTTL at most.
	is.advance(verifiedTTL)
	if _, err := v.Verify(ctx, oldTok); err == nil {
		t.Fatal("a token of the retired key still verifies")
	}
}

func TestUnreachableIssuer(t *testing.T) {
	is := newTestIssuer(t)
	key := mustRSA(t)
	is.addKey("k", key)
	v := is.verifier(t)
	ctx := context.Background()
	tok := is.sign("k", jose.RS256, key, nil)
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	is.srv.Close()
	is.advance(refreshEvery + time.Minute)
	if _, err := v.Verify(ctx, is.sign("k", jose.RS256, key, nil)); err != nil {
		t.Fatalf("cached keys within maxStale: %v", err)
	}
	if _, err := v.Verify(ctx, is.sign("other", jose.RS256, mustRSA(t), nil)); err == nil || !strings.Contains(err.Error(), "cannot be fetched") {
		t.Fatalf("unknown kid with the issuer down: %v", err)
	}
	is.advance(maxStale)
	if _, err := v.Verify(ctx, is.sign("k", jose.RS256, key, nil)); err == nil {
		t.Fatal("keys past maxStale still verify while the issuer is down")
	}

	never, err := New(Config{Issuer: issuer, Audience: resource, JWKSURL: "http://127.0.0.1:1/jwks", Now: is.now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := never.Verify(ctx, tok); err == nil {
		t.Fatal("a token got through with no keys ever fetched")
	}
}

func TestJWKSFile(t *testing.T) {
	is := newTestIssuer(t)
	key := mustEC(t)
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "f1", Use: "sig"}}}
	path := filepath.Join(t.TempDir(), "jwks.json")
	b, _ := json.Marshal(set)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := New(Config{Issuer: issuer, Audience: resource, JWKSFile: path, Now: is.now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), is.sign("f1", jose.ES256, key, nil)); err != nil {
		t.Fatal(err)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no issuer", Config{Audience: resource, JWKSFile: "x"}, "needs issuer"},
		{"no audience", Config{Issuer: issuer, JWKSFile: "x"}, "needs audience"},
		{"relative audience", Config{Issuer: issuer, Audience: "/mcp", JWKSFile: "x"}, "absolute URL"},
		{"no keys", Config{Issuer: issuer, Audience: resource}, "exactly one of"},
		{"both keys", Config{Issuer: issuer, Audience: resource, JWKSFile: "x", JWKSURL: "https://a/b"}, "exactly one of"},
		{"plain http jwks", Config{Issuer: issuer, Audience: resource, JWKSURL: "http://idp.example/jwks"}, "https"},
		{"bad scope", Config{Issuer: issuer, Audience: resource, JWKSFile: "x", RequiredScopes: []string{"a b"}}, "not a scope"},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestMetadataAndChallenge(t *testing.T) {
	v, err := New(Config{Issuer: issuer, Audience: resource, JWKSFile: "x", RequiredScopes: []string{"mcp:tools", "mcp:read"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.MetadataURL(), "https://mcp.test.example/.well-known/oauth-protected-resource/mcp"; got != want {
		t.Fatalf("metadata URL %q, want %q", got, want)
	}
	rec := httptest.NewRecorder()
	v.ServeMetadata(rec, httptest.NewRequest(http.MethodGet, WellKnownPath+"/mcp", nil))
	var m Metadata
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Resource != resource || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != issuer ||
		strings.Join(m.ScopesSupported, " ") != "mcp:tools mcp:read" || m.BearerMethodsSupported[0] != "header" {
		t.Fatalf("metadata %+v", m)
	}
	if got := v.Challenge(nil); got != `Bearer resource_metadata="https://mcp.test.example/.well-known/oauth-protected-resource/mcp", scope="mcp:tools mcp:read"` {
		t.Fatalf("challenge without a token: %s", got)
	}
	got := v.Challenge(&Error{Status: 403, Code: "insufficient_scope", Desc: `lacks "x"`})
	if !strings.Contains(got, `error="insufficient_scope"`) || !strings.Contains(got, `error_description="lacks 'x'"`) {
		t.Fatalf("challenge with an error: %s", got)
	}
	rec = httptest.NewRecorder()
	v.ServeMetadata(rec, httptest.NewRequest(http.MethodPost, WellKnownPath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST metadata: %d", rec.Code)
	}
}

func BenchmarkVerifyCachedKeys(b *testing.B) {
	is := newTestIssuer(b)
	key := mustEC(b)
	is.addKey("k", key)
	v, _ := New(Config{Issuer: issuer, Audience: resource, JWKSURL: is.srv.URL, Now: is.now})
	tok := is.sign("k", jose.ES256, key, nil)
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

func TestVerifiedCacheHonoursExpiry(t *testing.T) {
	is := newTestIssuer(t)
	key := mustEC(t)
	is.addKey("k", key)
	v := is.verifier(t)
	ctx := context.Background()
	tok := is.sign("k", jose.ES256, key, func(c *tokenClaims) { c.Expiry = jwt.NewNumericDate(is.now().Add(30 * time.Second)) })
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	is.advance(30*time.Second + v.cfg.Leeway + time.Second)
	if _, err := v.Verify(ctx, tok); err == nil {
		t.Fatal("a cached token was accepted after it expired")
	}
}

// TestFailingIssuerIsNotHammered: while the JWKS cannot be fetched, made-up
// tokens cause at most one fetch per minRefetch, and none gets through.
func TestFailingIssuerIsNotHammered(t *testing.T) {
	is := newTestIssuer(t)
	var hits int
	var mu sync.Mutex
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	v, err := New(Config{Issuer: issuer, Audience: resource, JWKSURL: down.URL, Now: is.now})
	if err != nil {
		t.Fatal(err)
	}
	key := mustEC(t)
	for i := range 20 {
		if _, err := v.Verify(context.Background(), is.sign(fmt.Sprint("k", i), jose.ES256, key, nil)); err == nil {
			t.Fatal("a token got through with the issuer down")
		}
	}
	if hits != 1 {
		t.Fatalf("20 tokens made %d fetches, want 1", hits)
	}
	is.advance(minRefetch)
	v.Verify(context.Background(), is.sign("k", jose.ES256, key, nil))
	if hits != 2 {
		t.Fatalf("after minRefetch: %d fetches, want 2", hits)
	}
}
