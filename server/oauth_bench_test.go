package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/server/oauth"
)

// BenchmarkHTTPAuthReadFile is a read_file round trip over HTTP (legacy
// era, one client each, on loopback listeners) with a bearer token and with
// an OAuth access token (ES256, keys from a jwks_file, so cached), in the
// same run; ns/op is the pair. The target: OAuth at most 50 µs more
// than the bearer token (oauth-extra-µs/call).
func BenchmarkHTTPAuthReadFile(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	jwks := filepath.Join(b.TempDir(), "jwks.json")
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Use: "sig"}}})
	if err := os.WriteFile(jwks, set, 0o600); err != nil {
		b.Fatal(err)
	}
	const iss, aud = "https://id.test", "https://mcp.test/mcp"
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
	if err != nil {
		b.Fatal(err)
	}
	token, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: iss, Subject: "bench", Audience: jwt.Audience{aud},
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour)), IssuedAt: jwt.NewNumericDate(time.Now())}).Serialize()
	if err != nil {
		b.Fatal(err)
	}
	verifier, err := oauth.New(oauth.Config{Issuer: iss, Audience: aud, JWKSFile: jwks})
	if err != nil {
		b.Fatal(err)
	}
	// Both servers run at once and each iteration calls one then the
	// other (taking turns at going first), so the load of a shared machine
	// falls on both alike.
	bearer := benchHTTPServer(b, HTTPOptions{Token: testToken, Loopback: true}, testToken)
	withOAuth := benchHTTPServer(b, HTTPOptions{OAuth: verifier, Loopback: true}, token)
	args := map[string]any{"path": "f.txt"}
	clients := []*client.Client{bearer, withOAuth}
	var spent [2]time.Duration
	b.ReportAllocs()
	flip := 0
	for b.Loop() {
		flip ^= 1 // the first call of a pair is the slower one: take turns
		for j := range clients {
			i := j ^ flip
			c := clients[i]
			start := time.Now()
			res, err := callTool(context.Background(), c, "read_file", args)
			spent[i] += time.Since(start)
			if err != nil || res.IsError {
				b.Fatalf("%v %v", err, res)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(spent[0].Microseconds())/n, "bearer-µs/call")
	b.ReportMetric(float64(spent[1].Microseconds())/n, "oauth-µs/call")
	b.ReportMetric(float64((spent[1]-spent[0]).Microseconds())/n, "oauth-extra-µs/call")
}

// benchHTTPServer serves read_file over HTTP with opts on loopback and
// returns a client sending token; both stop with the benchmark.
func benchHTTPServer(b *testing.B, opts HTTPOptions, token string) *client.Client {
	s, ws := testServer(b, fstools.ReadFile{})
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("0123456789abcdef\n", 64)), 0o644); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeHTTP(ctx, ln, opts) }()
	c := connectWithToken(b, "http://"+ln.Addr().String()+"/mcp", token)
	b.Cleanup(func() { c.Close(); stop(); <-served })
	return c
}

// connectWithToken is a legacy-era client sending this bearer token; the
// caller closes it.
func connectWithToken(b *testing.B, url, token string) *client.Client {
	b.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatalf("initialize: %v", err)
	}
	return c
}
