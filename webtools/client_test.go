package webtools

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts accepted connections, to prove a refused hop
// never connected.
type countingListener struct {
	net.Listener
	accepts atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepts.Add(1)
	}
	return c, err
}

// server is a real HTTP server on 127.0.0.1 that counts hits and accepts.
type server struct {
	*httptest.Server
	ln   *countingListener
	hits atomic.Int64
	port int
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: &countingListener{Listener: ln}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	s.Server.Listener = s.ln
	s.Start()
	t.Cleanup(s.Close)
	s.port = ln.Addr().(*net.TCPAddr).Port
	return s
}

// url builds a URL on this server's port with the given host.
func (s *server) url(host, path string) string {
	return "http://" + net.JoinHostPort(host, strconv.Itoa(s.port)) + path
}

// fakeDNS answers from a table and counts lookups per name.
type fakeDNS struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr // successive answers; the last repeats
	calls   map[string]int
}

func newDNS(m map[string]string) *fakeDNS {
	d := &fakeDNS{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for name, as := range m {
		d.set(name, as)
	}
	return d
}

// set gives name successive answers: "127.0.0.1,::1|10.0.0.1" answers the
// first lookup with two addresses and every later one with 10.0.0.1.
func (d *fakeDNS) set(name, spec string) {
	var seq [][]netip.Addr
	for _, ans := range strings.Split(spec, "|") {
		var as []netip.Addr
		for _, a := range strings.Split(ans, ",") {
			as = append(as, netip.MustParseAddr(a))
		}
		seq = append(seq, as)
	}
	d.answers[name] = seq
}

func (d *fakeDNS) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	seq, ok := d.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := d.calls[host]
	d.calls[host]++
	if n >= len(seq) {
		n = len(seq) - 1
	}
	return seq[n], nil
}

func (d *fakeDNS) count(host string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[host]
}

// recorder is a Decide that allows (with allowPrivate as given) and records
// every hop it saw.
type recorder struct {
	mu           sync.Mutex
	hops         []Hop
	allowPrivate bool
	refuse       func(Hop) error
}

func (r *recorder) decide(_ context.Context, h Hop) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hops = append(r.hops, h)
	if r.refuse != nil {
		if err := r.refuse(h); err != nil {
			return false, err
		}
	}
	return r.allowPrivate, nil
}

func (r *recorder) seen() []Hop {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Hop(nil), r.hops...)
}

func client(d *fakeDNS) *Client {
	o := Options{}
	if d != nil {
		o.Lookup = d.lookup
	}
	return NewClient(o)
}

func okHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "hello %s %s", r.Method, r.URL.Path)
}

func TestDoLoopback(t *testing.T) {
	s := newServer(t, okHandler)
	c := client(nil)
	ctx := context.Background()

	// allowed with allow_private
	rec := &recorder{allowPrivate: true}
	resp, err := c.Do(ctx, Request{URL: s.url("127.0.0.1", "/x")}, rec.decide)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || resp.Body != "hello GET /x" || resp.BodyBase64 || resp.Hops != 1 {
		t.Fatalf("got %+v", resp)
	}
	if resp.FinalURL != s.url("127.0.0.1", "/x") {
		t.Errorf("FinalURL %q", resp.FinalURL)
	}
	hops := rec.seen()
	if len(hops) != 1 || hops[0].Host != "127.0.0.1" || hops[0].Port != s.port || !hops[0].Private ||
		hops[0].Method != "GET" || hops[0].Path != "/x" || hops[0].Index != 1 {
		t.Fatalf("hops %+v", hops)
	}
	if tg := hops[0].Target(); tg.Host != "127.0.0.1" || tg.Port != s.port || tg.Path != "/x" || tg.Method != "GET" {
		t.Errorf("target %+v", tg)
	}
	if hops[0].Capability() != "network.http.get" {
		t.Errorf("capability %q", hops[0].Capability())
	}
	if s.hits.Load() != 1 {
		t.Fatalf("hits %d", s.hits.Load())
	}

	// refused without allow_private: no request, no connection
	s.hits.Store(0)
	s.ln.accepts.Store(0)
	_, err = c.Do(ctx, Request{URL: s.url("127.0.0.1", "/x")}, (&recorder{}).decide)
	var pe *PrivateAddressError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "127.0.0.1 is loopback; a rule must name this host with conditions = { allow_private = true }") {
		t.Fatalf("err = %v", err)
	}
	if s.hits.Load() != 0 || s.ln.accepts.Load() != 0 {
		t.Fatalf("refused hop reached the server: hits %d accepts %d", s.hits.Load(), s.ln.accepts.Load())
	}

	// decide refusing: its error comes back as is, no connection
	errNo := errors.New("denied by rule no-local")
	_, err = c.Do(ctx, Request{URL: s.url("127.0.0.1", "/x")}, (&recorder{allowPrivate: true, refuse: func(Hop) error { return errNo }}).decide)
	if err != errNo {
		t.Fatalf("err = %v", err)
	}
	if s.ln.accepts.Load() != 0 {
		t.Fatalf("accepts %d", s.ln.accepts.Load())
	}

	// nil decide refuses
	if _, err := c.Do(ctx, Request{URL: s.url("127.0.0.1", "/")}, nil); err == nil {
		t.Fatal("nil decide allowed")
	}
}

// Every address form that reaches 127.0.0.1 (or another local address) is
// refused with zero hits, and those that dial 127.0.0.1 work with
// allow_private.
func TestDoAddressForms(t *testing.T) {
	s := newServer(t, okHandler)
	d := newDNS(map[string]string{
		"localhost.test": "127.0.0.1",
		"mixed.test":     "8.8.8.8,127.0.0.1",
		"meta.test":      "169.254.169.254",
		"v6.test":        "::1",
		"mapped.test":    "::ffff:127.0.0.1",
	})
	c := client(d)
	tests := []struct {
		host      string
		class     string
		reachable bool // dials 127.0.0.1 when allowed
	}{
		{"127.0.0.1", "loopback", true},
		{"2130706433", "loopback", true},
		{"0x7f.1", "loopback", true},
		{"127.1", "loopback", true},
		{"0177.0.0.1", "loopback", true},
		{"017700000001", "loopback", true},
		{"0x7f000001", "loopback", true},
		{"127.0.0.1.", "loopback", true},
		{"[::ffff:127.0.0.1]", "ipv4-mapped→loopback", true},
		{"localhost.test", "loopback", true},
		{"LOCALHOST.TEST.", "loopback", true},
		{"mapped.test", "ipv4-mapped→loopback", true},
		{"mixed.test", "loopback", false},
		{"[::127.0.0.1]", "ipv4-compatible→loopback", false},
		{"[2002:7f00:1::]", "6to4→loopback", false},
		{"[2001:0::80ff:fffe]", "teredo→loopback", false},
		{"[64:ff9b::7f00:1]", "nat64→loopback", false},
		{"[::1]", "loopback", false},
		{"v6.test", "loopback", false},
		{"0.0.0.0", "unspecified", false},
		{"0", "unspecified", false},
		{"169.254.169.254", "metadata", false},
		{"meta.test", "metadata", false},
		{"10.0.0.1", "private", false},
		{"100.64.0.1", "cgnat", false},
		{"[fd00:ec2::254]", "metadata", false},
		{"[fe80::1]", "link-local", false},
		{"224.0.0.1", "multicast", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			s.hits.Store(0)
			s.ln.accepts.Store(0)
			u := "http://" + tt.host + ":" + strconv.Itoa(s.port) + "/f"
			_, err := c.Do(context.Background(), Request{URL: u}, (&recorder{}).decide)
			var pe *PrivateAddressError
			if !errors.As(err, &pe) || pe.Class != tt.class {
				t.Fatalf("err = %v; want a refusal naming %s", err, tt.class)
			}
			if s.hits.Load() != 0 || s.ln.accepts.Load() != 0 {
				t.Fatalf("refused but the server saw hits %d accepts %d", s.hits.Load(), s.ln.accepts.Load())
			}
			if !tt.reachable {
				return
			}
			rec := &recorder{allowPrivate: true}
			resp, err := c.Do(context.Background(), Request{URL: u, Timeout: 5 * time.Second}, rec.decide)
			if err != nil || resp.Status != 200 {
				t.Fatalf("allowed: %v %+v", err, resp)
			}
			if s.hits.Load() != 1 {
				t.Fatalf("hits %d", s.hits.Load())
			}
		})
	}
}

// The host is resolved once per hop; decide sees exactly those answers;
// the connection goes to them even though a later lookup would answer
// differently.
func TestDoDNSRebinding(t *testing.T) {
	s := newServer(t, okHandler)
	// first answer loopback (allowed by the rule), then an address that
	// must never be dialled.
	d := newDNS(map[string]string{"app.test": "127.0.0.1|192.0.2.1"})
	c := client(d)
	rec := &recorder{allowPrivate: true}
	resp, err := c.Do(context.Background(), Request{URL: s.url("app.test", "/")}, rec.decide)
	if err != nil || resp.Status != 200 {
		t.Fatalf("%v %+v", err, resp)
	}
	if n := d.count("app.test"); n != 1 {
		t.Fatalf("resolver called %d times for one hop", n)
	}
	hops := rec.seen()
	if len(hops) != 1 || len(hops[0].Addrs) != 1 || hops[0].Addrs[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("decide saw %+v", hops)
	}
	if s.hits.Load() != 1 {
		t.Fatalf("hits %d", s.hits.Load())
	}

	// Mixed public/private answer: refused as a whole without allow_private,
	// nothing dialled (the public address is not tried either).
	d.set("mixed.test", "8.8.8.8,10.0.0.7")
	rec = &recorder{}
	_, err = c.Do(context.Background(), Request{URL: s.url("mixed.test", "/")}, rec.decide)
	var pe *PrivateAddressError
	if !errors.As(err, &pe) || pe.Addr != netip.MustParseAddr("10.0.0.7") || !strings.Contains(err.Error(), "mixed.test resolves to 10.0.0.7, which is private") {
		t.Fatalf("err = %v", err)
	}
	if hops := rec.seen(); len(hops) != 1 || !hops[0].Private || len(hops[0].Addrs) != 2 {
		t.Fatalf("hops %+v", hops)
	}

	// A public-looking first answer that decide refuses: nothing dialled,
	// one lookup.
	d.set("rebind.test", "93.184.216.34|127.0.0.1")
	errNo := errors.New("no")
	_, err = c.Do(context.Background(), Request{URL: s.url("rebind.test", "/")}, (&recorder{refuse: func(h Hop) error {
		if h.Private || h.Addrs[0] != netip.MustParseAddr("93.184.216.34") {
			t.Errorf("hop %+v", h)
		}
		return errNo
	}}).decide)
	if err != errNo || d.count("rebind.test") != 1 {
		t.Fatalf("err %v lookups %d", err, d.count("rebind.test"))
	}

	// unknown name: resolver error, decide never called
	rec = &recorder{allowPrivate: true}
	if _, err := c.Do(context.Background(), Request{URL: "http://nowhere.test/"}, rec.decide); err == nil || len(rec.seen()) != 0 {
		t.Fatalf("err %v hops %d", err, len(rec.seen()))
	}
}

func TestDoMethodDecided(t *testing.T) {
	s := newServer(t, okHandler)
	c := client(nil)
	getOnly := &recorder{allowPrivate: true, refuse: func(h Hop) error {
		if h.Method != "GET" {
			return fmt.Errorf("network.http.%s on %s: denied", strings.ToLower(h.Method), h.Host)
		}
		return nil
	}}
	if _, err := c.Do(context.Background(), Request{URL: s.url("127.0.0.1", "/"), Method: "post", Body: "x"}, getOnly.decide); err == nil ||
		!strings.Contains(err.Error(), "network.http.post") {
		t.Fatalf("err %v", err)
	}
	if s.hits.Load() != 0 {
		t.Fatalf("POST reached the server")
	}
	if _, err := c.Do(context.Background(), Request{URL: s.url("127.0.0.1", "/")}, getOnly.decide); err != nil {
		t.Fatal(err)
	}
}

func TestDoRedirects(t *testing.T) {
	type seen struct{ method, body, path string }
	var mu sync.Mutex
	var log []seen
	record := func(r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		log = append(log, seen{r.Method, string(b), r.URL.Path})
		mu.Unlock()
	}
	reset := func() []seen {
		mu.Lock()
		defer mu.Unlock()
		l := log
		log = nil
		return l
	}
	b := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		okHandler(w, r)
	})
	var a *server
	a = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		record(r)
		switch {
		case strings.HasPrefix(r.URL.Path, "/to-b"):
			http.Redirect(w, r, b.url("b.test", "/landed"), http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/code/"):
			code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/code/"))
			w.Header().Set("Location", "../echo") // relative
			w.WriteHeader(code)
		case strings.HasPrefix(r.URL.Path, "/chain/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/chain/"))
			if n == 0 {
				okHandler(w, r)
				return
			}
			http.Redirect(w, r, "/chain/"+strconv.Itoa(n-1), http.StatusFound)
		case r.URL.Path == "/file":
			w.Header().Set("Location", "file:///etc/passwd")
			w.WriteHeader(http.StatusFound)
		case r.URL.Path == "/nolocation":
			w.WriteHeader(http.StatusFound)
		case r.URL.Path == "/userinfo":
			http.Redirect(w, r, "http://user:pw@a.test:"+strconv.Itoa(a.port)+"/echo", http.StatusFound)
		case r.URL.Path == "/to-private":
			http.Redirect(w, r, "http://10.0.0.1/", http.StatusFound)
		default:
			okHandler(w, r)
		}
	})
	d := newDNS(map[string]string{"a.test": "127.0.0.1", "b.test": "127.0.0.1"})
	c := client(d)
	ctx := context.Background()

	t.Run("302 to another host is a new hop", func(t *testing.T) {
		reset()
		rec := &recorder{allowPrivate: true}
		resp, err := c.Do(ctx, Request{URL: a.url("a.test", "/to-b")}, rec.decide)
		if err != nil || resp.Status != 200 || resp.Hops != 2 || resp.FinalURL != b.url("b.test", "/landed") {
			t.Fatalf("%v %+v", err, resp)
		}
		hops := rec.seen()
		if len(hops) != 2 || hops[1].Host != "b.test" || hops[1].Port != b.port || hops[1].Index != 2 || hops[1].Path != "/landed" {
			t.Fatalf("hops %+v", hops)
		}
		if d.count("b.test") != 1 {
			t.Fatalf("b.test resolved %d times", d.count("b.test"))
		}
	})

	t.Run("redirect to a refused host: second server sees nothing", func(t *testing.T) {
		reset()
		b.hits.Store(0)
		b.ln.accepts.Store(0)
		rec := &recorder{allowPrivate: true, refuse: func(h Hop) error {
			if h.Host == "b.test" {
				return errors.New("b.test denied")
			}
			return nil
		}}
		_, err := c.Do(ctx, Request{URL: a.url("a.test", "/to-b")}, rec.decide)
		if err == nil || err.Error() != "b.test denied" {
			t.Fatalf("err %v", err)
		}
		if b.hits.Load() != 0 || b.ln.accepts.Load() != 0 {
			t.Fatalf("b hits %d accepts %d", b.hits.Load(), b.ln.accepts.Load())
		}
	})

	t.Run("redirect to a private address needs allow_private on that hop", func(t *testing.T) {
		// Only the rule for a.test sets allow_private.
		dec := func(ctx context.Context, h Hop) (bool, error) {
			return h.Host == "a.test", nil
		}
		_, err := c.Do(ctx, Request{URL: a.url("a.test", "/to-private")}, dec)
		var pe *PrivateAddressError
		if !errors.As(err, &pe) || pe.Host != "10.0.0.1" {
			t.Fatalf("err %v", err)
		}
	})

	cases := []struct {
		code       int
		method     string
		body       string
		wantMethod string
		wantBody   string
	}{
		{301, "POST", "data", "GET", ""},
		{302, "POST", "data", "GET", ""},
		{303, "POST", "data", "GET", ""},
		{303, "PUT", "data", "GET", ""},
		{302, "HEAD", "", "HEAD", ""},
		{301, "HEAD", "", "HEAD", ""},
		{303, "HEAD", "", "HEAD", ""},
		{307, "POST", "data", "POST", "data"},
		{308, "PUT", "data", "PUT", "data"},
		{307, "DELETE", "", "DELETE", ""},
	}
	for _, tt := range cases {
		t.Run(fmt.Sprintf("%d %s", tt.code, tt.method), func(t *testing.T) {
			reset()
			rec := &recorder{allowPrivate: true}
			resp, err := c.Do(ctx, Request{URL: a.url("a.test", "/code/"+strconv.Itoa(tt.code)), Method: tt.method, Body: tt.body,
				Headers: map[string]string{"Content-Type": "text/plain"}}, rec.decide)
			if err != nil || resp.Status != 200 || resp.Hops != 2 {
				t.Fatalf("%v %+v", err, resp)
			}
			l := reset()
			if len(l) != 2 || l[0].method != tt.method || l[0].body != tt.body || l[1].method != tt.wantMethod || l[1].body != tt.wantBody || l[1].path != "/echo" {
				t.Fatalf("server saw %+v", l)
			}
			if h := rec.seen(); h[1].Method != tt.wantMethod {
				t.Fatalf("hop 2 decided as %s", h[1].Method)
			}
		})
	}

	t.Run("hop limit", func(t *testing.T) {
		resp, err := c.Do(ctx, Request{URL: a.url("a.test", "/chain/9")}, (&recorder{allowPrivate: true}).decide)
		if err != nil || resp.Hops != 10 {
			t.Fatalf("9 redirects: %v %+v", err, resp)
		}
		for _, n := range []int{10, 11} {
			rec := &recorder{allowPrivate: true}
			_, err = c.Do(ctx, Request{URL: a.url("a.test", "/chain/"+strconv.Itoa(n))}, rec.decide)
			if !errors.Is(err, ErrTooManyHops) {
				t.Fatalf("%d redirects: err %v", n, err)
			}
			if len(rec.seen()) != 10 {
				t.Fatalf("decided %d hops", len(rec.seen()))
			}
		}
	})

	t.Run("file scheme refused", func(t *testing.T) {
		_, err := c.Do(ctx, Request{URL: a.url("a.test", "/file")}, (&recorder{allowPrivate: true}).decide)
		if err == nil || !strings.Contains(err.Error(), "file://") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("userinfo in Location refused", func(t *testing.T) {
		_, err := c.Do(ctx, Request{URL: a.url("a.test", "/userinfo")}, (&recorder{allowPrivate: true}).decide)
		if err == nil || !strings.Contains(err.Error(), "user information") || strings.Contains(err.Error(), "pw") {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("3xx without Location is returned", func(t *testing.T) {
		resp, err := c.Do(ctx, Request{URL: a.url("a.test", "/nolocation")}, (&recorder{allowPrivate: true}).decide)
		if err != nil || resp.Status != 302 || resp.Hops != 1 {
			t.Fatalf("%v %+v", err, resp)
		}
	})
}

func TestDoSecrets(t *testing.T) {
	const token = "s3cr3t-T0KEN-value-0123456789"
	type got struct{ auth, cookie, xkey string }
	var mu sync.Mutex
	seenBy := map[string][]got{}
	note := func(name string, r *http.Request) {
		mu.Lock()
		seenBy[name] = append(seenBy[name], got{r.Header.Get("Authorization"), r.Header.Get("Cookie"), r.Header.Get("X-Api-Key")})
		mu.Unlock()
	}
	b := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		note("b", r)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"auth":%q}`, r.Header.Get("Authorization"))
	})
	a := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		note("a", r)
		switch r.URL.Path {
		case "/to-b":
			http.Redirect(w, r, b.url("b.test", "/"), http.StatusTemporaryRedirect)
		case "/to-b-with-token":
			http.Redirect(w, r, b.url("b.test", "/?t="+r.Header.Get("Authorization")[len("Bearer "):]), http.StatusFound)
		case "/binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte("\x00\x01" + r.Header.Get("Authorization") + "\xff"))
		default:
			w.Header().Set("X-Echo", r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintf(w, "you sent %s; b64 %s", r.Header.Get("Authorization"), base64.StdEncoding.EncodeToString([]byte(token)))
		}
	})
	d := newDNS(map[string]string{"api.a.test": "127.0.0.1", "b.test": "127.0.0.1"})
	c := client(d)
	secrets := []Secret{
		{Name: "gh", Value: token, Hosts: []string{"*.a.test"}, Header: "Authorization", Format: "Bearer {value}"},
		{Name: "other", Value: "other-secret-value-xyz", Hosts: []string{"nowhere.test"}, Header: "X-Api-Key"},
	}
	reset := func() map[string][]got {
		mu.Lock()
		defer mu.Unlock()
		m := seenBy
		seenBy = map[string][]got{}
		return m
	}
	ctx := context.Background()

	t.Run("attached to its host and redacted", func(t *testing.T) {
		reset()
		rec := &recorder{allowPrivate: true}
		resp, err := c.Do(ctx, Request{URL: a.url("api.a.test", "/"), Secrets: secrets,
			Headers: map[string]string{"Authorization": "model-chosen"}}, rec.decide)
		if err != nil {
			t.Fatal(err)
		}
		m := reset()
		if len(m["a"]) != 1 || m["a"][0].auth != "Bearer "+token || m["a"][0].xkey != "" {
			t.Fatalf("server a saw %+v", m["a"])
		}
		if strings.Contains(resp.Body, token) || !strings.Contains(resp.Body, "you sent Bearer [REDACTED:gh]; b64 [REDACTED:gh]") {
			t.Fatalf("body %q", resp.Body)
		}
		if resp.Headers["X-Echo"] != "Bearer [REDACTED:gh]" {
			t.Fatalf("headers %v", resp.Headers)
		}
		if h := rec.seen(); len(h[0].Secrets) != 1 || h[0].Secrets[0] != "gh" {
			t.Fatalf("hop secrets %v", h[0].Secrets)
		}
		if s := fmt.Sprintf("%v %+v %#v %s", secrets[0], secrets[0], secrets[0], secrets[0]); strings.Contains(s, token) {
			t.Fatalf("secret printed its value: %s", s)
		}
	})

	t.Run("redacted from binary bodies", func(t *testing.T) {
		resp, err := c.Do(ctx, Request{URL: a.url("api.a.test", "/binary"), Secrets: secrets}, (&recorder{allowPrivate: true}).decide)
		if err != nil || !resp.BodyBase64 {
			t.Fatalf("%v %+v", err, resp)
		}
		raw, _ := base64.StdEncoding.DecodeString(resp.Body)
		if bytes.Contains(raw, []byte(token)) || !bytes.Contains(raw, []byte("[REDACTED:gh]")) {
			t.Fatalf("raw %q", raw)
		}
	})

	t.Run("not sent to another host", func(t *testing.T) {
		reset()
		resp, err := c.Do(ctx, Request{URL: b.url("b.test", "/"), Secrets: secrets}, (&recorder{allowPrivate: true}).decide)
		if err != nil || resp.Body != `{"auth":""}` {
			t.Fatalf("%v %+v", err, resp)
		}
		if m := reset(); m["b"][0].auth != "" {
			t.Fatalf("b saw %+v", m["b"])
		}
	})

	t.Run("not carried by a redirect, nor the model's credentials", func(t *testing.T) {
		reset()
		rec := &recorder{allowPrivate: true}
		resp, err := c.Do(ctx, Request{URL: a.url("api.a.test", "/to-b"), Secrets: secrets, Method: "POST", Body: "x",
			Headers: map[string]string{"Cookie": "session=1", "X-Other": "kept"}}, rec.decide)
		if err != nil || resp.Hops != 2 {
			t.Fatalf("%v %+v", err, resp)
		}
		m := reset()
		if m["a"][0].auth != "Bearer "+token || m["a"][0].cookie != "session=1" {
			t.Fatalf("a saw %+v", m["a"])
		}
		if len(m["b"]) != 1 || m["b"][0].auth != "" || m["b"][0].cookie != "" {
			t.Fatalf("b saw %+v", m["b"])
		}
		if h := rec.seen(); len(h[1].Secrets) != 0 {
			t.Fatalf("hop 2 secrets %v", h[1].Secrets)
		}
	})

	t.Run("a redirect URL carrying the value is refused", func(t *testing.T) {
		reset()
		rec := &recorder{allowPrivate: true}
		_, err := c.Do(ctx, Request{URL: a.url("api.a.test", "/to-b-with-token"), Secrets: secrets}, rec.decide)
		if err == nil || !strings.Contains(err.Error(), "secret gh") || strings.Contains(err.Error(), token) {
			t.Fatalf("err %v", err)
		}
		if m := reset(); len(m["b"]) != 0 || len(rec.seen()) != 1 {
			t.Fatalf("b saw %+v; hops %d", m["b"], len(rec.seen()))
		}
	})

	t.Run("secret use refused by decide", func(t *testing.T) {
		reset()
		rec := &recorder{allowPrivate: true, refuse: func(h Hop) error {
			if len(h.Secrets) > 0 {
				return errors.New("secret.use gh: denied")
			}
			return nil
		}}
		if _, err := c.Do(ctx, Request{URL: a.url("api.a.test", "/"), Secrets: secrets}, rec.decide); err == nil {
			t.Fatal("allowed")
		}
		if m := reset(); len(m["a"]) != 0 {
			t.Fatal("a was reached")
		}
	})

	t.Run("not over plain http to a non-loopback host", func(t *testing.T) {
		sec := c.secretsFor(secrets, target{name: "api.a.test", scheme: "http", port: 80}, false)
		if len(sec) != 0 {
			t.Fatalf("attached over http: %v", sec)
		}
		sec = c.secretsFor(secrets, target{name: "api.a.test", scheme: "https", port: 443}, false)
		if len(sec) != 1 {
			t.Fatalf("not attached over https: %v", sec)
		}
	})
}

func TestDoTLS(t *testing.T) {
	var sni atomic.Value
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sni.Store(r.TLS.ServerName)
		okHandler(w, r)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	// httptest's certificate is for example.com; the fake resolver sends it
	// to 127.0.0.1.
	d := newDNS(map[string]string{"example.com": "127.0.0.1", "wrong.test": "127.0.0.1"})
	c := NewClient(Options{Lookup: d.lookup, RootCAs: pool})
	u := "https://example.com:" + strconv.Itoa(port) + "/tls"
	resp, err := c.Do(context.Background(), Request{URL: u}, (&recorder{allowPrivate: true}).decide)
	if err != nil || resp.Status != 200 || resp.Body != "hello GET /tls" {
		t.Fatalf("%v %+v", err, resp)
	}
	if sni.Load() != "example.com" {
		t.Fatalf("SNI %q", sni.Load())
	}
	// a name the certificate does not cover fails verification
	_, err = c.Do(context.Background(), Request{URL: "https://wrong.test:" + strconv.Itoa(port) + "/"}, (&recorder{allowPrivate: true}).decide)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err %v", err)
	}
	// without the root, verification fails
	_, err = NewClient(Options{Lookup: d.lookup}).Do(context.Background(), Request{URL: u}, (&recorder{allowPrivate: true}).decide)
	if err == nil {
		t.Fatal("untrusted certificate accepted")
	}
}

func TestDoLimits(t *testing.T) {
	var zeros bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zeros, gzip.BestCompression)
	zw.Write(make([]byte, 10<<20))
	zw.Close()
	bomb := zeros.Bytes()

	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			chunk := bytes.Repeat([]byte("abcdefghij"), 6400)
			for i := 0; i < 100<<20/len(chunk); i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/bomb":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(bomb)
		case "/gzip-text":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			gw := gzip.NewWriter(w)
			fmt.Fprint(gw, "compressed hello")
			gw.Close()
		case "/ae":
			fmt.Fprint(w, r.Header.Get("Accept-Encoding"))
		}
	})
	c := client(nil)
	ctx := context.Background()
	allow := (&recorder{allowPrivate: true}).decide

	t.Run("truncated with bounded memory", func(t *testing.T) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		resp, err := c.Do(ctx, Request{URL: s.url("127.0.0.1", "/big"), MaxBytes: 1 << 20}, allow)
		runtime.ReadMemStats(&after)
		if err != nil || !resp.Truncated || resp.Bytes != 1<<20 || len(resp.Body) != 1<<20 {
			t.Fatalf("%v truncated=%v bytes=%d len=%d", err, resp.Truncated, resp.Bytes, len(resp.Body))
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Fatalf("allocated %d MiB for a 1 MiB cap of a 100 MiB body", alloc>>20)
		}
	})

	t.Run("gzip bomb capped", func(t *testing.T) {
		resp, err := c.Do(ctx, Request{URL: s.url("127.0.0.1", "/bomb"), MaxBytes: 1000}, allow)
		if err != nil || !resp.Truncated || resp.Bytes != 1000 || !resp.BodyBase64 {
			t.Fatalf("%v %+v", err, resp)
		}
		raw, _ := base64.StdEncoding.DecodeString(resp.Body)
		if len(raw) != 1000 {
			t.Fatalf("len %d", len(raw))
		}
		if _, ok := resp.Headers["Content-Encoding"]; ok {
			t.Fatalf("Content-Encoding kept after decoding")
		}
	})

	t.Run("gzip text decoded", func(t *testing.T) {
		resp, err := c.Do(ctx, Request{URL: s.url("127.0.0.1", "/gzip-text")}, allow)
		if err != nil || resp.Body != "compressed hello" || resp.Truncated {
			t.Fatalf("%v %+v", err, resp)
		}
	})

	t.Run("Accept-Encoding requested", func(t *testing.T) {
		resp, err := c.Do(ctx, Request{URL: s.url("127.0.0.1", "/ae")}, allow)
		if err != nil || resp.Body != "gzip, deflate" {
			t.Fatalf("%v %+v", err, resp)
		}
	})

	t.Run("header size bounded", func(t *testing.T) {
		hs := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < 200; i++ {
				w.Header().Set("X-Pad-"+strconv.Itoa(i), strings.Repeat("p", 1000))
			}
		})
		_, err := c.Do(ctx, Request{URL: hs.url("127.0.0.1", "/")}, allow)
		if err == nil || !strings.Contains(err.Error(), "header") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestDoTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns sync.WaitGroup
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() { // accept and never answer
				defer conns.Done()
				<-done
				c.Close()
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	c := client(nil)
	start := time.Now()
	_, err = c.Do(context.Background(), Request{URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/", Timeout: 300 * time.Millisecond},
		(&recorder{allowPrivate: true}).decide)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("took %s", el)
	}

	// A slow body also hits the budget.
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("start"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	_, err = c.Do(context.Background(), Request{URL: s.url("127.0.0.1", "/"), Timeout: 300 * time.Millisecond}, (&recorder{allowPrivate: true}).decide)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("slow body: err %v", err)
	}

	// Time in decide (a person answering) is not counted. Here the time
	// passing is the subject, so decide must really outlast the whole
	// budget: it returns only once a deadline of the call's full timeout,
	// taken before the call began, has passed, so a budget that counted
	// decide's time would have none left for the request.
	fast := newServer(t, okHandler)
	const budget = time.Second // the request after decide has it all: a local one, under any load
	spent := time.Now().Add(budget)
	slowDecide := func(ctx context.Context, h Hop) (bool, error) {
		<-time.After(time.Until(spent) + 10*time.Millisecond)
		return true, nil
	}
	if _, err := c.Do(context.Background(), Request{URL: fast.url("127.0.0.1", "/"), Timeout: budget}, slowDecide); err != nil {
		t.Fatalf("decide time counted: %v", err)
	}

	// The caller's cancellation is not reported as a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Do(ctx, Request{URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/"}, (&recorder{allowPrivate: true}).decide)
	if err == nil || errors.Is(err, ErrTimeout) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestDoBodies(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		switch r.URL.Path {
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/sjis":
			w.Header().Set("Content-Type", "text/html; charset=shift_jis")
			w.Write([]byte("\x82\xa0")) // あ
		case "/json":
			w.Header().Set("Content-Type", "application/problem+json")
			w.Write([]byte(`{"a":"ü"}`))
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case "/untyped-text":
			w.Header()["Content-Type"] = nil
			w.Write([]byte("plain words"))
		case "/untyped-binary":
			w.Header()["Content-Type"] = nil
			w.Write([]byte{0xff, 0xfe, 0x00})
		case "/cut":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Write([]byte("aé")) // 3 bytes; cap 2 cuts é
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "%s %s %s ua=%s", r.Method, r.Header.Get("Content-Type"), b, r.Header.Get("User-Agent"))
		}
	})
	c := client(nil)
	allow := (&recorder{allowPrivate: true}).decide
	tests := []struct {
		path, method, body string
		headers            map[string]string
		maxBytes           int64
		want               string
		base64             bool
	}{
		{path: "/latin1", want: "café"},
		{path: "/sjis", want: "あ"},
		{path: "/json", want: `{"a":"ü"}`},
		{path: "/png", want: base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n")), base64: true},
		{path: "/untyped-text", want: "plain words"},
		{path: "/untyped-binary", want: base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0x00}), base64: true},
		{path: "/cut", maxBytes: 2, want: "a"},
		{path: "/echo", method: "PATCH", body: `{"x":1}`, headers: map[string]string{"content-type": "application/json"}, want: `PATCH application/json {"x":1} ua=onellm-mcp`},
		{path: "/echo", method: "HEAD", want: ""},
		{path: "/echo", headers: map[string]string{"User-Agent": "mine"}, want: "GET   ua=mine"},
	}
	for _, tt := range tests {
		resp, err := c.Do(context.Background(), Request{URL: s.url("127.0.0.1", tt.path), Method: tt.method, Body: tt.body, Headers: tt.headers, MaxBytes: tt.maxBytes}, allow)
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		if resp.Body != tt.want || resp.BodyBase64 != tt.base64 {
			t.Errorf("%s %s: body %q base64 %v; want %q %v", tt.method, tt.path, resp.Body, resp.BodyBase64, tt.want, tt.base64)
		}
		if resp.Headers["X-Multi"] != "a, b" {
			t.Errorf("%s: X-Multi %q", tt.path, resp.Headers["X-Multi"])
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Request{URL: "https://api.github.com/x"}
	tests := []struct {
		name string
		mod  func(*Request)
		want string // "" = valid
	}{
		{"ok", func(*Request) {}, ""},
		{"lower-case method", func(r *Request) { r.Method = "post"; r.Body = "x" }, ""},
		{"userinfo", func(r *Request) { r.URL = "http://a@b.test/" }, "user information"},
		{"userinfo with password", func(r *Request) { r.URL = "http://a:pw@b.test/" }, "user information"},
		{"file", func(r *Request) { r.URL = "file:///etc/passwd" }, "scheme"},
		{"ftp", func(r *Request) { r.URL = "ftp://x.test/" }, "scheme"},
		{"no scheme", func(r *Request) { r.URL = "example.com/x" }, "scheme"},
		{"no host", func(r *Request) { r.URL = "http:///x" }, "empty host"},
		{"bad port", func(r *Request) { r.URL = "http://x.test:70000/" }, "port"},
		{"empty port", func(r *Request) { r.URL = "http://x.test:/" }, "port"},
		{"bad ipv4", func(r *Request) { r.URL = "http://1.2.3.256/" }, "not a valid one"},
		{"non-ascii", func(r *Request) { r.URL = "http://bücher.de/" }, "punycode"},
		{"percent-encoded host", func(r *Request) { r.URL = "http://%31%32%37.0.0.1/" }, "does not parse"},
		{"percent-encoded non-ASCII host", func(r *Request) { r.URL = "http://b%C3%BCcher.de/" }, "punycode"},
		{"zone", func(r *Request) { r.URL = "http://[fe80::1%25eth0]/" }, "zone"},
		{"method", func(r *Request) { r.Method = "TRACE" }, "method"},
		{"connect", func(r *Request) { r.Method = "CONNECT" }, "method"},
		{"GET body", func(r *Request) { r.Body = "x" }, "cannot carry a body"},
		{"HEAD body", func(r *Request) { r.Method = "HEAD"; r.Body = "x" }, "cannot carry a body"},
		{"CRLF value", func(r *Request) { r.Headers = map[string]string{"X-A": "a\r\nX-Injected: 1"} }, "control character"},
		{"LF value", func(r *Request) { r.Headers = map[string]string{"X-A": "a\nb"} }, "control character"},
		{"NUL value", func(r *Request) { r.Headers = map[string]string{"X-A": "a\x00"} }, "control character"},
		{"bad name", func(r *Request) { r.Headers = map[string]string{"X A": "a"} }, "token"},
		{"CRLF name", func(r *Request) { r.Headers = map[string]string{"X-A\r\nB": "a"} }, "token"},
		{"Host", func(r *Request) { r.Headers = map[string]string{"host": "evil"} }, "cannot be overridden"},
		{"Content-Length", func(r *Request) { r.Headers = map[string]string{"Content-Length": "1"} }, "cannot be overridden"},
		{"Transfer-Encoding", func(r *Request) { r.Headers = map[string]string{"Transfer-Encoding": "chunked"} }, "cannot be overridden"},
		{"Connection", func(r *Request) { r.Headers = map[string]string{"Connection": "close"} }, "cannot be overridden"},
		{"duplicate", func(r *Request) { r.Headers = map[string]string{"x-a": "1", "X-A": "2"} }, "same header"},
		{"huge body", func(r *Request) { r.Method = "POST"; r.Body = strings.Repeat("x", MaxRequestBodyBytes+1) }, "limit"},
		{"huge URL", func(r *Request) { r.URL = "http://x.test/" + strings.Repeat("a", MaxURLBytes) }, "limit"},
		{"negative timeout", func(r *Request) { r.Timeout = -1 }, "timeout"},
		{"negative max", func(r *Request) { r.MaxBytes = -1 }, "max_bytes"},
		{"secret no hosts", func(r *Request) { r.Secrets = []Secret{{Name: "s", Value: "v"}} }, "no hosts"},
		{"secret CRLF", func(r *Request) {
			r.Secrets = []Secret{{Name: "s", Value: "v\r\nX: y", Hosts: []string{"a.test"}}}
		}, "control character"},
		{"secret format", func(r *Request) {
			r.Secrets = []Secret{{Name: "s", Value: "v", Hosts: []string{"a.test"}, Format: "Bearer"}}
		}, "{value}"},
		{"secret header", func(r *Request) {
			r.Secrets = []Secret{{Name: "s", Value: "v", Hosts: []string{"a.test"}, Header: "Host"}}
		}, "cannot carry"},
	}
	for _, tt := range tests {
		r := ok
		tt.mod(&r)
		err := Validate(r)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: err %v; want %q", tt.name, err, tt.want)
		case err != nil && !errors.Is(err, ErrInvalid):
			t.Errorf("%s: %v does not wrap ErrInvalid", tt.name, err)
		}
		if err != nil && strings.Contains(err.Error(), "v\r\n") {
			t.Errorf("%s: error shows a secret value", tt.name)
		}
	}
	// Do validates before deciding
	called := false
	_, err := NewClient(Options{}).Do(context.Background(), Request{URL: "http://u@127.0.0.1/"}, func(context.Context, Hop) (bool, error) {
		called = true
		return true, nil
	})
	if err == nil || called {
		t.Fatalf("err %v called %v", err, called)
	}
}

func TestRedact(t *testing.T) {
	secrets := []Secret{
		{Name: "short", Value: "abc123"},
		{Name: "long", Value: "abc123-and-more"},
		{Name: "sym", Value: "a b/c+d"},
		{Name: "empty", Value: ""},
	}
	tests := []struct{ in, want string }{
		{"x abc123-and-more y", "x [REDACTED:long] y"},
		{"abc123abc123", "[REDACTED:short][REDACTED:short]"},
		{"q=a+b%2Fc%2Bd", "q=[REDACTED:sym]"},
		{base64.StdEncoding.EncodeToString([]byte("abc123-and-more")), "[REDACTED:long]"},
		{"nothing here", "nothing here"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Redact(tt.in, secrets); got != tt.want {
			t.Errorf("Redact(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

// Concurrent calls share one Client.
func TestDoConcurrent(t *testing.T) {
	s := newServer(t, okHandler)
	c := client(newDNS(map[string]string{"a.test": "127.0.0.1"}))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Do(context.Background(), Request{URL: s.url("a.test", "/"+strconv.Itoa(i))}, (&recorder{allowPrivate: true}).decide)
			if err != nil || resp.Body != "hello GET /"+strconv.Itoa(i) {
				t.Errorf("%v %+v", err, resp)
			}
		}()
	}
	wg.Wait()
}

func BenchmarkDoLocal(b *testing.B) {
	s := newServer(b, okHandler)
	c := client(nil)
	allow := func(context.Context, Hop) (bool, error) { return true, nil }
	u := s.url("127.0.0.1", "/bench")
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Do(context.Background(), Request{URL: u}, allow)
		if err != nil || resp.Status != 200 {
			b.Fatal(err)
		}
	}
}

// BenchmarkDirectLocal is the same GET with a plain net/http client and a
// new connection each time (as Do makes), for comparison.
func BenchmarkDirectLocal(b *testing.B) {
	s := newServer(b, okHandler)
	u := s.url("127.0.0.1", "/bench")
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := hc.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
}

func TestSecretHeaderClash(t *testing.T) {
	s := newServer(t, okHandler)
	secrets := []Secret{
		{Name: "one", Value: "value-one-xxxxxxxx", Hosts: []string{"127.0.0.1"}},
		{Name: "two", Value: "value-two-xxxxxxxx", Hosts: []string{"*"}},
	}
	_, err := client(nil).Do(context.Background(), Request{URL: s.url("127.0.0.1", "/"), Secrets: secrets}, (&recorder{allowPrivate: true}).decide)
	if err == nil || !strings.Contains(err.Error(), "one and two") || s.hits.Load() != 0 {
		t.Fatalf("err %v hits %d", err, s.hits.Load())
	}
}

// The socket-level check refuses any address that was not checked, even if
// something asked the dialer for it.
func TestControlRefusesUncheckedAddress(t *testing.T) {
	ctl := controlFor([]netip.Addr{netip.MustParseAddr("127.0.0.1")}, 8080)
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080":          true,
		"[::ffff:127.0.0.1]:8080": true,
		"127.0.0.2:8080":          false,
		"127.0.0.1:8081":          false,
		"[::1]:8080":              false,
		"localhost:8080":          false,
	} {
		if err := ctl(context.Background(), "tcp4", addr, nil); (err == nil) != ok {
			t.Errorf("%s: err %v; want ok=%v", addr, err, ok)
		}
	}
}

func TestDial(t *testing.T) {
	s := newServer(t, okHandler)
	d := newDNS(map[string]string{"app.test": "127.0.0.1"})
	c := client(d)
	// refused without allow_private; nothing accepted
	_, h, err := c.Dial(context.Background(), "0x7f.1", s.port, (&recorder{}).decide)
	var pe *PrivateAddressError
	if !errors.As(err, &pe) || h.Method != "CONNECT" || h.Capability() != "" || s.ln.accepts.Load() != 0 {
		t.Fatalf("err %v hop %+v accepts %d", err, h, s.ln.accepts.Load())
	}
	conn, h, err := c.Dial(context.Background(), "app.test", s.port, (&recorder{allowPrivate: true}).decide)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if h.Host != "app.test" || d.count("app.test") != 1 || conn.RemoteAddr().String() != "127.0.0.1:"+strconv.Itoa(s.port) {
		t.Fatalf("hop %+v remote %v lookups %d", h, conn.RemoteAddr(), d.count("app.test"))
	}
	fmt.Fprintf(conn, "GET /dial HTTP/1.0\r\nHost: app.test\r\n\r\n")
	b, _ := io.ReadAll(conn)
	if !strings.Contains(string(b), "hello GET /dial") {
		t.Fatalf("got %q", b)
	}
}
