package webtools

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onellm/onellm-mcp/internal/netaddr"
)

// Defaults used when Options leaves a field zero.
const (
	DefaultMaxHops        = 10
	DefaultTimeout        = 30 * time.Second
	DefaultMaxBytes       = 1 << 20
	DefaultMaxHeaderBytes = 64 << 10
	DefaultUserAgent      = "onellm-mcp"
	maxAddrs              = 32
)

// Options configure a Client. The zero value is usable.
type Options struct {
	// Lookup resolves a host name; when nil, Resolver (or net.DefaultResolver)
	// is used. Tests give a fake one. It is called once per hop.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Resolver is used when Lookup is nil.
	Resolver *net.Resolver
	// MaxHops is the most requests one call makes, the first included
	// (default 10, so at most 9 redirects are followed).
	MaxHops int
	// DefaultTimeout and DefaultMaxBytes apply when a Request leaves them
	// zero. Capping what the model asks for is the caller's job.
	DefaultTimeout  time.Duration
	DefaultMaxBytes int64
	// MaxHeaderBytes bounds the response header (default 64 KiB).
	MaxHeaderBytes int64
	// RootCAs verifies servers; nil means the system roots.
	RootCAs *x509.CertPool
	// UserAgent is sent when the request does not set one.
	UserAgent string
}

// Client makes guarded HTTP requests. It holds only its options: every call
// builds its own transport per hop, so it is safe for concurrent use and no
// connection outlives the hop whose addresses were checked.
type Client struct {
	o Options
}

// NewClient returns a Client with o's zero fields set to their defaults.
func NewClient(o Options) *Client {
	if o.Lookup == nil {
		res := o.Resolver
		if res == nil {
			res = net.DefaultResolver
		}
		o.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return res.LookupNetIP(ctx, "ip", host)
		}
	}
	if o.MaxHops <= 0 {
		o.MaxHops = DefaultMaxHops
	}
	if o.DefaultTimeout <= 0 {
		o.DefaultTimeout = DefaultTimeout
	}
	if o.DefaultMaxBytes <= 0 {
		o.DefaultMaxBytes = DefaultMaxBytes
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	return &Client{o: o}
}

// Response is what the call returns to the model.
type Response struct {
	Status int
	// Headers are canonicalised; multiple values joined with ", "; secret
	// values redacted. Content-Encoding and Content-Length are dropped when
	// the body was decompressed.
	Headers     map[string]string
	Body        string // text, or base64 when BodyBase64
	BodyBase64  bool
	ContentType string
	Truncated   bool   // the body was longer than MaxBytes (after redaction)
	FinalURL    string // the last hop's URL, secrets redacted
	Hops        int    // requests made
	Bytes       int64  // body bytes returned (decompressed, redacted, before base64), at most MaxBytes
}

// ErrTimeout is wrapped by the error Do returns when the call's timeout ran out.
var ErrTimeout = errors.New("timed out")

// ErrTooManyHops is wrapped by the error Do returns when redirects go on
// past Options.MaxHops.
var ErrTooManyHops = errors.New("too many redirects")

// PrivateAddressError refuses a hop whose host resolved to a non-public
// address when the deciding rule did not set allow_private.
type PrivateAddressError struct {
	Host  string
	Addr  netip.Addr
	Class string
}

func (e *PrivateAddressError) Error() string {
	what := e.Addr.String()
	if e.Host != e.Addr.String() {
		what = e.Host + " resolves to " + e.Addr.String() + ", which"
	}
	return fmt.Sprintf("%s is %s; a rule must name this host with conditions = { allow_private = true }", what, e.Class)
}

// budget is the network time a call has left. Only the network phases
// (resolving, connecting, sending, reading) spend it; Decide does not.
type budget struct {
	left  time.Duration
	total time.Duration
}

func (b *budget) run(parent context.Context) (context.Context, func()) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(parent, b.left)
	return ctx, func() {
		cancel()
		b.left -= time.Since(start)
		if b.left < 0 {
			b.left = 0
		}
	}
}

// netErr turns a network-phase error into the error Do returns: a timeout
// when the budget ran out, the text with secrets redacted otherwise.
func (b *budget) netErr(parent, ctx context.Context, what string, err error, secrets []Secret) error {
	if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w after %s", what, ErrTimeout, b.total)
	}
	if parent.Err() != nil {
		return fmt.Errorf("%s: %w", what, parent.Err())
	}
	return fmt.Errorf("%s: %s", what, Redact(stripURLError(err).Error(), secrets))
}

// Do makes the request: each hop (the first request and every redirect
// followed) is parsed, resolved once, shown to decide, checked against the
// private-address guard, and only then connected, to the checked addresses
// only. Errors from decide are returned as they are.
func (c *Client) Do(ctx context.Context, r Request, decide Decide) (Response, error) {
	if err := Validate(r); err != nil {
		return Response{}, err
	}
	if decide == nil {
		return Response{}, errors.New("http_request: no decision function; refusing")
	}
	u, t, _ := parseURL(r.URL) // validated above
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = c.o.DefaultTimeout
	}
	maxBytes := r.MaxBytes
	if maxBytes == 0 {
		maxBytes = c.o.DefaultMaxBytes
	}
	b := &budget{left: timeout, total: timeout}
	body := r.Body
	// Values are loaded into this copy as hops attach them (and redacted
	// from then on); the caller's list is never written.
	r.Secrets = slices.Clone(r.Secrets)

	headers := http.Header{}
	for k, v := range r.Headers {
		headers.Set(k, v)
	}
	origHost := t.host()

	for hop := 1; ; hop++ {
		if hop > c.o.MaxHops {
			return Response{}, fmt.Errorf("%w: stopped after %d requests", ErrTooManyHops, c.o.MaxHops)
		}
		if hop > 1 && t.host() != origHost {
			// Like net/http: the model's credentials never follow a
			// redirect to another host, and stay dropped afterwards.
			headers.Del("Authorization")
			headers.Del("Cookie")
			headers.Del("Proxy-Authorization")
		}
		if name := containsSecret(u.String(), r.Secrets); name != "" {
			return Response{}, fmt.Errorf("hop %d: refused: the URL carries the value of secret %s", hop, name)
		}

		// Resolve once; these addresses are the only ones dialled.
		addrs, err := c.resolve(ctx, b, t, r.Secrets)
		if err != nil {
			return Response{}, fmt.Errorf("hop %d: %w", hop, err)
		}
		private, firstBad, badClass, loopbackOnly := classifyAll(addrs)
		secrets := c.secretsFor(r.Secrets, t, loopbackOnly)
		for i, s := range secrets {
			for _, o := range secrets[:i] {
				if s.header() == o.header() {
					return Response{}, fmt.Errorf("hop %d: secrets %s and %s both set header %s for %s; refusing rather than choosing", hop, o.Name, s.Name, s.header(), t.host())
				}
			}
		}
		h := Hop{
			Index: hop, URL: cloneURL(u), Method: method, Host: t.host(), Port: t.port,
			Path: cleanPath(u), Addrs: slices.Clone(addrs), Private: private,
		}
		for _, s := range secrets {
			h.Secrets = append(h.Secrets, s.Name)
		}
		allowPrivate, err := decide(ctx, h)
		if err != nil {
			return Response{}, err
		}
		if private && !allowPrivate {
			return Response{}, &PrivateAddressError{Host: t.host(), Addr: firstBad, Class: badClass}
		}
		if secrets, err = loadAttached(r.Secrets, secrets); err != nil {
			return Response{}, fmt.Errorf("hop %d refused: %w; nothing was sent to %s", h.Index, err, h.Host)
		}

		hopHeaders := headers.Clone()
		if hopHeaders.Get("User-Agent") == "" {
			hopHeaders.Set("User-Agent", c.o.UserAgent)
		}
		if hopHeaders.Get("Accept-Encoding") == "" {
			hopHeaders.Set("Accept-Encoding", "gzip, deflate")
		}
		for _, s := range secrets {
			hopHeaders.Set(s.header(), s.headerValue())
		}

		nctx, done := b.run(ctx)
		resp, err := c.roundTrip(nctx, h, t, addrs, method, body, hopHeaders)
		if err != nil {
			done()
			return Response{}, b.netErr(ctx, nctx, fmt.Sprintf("hop %d: %s %s", hop, method, Redact(u.Redacted(), r.Secrets)), err, r.Secrets)
		}

		next, nextMethod, keepBody, err := redirect(u, method, resp)
		if err != nil {
			resp.Body.Close()
			done()
			return Response{}, fmt.Errorf("hop %d: %s", hop, Redact(err.Error(), r.Secrets))
		}
		if next == nil {
			out, err := c.finish(resp, maxBytes, r.Secrets, method)
			resp.Body.Close()
			if err != nil {
				err = b.netErr(ctx, nctx, fmt.Sprintf("hop %d: reading the response", hop), err, r.Secrets)
			}
			done()
			if err != nil {
				return Response{}, err
			}
			out.FinalURL = Redact(u.String(), r.Secrets)
			out.Hops = hop
			return out, nil
		}
		resp.Body.Close()
		done()

		nu, nt, err := checkURL(next)
		if err != nil {
			return Response{}, fmt.Errorf("hop %d: redirect refused: %s", hop, Redact(err.Error(), r.Secrets))
		}
		if !keepBody {
			body = ""
			headers.Del("Content-Type")
		}
		u, t, method = nu, nt, nextMethod
	}
}

// classifyAll reports whether any address is non-public (and the first
// such, with its class) and whether all are loopback.
func classifyAll(addrs []netip.Addr) (private bool, bad netip.Addr, class string, loopbackOnly bool) {
	loopbackOnly = true
	for _, a := range addrs {
		if !netaddr.IsLoopback(a) {
			loopbackOnly = false
		}
		if c, pub := netaddr.Classify(a); !pub && !private {
			private, bad, class = true, a, c
		}
	}
	return private, bad, class, loopbackOnly
}

// Dial connects to host:port with the same guard as Do, for the egress
// proxy of sandboxed commands: the host is normalised (odd IPv4 spellings
// read as addresses) and decided by its name before anything is resolved —
// so a command cannot put data into DNS queries for hosts no rule allows —;
// decide sees a Hop with Method "CONNECT" and a nil URL (its Capability is
// empty: the caller picks the capability). A name is then resolved once;
// when any address is not public, decide is asked again with Private set
// (the first answer knew no addresses) and the connection is refused unless
// it reports allowPrivate. The connection goes only to the checked
// addresses. Resolving and connecting get Options.DefaultTimeout.
func (c *Client) Dial(ctx context.Context, host string, port int, decide Decide) (net.Conn, Hop, error) {
	if decide == nil {
		return nil, Hop{}, errors.New("dial: no decision function; refusing")
	}
	if port < 1 || port > 65535 {
		return nil, Hop{}, invalid("port %d is out of range", port)
	}
	name, addr, err := parseHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if err != nil {
		return nil, Hop{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	t := target{name: name, addr: addr, port: port}
	h := Hop{Index: 1, Method: "CONNECT", Host: t.host(), Port: port}
	var private bool
	var bad netip.Addr
	var class string
	if addr.IsValid() { // a literal: its class is known without a lookup
		h.Addrs = []netip.Addr{addr}
		private, bad, class, _ = classifyAll(h.Addrs)
		h.Private = private
	}
	allowPrivate, err := decide(ctx, h)
	if err != nil {
		return nil, h, err
	}
	b := &budget{left: c.o.DefaultTimeout, total: c.o.DefaultTimeout}
	addrs, err := c.resolve(ctx, b, t, nil)
	if err != nil {
		return nil, h, err
	}
	if !addr.IsValid() {
		private, bad, class, _ = classifyAll(addrs)
		h.Addrs, h.Private = slices.Clone(addrs), private
		if private {
			if allowPrivate, err = decide(ctx, h); err != nil {
				return nil, h, err
			}
		}
	}
	if private && !allowPrivate {
		return nil, h, &PrivateAddressError{Host: t.host(), Addr: bad, Class: class}
	}
	nctx, done := b.run(ctx)
	defer done()
	conn, err := dialChecked(nctx, addrs, port)
	if err != nil {
		return nil, h, b.netErr(ctx, nctx, "connecting to "+net.JoinHostPort(t.host(), strconv.Itoa(port)), err, nil)
	}
	return conn, h, nil
}

func cloneURL(u *url.URL) *url.URL {
	v := *u
	if u.User != nil {
		uu := *u.User
		v.User = &uu
	}
	return &v
}

// resolve returns the hop's addresses: the literal, or one lookup's answers,
// deduplicated, zones removed, at most maxAddrs.
func (c *Client) resolve(ctx context.Context, b *budget, t target, secrets []Secret) ([]netip.Addr, error) {
	if t.addr.IsValid() {
		return []netip.Addr{t.addr}, nil
	}
	nctx, done := b.run(ctx)
	defer done()
	got, err := c.o.Lookup(nctx, t.name)
	if err != nil {
		return nil, b.netErr(ctx, nctx, "resolving "+t.name, err, secrets)
	}
	var out []netip.Addr
	for _, a := range got {
		a = a.WithZone("")
		if !a.IsValid() || slices.Contains(out, a) {
			continue
		}
		out = append(out, a)
		if len(out) == maxAddrs {
			break
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("resolving %s: no addresses", t.name)
	}
	return out, nil
}

// secretsFor picks the secrets to attach to a hop: those whose hosts match,
// and only over https, or over http to a host that is loopback only (a
// local service), so a secret never crosses a network in clear text.
func (c *Client) secretsFor(all []Secret, t target, loopbackOnly bool) []Secret {
	if t.scheme != "https" && !loopbackOnly {
		return nil
	}
	var out []Secret
	for _, s := range all {
		if s.MatchesHost(t.host()) {
			out = append(out, s)
		}
	}
	return out
}

// loadAttached reads the values of a hop's secrets now that the hop (and
// their secret.use) was allowed, into all (so they are redacted from then
// on), and returns the hop's secrets with their values. A secret whose
// value cannot be read stops the hop: it is never sent empty, and the
// request is not sent without what the configuration attaches to it.
func loadAttached(all, hop []Secret) ([]Secret, error) {
	var out []Secret
	for _, s := range hop {
		i := slices.IndexFunc(all, func(x Secret) bool { return x.Name == s.Name })
		if i < 0 {
			return nil, fmt.Errorf("secret %s is not configured", s.Name)
		}
		if err := all[i].load(); err != nil {
			return nil, err
		}
		out = append(out, all[i])
	}
	return out, nil
}

// roundTrip sends one hop's request on a fresh transport whose dialer can
// reach only addrs. Environment proxies are ignored; compression is handled
// by the caller so the decompressed size can be capped.
func (c *Client) roundTrip(ctx context.Context, h Hop, t target, addrs []netip.Addr, method, body string, hdr http.Header) (*http.Response, error) {
	want := net.JoinHostPort(t.host(), strconv.Itoa(t.port))
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != want {
			return nil, fmt.Errorf("refusing to dial %s: the checked destination is %s", addr, want)
		}
		return dialChecked(ctx, addrs, t.port)
	}
	tr := &http.Transport{
		Proxy:       nil,
		DialContext: dial,
		TLSClientConfig: &tls.Config{
			RootCAs:    c.o.RootCAs,
			ServerName: t.host(),
			MinVersion: tls.VersionTLS12,
		},
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: c.o.MaxHeaderBytes,
	}
	defer tr.CloseIdleConnections()

	req, err := http.NewRequestWithContext(ctx, method, h.URL.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = hdr
	if body != "" {
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	}
	return tr.RoundTrip(req)
}

// controlFor is the last check, at the socket: the kernel is asked to
// connect only to an address that was classified and decided.
func controlFor(allowed []netip.Addr, port int) func(context.Context, string, string, syscall.RawConn) error {
	return func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || ap.Port() != uint16(port) || !slices.Contains(allowed, ap.Addr().Unmap()) {
			return fmt.Errorf("refusing to connect to %s: not a checked address", address)
		}
		return nil
	}
}

// dialChecked connects to the first of addrs that answers, by address,
// never by name. With several addresses each gets a share of the time left,
// as net.Dialer does for its fallbacks.
func dialChecked(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	allowed := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		allowed[i] = a.Unmap()
	}
	d := &net.Dialer{ControlContext: controlFor(allowed, port)}
	var errs []error
	for i, a := range allowed {
		actx := ctx
		if dl, ok := ctx.Deadline(); ok && i < len(allowed)-1 {
			share := max(time.Until(dl)/time.Duration(len(allowed)-i), min(2*time.Second, time.Until(dl)))
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(ctx, share)
			defer cancel()
		}
		conn, err := d.DialTCP(actx, "tcp", netip.AddrPort{}, netip.AddrPortFrom(a, uint16(port)))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// redirect says where a response sends the next hop, or nil when it is the
// final response. 301/302/303 become GET without a body (HEAD stays HEAD);
// 307/308 keep the method and body.
func redirect(u *url.URL, method string, resp *http.Response) (next *url.URL, nextMethod string, keepBody bool, err error) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
		nextMethod = http.MethodGet
		if method == http.MethodHead {
			nextMethod = http.MethodHead
		}
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		nextMethod, keepBody = method, true
	default:
		return nil, "", false, nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, "", false, nil // nothing to follow; the model sees the 3xx
	}
	if len(loc) > MaxURLBytes {
		return nil, "", false, fmt.Errorf("redirect Location is %d bytes; the limit is %d", len(loc), MaxURLBytes)
	}
	next, err = u.Parse(loc)
	if err != nil {
		return nil, "", false, fmt.Errorf("redirect to an unparsable Location: %v", stripURLError(err))
	}
	if next.Scheme != "http" && next.Scheme != "https" {
		return nil, "", false, fmt.Errorf("redirect to %s:// refused; only http and https are followed", next.Scheme)
	}
	return next, nextMethod, keepBody, nil
}
