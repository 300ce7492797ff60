package server

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// serveForTest runs ServeHTTP on a loopback listener until the test ends.
func serveForTest(t *testing.T, s *Server, opts HTTPOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Token == "" {
		opts.Token = testToken
	}
	opts.Loopback = true
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeHTTP(ctx, ln, opts) }()
	t.Cleanup(func() { stop(); <-served })
	return ln.Addr().String()
}

// 1,000 stalled connections — headers never finished, a body never sent
// with a wrong token, a body never sent with the right token — are all
// closed within the timeouts, and a real client gets its answers meanwhile.
func TestHTTPStalledConnections(t *testing.T) {
	s, _ := testServer(t, probeTool{})
	const timeout = 1500 * time.Millisecond
	// Scheduling 1,000 connections on a loaded machine, -race: with
	// GOMAXPROCS=1 and the load of several test suites the last one closed
	// 7.3 s late here (idle: 8 s). The limits stay under the defaults (10 s for
	// headers, 30 s for a body, 60 s idle), so a timeout ignored for its
	// default still fails, as does one never applied (the read deadline).
	const slack = 8 * time.Second
	addr := serveForTest(t, s, HTTPOptions{HeaderTimeout: timeout, BodyTimeout: timeout, IdleTimeout: 2 * timeout, MaxConns: 1100})
	c := connect(t, "http://"+addr+"/mcp", true)

	kinds := []struct {
		name  string
		start string
		limit time.Duration // closed within
	}{
		{"headers never finished", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\n", timeout + slack},
		{"wrong token, body never sent", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer wrong-token-wrong-token\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", timeout + slack},
		{"right token, body never sent", "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + testToken + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", timeout + slack},
		{"idle after a request", "GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n", 2*timeout + 2*slack},
	}
	const perKind = 250
	type result struct {
		kind    int
		elapsed time.Duration
		status  string
		err     error
	}
	results := make(chan result, perKind*len(kinds))
	var wg sync.WaitGroup
	for k, kind := range kinds {
		for range perKind {
			wg.Go(func() {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					results <- result{kind: k, err: err}
					return
				}
				defer conn.Close()
				begin := time.Now()
				if _, err := io.WriteString(conn, kind.start); err != nil {
					results <- result{kind: k, err: err}
					return
				}
				conn.SetReadDeadline(time.Now().Add(kind.limit + 5*time.Second))
				br := bufio.NewReader(conn)
				status, _ := br.ReadString('\n')
				_, err = io.Copy(io.Discard, br) // until the server closes
				results <- result{kind: k, elapsed: time.Since(begin), status: strings.TrimSpace(status), err: err}
			})
		}
	}
	// The real client, while the stalled connections are open.
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		res, err := callTool(ctx, c, "probe", nil)
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("real client call %d: %v %v", i, err, res)
		}
	}
	wg.Wait()
	close(results)
	worst := make([]time.Duration, len(kinds))
	for r := range results {
		if r.err != nil {
			t.Errorf("%s: %v (after %s)", kinds[r.kind].name, r.err, r.elapsed)
			continue
		}
		worst[r.kind] = max(worst[r.kind], r.elapsed)
		if r.kind == 1 && !strings.Contains(r.status, "401") {
			t.Errorf("wrong token: answered %q", r.status)
		}
	}
	for k, kind := range kinds {
		t.Logf("%s: all %d closed, the last after %s", kind.name, perKind, worst[k])
		if worst[k] > kind.limit {
			t.Errorf("%s: a connection stayed open %s, want under %s", kind.name, worst[k], kind.limit)
		}
	}
	if res, err := callTool(context.Background(), c, "probe", nil); err != nil || res.IsError {
		t.Fatalf("real client after the stall: %v %v", err, res)
	}
}

// A request refused for its token is answered and closed without waiting
// for its body: with a body timeout of a minute, the connection still
// closes at once.
func TestHTTPRefusedRequestNotRead(t *testing.T) {
	s, _ := testServer(t)
	addr := serveForTest(t, s, HTTPOptions{BodyTimeout: time.Minute})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer wrong-token-wrong-token\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	status, _ := br.ReadString('\n')
	if _, err := io.Copy(io.Discard, br); err != nil || !strings.Contains(status, "401") {
		t.Fatalf("answered %q, then %v; want 401 and the connection closed", status, err)
	}
}

// Over the connection cap, a connection is answered at once with 503 and
// Retry-After and closed, without its request being read: one that sent
// headers announcing a 1 GiB body and no body gets the same prompt answer.
func TestHTTPConnectionCap(t *testing.T) {
	s, _ := testServer(t)
	addr := serveForTest(t, s, HTTPOptions{HeaderTimeout: time.Minute, BodyTimeout: time.Minute, MaxConns: 3})
	for range 3 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
	}
	for _, req := range []string{
		"", // nothing sent yet
		"GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n",
		"POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + testToken + "\r\nContent-Length: 1073741824\r\n\r\n{",
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, req)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a failure bound, not a speed target
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("over the cap, after %q: no answer: %v", req, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), "3 connections") {
			t.Fatalf("over the cap: %d, Retry-After %q, %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
		if _, err := conn.Read(make([]byte, 1)); err == nil {
			t.Fatal("the refused connection stayed open")
		}
		conn.Close()
	}
}

// The cap counts the connections being served: one over it is refused and
// the listener goes on accepting; once a served one closes, the next is
// served. Driven by hand, so every step is in order.
func TestBoundedListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ln := limitListener(raw, 2, false)
	accept := func() net.Conn {
		t.Helper()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	dial()
	first, _ := accept(), accept()
	over := dial()
	got := make(chan net.Conn)
	go func() { c, _ := ln.Accept(); got <- c }() // refuses over, then waits for the next
	resp, err := http.ReadResponse(bufio.NewReader(over), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("over the cap: %v %v", resp, err)
	}
	first.Close() // a slot frees: the release is part of Close
	next := dial()
	c := <-got
	if c == nil {
		t.Fatal("accept failed")
	}
	defer c.Close()
	io.WriteString(c, "served")
	buf := make([]byte, 6)
	if _, err := io.ReadFull(next, buf); err != nil || string(buf) != "served" {
		t.Fatalf("the next connection was not served: %q %v", buf, err)
	}
}

// Over TLS a connection over the cap is closed without an answer: a
// plain-text 503 would be garbage to a TLS client, and the handshake is
// the cost being refused.
func TestBoundedListenerTLS(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ln := limitListener(raw, 1, true)
	held, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if _, err := ln.Accept(); err != nil {
		t.Fatal(err)
	}
	over, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer over.Close()
	go ln.Accept()                                         // refuses over, then waits until raw closes
	over.SetReadDeadline(time.Now().Add(10 * time.Second)) // a failure bound
	if n, err := over.Read(make([]byte, 64)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("over the cap over TLS: read %d bytes, %v; want the connection closed without an answer", n, err)
	}
}

// 10,000 sessions opened and abandoned leave at most max_sessions, and the
// memory they hold stays what the cap allows.
func TestHTTPAbandonedSessions(t *testing.T) {
	s, _ := testServer(t)
	const capSessions = 256
	var g *httpGuard
	h := s.httpHandler(HTTPOptions{Token: testToken, Loopback: true, Addr: "127.0.0.1:8080"}, nil, &g)
	open := func(n int) {
		for i := range n {
			r := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`, i),
				"Authorization", "Bearer "+testToken, "Accept", "application/json, text/event-stream")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 || w.Header().Get("Mcp-Session-Id") == "" {
				t.Fatalf("initialize %d: %d %s", i, w.Code, w.Body)
			}
		}
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	open(capSessions)
	atCap := heap()
	open(10000 - capSessions)
	after := heap()
	if n := g.sessions.count(); n > capSessions {
		t.Errorf("%d sessions kept, want at most %d", n, capSessions)
	}
	t.Logf("heap with %d sessions: %.1f MiB; after 10,000 opened: %.1f MiB", capSessions, float64(atCap)/(1<<20), float64(after)/(1<<20))
	if after > atCap+atCap/4+2<<20 {
		t.Errorf("heap grew from %d to %d bytes: abandoned sessions are kept", atCap, after)
	}
}

// A new session evicts the one idle longest, never one with a request in
// flight; with every session busy, a new one is refused.
func TestSessionEviction(t *testing.T) {
	st := newSessionStore()
	st.max = func() int { return 2 }
	clock := time.Unix(1000, 0)
	st.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	var dropped []string
	st.drop = func(id, _ string) { dropped = append(dropped, id) }
	st.add("a", "p")
	st.add("b", "p")
	done := st.use("a") // a is busy, b is idle
	st.add("c", "p")
	if len(dropped) != 1 || dropped[0] != "b" || !st.owns("a", "p") || !st.owns("c", "p") {
		t.Fatalf("evicted %v; want b, the idle one", dropped)
	}
	cdone := st.use("c")
	if st.roomFor(2) {
		t.Error("room for a session while both are busy")
	}
	done()
	cdone()
	if !st.roomFor(2) {
		t.Error("no room once sessions are idle")
	}
	st.add("d", "p")
	if dropped[1] != "a" {
		t.Errorf("evicted %v; want a (idle longest)", dropped)
	}
}

func TestCheckHTTPBind(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		set     grants.HTTPSettings
		err     string
		warning string
	}{
		{"127.0.0.1:8080", grants.HTTPSettings{}, "", ""},
		{"[::1]:8080", grants.HTTPSettings{}, "", ""},
		{"0.0.0.0:8080", grants.HTTPSettings{}, "public = true", ""},
		{":8080", grants.HTTPSettings{}, "public = true", ""},
		{"192.0.2.1:8080", grants.HTTPSettings{}, "public = true", ""},
		{"0.0.0.0:8080", grants.HTTPSettings{Public: true}, "", "plain HTTP"},
		{"0.0.0.0:8080", grants.HTTPSettings{Public: true, TLSCert: "/c.pem", TLSKey: "/k.pem"}, "", "HTTPS"},
	} {
		w, err := CheckHTTPBind(tc.addr, tc.set)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s %+v: error %v, want %q", tc.addr, tc.set, err, tc.err)
		}
		if !strings.Contains(w, tc.warning) || (tc.warning == "") != (w == "") {
			t.Errorf("%s %+v: warning %q, want %q", tc.addr, tc.set, w, tc.warning)
		}
	}
}

// With tls_cert and tls_key, ServeHTTP serves HTTPS.
func TestServeHTTPTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	s, _ := testServer(t)
	addr := serveForTest(t, s, HTTPOptions{TLSCert: certFile, TLSKey: keyFile})
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := cl.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("HTTPS healthz: %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Error("plain HTTP served beside TLS")
	}
}
