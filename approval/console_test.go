package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

const testHost = "127.0.0.1:8765"

func testPolicy(timeout time.Duration) *grants.Policy {
	return &grants.Policy{Limits: grants.Limits{ApprovalTimeout: timeout}}
}

func pendingTicket(c *Console) *ticket {
	t := newTicket("", kindApproval, "read_file", "stdio", time.Now(), time.Minute)
	t.Asks = []grants.Decision{askOn("/etc/hosts", "interactive-dev/ask-outside-workspace")}
	if err := c.add(t); err != nil {
		panic(err)
	}
	return t
}

// do sends a request to the console's handler.
func do(h http.Handler, method, target string, body url.Values, hdr map[string]string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != nil {
		r = httptest.NewRequest(method, target, strings.NewReader(body.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.Host = testHost
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestConsoleAccess(t *testing.T) {
	c := newConsole([]string{testHost})
	h := c.Handler()
	pendingTicket(c)
	base, cookie := login(c)
	cases := []struct {
		name   string
		method string
		target string
		hdr    map[string]string
		code   int
		body   string
	}{
		{"page without token", "GET", "/", nil, 403, ""},
		{"state without token", "GET", "/api/state", nil, 403, ""},
		{"wrong token", "GET", "/?token=nope", nil, 403, ""},
		{"wrong cookie", "GET", "/", map[string]string{"Cookie": cookieName + "=nope"}, 403, ""},
		{"the token as the cookie", "GET", base + "api/state", map[string]string{"Cookie": cookieName + "=" + c.token}, 403, ""},
		{"the cookie as a bearer", "GET", "/api/state", map[string]string{"Authorization": "Bearer " + strings.TrimPrefix(cookie, cookieName+"=")}, 403, ""},
		{"token in query sets the cookie", "GET", "/?token=" + c.token, nil, 303, ""},
		{"page with cookie", "GET", base, map[string]string{"Cookie": cookie}, 200, "/etc/hosts"},
		{"state with cookie", "GET", base + "api/state", map[string]string{"Cookie": cookie}, 200, "/etc/hosts"},
		{"cookie outside a login's path", "GET", "/api/state", map[string]string{"Cookie": cookie}, 403, ""},
		{"cookie under an unknown login", "GET", "/s/0123456789abcdef/api/state", map[string]string{"Cookie": cookie}, 403, ""},
		{"state with bearer", "GET", "/api/state", map[string]string{"Authorization": "Bearer " + c.token}, 200, "interactive-dev/ask-outside-workspace"},
		{"foreign Host (DNS rebinding)", "GET", base, map[string]string{"Cookie": cookie, "Host": "evil.example:8765"}, 403, ""},
		{"foreign Host with token", "GET", "/?token=" + c.token, map[string]string{"Host": "attacker.test"}, 403, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.method, tc.target, nil, tc.hdr)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.body) {
				t.Fatalf("%d %q, want %d containing %q", w.Code, w.Body.String(), tc.code, tc.body)
			}
			if strings.Contains(w.Body.String(), c.token) {
				t.Fatal("the token is echoed in a response body")
			}
		})
	}
	w := do(h, "GET", "/?token="+c.token, nil, nil)
	loc := w.Header().Get("Location")
	if ck := w.Result().Cookies(); len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode ||
		!strings.HasPrefix(loc, "/s/") || ck[0].Path != loc {
		// Cookies are not separated by port: only a secret path keeps the
		// cookie from other servers on localhost.
		t.Fatalf("cookie %+v for %q: want HttpOnly, SameSite=Strict, scoped to the login's path", ck, loc)
	}
	// AskLoginURL (a notification's action) lands on the ask's page; an
	// id that is not one lands on the console's page, never elsewhere.
	id := randomID()
	for _, tc := range []struct{ ask, want string }{
		{id, "/ask/" + id}, {"../../x", "/"}, {id + "/../..", "/"}, {"https://evil.test/", "/"}, {"", "/"},
	} {
		u, _ := url.Parse(c.AskLoginURL(tc.ask))
		if tc.ask != id {
			u.RawQuery = url.Values{"token": {c.token}, "ask": {tc.ask}}.Encode()
		}
		loc := do(h, "GET", u.RequestURI(), nil, nil).Header().Get("Location")
		if rest, ok := strings.CutPrefix(loc, "/s/"); !ok || !strings.HasSuffix(loc, tc.want) || len(rest) != 22+len(tc.want) {
			t.Errorf("login with ask=%q went to %q, want /s/SID%s", tc.ask, loc, tc.want)
		}
	}
	w = do(h, "GET", base, nil, map[string]string{"Cookie": cookie})
	csp := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") || w.Header().Get("X-Frame-Options") != "DENY" {
		t.Fatalf("headers: %v", w.Header())
	}
	if !strings.Contains(w.Body.String(), c.csrf) || !strings.Contains(w.Body.String(), "width=device-width") {
		t.Fatal("page lacks the CSRF token or the viewport")
	}
}

func TestConsoleDecide(t *testing.T) {
	cases := []struct {
		name  string
		form  func(c *Console, id string) url.Values
		hdr   func(c *Console, cookie string) map[string]string
		code  int
		taken bool
	}{
		{"browser post", goodForm("allow_once"), browserOf, 303, true},
		{"fetch post", goodForm("deny"), func(c *Console, cookie string) map[string]string {
			h := browser(cookie)
			h["X-CSRF-Token"] = c.csrf
			return h
		}, 200, true},
		{"no CSRF token", func(c *Console, id string) url.Values { return url.Values{"id": {id}, "decision": {"allow_once"}} }, browserOf, 403, false},
		{"wrong CSRF token", func(c *Console, id string) url.Values {
			return url.Values{"id": {id}, "decision": {"allow_once"}, "csrf": {"x"}}
		}, browserOf, 403, false},
		{"cross-site form post", goodForm("allow_once"), func(c *Console, cookie string) map[string]string {
			return map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}
		}, 403, false},
		{"other port on loopback", goodForm("allow_once"), func(c *Console, cookie string) map[string]string {
			return map[string]string{"Cookie": cookie, "Origin": "http://127.0.0.1:9999"}
		}, 403, false},
		{"null origin", goodForm("allow_once"), func(c *Console, cookie string) map[string]string {
			return map[string]string{"Cookie": cookie, "Origin": "null"}
		}, 403, false},
		{"cross-site fetch metadata", goodForm("allow_once"), func(c *Console, cookie string) map[string]string {
			return map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "cross-site"}
		}, 403, false},
		{"no origin, cookie only", goodForm("allow_once"), func(c *Console, cookie string) map[string]string {
			return map[string]string{"Cookie": cookie}
		}, 403, false},
		{"script with bearer", goodForm("allow_once"), func(c *Console, _ string) map[string]string {
			return map[string]string{"Authorization": "Bearer " + c.token, "X-CSRF-Token": c.csrf}
		}, 200, true},
		{"no token at all", goodForm("allow_once"), func(c *Console, _ string) map[string]string {
			return map[string]string{"Origin": "http://" + testHost}
		}, 403, false},
		{"decision outside the form", goodForm("allow_always"), browserOf, 400, false},
		{"unknown id", func(c *Console, _ string) url.Values { return goodForm("allow_once")(c, "nope") }, browserOf, 409, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newConsole([]string{testHost})
			tk := pendingTicket(c)
			base, cookie := login(c)
			w := do(c.Handler(), "POST", base+"api/decide", tc.form(c, tk.ID), tc.hdr(c, cookie))
			if w.Code != tc.code {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body.String(), tc.code)
			}
			select {
			case a := <-tk.done:
				if !tc.taken || a.Channel != ChannelConsole {
					t.Fatalf("answer taken: %+v", a)
				}
			default:
				if tc.taken {
					t.Fatal("answer not delivered")
				}
			}
		})
	}
}

func goodForm(decision string) func(c *Console, id string) url.Values {
	return func(c *Console, id string) url.Values {
		return url.Values{"id": {id}, "decision": {decision}, "csrf": {c.csrf}}
	}
}

// browser is what the console's page sends, logged in with cookie.
func browser(cookie string) map[string]string {
	return map[string]string{"Cookie": cookie, "Origin": "http://" + testHost, "Sec-Fetch-Site": "same-origin"}
}

// browserOf is browser as a table's hdr.
func browserOf(_ *Console, cookie string) map[string]string { return browser(cookie) }

func TestConsoleFirstAnswerWins(t *testing.T) {
	c := newConsole([]string{testHost})
	tk := pendingTicket(c)
	h := c.Handler()
	var wg sync.WaitGroup
	codes := make(chan int, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base, cookie := login(c)
			hdr := browser(cookie)
			hdr["X-CSRF-Token"] = c.csrf
			codes <- do(h, "POST", base+"api/decide", goodForm("allow_once")(c, tk.ID), hdr).Code
		}()
	}
	elicited := tk.resolve(answer{Channel: ChannelElicitation, Action: decline})
	wg.Wait()
	close(codes)
	wins := 0
	for code := range codes {
		if code == 200 {
			wins++
		}
	}
	if elicited {
		wins++
	}
	if wins != 1 {
		t.Fatalf("%d answers won, want exactly one", wins)
	}
	if len(tk.done) != 1 {
		t.Fatalf("%d answers delivered", len(tk.done))
	}
	v := c.view()
	if len(v.Pending) != 0 || len(v.Recent) != 1 {
		t.Fatalf("view after the answer: %+v", v)
	}
}

func TestCheckConsoleAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8765": true, "localhost:8765": true, "[::1]:8765": true, "127.0.0.2:1": true,
		"0.0.0.0:8765": false, ":8765": false, "192.168.1.2:8765": false, "example.com:80": false, "[::]:1": false, "127.0.0.1": false,
	} {
		if err := CheckConsoleAddr(addr); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestStartConsoleToken(t *testing.T) {
	c, err := StartConsole("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Token()) < 20 || c.Token() != c.token {
		t.Fatalf("token %q", c.Token())
	}
	resp, err := http.Get(c.URL() + "api/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", c.URL()+"api/state", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !json.Valid(body) {
		t.Fatalf("with token: %d %s", resp.StatusCode, body)
	}
	if _, err := StartConsole("0.0.0.0:0", nil); err == nil {
		t.Fatal("a non-loopback console started")
	}
}

// TestBrokerConsoleOnly: a client that cannot elicit waits on the console;
// the console's answer decides, and an allow_for_session is remembered.
func TestBrokerConsoleOnly(t *testing.T) {
	c := newConsole([]string{testHost})
	b, _ := New(Options{Console: c})
	ask := askOn("/etc/hosts", "r")
	ask.ApprovalExpires = time.Hour
	call := toolkit.ApprovalCall{Tool: "read_file", Args: []byte(`{"path":"/etc/hosts"}`), Principal: "stdio",
		Asks: []grants.Decision{ask}, Policy: testPolicy(5 * time.Second)}
	got := make(chan toolkit.ApprovalOutcome, 1)
	go func() {
		o, pending := b.Approve(context.Background(), call)
		if pending != nil {
			t.Error("input-required result for a client that cannot elicit")
		}
		got <- o
	}()
	tk := waitPending(t, c)
	base, cookie := login(c)
	hdr := browser(cookie)
	hdr["X-CSRF-Token"] = c.csrf
	if w := do(c.Handler(), "POST", base+"api/decide", goodForm("allow_for_session")(c, tk), hdr); w.Code != 200 {
		t.Fatalf("decide: %d", w.Code)
	}
	o := <-got
	if !o.Approved || o.Reason != grants.ReasonApprovedForSession || o.Channel != ChannelConsole {
		t.Fatalf("outcome %+v", o)
	}
	if o, p := b.Approve(context.Background(), call); !o.Approved || o.Reason != grants.ReasonApprovedForSession || p != nil {
		t.Fatalf("remembered: %+v", o)
	}
	// Nobody answers: approval_timeout, and the console no longer lists it.
	call.Asks = []grants.Decision{askOn("/etc/other", "r")}
	call.Policy = testPolicy(200 * time.Millisecond)
	if o, _ := b.Approve(context.Background(), call); o.Approved || o.Reason != grants.ReasonApprovalTimeout {
		t.Fatalf("timeout: %+v", o)
	}
	if v := c.view(); len(v.Pending) != 0 || v.Recent[0].Outcome != "timed out" {
		t.Fatalf("after timeout: %+v", v)
	}
	// The client goes away: cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	call.Policy = testPolicy(5 * time.Second)
	if o, _ := b.Approve(ctx, call); o.Approved || o.Reason != grants.ReasonCancelled {
		t.Fatalf("client gone: %+v", o)
	}
}

// waitPending waits until exactly one ask is pending on the console and
// returns its id.
func waitPending(t *testing.T, c *Console) string {
	t.Helper()
	var id string
	awaitConsole(t, c, "one ask pending on the console", func() bool {
		v := c.view()
		if len(v.Pending) == 1 {
			id = v.Pending[0].ID
		}
		return id != ""
	})
	return id
}

// awaitConsole waits until cond holds, looking again at each change the
// console signals (Console.changed).
func awaitConsole(t *testing.T, c *Console, what string, cond func() bool) {
	t.Helper()
	awaitChange(t, what, func() <-chan struct{} {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.changed
	}, cond)
}

// awaitChange waits until cond holds, looking again each time the channel
// next() returned (taken before cond is checked) is closed; 10 s is a
// failure bound, not a speed target.
func awaitChange(t *testing.T, what string, next func() <-chan struct{}, cond func() bool) {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		changed := next()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestBrokerModernRace: a modern client gets an input-required result while
// the console lists the same ask; whichever answers first decides.
func TestBrokerModernRace(t *testing.T) {
	modern := server.WithRequestProtocolInfo(context.Background(), &server.RequestProtocolInfo{Modern: true, ProtocolVersion: "2026-07-28",
		ClientCapabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}})
	for _, consoleFirst := range []bool{true, false} {
		c := newConsole([]string{testHost})
		b, _ := New(Options{Console: c})
		call := toolkit.ApprovalCall{Tool: "read_file", Args: []byte(`{"path":"/etc/hosts"}`), Principal: "stdio",
			Asks: []grants.Decision{askOn("/etc/hosts", "r")}, Policy: testPolicy(time.Minute)}
		_, pending := b.Approve(modern, call)
		if pending == nil || pending.RequestState == "" || pending.InputRequests[elicitKey].Elicitation == nil {
			t.Fatalf("no input-required result: %+v", pending)
		}
		id := waitPending(t, c)
		base, cookie := login(c)
		hdr := browser(cookie)
		hdr["X-CSRF-Token"] = c.csrf
		if consoleFirst {
			if w := do(c.Handler(), "POST", base+"api/decide", goodForm("deny")(c, id), hdr); w.Code != 200 {
				t.Fatalf("console: %d", w.Code)
			}
		}
		call.Request.Params.RequestState = pending.RequestState
		call.Request.Params.InputResponses = mcp.InputResponses{elicitKey: mcp.NewElicitationInputResponse(mcp.ElicitationResult{
			ElicitationResponse: mcp.ElicitationResponse{Action: accept, Content: map[string]any{"decision": "allow_once"}}})}
		o, p := b.Approve(modern, call)
		if p != nil {
			t.Fatal("asked twice")
		}
		if consoleFirst && (o.Approved || o.Channel != ChannelConsole || o.Reason != grants.ReasonDeclined) {
			t.Fatalf("console first: %+v", o)
		}
		if !consoleFirst {
			if !o.Approved || o.Channel != ChannelElicitation {
				t.Fatalf("elicitation first: %+v", o)
			}
			if w := do(c.Handler(), "POST", base+"api/decide", goodForm("deny")(c, id), hdr); w.Code != 409 {
				t.Fatalf("late console answer: %d", w.Code)
			}
		}
	}
}

func logTo(w io.Writer) *log.Logger { return log.New(w, "", 0) }

// login makes a console login: its path ("/s/ID/") and its cookie header.
func login(c *Console) (base, cookie string) {
	sid, secret := c.newSession()
	return "/s/" + sid + "/", cookieName + "=" + secret
}

// The console's pages parse (they are parsed on the first page served,
// not at start-up, so this is where a broken template shows).
func TestTemplatesParse(t *testing.T) {
	ps := parsePages()
	for name, tmpl := range map[string]*template.Template{"page": ps.page, "asklink": ps.askLink, "askpage": ps.askPage} {
		if tmpl == nil || tmpl.Name() != name {
			t.Errorf("template %s: %v", name, tmpl)
		}
	}
}

// TestConsoleStateAfter: /api/state?after=V answers once the console has
// changed past V (at once when it already has); a bad V is refused.
func TestConsoleStateAfter(t *testing.T) {
	c := newConsole([]string{testHost})
	h := c.Handler()
	auth := map[string]string{"Authorization": "Bearer " + c.token}
	var before struct{ Version uint64 }
	if err := json.Unmarshal(do(h, "GET", "/api/state", nil, auth).Body.Bytes(), &before); err != nil {
		t.Fatal(err)
	}
	got := make(chan *httptest.ResponseRecorder, 1)
	go func() { got <- do(h, "GET", fmt.Sprintf("/api/state?after=%d", before.Version), nil, auth) }()
	select {
	case w := <-got:
		t.Fatalf("answered before any change: %d %s", w.Code, w.Body)
	case <-time.After(100 * time.Millisecond): // a bound on "still waiting", not a speed target
	}
	tk := newTicket("", kindApproval, "read_file", "p", time.Now(), time.Minute)
	tk.Asks = []grants.Decision{askOn("/etc/hosts", "r")}
	if err := c.add(tk); err != nil {
		t.Fatal(err)
	}
	w := <-got
	var after struct {
		Version uint64
		Pending []pendingView
	}
	if err := json.Unmarshal(w.Body.Bytes(), &after); err != nil || after.Version <= before.Version || len(after.Pending) != 1 {
		t.Fatalf("after the change: %v %+v", err, after)
	}
	if w := do(h, "GET", fmt.Sprintf("/api/state?after=%d", before.Version), nil, auth); w.Code != 200 {
		t.Fatalf("a version already passed: %d", w.Code)
	}
	for _, bad := range []string{"-1", "x", "1e3", "18446744073709551616"} {
		if w := do(h, "GET", "/api/state?after="+bad, nil, auth); w.Code != 400 {
			t.Errorf("after=%s: %d, want 400", bad, w.Code)
		}
	}
}
