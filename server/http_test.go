package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

const testToken = "0123456789abcdef0123456789abcdef"

// guardFor builds the middleware around a handler that records what reached
// it.
func guardFor(opts HTTPOptions, set grants.HTTPSettings) (*httpGuard, *atomic.Int32, *atomic.Value) {
	var hits atomic.Int32
	var principal atomic.Value
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		p, _ := r.Context().Value(principalKey{}).(string)
		principal.Store(p)
		w.WriteHeader(http.StatusOK)
	})
	if opts.Token == "" && !opts.NoAuth {
		opts.Token = testToken
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:8080"
	}
	g := &httpGuard{
		opts:     opts,
		settings: func() grants.HTTPSettings { return set },
		sessions: newSessionStore(),
		next:     next,
	}
	g.tokenSum = sha256Sum(opts.Token)
	return g, &hits, &principal
}

func post(body string, hdr ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

func TestGuardAuth(t *testing.T) {
	g, hits, principal := guardFor(HTTPOptions{Loopback: true}, grants.HTTPSettings{MaxBodyBytes: 1 << 20})
	for _, tc := range []struct {
		name, auth string
		want       int
		wantErr    bool
	}{
		{"missing", "", 401, false},
		{"not bearer", "Basic " + testToken, 401, false},
		{"wrong", "Bearer " + testToken + "x", 401, true},
		{"prefix of the token", "Bearer " + testToken[:20], 401, true},
		{"right", "Bearer " + testToken, 200, false},
		{"right, lower-case scheme", "bearer " + testToken, 200, false},
	} {
		w := httptest.NewRecorder()
		g.ServeHTTP(w, post("{}", "Authorization", tc.auth))
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, w.Code, tc.want)
		}
		if tc.want == 401 {
			ch := w.Header().Get("WWW-Authenticate")
			if !strings.HasPrefix(ch, "Bearer ") || strings.Contains(ch, "invalid_token") != tc.wantErr {
				t.Errorf("%s: WWW-Authenticate %q", tc.name, ch)
			}
		}
	}
	if hits.Load() != 2 {
		t.Errorf("handler reached %d times, want 2", hits.Load())
	}
	p := principal.Load().(string)
	if !strings.HasPrefix(p, "http:") || strings.Contains(p, testToken[:8]) || p != principalForToken(testToken) {
		t.Errorf("principal %q: want a short hash of the token, never the token", p)
	}
}

func TestGuardNoAuth(t *testing.T) {
	g, hits, principal := guardFor(HTTPOptions{Loopback: true, NoAuth: true}, grants.HTTPSettings{})
	w := httptest.NewRecorder()
	g.ServeHTTP(w, post("{}"))
	if w.Code != 200 || hits.Load() != 1 || principal.Load() != "http:anonymous" {
		t.Fatalf("status %d hits %d principal %v", w.Code, hits.Load(), principal.Load())
	}
}

func TestGuardOrigin(t *testing.T) {
	g, hits, _ := guardFor(HTTPOptions{Loopback: true}, grants.HTTPSettings{AllowedOrigins: []string{"https://app.example.com"}})
	auth := "Bearer " + testToken
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"", 200},
		{"https://app.example.com", 200},
		{"https://APP.example.com/", 200},
		{"https://evil.example.com", 403},
		{"http://app.example.com", 403},
		{"https://app.example.com:8443", 403},
		{"null", 403},
		// This loopback server itself (the request arrived on port 8080).
		{"http://localhost:8080", 200},
		{"http://127.0.0.1:8080", 200},
		{"http://localhost:3000", 403}, // another local page
		{"http://localhost", 403},
		{"http://localhost.evil.example.com:8080", 403},
	} {
		before := hits.Load()
		w := httptest.NewRecorder()
		r := post("{}", "Authorization", auth, "Origin", tc.origin)
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}))
		g.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("Origin %q: status %d, want %d", tc.origin, w.Code, tc.want)
		}
		if tc.want == 403 && hits.Load() != before {
			t.Errorf("Origin %q: the request reached the MCP handler", tc.origin)
		}
	}
}

// The Host header must name the address and port the server is bound to
// (localhost too when that is loopback), or a name in http.allowed_hosts.
func TestGuardHost(t *testing.T) {
	auth := "Bearer " + testToken
	loop, _, _ := guardFor(HTTPOptions{Loopback: true, Addr: "127.0.0.1:8080"}, grants.HTTPSettings{})
	wide, _, _ := guardFor(HTTPOptions{Addr: "192.0.2.7:8080"}, grants.HTTPSettings{AllowedHosts: []string{"mcp.example.com"}})
	v6, _, _ := guardFor(HTTPOptions{Loopback: true, Addr: "[::1]:8080"}, grants.HTTPSettings{})
	for _, tc := range []struct {
		host           string
		loop, wide, v6 int
	}{
		{"127.0.0.1:8080", 200, 403, 403},
		{"localhost:8080", 200, 403, 200},
		{"LOCALHOST:8080", 200, 403, 200},
		{"localhost", 403, 403, 403}, // port 80 is not the bound port
		{"127.0.0.1:8081", 403, 403, 403},
		{"[::1]:8080", 403, 403, 200},
		{"[::ffff:127.0.0.1]:8080", 200, 403, 403},
		{"127.1.2.3:8080", 403, 403, 403}, // loopback, but not the bound address
		{"192.0.2.7:8080", 403, 200, 403},
		{"mcp.example.com:8080", 403, 200, 403},
		{"MCP.example.com:8080", 403, 200, 403},
		{"mcp.example.com:9999", 403, 403, 403},
		{"evil.example.com:8080", 403, 403, 403},
		{"localhost.evil.example.com:8080", 403, 403, 403},
		{"", 403, 403, 403},
	} {
		for _, g := range []struct {
			g    *httpGuard
			want int
		}{{loop, tc.loop}, {wide, tc.wide}, {v6, tc.v6}} {
			r := post("{}", "Authorization", auth)
			r.Host = tc.host
			w := httptest.NewRecorder()
			g.g.ServeHTTP(w, r)
			if w.Code != g.want {
				t.Errorf("Host %q bound %s: status %d, want %d", tc.host, g.g.opts.Addr, w.Code, g.want)
			}
			if w.Code == 403 && w.Header().Get("Connection") != "close" {
				t.Errorf("Host %q: a refused request keeps its connection", tc.host)
			}
		}
	}
}

func TestGuardBodyCap(t *testing.T) {
	g, hits, _ := guardFor(HTTPOptions{Loopback: true}, grants.HTTPSettings{MaxBodyBytes: 100})
	auth := "Bearer " + testToken
	body := func(n int) string { return `{"x":"` + strings.Repeat("a", n-8) + `"}` }
	w := httptest.NewRecorder()
	g.ServeHTTP(w, post(body(100), "Authorization", auth))
	if w.Code != 200 {
		t.Errorf("body at the cap: status %d", w.Code)
	}
	w = httptest.NewRecorder()
	g.ServeHTTP(w, post(body(101), "Authorization", auth))
	if w.Code != 413 {
		t.Errorf("body over the cap (Content-Length): status %d", w.Code)
	}
	// A chunked body has no Content-Length: the cap applies while reading.
	r := post(body(5000), "Authorization", auth)
	r.ContentLength = -1
	w = httptest.NewRecorder()
	g.ServeHTTP(w, r)
	if w.Code != 413 {
		t.Errorf("chunked body over the cap: status %d", w.Code)
	}
	if hits.Load() != 1 {
		t.Errorf("handler reached %d times, want 1", hits.Load())
	}
}

func TestGuardSessions(t *testing.T) {
	g, hits, _ := guardFor(HTTPOptions{Loopback: true}, grants.HTTPSettings{})
	mine := boundSessions{store: g.sessions, principal: principalForToken(testToken), bound: true}.Generate()
	other := boundSessions{store: g.sessions, principal: "http:someoneelse", bound: true}.Generate()
	for _, tc := range []struct {
		method, sid string
		want        int
	}{
		{http.MethodGet, mine, 200},
		{http.MethodGet, other, 404},
		{http.MethodGet, "mcp-session-unknown", 404},
		{http.MethodGet, "", 400},
		{http.MethodDelete, other, 404},
		{http.MethodDelete, mine, 200},
	} {
		r := httptest.NewRequest(tc.method, "http://127.0.0.1:8080/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+testToken)
		if tc.sid != "" {
			r.Header.Set("Mcp-Session-Id", tc.sid)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s session %q: status %d, want %d", tc.method, tc.sid, w.Code, tc.want)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("handler reached %d times, want 2", hits.Load())
	}
	b := boundSessions{store: g.sessions, principal: "http:someoneelse", bound: true}
	if _, err := b.Validate(mine); err == nil {
		t.Error("another principal validated my session")
	}
}

func TestResolveHTTPAuth(t *testing.T) {
	env := map[string]string{"GOOD": testToken, "SHORT": "abc", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	if _, err := ResolveHTTPAuth(grants.HTTPSettings{Auth: "none"}, false, getenv); err == nil {
		t.Error("auth none on a non-loopback bind was accepted")
	}
	if a, err := ResolveHTTPAuth(grants.HTTPSettings{Auth: "none"}, true, getenv); err != nil || !a.NoAuth {
		t.Errorf("auth none on loopback: %+v %v", a, err)
	}
	for _, name := range []string{"SHORT", "EMPTY", "UNSET"} {
		if _, err := ResolveHTTPAuth(grants.HTTPSettings{Auth: "token", TokenEnv: name}, true, getenv); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("token_env %s: %v", name, err)
		}
	}
	a, err := ResolveHTTPAuth(grants.HTTPSettings{Auth: "token", TokenEnv: "GOOD"}, false, getenv)
	if err != nil || a.Token != testToken || a.Source != "$GOOD" {
		t.Errorf("token from env: %+v %v", a, err)
	}
	a1, _ := ResolveHTTPAuth(grants.HTTPSettings{Auth: "token"}, true, getenv)
	a2, _ := ResolveHTTPAuth(grants.HTTPSettings{Auth: "token"}, true, getenv)
	if !a1.Generated || len(a1.Token) != 64 || a1.Token == a2.Token {
		t.Errorf("generated tokens: %q %q", a1.Token, a2.Token)
	}
	if !strings.Contains(HTTPBanner("http://127.0.0.1:1/mcp", a), "$GOOD") || strings.Contains(HTTPBanner("http://127.0.0.1:1/mcp", a), testToken) {
		t.Error("the banner must name the variable and not print a token from the environment")
	}
	for _, allow := range []bool{false, true} {
		o, err := ResolveHTTPAuth(grants.HTTPSettings{Auth: "oauth", Issuer: "https://id.example", Audience: "https://mcp.example/mcp",
			JWKSURL: "https://id.example/jwks", AllowTypJWT: allow}, false, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(HTTPBanner("https://mcp.example/mcp", o), "WARNING: http.allow_typ_jwt = true"); got != allow {
			t.Errorf("allow_typ_jwt %v: the banner warns: %v", allow, got)
		}
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:80": true, "localhost:80": true, "[::1]:80": true,
		":80": false, "0.0.0.0:80": false, "[::]:80": false, "192.168.1.2:80": false, "example.com:80": false,
	} {
		if IsLoopbackAddr(addr) != want {
			t.Errorf("IsLoopbackAddr(%q) = %v", addr, !want)
		}
	}
}

// --- the transport end to end, in process ---

// probeTool reports the principal it sees and can be told to wait.
type probeTool struct {
	started chan struct{}
	release chan struct{}
	saw     chan error // the context's end, when waiting
}

func (probeTool) Name() string { return "probe" }
func (probeTool) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapWorkspaceRead}
}
func (probeTool) Definition(p *grants.Policy) mcp.Tool {
	return mcp.NewTool("probe", mcp.WithDescription("test probe"), mcp.WithString("mode"))
}

func (pt probeTool) Plan(ctx context.Context, env *toolkit.Env, args json.RawMessage) (*toolkit.Plan, error) {
	var a struct{ Mode string }
	_ = json.Unmarshal(args, &a)
	principal := env.Principal
	req := grants.Request{Capability: grants.CapWorkspaceRead, Target: grants.Target{ToolName: "probe", Path: filepath.Join(env.Policy.Workspace, "x")}, Risk: grants.RiskLow}
	return &toolkit.Plan{Requests: []grants.Request{req}, Run: func(ctx context.Context, _ toolkit.Grant) toolkit.Result {
		switch a.Mode {
		case "wait":
			pt.started <- struct{}{}
			select {
			case <-pt.release:
			case <-ctx.Done():
				pt.saw <- ctx.Err()
				return toolkit.Failed("cancelled")
			}
		}
		return toolkit.Result{Tool: mcp.NewToolResultText(principal)}
	}}, nil
}

func testServer(t testing.TB, tools ...toolkit.Tool) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := grants.LoadDefault(ws)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Audit.Path = filepath.Join(dir, "audit.jsonl")
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	audit, err := OpenAudit(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	s, err := New(p, Options{Tools: tools, Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	return s, ws
}

func connect(t testing.TB, url string, modern bool) *client.Client {
	t.Helper()
	return connectWithHeaders(t, url, modern, nil)
}

// connectWithHeaders is connect sending extra headers on every request.
func connectWithHeaders(t testing.TB, url string, modern bool, extra map[string]string) *client.Client {
	t.Helper()
	headers := map[string]string{"Authorization": "Bearer " + testToken}
	for k, v := range extra {
		headers[k] = v
	}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	var opts []client.ClientOption
	version := mcp.ProtocolVersion20260728
	if !modern {
		opts = append(opts, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
		version = mcp.ProtocolVersion20251125
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func callTool(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The principal set by the auth middleware reaches tool handlers in both
// eras; legacy calls also carry their session.
func TestPrincipalReachesHandlers(t *testing.T) {
	s, _ := testServer(t, probeTool{})
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Token: testToken, Loopback: true}, nil))
	defer ts.Close()
	want := principalForToken(testToken)
	for _, modern := range []bool{false, true} {
		c := connect(t, ts.URL+"/mcp", modern)
		res, err := callTool(context.Background(), c, "probe", nil)
		if err != nil || res.IsError {
			t.Fatalf("modern=%v: %v %v", modern, err, res)
		}
		got := resultText(res)
		if modern && got != want {
			t.Errorf("modern principal %q, want %q", got, want)
		}
		if !modern && !strings.HasPrefix(got, want+"/mcp-session-") {
			t.Errorf("legacy principal %q, want %s/<session>", got, want)
		}
	}
}

// A shutdown lets a call in flight finish within the grace period, and
// cancels one that outlasts it.
func TestServeHTTPGracefulShutdown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		finishes bool
	}{{"finishes in the grace period", true}, {"cancelled after it", false}} {
		t.Run(tc.name, func(t *testing.T) {
			pt := probeTool{started: make(chan struct{}, 1), release: make(chan struct{}), saw: make(chan error, 1)}
			s, _ := testServer(t, pt)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() {
				// A call that finishes gets a grace no loaded machine runs
				// out of (the shutdown ends as soon as the call does); one
				// that outlasts it a short one it must not be cancelled before.
				grace := time.Minute
				if !tc.finishes {
					grace = 2 * time.Second
				}
				served <- s.ServeHTTP(ctx, ln, HTTPOptions{Token: testToken, Loopback: true, Grace: grace})
			}()
			c := connect(t, "http://"+ln.Addr().String()+"/mcp", true)
			type out struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan out, 1)
			go func() {
				r, err := callTool(context.Background(), c, "probe", map[string]any{"mode": "wait"})
				done <- out{r, err}
			}()
			<-pt.started
			begin := time.Now()
			stop()
			// The listener closes as the shutdown begins: wait for that (not
			// a fixed time), bounded generously.
			closed := false
			for deadline := time.Now().Add(10 * time.Second); !closed && time.Now().Before(deadline); {
				c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
				if err != nil {
					closed = true
					break
				}
				c.Close()
				runtime.Gosched()
			}
			if !closed {
				t.Error("the listener still accepts after shutdown began")
			}
			if tc.finishes {
				close(pt.release)
				o := <-done
				if o.err != nil || o.res.IsError || resultText(o.res) == "" {
					t.Errorf("call in flight: %v %+v", o.err, o.res)
				}
			} else {
				select {
				case err := <-pt.saw:
					if el := time.Since(begin); el < 1900*time.Millisecond {
						t.Errorf("cancelled after %s, before the grace period", el)
					}
					if err == nil {
						t.Error("no cancellation seen")
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the call was never cancelled")
				}
				// mcp-go drops the response of a cancelled request; the
				// client still gets a JSON-RPC error, not an empty 200.
				select {
				case o := <-done:
					if o.err == nil || !strings.Contains(o.err.Error(), "shut down before the call finished") {
						t.Errorf("the cancelled call's answer: %v %+v", o.err, o.res)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the cancelled call got no answer")
				}
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("ServeHTTP: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ServeHTTP did not return")
			}
		})
	}
}

// A reload that hides a tool replaces the list; one that changes nothing
// does not.
func TestSetPolicy(t *testing.T) {
	s, ws := testServer(t, fstools.ReadFile{})
	same, err := grants.LoadDefault(ws)
	if err != nil {
		t.Fatal(err)
	}
	same.Audit.Path = s.Policy().AuditPath
	p2, err := grants.Compile(same, grants.CompileOptions{Home: s.Policy().Home})
	if err != nil {
		t.Fatal(err)
	}
	if s.SetPolicy(p2) {
		t.Error("an identical policy changed the tool list")
	}
	if s.Policy() != p2 {
		t.Error("the new policy is not in force")
	}
	cfg, err := grants.Parse([]byte("profile = \"strict-production\"\n"), "", ws)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Audit.Path = s.Policy().AuditPath
	p3, err := grants.Compile(cfg, grants.CompileOptions{Home: s.Policy().Home})
	if err != nil {
		t.Fatal(err)
	}
	if !s.SetPolicy(p3) {
		t.Error("hiding read_file did not change the tool list")
	}
	if n := len(s.ToolNames()); n != 0 {
		t.Errorf("%d tools listed, want 0", n)
	}
	if len(s.MCP().ListTools()) != 0 {
		t.Errorf("mcp-go still lists %v", s.MCP().ListTools())
	}
}

// BenchmarkHTTPReadFile is one read_file round trip over HTTP (modern era,
// 4 KiB file), through the guard, mcp-go, policy, audit and the read.
func BenchmarkHTTPReadFile(b *testing.B) {
	s, ws := testServer(b, fstools.ReadFile{})
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("0123456789abcdef\n", 4096/17)), 0o644); err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s.HTTPHandler(HTTPOptions{Token: testToken, Loopback: true}, nil))
	defer ts.Close()
	c := connect(b, ts.URL+"/mcp", true)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := callTool(ctx, c, "read_file", map[string]any{"path": "f.txt"})
			if err != nil || res.IsError {
				b.Fatalf("%v %v", err, res)
			}
		}
	})
}
