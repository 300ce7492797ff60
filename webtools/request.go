package webtools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// Limits on what a request may carry. They are far above what a model needs
// and keep a single call's memory bounded.
const (
	MaxURLBytes         = 16 << 10
	MaxRequestBodyBytes = 10 << 20
	MaxHeaderCount      = 64
	MaxHeaderValueBytes = 8 << 10
	MaxHeadersBytes     = 64 << 10
)

// Secret is a configured secret the server may add to requests. Its Value is
// never shown to the model: the String, GoString and JSON forms omit it, and
// it is redacted from responses.
type Secret struct {
	Name string
	// Value is the secret's value; when empty, Load reads it the first
	// time a hop that attaches it is allowed.
	Value string                 `json:"-"`
	Load  func() (string, error) `json:"-"`
	// Hosts are host globs; a label "*" matches one or more labels
	// ("*.github.com" matches api.github.com, not github.com).
	Hosts []string
	// Header is the request header that carries it; default Authorization.
	Header string
	// Format is the header value, "{value}" replaced by the secret; default
	// "{value}".
	Format string
}

// String names the secret without its value.
func (s Secret) String() string { return "secret " + s.Name }

// GoString names the secret without its value, for %#v.
func (s Secret) GoString() string { return "webtools.Secret{Name:" + strconv.Quote(s.Name) + "}" }

func (s Secret) header() string {
	if s.Header == "" {
		return "Authorization"
	}
	return http.CanonicalHeaderKey(s.Header)
}

func (s Secret) headerValue() string {
	f := s.Format
	if f == "" {
		f = "{value}"
	}
	return strings.ReplaceAll(f, "{value}", s.Value)
}

// MatchesHost reports whether the secret may be sent to host (a normalised
// host name or IP literal without brackets), by the policy's host matcher.
func (s Secret) MatchesHost(host string) bool {
	for _, p := range s.Hosts {
		if grants.HostMatches(p, host) {
			return true
		}
	}
	return false
}

// load reads the secret's value, once, when a hop it would be attached to
// was allowed: never before its secret.use was decided.
func (s *Secret) load() error {
	if s.Value == "" {
		if s.Load == nil {
			return fmt.Errorf("secret %s has no value", s.Name)
		}
		v, err := s.Load()
		if err != nil {
			return err
		}
		s.Value = v
	}
	if !validHeaderValue(s.headerValue()) {
		return fmt.Errorf("secret %s: its value or format has a control character and cannot go in a header", s.Name) // never the value
	}
	return nil
}

// Request is one http_request call, as the model asked for it plus the
// secrets the configuration offers.
type Request struct {
	URL     string
	Method  string // default GET; case-insensitive
	Headers map[string]string
	Body    string
	// Timeout bounds the network time of the whole call, every hop
	// included; time spent in Decide (a person answering) is not counted.
	// Zero means Options.DefaultTimeout.
	Timeout time.Duration
	// MaxBytes caps the (decompressed) response body; zero means
	// Options.DefaultMaxBytes.
	MaxBytes int64
	// Secrets are the configured secrets; each is attached only to hops
	// whose host it lists, and every value is redacted from the response.
	Secrets []Secret
}

// Hop is one request of a call: the first, or one made to follow a redirect.
// Decide sees it before any connection is made.
type Hop struct {
	Index  int      // 1 for the first request
	URL    *url.URL // a copy; the host is normalised (127.1 → 127.0.0.1)
	Method string   // upper case
	Host   string   // lower-case name or IP literal, no brackets, no trailing dot
	Port   int
	// Path is the URL path percent-decoded and cleaned ("/a/%2e%2e/b" →
	// "/b"), what a policy should match.
	Path string
	// Addrs are every address the host resolved to (or the literal), all of
	// which were classified; the connection goes only to these.
	Addrs []netip.Addr
	// Private is set when any address is not public.
	Private bool
	// Secrets names the secrets that would be attached to this hop (each a
	// secret.use request to decide).
	Secrets []string
}

// Capability is the hop's network capability (network.http.<method>).
func (h Hop) Capability() grants.Capability {
	c, _ := grants.HTTPCapability(h.Method)
	return c
}

// Target is the hop's request target for the policy.
func (h Hop) Target() grants.Target {
	return grants.Target{Host: h.Host, Port: h.Port, Path: h.Path, Method: h.Method}
}

// Decide is called once per hop before connecting. Returning an error
// refuses the hop; the error is returned by Do unchanged. allowPrivate says
// the rule that allowed the hop set conditions = { allow_private = true }, so
// non-public addresses may be dialled.
type Decide func(ctx context.Context, hop Hop) (allowPrivate bool, err error)

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("invalid request")

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// methods the tool makes, and whether each may carry a body.
func methodTakesBody(m string) (known, body bool) {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return true, false
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true, true
	}
	return false, false
}

// forbiddenHeader lists headers the model may not set: they belong to the
// transport (framing, connection management, the host the dialer checked).
func forbiddenHeader(canon string) bool {
	switch canon {
	case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
		"Upgrade", "Te", "Trailer", "Proxy-Connection", "Expect", "Http2-Settings":
		return true
	}
	return false
}

// Validate checks a request's arguments before anything is decided: the URL
// (http or https, no userinfo, a valid host and port), the method, the
// headers (valid names, no CR/LF or other control characters, none of the
// transport's own), the body (only for POST PUT PATCH DELETE) and the sizes;
// and the secrets' configuration (without ever printing a value).
func Validate(r Request) error {
	if _, _, err := parseURL(r.URL); err != nil {
		return err
	}
	m := strings.ToUpper(r.Method)
	if m == "" {
		m = http.MethodGet
	}
	known, body := methodTakesBody(m)
	if !known {
		return invalid("method %q is not one of GET HEAD POST PUT PATCH DELETE OPTIONS", r.Method)
	}
	if r.Body != "" && !body {
		return invalid("a %s request cannot carry a body", m)
	}
	if len(r.Body) > MaxRequestBodyBytes {
		return invalid("body is %d bytes; the limit is %d", len(r.Body), MaxRequestBodyBytes)
	}
	if len(r.Headers) > MaxHeaderCount {
		return invalid("%d headers; the limit is %d", len(r.Headers), MaxHeaderCount)
	}
	total := 0
	seen := map[string]string{}
	for k, v := range r.Headers {
		if !validToken(k) {
			return invalid("header name %q is not a valid token", k)
		}
		c := http.CanonicalHeaderKey(k)
		if forbiddenHeader(c) {
			return invalid("header %s is set by the client and cannot be overridden", c)
		}
		if prev, dup := seen[c]; dup {
			return invalid("headers %q and %q are the same header", prev, k)
		}
		seen[c] = k
		if !validHeaderValue(v) {
			return invalid("header %s has a control character (CR, LF, NUL…) in its value", c)
		}
		if len(v) > MaxHeaderValueBytes {
			return invalid("header %s is %d bytes; the limit is %d", c, len(v), MaxHeaderValueBytes)
		}
		total += len(k) + len(v) + 4
	}
	if total > MaxHeadersBytes {
		return invalid("headers total %d bytes; the limit is %d", total, MaxHeadersBytes)
	}
	if r.Timeout < 0 {
		return invalid("timeout is negative")
	}
	if r.MaxBytes < 0 {
		return invalid("max_bytes is negative")
	}
	for _, s := range r.Secrets {
		if err := validateSecret(s); err != nil {
			return err
		}
	}
	return nil
}

func validateSecret(s Secret) error {
	if s.Name == "" {
		return invalid("a secret has no name")
	}
	if s.Value == "" && s.Load == nil {
		return invalid("secret %s has an empty value", s.Name)
	}
	if len(s.Hosts) == 0 {
		return invalid("secret %s lists no hosts", s.Name)
	}
	for _, h := range s.Hosts {
		if h == "" || strings.ContainsAny(h, "/:@ ") {
			return invalid("secret %s: host pattern %q is not a host name or glob", s.Name, h)
		}
	}
	if !validToken(s.header()) || forbiddenHeader(s.header()) {
		return invalid("secret %s: header %q cannot carry a secret", s.Name, s.Header)
	}
	if s.Format != "" && !strings.Contains(s.Format, "{value}") {
		return invalid("secret %s: format %q has no {value}", s.Name, s.Format)
	}
	if s.Value != "" && !validHeaderValue(s.headerValue()) {
		// never print the value
		return invalid("secret %s: its value or format has a control character and cannot go in a header", s.Name)
	}
	return nil
}

// parseURL parses and checks a URL for a hop and returns it with its host
// normalised, plus the parsed host.
func parseURL(raw string) (*url.URL, target, error) {
	if len(raw) > MaxURLBytes {
		return nil, target{}, invalid("URL is %d bytes; the limit is %d", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, target{}, invalid("URL does not parse: %v", stripURLError(err))
	}
	return checkURL(u)
}

// target is a parsed hop destination.
type target struct {
	name   string     // host name, "" for IP literals
	addr   netip.Addr // IP literal, invalid for names
	port   int
	scheme string
}

func (t target) host() string {
	if t.addr.IsValid() {
		return t.addr.String()
	}
	return t.name
}

func checkURL(u *url.URL) (*url.URL, target, error) {
	switch u.Scheme {
	case "http", "https":
	case "":
		return nil, target{}, invalid("URL %q has no scheme; use http:// or https://", u.Redacted())
	default:
		return nil, target{}, invalid("scheme %q is not allowed; only http and https", u.Scheme)
	}
	if u.User != nil {
		return nil, target{}, invalid("URLs with user information (user@host) are not allowed")
	}
	if u.Opaque != "" {
		return nil, target{}, invalid("URL %q has no host", u.String())
	}
	name, addr, err := parseHost(u.Hostname())
	if err != nil {
		return nil, target{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	t := target{name: name, addr: addr, scheme: u.Scheme}
	ps := u.Port()
	switch {
	case ps == "" && strings.HasSuffix(u.Host, ":"):
		return nil, target{}, invalid("URL has an empty port")
	case ps == "" && u.Scheme == "https":
		t.port = 443
	case ps == "":
		t.port = 80
	default:
		p, err := strconv.Atoi(ps)
		if err != nil || p < 1 || p > 65535 {
			return nil, target{}, invalid("port %q is out of range", ps)
		}
		t.port = p
	}
	v := *u
	v.Fragment, v.RawFragment = "", ""
	v.Host = hostString(name, addr)
	if ps != "" {
		v.Host += ":" + ps
	}
	return &v, t, nil
}

func stripURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// cleanPath is the URL path a policy matches.
func cleanPath(u *url.URL) string {
	p := u.Path
	if p == "" {
		return "/"
	}
	c := path.Clean("/" + p)
	return c
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
