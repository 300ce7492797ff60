package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
)

// The HTTP transport's security model, in order of the checks each request
// to /mcp goes through:
//
//  1. Host: on a loopback bind the Host header must name a loopback host, so
//     a web page whose domain was rebound to 127.0.0.1 cannot reach us (DNS
//     rebinding). mcp-go does the same check; ours also covers handlers
//     mounted elsewhere and is unit-tested. A non-loopback bind accepts any
//     Host: the bearer token is what protects it.
//  2. Origin: absent is fine (non-browser clients); present, it must be in
//     http.allowed_origins, else 403 before anything is parsed or run.
//  3. Bearer token, compared in constant time; 401 with WWW-Authenticate.
//     The principal for approvals and the audit log is a short hash of the
//     token, never the token.
//  4. Body cap (http.max_body_bytes): 413 before mcp-go sees the request.
//  5. Legacy sessions are bound to the principal that created them: another
//     token presenting the same Mcp-Session-Id gets 404, as an unknown id does.
//
// Not covered: TLS (put a TLS-terminating proxy in front for non-loopback
// use), rate limiting, and per-client tokens (one token per server).

// HTTPOptions configure the HTTP transport.
type HTTPOptions struct {
	// Token is the bearer token every request must carry; "" only with
	// NoAuth.
	Token  string
	NoAuth bool
	// Loopback says the listener is bound to a loopback address, which turns
	// on the Host check.
	Loopback bool
	// Grace is how long calls in flight may run after a shutdown begins
	// before their contexts are cancelled (default 10 s).
	Grace time.Duration
}

// HTTPAuth is the resolved authentication for serve --http.
type HTTPAuth struct {
	Token     string
	NoAuth    bool
	Generated bool   // the token was made at start-up
	Source    string // "$VAR" when it came from the environment
}

// minTokenLen is the shortest token accepted from the environment: shorter
// ones are guessable.
const minTokenLen = 16

// ResolveHTTPAuth decides how serve --http authenticates, failing closed: a
// named but empty token variable, a short token, or auth "none" on a
// non-loopback bind are errors.
func ResolveHTTPAuth(h grants.HTTPSettings, loopback bool, getenv func(string) string) (HTTPAuth, error) {
	if h.Auth == "none" {
		if !loopback {
			return HTTPAuth{}, fmt.Errorf("http.auth = \"none\" is allowed only on a loopback address; bind 127.0.0.1 or configure a token (http.token_env)")
		}
		return HTTPAuth{NoAuth: true}, nil
	}
	if h.TokenEnv != "" {
		tok := strings.TrimSpace(getenv(h.TokenEnv))
		if tok == "" {
			return HTTPAuth{}, fmt.Errorf("http.token_env names $%s, which is empty or unset; set it or remove http.token_env to get a generated token", h.TokenEnv)
		}
		if len(tok) < minTokenLen {
			return HTTPAuth{}, fmt.Errorf("the token in $%s is %d characters; use at least %d (for example: openssl rand -hex 32)", h.TokenEnv, len(tok), minTokenLen)
		}
		return HTTPAuth{Token: tok, Source: "$" + h.TokenEnv}, nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return HTTPAuth{}, fmt.Errorf("making a token: %w", err)
	}
	return HTTPAuth{Token: hex.EncodeToString(b[:]), Generated: true}, nil
}

// IsLoopbackAddr reports whether a listen address (host:port) binds only
// loopback. An empty host, 0.0.0.0 or :: binds every interface, and a name
// other than localhost is not trusted to stay loopback.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return isLoopbackName(host)
}

func isLoopbackName(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// principalForToken names a token's holder without revealing the token.
func principalForToken(tok string) string {
	sum := sha256.Sum256([]byte("onellm-mcp principal\x00" + tok))
	return "http:" + hex.EncodeToString(sum[:6])
}

// httpGuard is the middleware in front of mcp-go's streamable HTTP handler.
type httpGuard struct {
	opts     HTTPOptions
	settings func() grants.HTTPSettings // the policy in force: origins and the body cap reload
	sessions *sessionStore
	tokenSum [32]byte
	// listenCtx ends long-lived listening streams when a shutdown begins, so
	// that they do not hold the grace period.
	listenCtx context.Context
	next      http.Handler
}

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.opts.Loopback && !isLoopbackName(hostOnly(r.Host)) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not this loopback server (DNS rebinding defence)", r.Host), http.StatusForbidden)
		return
	}
	set := g.settings()
	if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, set.AllowedOrigins) && !(g.opts.Loopback && sameLoopbackOrigin(r, origin)) {
		http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not in http.allowed_origins", origin), http.StatusForbidden)
		return
	}
	principal := "http:anonymous"
	if !g.opts.NoAuth {
		tok, ok := bearer(r.Header.Get("Authorization"))
		sum := sha256.Sum256([]byte(tok))
		if !ok || subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="onellm-mcp"`)
			if ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="onellm-mcp", error="invalid_token"`)
			}
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		principal = principalForToken(g.opts.Token)
	}
	ctx := WithPrincipal(r.Context(), principal)

	var body []byte
	if r.Method == http.MethodPost {
		limit := set.MaxBodyBytes
		if limit <= 0 {
			limit = 4 << 20
		}
		if r.ContentLength > limit {
			tooLarge(w, limit)
			return
		}
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if int64(len(body)) > limit {
			tooLarge(w, limit)
			return
		}
	}
	// A legacy session belongs to the principal that opened it. POSTs are
	// checked by the session manager; GET and DELETE are not checked by
	// mcp-go against a store, so check them here.
	if sid := r.Header.Get(mcpserver.HeaderKeySessionID); sid != "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete) {
		if !g.sessions.owns(sid, principal) {
			http.Error(w, "Not Found: unknown session", http.StatusNotFound)
			return
		}
	} else if r.Method == http.MethodGet && !isModernHeader(r.Header) {
		// mcp-go would open a fresh session for a GET without one.
		http.Error(w, "Bad Request: Mcp-Session-Id is required to listen", http.StatusBadRequest)
		return
	}
	if r.Method == http.MethodGet || (body != nil && isListen(body)) {
		ctx = mergeCancel(ctx, g.listenCtx)
	}
	r = r.WithContext(ctx)
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	g.next.ServeHTTP(w, r)
}

func tooLarge(w http.ResponseWriter, limit int64) {
	http.Error(w, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes (http.max_body_bytes)", limit), http.StatusRequestEntityTooLarge)
}

func bearer(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tok := strings.TrimSpace(h[len(prefix):])
	return tok, tok != ""
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// originAllowed matches an Origin header against the configured origins:
// scheme, host and port compared exactly (case-insensitive), "*" matching
// any.
func originAllowed(origin string, allowed []string) bool {
	o := strings.TrimRight(strings.ToLower(origin), "/")
	for _, a := range allowed {
		a = strings.TrimRight(strings.ToLower(strings.TrimSpace(a)), "/")
		if a == "*" || a == o {
			return true
		}
	}
	return false
}

// sameLoopbackOrigin reports whether origin is this loopback server itself
// (a page it served, or a client that sends its target as Origin): a
// loopback host and the port the request came in on. A page elsewhere on
// this machine (another port) is still foreign.
func sameLoopbackOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !isLoopbackName(u.Hostname()) {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	_, lport, err := net.SplitHostPort(local.String())
	return err == nil && lport == port
}

func isModernHeader(h http.Header) bool {
	return h.Get("MCP-Protocol-Version") >= "2026-07-28"
}

// isListen reports whether a JSON-RPC body opens a modern listening stream.
func isListen(body []byte) bool {
	if !bytes.Contains(body, []byte("subscriptions/listen")) {
		return false
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "subscriptions/listen"
}

// mergeCancel returns ctx, also cancelled when other ends.
func mergeCancel(ctx, other context.Context) context.Context {
	if other == nil {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(other, cancel)
	context.AfterFunc(ctx, func() { stop() })
	return ctx
}

// sessionStore tracks legacy MCP sessions and the principal that opened
// each, so an id is honoured only for its owner and an unknown id gets 404.
type sessionStore struct {
	mu sync.Mutex
	m  map[string]string // id → principal
}

func newSessionStore() *sessionStore { return &sessionStore{m: map[string]string{}} }

func (s *sessionStore) owns(id, principal string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	return ok && p == principal
}

func (s *sessionStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// ResolveSessionIdManager implements mcpserver.SessionIdManagerResolver; r
// is nil when mcp-go's idle sweeper asks.
func (s *sessionStore) ResolveSessionIdManager(r *http.Request) mcpserver.SessionIdManager {
	b := boundSessions{store: s}
	if r != nil {
		b.principal, _ = r.Context().Value(principalKey{}).(string)
		b.bound = true
	}
	return b
}

type boundSessions struct {
	store     *sessionStore
	principal string
	bound     bool
}

const sessionPrefix = "mcp-session-"

func (b boundSessions) Generate() string {
	var r [24]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	id := sessionPrefix + hex.EncodeToString(r[:])
	b.store.mu.Lock()
	b.store.m[id] = b.principal
	b.store.mu.Unlock()
	return id
}

func (b boundSessions) Validate(id string) (bool, error) {
	if !b.store.owns(id, b.principal) {
		return false, errors.New("unknown session")
	}
	return false, nil
}

func (b boundSessions) Terminate(id string) (bool, error) {
	b.store.mu.Lock()
	defer b.store.mu.Unlock()
	if p, ok := b.store.m[id]; ok && (!b.bound || p == b.principal) {
		delete(b.store.m, id)
	}
	return false, nil
}

// HTTPHandler returns the full HTTP handler: /mcp behind the guard, and
// /healthz. listenCtx ends listening streams (nil: never).
func (s *Server) HTTPHandler(opts HTTPOptions, listenCtx context.Context) http.Handler {
	sessions := newSessionStore()
	mcpHTTP := mcpserver.NewStreamableHTTPServer(s.mcp,
		mcpserver.WithEndpointPath("/mcp"),
		mcpserver.WithSessionIdManagerResolver(sessions),
		mcpserver.WithSessionIdleTTL(30*time.Minute),
		mcpserver.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(s.log.Writer(), &slog.HandlerOptions{Level: slog.LevelWarn}))),
	)
	g := &httpGuard{
		opts:      opts,
		settings:  func() grants.HTTPSettings { return s.Policy().HTTP },
		sessions:  sessions,
		tokenSum:  sha256Sum(opts.Token),
		listenCtx: listenCtx,
		next:      mcpHTTP,
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"status\":\"ok\",\"version\":%q}\n", Version)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Not Found: MCP is served at /mcp", http.StatusNotFound)
	})
	return mux
}

// ServeHTTP serves streamable HTTP on ln until ctx ends, then shuts down
// gracefully: it stops accepting, ends listening streams, lets calls in
// flight finish for opts.Grace, then cancels their contexts (which kills
// their commands) and closes the connections.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	if opts.Grace <= 0 {
		opts.Grace = 10 * time.Second
	}
	if !opts.NoAuth && opts.Token == "" {
		return errors.New("serve --http: no token")
	}
	callsCtx, cancelCalls := context.WithCancel(context.Background())
	defer cancelCalls()
	listenCtx, endListening := context.WithCancel(context.Background())
	defer endListening()
	srv := &http.Server{
		Handler:           s.HTTPHandler(opts, listenCtx),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return callsCtx },
		ErrorLog:          s.log,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	s.log.Printf("shutting down: no new connections; calls in flight have %s to finish", opts.Grace)
	endListening()
	graceCtx, cancel := context.WithTimeout(context.Background(), opts.Grace)
	defer cancel()
	if err := srv.Shutdown(graceCtx); err != nil {
		s.log.Printf("grace period over: cancelling the calls still running")
		cancelCalls()
		// Give cancelled handlers a moment to write their results and the
		// audit log before the connections go.
		time.Sleep(500 * time.Millisecond)
		srv.Close()
	}
	<-served
	return nil
}

// HTTPBanner is what serve --http prints at start-up: where to connect and
// how to authenticate.
func HTTPBanner(endpoint string, auth HTTPAuth) string {
	var b strings.Builder
	fmt.Fprintf(&b, "serving MCP over streamable HTTP at %s (health: %s)\n", endpoint, strings.TrimSuffix(endpoint, "/mcp")+"/healthz")
	header := ""
	switch {
	case auth.NoAuth:
		b.WriteString("WARNING: http.auth = \"none\": NO AUTHENTICATION. Any local process can call the tools. Loopback only.\n")
	case auth.Generated:
		fmt.Fprintf(&b, "bearer token (generated for this run, shown once): %s\n", auth.Token)
		header = ` --header "Authorization: Bearer ` + auth.Token + `"`
	default:
		fmt.Fprintf(&b, "bearer token: the value of %s\n", auth.Source)
		header = ` --header "Authorization: Bearer ` + auth.Source + `"`
	}
	fmt.Fprintf(&b, "MCP Inspector: npx @modelcontextprotocol/inspector --cli %s --transport http%s --method tools/list\n", endpoint, header)
	return b.String()
}

// EndpointURL is the /mcp URL for a listener's address.
func EndpointURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/mcp"
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host, _ = os.Hostname()
	}
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/mcp"}).String()
}

func sha256Sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }
