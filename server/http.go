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
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/netaddr"
	"github.com/onellm/onellm-mcp/server/oauth"
)

// The HTTP transport's security model, in order of the checks each request
// to /mcp goes through:
//
//  0. Connections are bounded before any request is read: at most
//     HTTPOptions.MaxConns at once (one more is accepted and answered 503
//     with Retry-After without being read, or closed over TLS), headers
//     within HeaderTimeout, the body within BodyTimeout, and an idle
//     keep-alive connection is closed after IdleTimeout.
//  1. Host must name this server: the address and port the connection came
//     in on (localhost too, on a loopback bind), or a name in
//     http.allowed_hosts with that port, so that a web page whose domain was
//     rebound to our address cannot reach us (DNS rebinding).
//  2. Origin: absent is fine (non-browser clients); present, it must be in
//     http.allowed_origins, else 403 before anything is parsed or run.
//  3. Bearer token, compared in constant time; 401 with WWW-Authenticate.
//     The principal for approvals and the audit log is a short hash of the
//     token, never the token. A refused request is answered and its
//     connection closed without reading its body.
//  4. Body cap (http.max_body_bytes): 413 before mcp-go sees the request.
//  5. The ingress (ingress.go): the one strict parse of the message.
//  6. Legacy sessions are bound to the principal that created them: another
//     token presenting the same Mcp-Session-Id gets 404, as an unknown id
//     does. At most http.max_sessions are kept; a new one evicts the one
//     idle longest, and one idle for http.session_idle_seconds is dropped.
//
// A call still running when the shutdown grace ends is cancelled and
// answered with a JSON-RPC error. A non-loopback bind needs http.public and
// is plain HTTP unless http.tls_cert and http.tls_key are set.
//
// Not covered: rate limiting, and per-client tokens (one token per server).

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
	// Addr is the bound address, for the Host check of a request whose
	// connection does not say where it came in (ServeHTTP sets it).
	Addr string
	// Connection bounds (defaults: 10 s, 30 s, 60 s, 1024).
	HeaderTimeout time.Duration
	BodyTimeout   time.Duration
	IdleTimeout   time.Duration
	MaxConns      int
	// TLSCert and TLSKey are PEM files; set, ServeHTTP serves HTTPS.
	TLSCert, TLSKey string
	// OAuth, when set, verifies OAuth access tokens instead of Token, and
	// the protected resource metadata is served.
	OAuth *oauth.Verifier
}

func (o *HTTPOptions) defaults() {
	if o.Grace <= 0 {
		o.Grace = defaultGrace
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 1024
	}
}

// HTTPAuth is the resolved authentication for serve --http.
type HTTPAuth struct {
	Token     string
	NoAuth    bool
	Generated bool   // the token was made at start-up
	Source    string // "$VAR" when it came from the environment
	// OAuth verifies access tokens from the configured identity provider
	// (http.auth = "oauth"); Token is then empty.
	OAuth *oauth.Verifier
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
	if h.Auth == "oauth" {
		v, err := oauth.New(oauth.Config{Issuer: h.Issuer, Audience: h.Audience, JWKSURL: h.JWKSURL, JWKSFile: h.JWKSFile,
			RequiredScopes: h.RequiredScopes, AllowTypJWT: h.AllowTypJWT})
		if err != nil {
			return HTTPAuth{}, err
		}
		return HTTPAuth{OAuth: v}, nil
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

func isLoopbackName(host string) bool { return netaddr.IsLoopbackHost(host) }

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
	// admit is the ingress (nil in tests of the guard alone).
	admit func(principal string, msg []byte) admission
	// withCall records a tool call's id and header for its span (nil:
	// traces off).
	withCall func(ctx context.Context, id json.RawMessage, h http.Header) context.Context
	// calls tracks requests inside the handler, for the shutdown.
	calls sync.WaitGroup
	next  http.Handler
}

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.calls.Add(1)
	defer g.calls.Done()
	set := g.settings()
	principal, ok := g.authorize(w, r, set)
	if !ok {
		return
	}
	ctx := WithPrincipal(r.Context(), principal)

	var body []byte
	if r.Method == http.MethodPost {
		var ok bool
		if body, ok = g.readBody(w, r, set.MaxBodyBytes); !ok {
			return
		}
	}
	sid := r.Header.Get(mcpserver.HeaderKeySessionID)
	// A legacy session belongs to the principal that opened it. POSTs are
	// checked by the session manager; GET and DELETE are not checked by
	// mcp-go against a store, so check them here.
	if sid != "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete) {
		if !g.sessions.owns(sid, principal) {
			http.Error(w, "Not Found: unknown session", http.StatusNotFound)
			return
		}
	} else if r.Method == http.MethodGet && !isModernHeader(r.Header) {
		// mcp-go would open a fresh session for a GET without one.
		http.Error(w, "Bad Request: Mcp-Session-Id is required to listen", http.StatusBadRequest)
		return
	}
	var msg peek
	if body != nil {
		// From here on the body is the ingress's canonical form of it.
		if body, msg, ok = g.admitMessage(w, r, body, principal, set.MaxSessions); !ok {
			return
		}
	}
	if g.withCall != nil && msg.method == string(mcp.MethodToolsCall) && msg.hasID {
		ctx = g.withCall(ctx, msg.id, r.Header)
	}
	if r.Method == http.MethodGet || (body != nil && msg.method == "subscriptions/listen") {
		ctx = mergeCancel(ctx, g.listenCtx)
	}
	if sid != "" {
		defer g.sessions.use(sid)()
	}
	r = r.WithContext(ctx)
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	tw := &trackingWriter{ResponseWriter: w}
	g.next.ServeHTTP(tw, r)
	if !tw.wrote && msg.method != "" && msg.hasID && ctx.Err() != nil {
		// mcp-go drops the response of a request whose context ended: a call
		// the shutdown cancelled still gets an answer.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(append(rpcError(msg.id, rpcShuttingDown, "the server shut down before the call finished; it was cancelled"), '\n'))
	}
}

// admitMessage passes a POSTed message through the ingress, and a new
// legacy session through the session cap. It returns the canonical message
// mcp-go is to read, or answers a refused one and returns false.
func (g *httpGuard) admitMessage(w http.ResponseWriter, r *http.Request, body []byte, principal string, maxSessions int) ([]byte, peek, bool) {
	adm := admission{msg: body, peek: peekMessage(body)} // the guard alone, in tests
	if g.admit != nil {
		auditAs := principal
		if sid := r.Header.Get(mcpserver.HeaderKeySessionID); sid != "" && g.sessions.owns(sid, principal) {
			auditAs += "/" + sid
		}
		adm = g.admit(auditAs, body)
	}
	if adm.msg == nil {
		writeReply(w, r, adm.reply)
		return nil, adm.peek, false
	}
	if adm.peek.method == string(mcp.MethodInitialize) && !isModernHeader(r.Header) && !g.sessions.roomFor(maxSessions) {
		http.Error(w, fmt.Sprintf("Service Unavailable: %d sessions are open and none is idle (http.max_sessions)", maxSessions), http.StatusServiceUnavailable)
		return nil, adm.peek, false
	}
	return adm.msg, adm.peek, true
}

// authorize runs the checks before anything of the request is read: Host,
// Origin and the bearer token. It returns the principal, or answers the
// request and returns false.
func (g *httpGuard) authorize(w http.ResponseWriter, r *http.Request, set grants.HTTPSettings) (string, bool) {
	if !hostAllowed(r, g.opts, set.AllowedHosts) {
		refuse(w, r, http.StatusForbidden, fmt.Sprintf("Forbidden: Host %q does not name this server (DNS rebinding defence); use the address it listens on, or list the name in http.allowed_hosts", r.Host))
		return "", false
	}
	if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, set.AllowedOrigins) && !(g.opts.Loopback && sameLoopbackOrigin(r, origin)) {
		refuse(w, r, http.StatusForbidden, fmt.Sprintf("Forbidden: Origin %q is not in http.allowed_origins", origin))
		return "", false
	}
	if g.opts.NoAuth {
		return "http:anonymous", true
	}
	if v := g.opts.OAuth; v != nil {
		return g.authorizeOAuth(w, r, v)
	}
	tok, ok := bearer(r.Header.Get("Authorization"))
	sum := sha256.Sum256([]byte(tok))
	if !ok || subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="onellm-mcp"`)
		if ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="onellm-mcp", error="invalid_token"`)
		}
		refuse(w, r, http.StatusUnauthorized, "Unauthorized: a valid bearer token is required")
		return "", false
	}
	return principalForToken(g.opts.Token), true
}

// authorizeOAuth checks an OAuth access token (signature, issuer,
// audience, expiry, scopes). The principal is the token's subject, so two
// subjects never share an approval, a remembered approval or the
// credential data-flow mark. A refusal carries the challenge that points
// the client at the protected resource metadata.
func (g *httpGuard) authorizeOAuth(w http.ResponseWriter, r *http.Request, v *oauth.Verifier) (string, bool) {
	tok, ok := bearer(r.Header.Get("Authorization"))
	if !ok {
		w.Header().Set("WWW-Authenticate", v.Challenge(nil))
		refuse(w, r, http.StatusUnauthorized, "Unauthorized: an OAuth access token for this server is required")
		return "", false
	}
	p, err := v.Verify(r.Context(), tok)
	if err != nil {
		status := http.StatusUnauthorized
		var e *oauth.Error
		if errors.As(err, &e) {
			status = e.Status
		}
		w.Header().Set("WWW-Authenticate", v.Challenge(err))
		refuse(w, r, status, http.StatusText(status)+": "+err.Error())
		return "", false
	}
	return principalForSubject(p.Subject), true
}

// principalForSubject names an OAuth subject as a principal.
func principalForSubject(sub string) string {
	sum := sha256.Sum256([]byte("onellm-mcp oauth subject\x00" + sub))
	return "oauth:" + hex.EncodeToString(sum[:8])
}

// readBody reads a POST body within the body timeout and the size cap.
func (g *httpGuard) readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if limit <= 0 {
		limit = 4 << 20
	}
	if r.ContentLength > limit {
		tooLarge(w, r, limit)
		return nil, false
	}
	rc := http.NewResponseController(w)
	if g.opts.BodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(g.opts.BodyTimeout)) // unsupported in recorders
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			refuse(w, r, http.StatusRequestTimeout, fmt.Sprintf("Request Timeout: the body did not arrive within %s", g.opts.BodyTimeout))
			return nil, false
		}
		refuse(w, r, http.StatusBadRequest, "Bad Request: reading the body: "+err.Error())
		return nil, false
	}
	if int64(len(body)) > limit {
		tooLarge(w, r, limit)
		return nil, false
	}
	// The body is in: the call itself may take longer than the body could.
	_ = rc.SetReadDeadline(time.Time{})
	return body, true
}

// refuse answers a request that goes no further and closes its connection
// without reading the rest of its body: a client that was refused holds
// nothing open.
func refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	w.Header().Set("Connection", "close")
	// The server drains an unread body after the handler; a deadline in the
	// past makes that drain end at once.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	http.Error(w, msg, status)
}

// writeReply sends the ingress's answer to a refused message.
func writeReply(w http.ResponseWriter, r *http.Request, reply []byte) {
	if reply == nil {
		w.WriteHeader(http.StatusAccepted) // a notification: nothing to say
		return
	}
	w.Header().Set("Content-Type", "application/json")
	status := http.StatusOK
	if isModernHeader(r.Header) && bytes.Contains(reply[:min(len(reply), 64)], []byte(`"error"`)) {
		status = http.StatusBadRequest // the modern era maps JSON-RPC errors to HTTP statuses
	}
	w.WriteHeader(status)
	w.Write(append(reply, '\n'))
}

// trackingWriter records whether the handler wrote anything.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) { t.wrote = true; t.ResponseWriter.WriteHeader(code) }
func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
func (t *trackingWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func tooLarge(w http.ResponseWriter, r *http.Request, limit int64) {
	refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: the body exceeds %d bytes (http.max_body_bytes)", limit))
}

// hostAllowed reports whether the Host header names this server: the
// address and port the connection came in on (or opts.Addr when the
// connection does not say), localhost with that port when that address is
// loopback, or a name in allowed with that port. An absent port means the
// scheme's default.
func hostAllowed(r *http.Request, opts HTTPOptions, allowed []string) bool {
	bound := opts.Addr
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		bound = local.String()
	}
	bhost, bport, err := net.SplitHostPort(bound)
	if err != nil {
		return false
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = r.Host, ""
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if port == "" {
		port = "80"
		if r.TLS != nil {
			port = "443"
		}
	}
	if port != bport || host == "" {
		return false
	}
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(a), host) {
			return true
		}
	}
	if host == "localhost" {
		return isLoopbackName(bhost)
	}
	hip, err1 := netip.ParseAddr(host)
	bip, err2 := netip.ParseAddr(strings.Trim(bhost, "[]"))
	if err1 != nil || err2 != nil {
		return strings.EqualFold(host, bhost) // a bound name, e.g. localhost
	}
	return hip.Unmap() == bip.Unmap()
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
// It also bounds them: at most max sessions (http.max_sessions) are kept, and
// opening one more evicts the session idle longest (none of its requests in
// flight); mcp-go's sweeper drops those idle for http.session_idle_seconds.
type sessionStore struct {
	mu  sync.Mutex
	m   map[string]*sessionEntry
	max func() int
	// drop makes mcp-go forget an evicted session (nil: nothing to tell).
	drop func(id, principal string)
	now  func() time.Time
}

type sessionEntry struct {
	principal string
	lastUsed  time.Time
	busy      int // requests in flight
}

func newSessionStore() *sessionStore {
	return &sessionStore{m: map[string]*sessionEntry{}, max: func() int { return 256 }, now: time.Now}
}

func (s *sessionStore) owns(id, principal string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[id]
	return ok && e.principal == principal
}

func (s *sessionStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// roomFor reports whether a new session can be opened under max: below it,
// or with an idle session to evict.
func (s *sessionStore) roomFor(max int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if max <= 0 || len(s.m) < max {
		return true
	}
	_, ok := s.idlest()
	return ok
}

// use marks a request of session id in flight until the returned func runs.
func (s *sessionStore) use(id string) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[id]
	if !ok {
		return func() {}
	}
	e.busy++
	e.lastUsed = s.now()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		e.busy--
		e.lastUsed = s.now()
	}
}

// idlest is the session idle longest with nothing in flight; s.mu is held.
func (s *sessionStore) idlest() (string, bool) {
	var best string
	var at time.Time
	for id, e := range s.m {
		if e.busy == 0 && (best == "" || e.lastUsed.Before(at)) {
			best, at = id, e.lastUsed
		}
	}
	return best, best != ""
}

// add records a new session, evicting the idlest ones over the cap.
func (s *sessionStore) add(id, principal string) {
	var evicted []string
	var owners []string
	s.mu.Lock()
	for max := s.max(); max > 0 && len(s.m) >= max; {
		victim, ok := s.idlest()
		if !ok {
			break // all busy: the guard refuses new sessions until one is idle
		}
		evicted, owners = append(evicted, victim), append(owners, s.m[victim].principal)
		delete(s.m, victim)
	}
	s.m[id] = &sessionEntry{principal: principal, lastUsed: s.now()}
	s.mu.Unlock()
	for i, v := range evicted {
		if s.drop != nil {
			s.drop(v, owners[i])
		}
	}
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
	b.store.add(id, b.principal)
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
	if e, ok := b.store.m[id]; ok && (!b.bound || e.principal == b.principal) {
		delete(b.store.m, id)
	}
	return false, nil
}

// HTTPHandler returns the full HTTP handler: /mcp behind the guard, and
// /healthz. listenCtx ends listening streams (nil: never).
func (s *Server) HTTPHandler(opts HTTPOptions, listenCtx context.Context) http.Handler {
	return s.httpHandler(opts, listenCtx, nil)
}

func (s *Server) httpHandler(opts HTTPOptions, listenCtx context.Context, guard **httpGuard) http.Handler {
	opts.defaults()
	settings := func() grants.HTTPSettings { return s.Policy().HTTP }
	sessions := newSessionStore()
	sessions.max = func() int { return settings().MaxSessions }
	idle := settings().SessionIdle
	if idle <= 0 {
		idle = 30 * time.Minute
	}
	mcpHTTP := mcpserver.NewStreamableHTTPServer(s.mcp,
		mcpserver.WithEndpointPath("/mcp"),
		mcpserver.WithSessionIdManagerResolver(sessions),
		mcpserver.WithSessionIdleTTL(idle),
		mcpserver.WithStreamableHTTPLogger(slog.New(slog.NewTextHandler(s.log.Writer(), &slog.HandlerOptions{Level: slog.LevelWarn}))),
	)
	// An evicted session is terminated as a DELETE from its owner would
	// terminate it, so mcp-go forgets everything it kept for it.
	sessions.drop = func(id, principal string) {
		r, err := http.NewRequestWithContext(WithPrincipal(context.Background(), principal), http.MethodDelete, "/mcp", nil)
		if err != nil {
			return
		}
		r.Header.Set(mcpserver.HeaderKeySessionID, id)
		mcpHTTP.ServeHTTP(discardResponse{h: http.Header{}}, r)
	}
	g := &httpGuard{
		opts:      opts,
		settings:  settings,
		sessions:  sessions,
		tokenSum:  sha256Sum(opts.Token),
		listenCtx: listenCtx,
		admit:     s.admit,
		next:      mcpHTTP,
	}
	if s.tel != nil {
		g.withCall = func(ctx context.Context, id json.RawMessage, h http.Header) context.Context {
			return s.withCallMeta(ctx, id, "tcp", h)
		}
	}
	if guard != nil {
		*guard = g
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g)
	if opts.OAuth != nil {
		// RFC 9728: public, so a client can find where to get a token.
		mux.HandleFunc(oauth.WellKnownPath, opts.OAuth.ServeMetadata)
		mux.HandleFunc(oauth.WellKnownPath+"/mcp", opts.OAuth.ServeMetadata)
	}
	// Prometheus text, behind the same Host, Origin and token checks as /mcp.
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := g.authorize(w, r, g.settings()); ok {
			s.metrics.Registry.ServeHTTP(w, r)
		}
	})
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
// their commands), answers them with a JSON-RPC error and closes the
// connections.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	opts.defaults()
	if !opts.NoAuth && opts.Token == "" && opts.OAuth == nil {
		return errors.New("serve --http: no token")
	}
	if opts.Addr == "" {
		opts.Addr = ln.Addr().String()
	}
	callsCtx, cancelCalls := context.WithCancel(context.Background())
	defer cancelCalls()
	listenCtx, endListening := context.WithCancel(context.Background())
	defer endListening()
	var guard *httpGuard
	srv := &http.Server{
		Handler:           s.httpHandler(opts, listenCtx, &guard),
		ReadHeaderTimeout: opts.HeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return callsCtx },
		ErrorLog:          log.New(io.Discard, "", 0), // refused and timed-out connections are not news
	}
	ln = limitListener(ln, opts.MaxConns, opts.TLSCert != "")
	served := make(chan error, 1)
	go func() {
		if opts.TLSCert != "" {
			served <- srv.ServeTLS(ln, opts.TLSCert, opts.TLSKey)
			return
		}
		served <- srv.Serve(ln)
	}()
	s.Start() // beside the listener: the first request waits for it only where it needs it
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
		// Cancelled handlers write their results, the audit log and the
		// JSON-RPC error for a dropped response before the connections go.
		waitGroupFor(&guard.calls, 5*time.Second)
		// The handlers have returned, but net/http writes their responses
		// after that: let each connection go idle (Shutdown then closes
		// it) before closing whatever is left.
		flushCtx, cancelFlush := context.WithTimeout(context.Background(), time.Second)
		if srv.Shutdown(flushCtx) != nil {
			srv.Close()
		}
		cancelFlush()
	}
	<-served
	return nil
}

func waitGroupFor(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// limitListener serves at most n connections at once. A connection over
// the cap is still accepted at once, so it does not wait in the kernel's
// queue (delaying every client behind it), and answered 503 with
// Retry-After and closed without anything of it being read: its cost is
// one accept, one short write and a close. Over TLS (tls set) it is closed
// without an answer, as a plain-text answer would be garbage there and a
// handshake is the cost being refused.
func limitListener(ln net.Listener, n int, tls bool) net.Listener {
	return &boundedListener{Listener: ln, slots: make(chan struct{}, n), tls: tls,
		refusal: []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nRetry-After: %d\r\nConnection: close\r\n"+
			"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s",
			overCapRetrySeconds, len(overCapText(n)), overCapText(n)))}
}

// overCapRetrySeconds is the Retry-After of a connection over the cap.
const overCapRetrySeconds = 1

func overCapText(n int) string {
	return fmt.Sprintf("Service Unavailable: %d connections are open, the most this server serves at once; retry shortly\n", n)
}

type boundedListener struct {
	net.Listener
	slots   chan struct{}
	tls     bool
	refusal []byte // the whole HTTP answer to a connection over the cap
}

func (l *boundedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &boundedConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
		default:
			l.refuse(c)
		}
	}
}

type boundedConn struct {
	net.Conn
	release func()
}

func (c *boundedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// refuse answers a connection over the cap and closes it. The write goes
// into an empty socket buffer, so it does not block; the deadline bounds
// it all the same, as the accept loop waits for it.
func (l *boundedListener) refuse(c net.Conn) {
	defer c.Close()
	if l.tls {
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := c.Write(l.refusal); err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite() // the answer, then the end, before the close
	}
}

// CheckHTTPBind refuses a bind that the config does not allow: a
// non-loopback address without http.public. It returns the warning to print
// at start-up for a public bind.
func CheckHTTPBind(addr string, h grants.HTTPSettings) (warning string, err error) {
	if IsLoopbackAddr(addr) {
		return "", nil
	}
	if !h.Public {
		return "", fmt.Errorf("serve --http %s: not a loopback address; serving other machines needs [http] public = true in the config (and tls_cert/tls_key for HTTPS), or bind 127.0.0.1", addr)
	}
	if h.TLSCert == "" {
		return fmt.Sprintf("WARNING: serving %s to the network over plain HTTP: the bearer token and every tool result can be read on the way; set [http] tls_cert and tls_key to serve HTTPS", addr), nil
	}
	return fmt.Sprintf("serving %s to the network over HTTPS (%s)", addr, h.TLSCert), nil
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
	case auth.OAuth != nil:
		m := auth.OAuth.Metadata()
		fmt.Fprintf(&b, "OAuth resource server: tokens from %s for %s (metadata: %s)\n", m.AuthorizationServers[0], m.Resource, auth.OAuth.MetadataURL())
		if auth.OAuth.AllowsTypJWT() {
			b.WriteString("WARNING: http.allow_typ_jwt = true: tokens whose typ is JWT or missing are accepted as access tokens; an ID token from the same issuer whose audience is this server would be accepted too.\n")
		}
		header = ` --header "Authorization: Bearer $ACCESS_TOKEN"`
	case auth.Generated:
		fmt.Fprintf(&b, "bearer token (generated for this run, shown once): %s\n", auth.Token)
		header = ` --header "Authorization: Bearer ` + auth.Token + `"`
	default:
		fmt.Fprintf(&b, "bearer token: the value of %s\n", auth.Source)
		header = ` --header "Authorization: Bearer ` + auth.Source + `"`
	}
	fmt.Fprintf(&b, "MCP Inspector: npx -y @modelcontextprotocol/inspector@%s --cli %s --transport http%s --method tools/list\n", InspectorVersion, endpoint, header)
	return b.String()
}

// InspectorVersion is the MCP Inspector the printed command pins: the one
// e2e tests run (e2e/ts/package-lock.json). Unpinned, npx on Node 20 picks
// an old Inspector without --header.
const InspectorVersion = "2.12.0"

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

// discardResponse is a ResponseWriter that keeps nothing.
type discardResponse struct{ h http.Header }

func (d discardResponse) Header() http.Header         { return d.h }
func (d discardResponse) Write(b []byte) (int, error) { return len(b), nil }
func (d discardResponse) WriteHeader(int)             {}
