package approval

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// legacySession is a client session of the older protocol era that
// declared caps; it answers no elicitation.
type legacySession struct{ caps mcp.ClientCapabilities }

func (s *legacySession) Initialize()       {}
func (s *legacySession) Initialized() bool { return true }
func (s *legacySession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return make(chan mcp.JSONRPCNotification, 8)
}
func (s *legacySession) SessionID() string                              { return "legacy" }
func (s *legacySession) GetClientInfo() mcp.Implementation              { return mcp.Implementation{Name: "t"} }
func (s *legacySession) SetClientInfo(mcp.Implementation)               {}
func (s *legacySession) GetClientCapabilities() mcp.ClientCapabilities  { return s.caps }
func (s *legacySession) SetClientCapabilities(c mcp.ClientCapabilities) { s.caps = c }
func (s *legacySession) RequestElicitation(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return nil, context.Canceled
}

func modernCtx(e *mcp.ElicitationCapability) context.Context {
	return server.WithRequestProtocolInfo(context.Background(), &server.RequestProtocolInfo{Modern: true, ProtocolVersion: "2026-07-28",
		ClientCapabilities: &mcp.ClientCapabilities{Elicitation: e}})
}

func TestClientReach(t *testing.T) {
	none, form, url, both := (*mcp.ElicitationCapability)(nil), &mcp.ElicitationCapability{Form: &struct{}{}},
		&mcp.ElicitationCapability{URL: &struct{}{}}, &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	srv := server.NewMCPServer("t", "1")
	cases := []struct {
		name string
		e    *mcp.ElicitationCapability
		want reach
	}{
		{"none", none, reach{}},
		{"empty means form", &mcp.ElicitationCapability{}, reach{elicit: true}},
		{"form", form, reach{elicit: true}},
		{"url only", url, reach{url: true}},
		{"both", both, reach{elicit: true, url: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := clientReach(srv.WithContext(context.Background(), &legacySession{caps: mcp.ClientCapabilities{Elicitation: tc.e}})); got != tc.want {
				t.Errorf("legacy: %+v, want %+v", got, tc.want)
			}
			want := tc.want
			want.modern = true
			if got := clientReach(modernCtx(tc.e)); got != want {
				t.Errorf("modern: %+v, want %+v", got, want)
			}
		})
	}
	if got := clientReach(context.Background()); got != (reach{}) {
		t.Errorf("no session: %+v", got)
	}
}

// TestChannelChoice: URL mode only with a console, and for approvals even
// when the client also has forms; a question keeps the form; neither
// channel is approval_unavailable, and so is an approval for a URL-capable
// client that the console cannot list (down or full): it never falls back
// to a form the client answers.
func TestChannelChoice(t *testing.T) {
	url, both := &mcp.ElicitationCapability{URL: &struct{}{}}, &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	cases := []struct {
		name    string
		console bool
		full    bool // the console lists maxPending asks already
		e       *mcp.ElicitationCapability
		want    string // mode of the input request, or a reason
	}{
		{"both, console full", true, true, both, string(grants.ReasonApprovalUnavailable)},
		{"url only, console full", true, true, url, string(grants.ReasonApprovalUnavailable)},
		{"form, console full", true, true, &mcp.ElicitationCapability{}, "form"},
		{"both, console", true, false, both, "url"},
		{"url only, console", true, false, url, "url"},
		{"both, no console", false, false, both, "form"},
		{"url only, no console", false, false, url, string(grants.ReasonApprovalUnavailable)},
		{"form, console", true, false, &mcp.ElicitationCapability{}, "form"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{}
			if tc.console {
				opts.Console = newConsole([]string{testHost})
			}
			for i := 0; tc.full && i < maxPending; i++ {
				pendingTicket(opts.Console)
			}
			b, _ := New(opts)
			o, pending := b.Approve(modernCtx(tc.e), hostsCall())
			got := string(o.Reason)
			if pending != nil {
				got = pending.InputRequests[elicitKey].Elicitation.Mode
				if got == "" {
					got = "form"
				}
			}
			if got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
	// ask_user keeps the form when the client has one.
	c := newConsole([]string{testHost})
	b, _ := New(Options{Console: c})
	env := &toolkit.Env{Policy: testPolicy(time.Minute), Principal: "stdio"}
	env.Request.Params.Name = "ask_user"
	_, pending, err := b.AskUser(modernCtx(both), env, toolkit.Question{Text: "which?"})
	if err != nil || pending == nil || pending.InputRequests[elicitKey].Elicitation.Mode == mcp.ElicitationModeURL {
		t.Fatalf("question with a form: %v %+v", err, pending)
	}
	// ...also when the console is full (a question is the client's to put).
	full := newConsole([]string{testHost})
	for range maxPending {
		pendingTicket(full)
	}
	fb, _ := New(Options{Console: full})
	if _, pending, err := fb.AskUser(modernCtx(both), env, toolkit.Question{Text: "which?"}); err != nil || pending == nil ||
		pending.InputRequests[elicitKey].Elicitation.Mode == mcp.ElicitationModeURL {
		t.Fatalf("question with a form, console full: %v %+v", err, pending)
	}
	// ...and goes to the page when the client has URL mode only.
	_, pending, err = b.AskUser(modernCtx(url), env, toolkit.Question{Text: "which?"})
	if err != nil || pending == nil || pending.InputRequests[elicitKey].Elicitation.Mode != mcp.ElicitationModeURL {
		t.Fatalf("question, URL mode only: %v %+v", err, pending)
	}
}

func hostsCall() toolkit.ApprovalCall {
	return toolkit.ApprovalCall{Tool: "read_file", Args: []byte(`{"path":"/etc/hosts"}`), Principal: "stdio",
		Asks: []grants.Decision{askOn("/etc/hosts", "r")}, Policy: testPolicy(time.Minute)}
}

// TestURLModeModern: the input request is a URL elicitation for one ask
// whose link holds no secret; the client's retry never answers for the
// person (not even with an "allow" content); the page does.
func TestURLModeModern(t *testing.T) {
	both := &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	accept := func(content any) mcp.InputResponses {
		return mcp.InputResponses{elicitKey: mcp.NewElicitationInputResponse(mcp.ElicitationResult{
			ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}})}
	}
	cases := []struct {
		name      string
		responses mcp.InputResponses
		page      string // decision posted on the page ("": none)
		timeout   time.Duration
		approved  bool
		reason    grants.Reason
		channel   string
	}{
		{"page allows", accept(nil), AllowOnce, time.Minute, true, grants.ReasonApproved, ChannelConsole},
		{"page denies", accept(nil), Deny, time.Minute, false, grants.ReasonDeclined, ChannelConsole},
		{"client content is not an answer", accept(map[string]any{"decision": AllowOnce}), "", 300 * time.Millisecond, false, grants.ReasonApprovalTimeout, ChannelConsole},
		{"client declines", mcp.InputResponses{elicitKey: mcp.NewElicitationInputResponse(mcp.ElicitationResult{
			ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}})}, "", time.Minute, false, grants.ReasonDeclined, ChannelElicitation},
		{"no response waits for the page", nil, AllowOnce, time.Minute, true, grants.ReasonApproved, ChannelConsole},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newConsole([]string{testHost})
			c.url = "http://" + testHost + "/"
			b, _ := New(Options{Console: c})
			call := hostsCall()
			call.Policy = testPolicy(tc.timeout)
			_, pending := b.Approve(modernCtx(both), call)
			el := pending.InputRequests[elicitKey].Elicitation
			id := waitPending(t, c)
			if el.Mode != mcp.ElicitationModeURL || el.ElicitationID != id || el.URL != "http://"+testHost+"/ask/"+id {
				t.Fatalf("input request %+v for ask %s", el, id)
			}
			for _, secret := range []string{c.token, c.csrf, "/s/"} {
				if strings.Contains(el.URL, secret) || strings.Contains(el.Message, c.token) {
					t.Fatalf("the link or message holds a secret: %q %q", el.URL, el.Message)
				}
			}
			if !strings.Contains(el.Message, "/etc/hosts") {
				t.Fatalf("message does not say what is asked: %q", el.Message)
			}
			if tc.page != "" {
				base, cookie := login(c)
				time.AfterFunc(50*time.Millisecond, func() {
					do(c.Handler(), "POST", base+"ask/"+id, url.Values{"csrf": {c.csrf}, "decision": {tc.page}},
						map[string]string{"Cookie": cookie, "Origin": "http://" + testHost})
				})
			}
			call.Request.Params.RequestState = pending.RequestState
			call.Request.Params.InputResponses = tc.responses
			if tc.responses == nil {
				call.Request.Params.InputResponses = mcp.InputResponses{}
			}
			o, p := b.Approve(modernCtx(both), call)
			if p != nil || o.Approved != tc.approved || o.Reason != tc.reason || o.Channel != tc.channel {
				t.Fatalf("%+v (pending %v), want approved=%v %s via %s", o, p != nil, tc.approved, tc.reason, tc.channel)
			}
			// Nothing is kept for a retry that already took its answer (the
			// console files the answer just after handing it over).
			awaitConsole(t, c, "no ask kept after the retry", func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return len(c.answered)+len(c.pending) == 0
			})
			// The state is single-use: a replay is refused, whatever it says.
			if o, _ := b.Approve(modernCtx(both), call); o.Approved {
				t.Fatal("a replayed state approved")
			}
		})
	}
}

// TestAskPageAccess: the link's page needs no login and shows nothing; the
// page of the ask needs the console's cookie; a wrong id is 404; an answer
// counts once and for the ask of the page only.
func TestAskPageAccess(t *testing.T) {
	c := newConsole([]string{testHost})
	h := c.Handler()
	a, other := pendingTicket(c), pendingTicket(c)
	base, ck := login(c)
	cookie := map[string]string{"Cookie": ck}
	withOrigin := map[string]string{"Cookie": ck, "Origin": "http://" + testHost}
	form := func(d string) url.Values { return url.Values{"csrf": {c.csrf}, "decision": {d}, "id": {other.ID}} }

	// The link: no login, same page for a pending ask and an unknown one,
	// none of the ask in it.
	for _, id := range []string{a.ID, randomID()} {
		w := do(h, "GET", "/ask/"+id, nil, nil)
		if w.Code != 200 || strings.Contains(w.Body.String(), "/etc/hosts") || strings.Contains(w.Body.String(), c.csrf) ||
			!strings.Contains(w.Body.String(), "log into the approval console") {
			t.Fatalf("link page for %s: %d %q", id, w.Code, w.Body.String())
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Fatalf("link page CSP %q", csp)
		}
	}
	cases := []struct {
		name, method, target string
		body                 url.Values
		hdr                  map[string]string
		code                 int
		has                  string
	}{
		{"link, malformed id", "GET", "/ask/abc", nil, nil, 404, ""},
		{"link, id with a path", "GET", "/ask/" + a.ID + "/x", nil, nil, 404, ""},
		{"link, foreign Host", "GET", "/ask/" + a.ID, nil, map[string]string{"Host": "evil.test"}, 403, ""},
		{"link, POST", "POST", "/ask/" + a.ID, form(AllowOnce), withOrigin, 405, ""},
		{"page without cookie", "GET", base + "ask/" + a.ID, nil, nil, 403, ""},
		{"page under an unknown login", "GET", "/s/" + randomID() + "/ask/" + a.ID, nil, cookie, 403, ""},
		{"answer without cookie", "POST", base + "ask/" + a.ID, form(AllowOnce), map[string]string{"Origin": "http://" + testHost}, 403, ""},
		{"answer without CSRF", "POST", base + "ask/" + a.ID, url.Values{"decision": {AllowOnce}}, withOrigin, 403, ""},
		{"answer cross-origin", "POST", base + "ask/" + a.ID, form(AllowOnce), map[string]string{"Cookie": ck, "Origin": "http://127.0.0.1:9999"}, 403, ""},
		{"page, wrong id", "GET", base + "ask/" + randomID(), nil, cookie, 404, "not waiting"},
		{"page, malformed id", "GET", base + "ask/x", nil, cookie, 404, ""},
		{"page with cookie", "GET", base + "ask/" + a.ID, nil, cookie, 200, "/etc/hosts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.method, tc.target, tc.body, tc.hdr)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.has) {
				t.Fatalf("%d %q, want %d with %q", w.Code, w.Body.String(), tc.code, tc.has)
			}
			if strings.Contains(w.Body.String(), c.token) {
				t.Fatal("the token is in a page")
			}
		})
	}
	if c.lookup(a.ID) == nil || c.lookup(other.ID) == nil {
		t.Fatal("a refused request answered an ask")
	}
	// A form posted from the page must carry its Origin (no-referrer makes
	// Chromium send "Origin: null"), and the login path goes to no other site.
	if rp := do(h, "GET", base+"ask/"+a.ID, nil, cookie).Header().Get("Referrer-Policy"); rp != "same-origin" {
		t.Fatalf("Referrer-Policy %q", rp)
	}
	// The page's answer counts for its ask, not for the form's id.
	if w := do(h, "POST", base+"ask/"+a.ID, form(Deny), withOrigin); w.Code != 200 || !strings.Contains(w.Body.String(), "recorded") {
		t.Fatalf("answer: %d %q", w.Code, w.Body.String())
	}
	if got := <-a.done; got.Channel != ChannelConsole || got.Content.(map[string]any)["decision"] != Deny {
		t.Fatalf("ask answered with %+v", got)
	}
	if c.lookup(other.ID) == nil {
		t.Fatal("the other ask was answered too")
	}
	// A second answer is refused.
	if w := do(h, "POST", base+"ask/"+a.ID, form(AllowOnce), withOrigin); w.Code != http.StatusConflict {
		t.Fatalf("second answer: %d", w.Code)
	}
	if w := do(h, "GET", base+"ask/"+a.ID, nil, cookie); w.Code != 404 {
		t.Fatalf("page of an answered ask: %d", w.Code)
	}
	// An answer outside the form is refused and leaves the ask pending.
	if w := do(h, "POST", base+"ask/"+other.ID, url.Values{"csrf": {c.csrf}, "decision": {"yes"}}, withOrigin); w.Code != 400 || c.lookup(other.ID) == nil {
		t.Fatalf("answer outside the form: %d", w.Code)
	}
}

// TestAskPageQuestion: an ask_user question is answered on its page too.
func TestAskPageQuestion(t *testing.T) {
	c := newConsole([]string{testHost})
	q := newTicket("", kindQuestion, "ask_user", "stdio", time.Now(), time.Minute)
	q.Question = &question{Text: "which \x1b[2Jcolour?", Choices: []string{"red", "blue"}}
	if err := c.add(q); err != nil {
		t.Fatal(err)
	}
	base, cookie := login(c)
	hdr := map[string]string{"Cookie": cookie, "Origin": "http://" + testHost}
	w := do(c.Handler(), "GET", base+"ask/"+q.ID, nil, hdr)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `which \x1b[2Jcolour?`) || !strings.Contains(w.Body.String(), `value="blue"`) {
		t.Fatalf("question page: %d %q", w.Code, w.Body.String())
	}
	if w := do(c.Handler(), "POST", base+"ask/"+q.ID, url.Values{"csrf": {c.csrf}, "action": {"accept"}, "answer": {"green"}}, hdr); w.Code != 400 {
		t.Fatalf("answer outside the choices: %d", w.Code)
	}
	if w := do(c.Handler(), "POST", base+"ask/"+q.ID, url.Values{"csrf": {c.csrf}, "action": {"accept"}, "answer": {"blue"}}, hdr); w.Code != 200 {
		t.Fatalf("answer: %d", w.Code)
	}
	if a := <-q.done; a.Content.(map[string]any)["answer"] != "blue" {
		t.Fatalf("got %+v", a)
	}
}

// TestConsolePageFindsLogin: the console page writes the login where the
// link's page reads it.
func TestConsolePageFindsLogin(t *testing.T) {
	for _, key := range []string{storeLogin, storeNext} {
		if !strings.Contains(pageHTML, "'"+key+"'") {
			t.Errorf("the console page does not use %s", key)
		}
	}
}

func TestParseAskID(t *testing.T) {
	good := randomID()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{good, true},
		{"", false},
		{good[:21], false},
		{good + "A", false},
		{strings.Repeat("A", 21) + "B", false}, // non-zero unused bits: another spelling
		{strings.Repeat("A", 21) + "=", false},
		{strings.Repeat("A", 20) + "+/", false},
		{"../" + good[3:], false},
	} {
		if _, ok := parseAskID(tc.in); ok != tc.ok {
			t.Errorf("parseAskID(%q) = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

func FuzzParseAskID(f *testing.F) {
	f.Add(randomID())
	f.Add("AAAAAAAAAAAAAAAAAAAAAB")
	f.Add("../../s/x/api/decide")
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := parseAskID(s)
		if !ok {
			return
		}
		// One spelling, safe in a path segment and a script string.
		if id != s || len(id) != 22 || strings.ContainsAny(id, "/.%?#'\"\\<>=+") {
			t.Fatalf("accepted %q", s)
		}
	})
}

// TestAskPageWaitsForALateAsk: a joined server sends its URL elicitation
// once it has posted the ask, which the hub may not have read yet; the page
// waits for the ask to be listed instead of answering 404.
func TestAskPageWaitsForALateAsk(t *testing.T) {
	c := newConsole([]string{testHost})
	h := c.Handler()
	base, cookie := login(c)
	tk := newTicket("", kindApproval, "read_file", "stdio", time.Now(), time.Minute)
	tk.Asks = []grants.Decision{askOn("/etc/hosts", "interactive-dev/ask-outside-workspace")}
	got := make(chan int, 1)
	go func() {
		got <- do(h, "GET", base+"ask/"+tk.ID, nil, map[string]string{"Cookie": cookie}).Code
	}()
	time.Sleep(50 * time.Millisecond) // the page is already waiting (or not yet asked: both must end in 200)
	if err := c.add(tk); err != nil {
		t.Fatal(err)
	}
	if code := <-got; code != 200 {
		t.Fatalf("a page opened just before its ask was listed: %d, want 200", code)
	}
}

// TestPendingOfIsALookup: the ask page finds its one card by id, the same
// card the page shows, at a cost that does not grow with the asks pending
// (it used to render the whole page's view to pick one card).
func TestPendingOfIsALookup(t *testing.T) {
	c := newConsole([]string{"127.0.0.1:1"})
	first := pendingTicket(c)
	allocs := func() float64 {
		return testing.AllocsPerRun(50, func() { c.pendingOf(first.ID) })
	}
	one := allocs()
	for range 200 {
		pendingTicket(c)
	}
	// A margin: AllocsPerRun counts every goroutine's allocations, and
	// an earlier test's may still run; the whole view made 2 per card
	// (over 400 here).
	if many := allocs(); many > one+100 {
		t.Errorf("pendingOf with 201 asks pending: %.0f allocations, with one: %.0f", many, one)
	}
	got, ok := c.pendingOf(first.ID)
	if !ok {
		t.Fatal("a pending ask is not found")
	}
	for _, p := range c.view().Pending {
		if p.ID == first.ID && !reflect.DeepEqual(p, got) {
			t.Errorf("pendingOf's card %+v is not the page's %+v", got, p)
		}
	}
	if _, ok := c.pendingOf(goodID); ok {
		t.Error("an id not listed is found")
	}
	late := newTicket("", kindApproval, "read_file", "stdio", time.Now().Add(-time.Hour), time.Minute)
	late.Asks = first.Asks
	if err := c.add(late); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.pendingOf(late.ID); ok {
		t.Error("an ask past its deadline is found")
	}
}

// BenchmarkPendingOf: the ask page's lookup with 200 asks pending.
func BenchmarkPendingOf(b *testing.B) {
	c := newConsole([]string{"127.0.0.1:1"})
	var id string
	for range 200 {
		id = pendingTicket(c).ID
	}
	b.ReportAllocs()
	for b.Loop() {
		c.pendingOf(id)
	}
}
