package webtools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// The egress proxy of sandboxed commands ([sandbox] network = "proxy").
//
// The sandbox hands the server a listener on 127.0.0.1:3128 inside the
// command's otherwise empty network namespace; Proxy serves it as an HTTP
// forward proxy:
//
//   - CONNECT host:port (what clients use for https, and for anything else
//     they tunnel) opens a byte tunnel after the destination is decided;
//   - an absolute-URI request (GET http://host/path) is decided on its method,
//     host, port and path, forwarded with hop-by-hop headers removed, and the
//     connection to the client is closed after the response (one request per
//     connection keeps the framing trivially right);
//   - anything else (origin-form requests, https:// absolute URIs, unknown
//     methods, userinfo in the URL) is refused with 400 or 405.
//
// Every destination goes through Client.Dial: the host is resolved once,
// decide sees the hop, non-public addresses are refused unless the deciding
// rule sets allow_private, and the connection goes only to the checked
// addresses. A refusal is answered 403 with a plain-text body saying why, and
// reported to OnEvent.
//
// What is decided for a tunnel: the proxy cannot see the requests inside a
// TLS tunnel, so a CONNECT is decided as every HTTP method on that host and
// port (ProxyPolicy) and allowed only when all of them are: in practice a
// rule on network.http.* (or network.*) naming the host. A host allowed for
// GET only can be reached over plain http (GET requests), never through a
// tunnel. Path-scoped rules cannot be enforced inside a tunnel either: the
// paths that deny and ask rules name are decided too (TunnelPaths), so a deny
// on one path of a host refuses tunnels to that host.

// Proxy defaults.
const (
	DefaultProxyMaxConns      = 32
	DefaultProxyHeaderTimeout = 10 * time.Second
	DefaultProxyIdleTimeout   = 60 * time.Second
	DefaultProxyDialTimeout   = 15 * time.Second
)

// Proxy is the egress proxy for one sandboxed command.
type Proxy struct {
	// Client dials every destination (its Lookup resolves names).
	Client *Client
	// Decide decides each destination; a Hop with Method "CONNECT" is a
	// tunnel (no URL, no Path). Returning an error refuses it (403).
	Decide Decide
	// MaxConns bounds concurrent client connections (default 32); beyond
	// it a connection gets 503 and is closed.
	MaxConns int
	// HeaderTimeout bounds reading a request header (default 10 s).
	HeaderTimeout time.Duration
	// IdleTimeout closes a connection or tunnel with no traffic either way
	// for that long (default 60 s).
	IdleTimeout time.Duration
	// DialTimeout bounds resolving and connecting (default 15 s, and at
	// most the Client's DefaultTimeout).
	DialTimeout time.Duration
	// MaxHeaderBytes bounds a request or response header (default 64 KiB).
	MaxHeaderBytes int
	// OnEvent, when set, is told about every destination decided (allowed
	// or refused), after the decision. It may be called concurrently.
	OnEvent func(ProxyEvent)
	// Secrets are the brokered secrets the command holds: their values are
	// redacted (Redact) from the host, path and URL Decide sees — so from
	// what is audited — and from every event.
	Secrets []Secret
}

// ProxyEvent is one destination the proxy decided.
type ProxyEvent struct {
	Method  string // "CONNECT" for a tunnel
	Host    string
	Port    int
	Path    string // plain http only
	Allowed bool   // decided and connected
	Status  int    // the status the client got when not Allowed (403, 502, 504)
	Err     string // why not
}

// String renders the event in one line.
func (e ProxyEvent) String() string {
	dest := net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) + e.Path
	if e.Allowed {
		return e.Method + " " + dest + ": allowed"
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, dest, e.Status, e.Err)
}

// ErrProxyRefused is wrapped by the errors ProxyPolicy returns.
var ErrProxyRefused = errors.New("refused by the policy")

// TunnelMethods returns the methods a CONNECT is decided as (ProxyPolicy),
// a fresh slice each time: no caller can change what a tunnel is decided as.
func TunnelMethods() []string {
	return []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}
}

// ProxyPolicy turns a proxy hop into policy requests for toolName
// (network.http.<method> on the hop's host, port and path, Private when any
// address is non-public) and decides them through the server's mid-action
// gate (toolkit.Env.MidAction), which audits each one and refuses anything
// but Allow: no person can be asked while a command runs. A tunnel
// (CONNECT) is decided as every method in TunnelMethods, with no path and
// then with each of tunnelPaths (the paths that path-scoped deny and ask
// rules name), and allowed only when every one of those is; it stops at the
// first refusal.
func ProxyPolicy(gate toolkit.MidAction, toolName string, tunnelPaths []string) Decide {
	return func(ctx context.Context, h Hop) (bool, error) {
		methods, paths := []string{h.Method}, []string{h.Path}
		if h.Method == http.MethodConnect {
			methods, paths = TunnelMethods(), append([]string{""}, tunnelPaths...)
		}
		allowPrivate := true
		for _, p := range paths {
			for _, m := range methods {
				c, ok := grants.HTTPCapability(m)
				if !ok {
					return false, fmt.Errorf("%w: method %s has no network.http capability", ErrProxyRefused, m)
				}
				r := grants.Request{Capability: c, Private: h.Private, Risk: grants.BaseRisk(c, ""),
					Target: grants.Target{ToolName: toolName, Host: h.Host, Port: h.Port, Path: p, Method: m}}
				d, err := gate.Decide(ctx, r, grants.StageHop)
				if err != nil {
					why := err.Error()
					if d.Reason == grants.ReasonApprovalUnavailable {
						why += " (use http_request for it)"
					}
					if h.Method == http.MethodConnect {
						why = "a tunnel carries any method, so every method must be allowed for the host (a rule on network.http.*); " + why
					}
					return false, fmt.Errorf("%w: %s", ErrProxyRefused, why)
				}
				allowPrivate = allowPrivate && d.AllowPrivate
			}
		}
		return allowPrivate, nil
	}
}

// Serve accepts on ln until ctx is done or ln is closed, then closes ln
// and every connection it holds, and returns once every goroutine it
// started has ended.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	maxConns := p.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultProxyMaxConns
	}
	tr := &tracker{conns: map[io.Closer]struct{}{}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		ln.Close()
		tr.closeAll()
	}()
	sem := make(chan struct{}, maxConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
				// EMFILE and the like: back off a little, then go on.
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
					continue
				}
			}
			break
		}
		if !tr.add(c) {
			c.Close()
			break
		}
		select {
		case sem <- struct{}{}:
		default:
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			writeStatus(c, http.StatusServiceUnavailable, fmt.Sprintf("too many connections (the limit is %d)", maxConns))
			tr.remove(c)
			c.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer tr.remove(c)
			defer c.Close()
			p.serveConn(ctx, c, tr)
		}()
	}
	cancel()
	wg.Wait()
}

// tracker holds every open connection so that the end of the command
// closes them all.
type tracker struct {
	mu     sync.Mutex
	closed bool
	conns  map[io.Closer]struct{}
}

func (t *tracker) add(c io.Closer) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *tracker) remove(c io.Closer) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
}

func (t *tracker) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for c := range t.conns {
		c.Close()
	}
	clear(t.conns)
}

func (p *Proxy) headerTimeout() time.Duration {
	if p.HeaderTimeout > 0 {
		return p.HeaderTimeout
	}
	return DefaultProxyHeaderTimeout
}

func (p *Proxy) idleTimeout() time.Duration {
	if p.IdleTimeout > 0 {
		return p.IdleTimeout
	}
	return DefaultProxyIdleTimeout
}

func (p *Proxy) maxHeaderBytes() int64 {
	if p.MaxHeaderBytes > 0 {
		return int64(p.MaxHeaderBytes)
	}
	return DefaultMaxHeaderBytes
}

// idleConn sets a fresh deadline before every read and write.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c idleConn) Read(b []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	return c.Conn.Read(b)
}

func (c idleConn) Write(b []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	return c.Conn.Write(b)
}

func (p *Proxy) serveConn(ctx context.Context, c net.Conn, tr *tracker) {
	idle := p.idleTimeout()
	_ = c.SetWriteDeadline(time.Now().Add(idle))
	// The whole header within HeaderTimeout and MaxHeaderBytes; then idle
	// timeouts only.
	lr := &io.LimitedReader{R: deadlineReader{c, time.Now().Add(p.headerTimeout())}, N: p.maxHeaderBytes()}
	br := bufio.NewReaderSize(lr, 16<<10)
	req, err := http.ReadRequest(br)
	if err != nil {
		var ne net.Error
		switch {
		case lr.N <= 0:
			writeStatus(c, http.StatusRequestHeaderFieldsTooLarge, "request header too large")
		case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed):
		case errors.As(err, &ne) && ne.Timeout():
			writeStatus(c, http.StatusRequestTimeout, "no request header in time")
		default:
			writeStatus(c, http.StatusBadRequest, "malformed request")
		}
		return
	}
	lr.R, lr.N = idleConn{c, idle}, math.MaxInt64
	if req.Method == http.MethodConnect {
		p.tunnel(ctx, c, br, req, tr)
		return
	}
	p.forward(ctx, c, req, tr)
}

// deadlineReader reads with a fixed deadline.
type deadlineReader struct {
	c  net.Conn
	dl time.Time
}

func (d deadlineReader) Read(b []byte) (int, error) {
	_ = d.c.SetReadDeadline(d.dl)
	return d.c.Read(b)
}

// refuse answers a refused or failed destination and reports it.
func (p *Proxy) refuse(c net.Conn, ev ProxyEvent, err error) {
	ev.Status = http.StatusBadGateway
	var pe *PrivateAddressError
	var ne net.Error
	switch {
	case errors.Is(err, ErrProxyRefused) || errors.As(err, &pe) || errors.Is(err, ErrInvalid):
		ev.Status = http.StatusForbidden
	case errors.Is(err, ErrTimeout) || (errors.As(err, &ne) && ne.Timeout()):
		ev.Status = http.StatusGatewayTimeout
	}
	ev.Err = err.Error()
	p.event(ev)
	dest := net.JoinHostPort(ev.Host, strconv.Itoa(ev.Port))
	what := "refused"
	if ev.Status != http.StatusForbidden {
		what = "failed"
	}
	writeStatus(c, ev.Status, fmt.Sprintf("onellm-mcp egress proxy: %s %s%s %s: %s", ev.Method, dest, ev.Path, what, ev.Err))
}

func (p *Proxy) event(ev ProxyEvent) {
	if p.OnEvent != nil {
		ev.Host, ev.Path, ev.Err = Redact(ev.Host, p.Secrets), Redact(ev.Path, p.Secrets), Redact(ev.Err, p.Secrets)
		p.OnEvent(ev)
	}
}

// redactHop removes the secrets' values from what a hop shows the policy.
func (p *Proxy) redactHop(h *Hop) {
	if len(p.Secrets) == 0 {
		return
	}
	h.Host, h.Path = Redact(h.Host, p.Secrets), Redact(h.Path, p.Secrets)
	if h.URL != nil {
		u := cloneURL(h.URL)
		u.Host, u.Path, u.RawPath = Redact(u.Host, p.Secrets), Redact(u.Path, p.Secrets), ""
		u.RawQuery, u.Fragment = Redact(u.RawQuery, p.Secrets), Redact(u.Fragment, p.Secrets)
		h.URL = u
	}
}

// dial decides and connects, with the proxy's dial timeout.
func (p *Proxy) dial(ctx context.Context, host string, port int, fix func(*Hop)) (net.Conn, error) {
	if p.Decide == nil || p.Client == nil {
		return nil, fmt.Errorf("%w: the proxy has no policy", ErrProxyRefused)
	}
	timeout := p.DialTimeout
	if timeout <= 0 {
		timeout = DefaultProxyDialTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	decide := func(ctx context.Context, h Hop) (bool, error) {
		fix(&h)
		p.redactHop(&h)
		return p.Decide(ctx, h)
	}
	conn, _, err := p.Client.Dial(dctx, host, port, decide)
	return conn, err
}

// tunnel handles CONNECT host:port.
func (p *Proxy) tunnel(ctx context.Context, c net.Conn, br *bufio.Reader, req *http.Request, tr *tracker) {
	host, portStr, err := net.SplitHostPort(req.RequestURI)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil || host == "" || port < 1 || port > 65535 {
		writeStatus(c, http.StatusBadRequest, "CONNECT needs host:port")
		return
	}
	ev := ProxyEvent{Method: http.MethodConnect, Host: strings.ToLower(host), Port: port}
	up, err := p.dial(ctx, host, port, func(h *Hop) { ev.Host = h.Host })
	if err != nil {
		p.refuse(c, ev, err)
		return
	}
	if !tr.add(up) {
		up.Close()
		return
	}
	defer tr.remove(up)
	defer up.Close()
	ev.Allowed = true
	p.event(ev)
	idle := p.idleTimeout()
	_ = c.SetWriteDeadline(time.Now().Add(idle))
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client sent after its header (a TLS hello) go first.
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		_ = up.SetWriteDeadline(time.Now().Add(idle))
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(c, up, idle)
}

// splice copies both ways until both sides are done, either fails, or
// nothing moved either way for idle.
func splice(a, b net.Conn, idle time.Duration) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	pump := func(dst, src net.Conn) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			_ = src.SetReadDeadline(time.Now().Add(idle))
			n, err := src.Read(buf)
			if n > 0 {
				last.Store(time.Now().UnixNano())
				_ = dst.SetWriteDeadline(time.Now().Add(idle))
				if _, werr := dst.Write(buf[:n]); werr != nil {
					a.Close()
					b.Close()
					return
				}
				last.Store(time.Now().UnixNano())
			}
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < idle {
					continue // the other direction is busy
				}
				if errors.Is(err, io.EOF) {
					if cw, ok := dst.(interface{ CloseWrite() error }); ok {
						_ = cw.CloseWrite()
						return
					}
				}
				a.Close()
				b.Close()
				return
			}
		}
	}
	wg.Add(2)
	go pump(b, a)
	pump(a, b)
	wg.Wait()
}

// hopHeaders are removed from what the proxy forwards either way.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Upgrade"}

func stripHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, k := range strings.Split(f, ",") {
			if k = strings.TrimSpace(k); k != "" {
				h.Del(k)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// forward handles one absolute-URI request for plain http.
func (p *Proxy) forward(ctx context.Context, c net.Conn, req *http.Request, tr *tracker) {
	u := req.URL
	switch {
	case u == nil || !u.IsAbs() || u.Host == "":
		writeStatus(c, http.StatusBadRequest, "this is a forward proxy: send absolute-URI requests (http://host/path) or CONNECT host:port")
		return
	case u.Scheme != "http":
		writeStatus(c, http.StatusBadRequest, fmt.Sprintf("%s:// URLs go through CONNECT; only http:// is forwarded", u.Scheme))
		return
	case u.User != nil:
		writeStatus(c, http.StatusBadRequest, "URLs with user information are refused")
		return
	}
	if _, ok := grants.HTTPCapability(req.Method); !ok {
		writeStatus(c, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not forwarded (GET HEAD POST PUT PATCH DELETE OPTIONS only)", req.Method))
		return
	}
	port := 80
	if ps := u.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			writeStatus(c, http.StatusBadRequest, "bad port")
			return
		}
		port = n
	}
	path := cleanPath(u)
	ev := ProxyEvent{Method: req.Method, Host: strings.ToLower(u.Hostname()), Port: port, Path: path}
	up, err := p.dial(ctx, u.Hostname(), port, func(h *Hop) {
		h.Method, h.Path = req.Method, path
		uu := cloneURL(u)
		uu.Host = net.JoinHostPort(h.Host, strconv.Itoa(port))
		h.URL = uu
		ev.Host = h.Host
	})
	if err != nil {
		p.refuse(c, ev, err)
		return
	}
	if !tr.add(up) {
		up.Close()
		return
	}
	defer tr.remove(up)
	defer up.Close()
	ev.Allowed = true
	p.event(ev)

	idle := p.idleTimeout()
	cl := idleConn{c, idle}
	upc := idleConn{up, idle}
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		req.Header.Del("Expect")
		if _, err := io.WriteString(cl, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return
		}
	}
	stripHop(req.Header)
	req.RequestURI = ""
	req.Close = true
	req.URL = &url.URL{Scheme: "http", Host: u.Host, Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // none, as the client sent (Write would add Go's)
	}
	if err := req.Write(upc); err != nil {
		p.event(ProxyEvent{Method: ev.Method, Host: ev.Host, Port: ev.Port, Path: ev.Path, Status: http.StatusBadGateway, Err: "sending: " + err.Error()})
		writeStatus(c, http.StatusBadGateway, "onellm-mcp egress proxy: sending the request failed: "+err.Error())
		return
	}
	rlr := &io.LimitedReader{R: upc, N: p.maxHeaderBytes()}
	rbr := bufio.NewReaderSize(rlr, 16<<10)
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(rbr, req)
		if err != nil {
			writeStatus(c, http.StatusBadGateway, "onellm-mcp egress proxy: reading the response failed: "+err.Error())
			return
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		resp.Body.Close() // 1xx: the client already got its 100 from us
	}
	rlr.N = math.MaxInt64
	defer resp.Body.Close()
	stripHop(resp.Header)
	resp.Close = true
	_ = resp.Write(cl)
}

// writeStatus writes a complete plain-text response and leaves the
// connection to be closed.
func writeStatus(w io.Writer, code int, msg string) {
	body := msg + "\n"
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Onellm-Proxy: %d\r\n\r\n%s",
		code, http.StatusText(code), len(body), code, body)
}
