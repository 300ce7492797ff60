package webtools

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// runProxy serves p on a fresh 127.0.0.1 listener; stop cancels and waits
// for Serve to return.
func runProxy(t testing.TB, p *Proxy) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Serve(ctx, ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Errorf("Serve did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// echoServer is a raw TCP echo server on 127.0.0.1 that counts accepts.
func echoServer(t testing.TB) (port int, accepts *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepts = &atomic.Int64{}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepts.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, accepts
}

// connect sends CONNECT (plus extra bytes right behind it, as a TLS client
// does) and returns the connection and the response status line.
func connect(t testing.TB, proxy, dest, extra string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n%s", dest, dest, extra)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

func proxyClient(proxy string, pool *x509.CertPool) *http.Client {
	u, _ := url.Parse("http://" + proxy)
	tr := &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}
	if pool != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

func TestProxyConnect(t *testing.T) {
	port, accepts := echoServer(t)
	rec := &recorder{allowPrivate: true}
	var events []ProxyEvent
	var mu sync.Mutex
	addr, _ := runProxy(t, &Proxy{Client: client(nil), Decide: rec.decide, OnEvent: func(e ProxyEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	c, br, resp := connect(t, addr, "0x7f.1:"+strconv.Itoa(port), "early;")
	defer c.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	fmt.Fprint(c, "ping")
	c.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(br)
	if string(got) != "early;ping" {
		t.Fatalf("echo %q", got)
	}
	h := rec.seen()
	if len(h) != 1 || h[0].Method != "CONNECT" || h[0].Host != "127.0.0.1" || h[0].Port != port || !h[0].Private {
		t.Fatalf("hops %+v", h)
	}
	if accepts.Load() != 1 {
		t.Fatalf("accepts %d", accepts.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || !events[0].Allowed || events[0].Method != "CONNECT" {
		t.Fatalf("events %+v", events)
	}
}

func TestProxyHTTPSThroughConnect(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(okHandler))
	defer ts.Close()
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	addr, _ := runProxy(t, &Proxy{Client: client(nil), Decide: (&recorder{allowPrivate: true}).decide})
	resp, err := proxyClient(addr, pool).Get(ts.URL + "/secure")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello GET /secure" {
		t.Fatalf("body %q", b)
	}
}

// TestProxyRefusedHostIsNotResolved: a host no rule allows is refused on
// its name; nothing is looked up, so no data leaves in a DNS query.
func TestProxyRefusedHostIsNotResolved(t *testing.T) {
	d := newDNS(map[string]string{"allowed.test": "127.0.0.1", "secret-data.evil.test": "127.0.0.1"})
	rec := &recorder{allowPrivate: true, refuse: func(h Hop) error {
		if h.Host != "allowed.test" {
			return fmt.Errorf("%w: no rule for %s", ErrProxyRefused, h.Host)
		}
		return nil
	}}
	addr, _ := runProxy(t, &Proxy{Client: client(d), Decide: rec.decide})
	for _, host := range []string{"secret-data.evil.test", "allowed.test"} {
		c, _, resp := connect(t, addr, host+":443", "")
		resp.Body.Close()
		c.Close()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := d.calls["secret-data.evil.test"]; n != 0 {
		t.Errorf("the refused host was looked up %d times", n)
	}
	if n := d.calls["allowed.test"]; n != 1 {
		t.Errorf("the allowed host was looked up %d times, want 1", n)
	}
}

func TestProxyRefused(t *testing.T) {
	port, accepts := echoServer(t)
	s := newServer(t, okHandler)
	rec := &recorder{allowPrivate: true, refuse: func(h Hop) error {
		return fmt.Errorf("%w: no rule for %s", ErrProxyRefused, h.Host)
	}}
	var refused atomic.Int64
	addr, _ := runProxy(t, &Proxy{Client: client(nil), Decide: rec.decide, OnEvent: func(e ProxyEvent) {
		if !e.Allowed && e.Status == 403 {
			refused.Add(1)
		}
	}})
	c, br, resp := connect(t, addr, "127.0.0.1:"+strconv.Itoa(port), "")
	body, _ := io.ReadAll(resp.Body)
	_ = br
	c.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "refused") || !strings.Contains(string(body), "no rule for 127.0.0.1") {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	r2, err := proxyClient(addr, nil).Get(s.url("127.0.0.1", "/x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(r2.Body)
	r2.Body.Close()
	if r2.StatusCode != 403 || !strings.Contains(string(body), "GET 127.0.0.1:"+strconv.Itoa(s.port)+"/x refused") {
		t.Fatalf("status %d body %q", r2.StatusCode, body)
	}
	if accepts.Load() != 0 || s.ln.accepts.Load() != 0 || s.hits.Load() != 0 {
		t.Fatalf("targets were reached: %d %d", accepts.Load(), s.ln.accepts.Load())
	}
	if refused.Load() != 2 {
		t.Fatalf("refusal events %d", refused.Load())
	}
}

func TestProxyPlainHTTP(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Header.Get("Proxy-Authorization") != "" || r.Header.Get("Proxy-Connection") != "" {
			w.WriteHeader(500)
		}
		fmt.Fprintf(w, "%s %s?%s host=%s body=%s", r.Method, r.URL.Path, r.URL.RawQuery, r.Host, b)
	})
	d := newDNS(map[string]string{"app.test": "127.0.0.1"})
	rec := &recorder{allowPrivate: true}
	addr, _ := runProxy(t, &Proxy{Client: client(d), Decide: rec.decide})
	pc := proxyClient(addr, nil)
	req, _ := http.NewRequest("POST", s.url("app.test", "/a/../b?q=1"), strings.NewReader("payload"))
	req.Header.Set("Proxy-Authorization", "Basic eA==")
	resp, err := pc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The path is decided cleaned (/b) and forwarded as sent, as http_request does.
	want := fmt.Sprintf("POST /a/../b?q=1 host=app.test:%d body=payload", s.port)
	if resp.StatusCode != 200 || string(b) != want {
		t.Fatalf("status %d body %q (want %q) headers %v", resp.StatusCode, b, want, resp.Header)
	}
	// Decided by name before the lookup, then again once the address
	// turned out private.
	h := rec.seen()
	if len(h) != 2 || h[0].Method != "POST" || h[0].Host != "app.test" || h[0].Path != "/b" || h[0].URL == nil ||
		len(h[0].Addrs) != 0 || h[0].Private || !h[1].Private || len(h[1].Addrs) != 1 {
		t.Fatalf("hops %+v", h)
	}
	// A large streamed response passes whole.
	big := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 256; i++ {
			w.Write([]byte(strings.Repeat("x", 4096)))
		}
	})
	resp, err = pc.Get(big.url("127.0.0.1", "/big"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if n != 256*4096 {
		t.Fatalf("got %d bytes", n)
	}
	// Not a proxy request, https absolute URI, unknown method, userinfo.
	for _, raw := range []string{
		"GET /x HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET https://127.0.0.1/ HTTP/1.1\r\nHost: a\r\n\r\n",
		"TRACE http://127.0.0.1:" + strconv.Itoa(s.port) + "/ HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http://u:p@127.0.0.1:" + strconv.Itoa(s.port) + "/ HTTP/1.1\r\nHost: a\r\n\r\n",
		"CONNECT nohostport HTTP/1.1\r\nHost: a\r\n\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, raw)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil || (resp.StatusCode != 400 && resp.StatusCode != 405) {
			t.Errorf("%q: %v %v", raw, resp, err)
		}
	}
	if s.hits.Load() != 1 {
		t.Fatalf("hits %d", s.hits.Load())
	}
}

func TestProxyPrivateNeedsAllowPrivate(t *testing.T) {
	s := newServer(t, okHandler)
	port, accepts := echoServer(t)
	addr, _ := runProxy(t, &Proxy{Client: client(newDNS(map[string]string{"app.test": "93.184.216.34,127.0.0.1"})), Decide: (&recorder{}).decide})
	for _, host := range []string{"127.0.0.1", "2130706433", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]", "app.test"} {
		resp, err := proxyClient(addr, nil).Get("http://" + host + ":" + strconv.Itoa(s.port) + "/")
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 403 || !strings.Contains(string(b), "allow_private") {
			t.Errorf("%s: status %d body %q", host, resp.StatusCode, b)
		}
		c, _, cr := connect(t, addr, host+":"+strconv.Itoa(port), "")
		c.Close()
		if cr.StatusCode != 403 {
			t.Errorf("CONNECT %s: status %d", host, cr.StatusCode)
		}
	}
	if s.ln.accepts.Load() != 0 || accepts.Load() != 0 {
		t.Fatalf("private targets reached")
	}
}

func TestProxyPolicy(t *testing.T) {
	var mu sync.Mutex
	var seen []grants.Request
	decide := func(effects map[string]grants.Effect) func(context.Context, grants.Request) grants.Decision {
		return func(_ context.Context, r grants.Request) grants.Decision {
			mu.Lock()
			seen = append(seen, r)
			mu.Unlock()
			e, ok := effects[r.Target.Method+" "+r.Target.Path]
			if !ok {
				e = effects[r.Target.Method]
			}
			return grants.Decision{Request: r, Effect: e, AllowPrivate: true}
		}
	}
	all := map[string]grants.Effect{}
	for _, m := range TunnelMethods() {
		all[m] = grants.Allow
	}
	h := Hop{Method: "CONNECT", Host: "api.test", Port: 443}
	if ap, err := ProxyPolicy(gateOf(decide(all)), "execute_terminal_command", nil)(context.Background(), h); err != nil || !ap {
		t.Fatalf("all allowed: %v %v", ap, err)
	}
	if len(seen) != len(TunnelMethods()) || seen[0].Capability != grants.CapHTTPGet || seen[0].Target.ToolName != "execute_terminal_command" || seen[0].Target.Host != "api.test" || seen[0].Target.Port != 443 {
		t.Fatalf("requests %+v", seen)
	}
	getOnly := map[string]grants.Effect{"GET": grants.Allow}
	_, err := ProxyPolicy(gateOf(decide(getOnly)), "x", nil)(context.Background(), h)
	if !errors.Is(err, ErrProxyRefused) || !strings.Contains(err.Error(), "every method") {
		t.Fatalf("GET only, tunnel: %v", err)
	}
	if _, err := ProxyPolicy(gateOf(decide(getOnly)), "x", nil)(context.Background(), Hop{Method: "GET", Host: "api.test", Port: 80, Path: "/"}); err != nil {
		t.Fatalf("GET only, GET: %v", err)
	}
	ask := map[string]grants.Effect{"GET": grants.Ask}
	if _, err := ProxyPolicy(gateOf(decide(ask)), "x", nil)(context.Background(), Hop{Method: "GET", Host: "a", Port: 80, Path: "/"}); err == nil || !strings.Contains(err.Error(), "approval") {
		t.Fatalf("ask: %v", err)
	}
	// A path-scoped deny refuses tunnels to the host.
	withDeny := map[string]grants.Effect{"POST /admin": grants.Deny}
	for k, v := range all {
		withDeny[k] = v
	}
	if _, err := ProxyPolicy(gateOf(decide(withDeny)), "x", []string{"/admin"})(context.Background(), h); !errors.Is(err, ErrProxyRefused) {
		t.Fatalf("path deny: %v", err)
	}
}

func TestProxyBounds(t *testing.T) {
	s := newServer(t, okHandler)
	addr, _ := runProxy(t, &Proxy{Client: client(nil), Decide: (&recorder{allowPrivate: true}).decide,
		MaxConns: 1, HeaderTimeout: 2 * time.Second})
	// Two clients that send nothing: whichever the proxy accepts first holds
	// the only slot and times out on its header (408); the other gets 503
	// at once. No sleep decides which is which; the header timeout only has
	// to outlast the proxy's second accept (on a loaded machine, not 200 ms).
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		conns = append(conns, c)
	}
	var codes []int
	for i, c := range conns {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		codes = append(codes, resp.StatusCode)
	}
	slices.Sort(codes)
	if !slices.Equal(codes, []int{408, 503}) {
		t.Fatalf("status codes %v, want one 408 (the slot holder) and one 503", codes)
	}
	// The slot is free once the timed-out connection is done with; a
	// request then goes through (retried while the proxy finishes with it).
	deadline := time.Now().Add(5 * time.Second)
	for {
		r3, err := proxyClient(addr, nil).Get(s.url("127.0.0.1", "/after"))
		if err == nil {
			r3.Body.Close()
			if r3.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the slot was freed: %v %v", r3, err)
		}
	}
}

func TestProxyIdleTunnel(t *testing.T) {
	port, _ := echoServer(t)
	addr, _ := runProxy(t, &Proxy{Client: client(nil), Decide: (&recorder{allowPrivate: true}).decide, IdleTimeout: 200 * time.Millisecond})
	c, br, resp := connect(t, addr, "127.0.0.1:"+strconv.Itoa(port), "")
	defer c.Close()
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	start := time.Now()
	_, err := br.ReadByte() // nothing comes: the idle timeout closes the tunnel
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
}

func TestProxyStopClosesEverything(t *testing.T) {
	port, _ := echoServer(t)
	before := runtime.NumGoroutine()
	p := &Proxy{Client: client(nil), Decide: (&recorder{allowPrivate: true}).decide}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Serve(ctx, ln) }()
	var conns []net.Conn
	for i := 0; i < 5; i++ {
		c, _, resp := connect(t, ln.Addr().String(), "127.0.0.1:"+strconv.Itoa(port), "")
		if resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
		conns = append(conns, c)
	}
	idle, err := net.Dial("tcp", ln.Addr().String()) // no header yet
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, idle)
	cancel()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Serve did not return")
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("connection still open")
		}
		c.Close()
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Errorf("listener still open")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines %d > %d", n, before)
	}
}

func BenchmarkProxyGet(b *testing.B) {
	s := newServer(b, okHandler)
	addr, _ := runProxy(b, &Proxy{Client: client(nil), Decide: (&recorder{allowPrivate: true}).decide})
	pc := proxyClient(addr, nil)
	u := s.url("127.0.0.1", "/bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := pc.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
