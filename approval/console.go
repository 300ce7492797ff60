package approval

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/display"
	"github.com/onellm/onellm-mcp/internal/netaddr"
)

// Console is the approval console: a small web page on a loopback address
// where a person sees pending approvals and ask_user questions and answers
// them, for hosts that cannot elicit and people who prefer a browser.
//
// Security model: it listens on loopback only (a non-loopback address is
// refused at start); every request needs the token (printed to stderr at
// start-up and written to a file only the user can read; the page takes it
// once from ?token= and trades it for a login: an HttpOnly SameSite=Strict
// cookie holding a secret of its own, scoped to the login's secret path);
// the Host header must name the bound address (DNS rebinding); answers are
// POSTs that need the CSRF token embedded in the page and, from a browser,
// an Origin equal to the console's own; the page forbids framing and runs
// only its own nonce'd script. The token never reaches a tool result.
type Console struct {
	token string
	csrf  string
	hosts map[string]bool // acceptable Host headers
	url   string
	now   func() time.Time
	log   *log.Logger // the console's own errors

	srv *http.Server
	ln  net.Listener

	mu      sync.Mutex
	pending map[string]*ticket
	// answered holds tickets of modern calls answered here: the answer
	// waits for the client's retry, which claims it (until the deadline).
	answered map[string]*ticket
	recent   []record // newest last
	version  uint64   // bumped on every change, for the page's polling
	// changed is closed and replaced on every change, so that a waiter
	// learns of the next one without polling.
	changed chan struct{}
	// sessions are the logins handed out: each is a secret path /s/ID/ to
	// which the login cookie is scoped, and the cookie's value, a secret of
	// its own (never the token: a captured cookie is no bearer token, and
	// logs in only under its path while the login lasts). Cookies are not
	// separated by port, so a cookie for "/" would go to every server on
	// localhost; one scoped to an unguessable path goes only to this
	// console.
	sessions map[string]string

	// inbox shares this console with the user's other servers (inbox.go);
	// nil for a console of its own. label names this server on the page.
	inbox *inbox
	label string

	// templates parses the pages once, on first use.
	templates func() *pages
}

// record is one finished ticket, for the page's "recent decisions".
type record struct {
	Time    time.Time `json:"time"`
	Tool    string    `json:"tool"`
	What    string    `json:"what"`
	Outcome string    `json:"outcome"`
	Channel string    `json:"channel,omitempty"`
}

const (
	cookieName  = "onellm_console"
	maxRecent   = 50
	maxPending  = 256
	maxFormBody = 80 << 10
)

// CheckConsoleAddr refuses an address that is not loopback: the console
// decides what runs on this machine and must not be reachable from others.
func CheckConsoleAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("approval.console %q: want HOST:PORT, such as 127.0.0.1:8765", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
		return fmt.Errorf("approval.console %q: bad port", addr)
	}
	if netaddr.IsLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("approval.console %q: not a loopback address; the console listens only on 127.0.0.1, ::1 or localhost", addr)
}

// StartConsole listens on addr (loopback only) and serves the console.
// The caller hands the token (Token) to the person, never to a tool; the
// console itself writes no file. logger (nil: discarded) gets the
// console's own errors.
func StartConsole(addr string, logger *log.Logger) (*Console, error) {
	if err := CheckConsoleAddr(addr); err != nil {
		return nil, err
	}
	if host, port, _ := net.SplitHostPort(addr); strings.EqualFold(host, "localhost") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("approval console: %w", err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c := newConsole([]string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port})
	if logger != nil {
		c.log = logger
	}
	c.url = "http://" + ln.Addr().String() + "/"
	c.serve(ln)
	return c, nil
}

// serve serves the console on ln.
func (c *Console) serve(ln net.Listener) {
	c.ln = ln
	c.srv = &http.Server{Handler: c.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10, ErrorLog: c.log}
	go c.srv.Serve(ln)
}

// Token is the console's login token: whoever holds it answers asks.
func (c *Console) Token() string { return c.token }

func newConsole(hosts []string) *Console {
	c := &Console{token: randomID(), csrf: randomID(), hosts: map[string]bool{}, now: time.Now, log: log.New(io.Discard, "", 0), templates: sync.OnceValue(parsePages),
		pending: map[string]*ticket{}, answered: map[string]*ticket{}, sessions: map[string]string{}, changed: make(chan struct{})}
	for _, h := range hosts {
		c.hosts[h] = true
	}
	return c
}

// URL is the console's address (without the token).
func (c *Console) URL() string { return c.url }

// LoginURL is the console's address with the token that logs in; "" when
// the shared console is unavailable (its address is not this server's nor
// its hub's, so no token may be handed out for it).
func (c *Console) LoginURL() string {
	if c.inbox != nil {
		return c.inbox.loginURL()
	}
	return c.url + "?token=" + c.token
}

// AskLoginURL is LoginURL landing on the page of the ask id (its action in
// a desktop notification); "" is the console's page.
func (c *Console) AskLoginURL(id string) string {
	u := c.LoginURL()
	if _, ok := parseAskID(id); !ok || u == "" {
		return u
	}
	return u + "&ask=" + id
}

// Close stops serving (and leaves the shared inbox).
func (c *Console) Close() error {
	c.inbox.close()
	if c.srv == nil {
		return nil
	}
	return c.srv.Close()
}

// add lists a ticket on the page. It fails when too many are pending.
func (c *Console) add(t *ticket) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	if len(c.pending) >= maxPending {
		return errTooMany
	}
	if err := c.inbox.accepting(); err != nil {
		return err
	}
	if _, dup := c.pending[t.ID]; dup {
		return errDuplicateAsk // a joined server may not take another's id (hub.go)
	}
	t.console = c
	c.pending[t.ID] = t
	c.bump()
	c.inbox.added(t, c.now())
	return nil
}

// lookup returns a pending ticket by id.
func (c *Console) lookup(id string) *ticket {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending[id]
}

// claim returns the ticket of a modern call, pending or answered here, and
// forgets an answered one: the retry that claims it is the only reader.
func (c *Console) claim(id string) *ticket {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.answered[id]; ok {
		delete(c.answered, id)
		return t
	}
	t := c.pending[id]
	if t != nil {
		t.retried = false // the retry now waits on it: an answer need not be kept for it
	}
	return t
}

// finished moves a ticket from pending to the recent decisions.
func (c *Console) finished(t *ticket, a answer, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending[t.ID] != t {
		// Gone already, or the id is another ticket's now (an ask that
		// moved to its server's new connection, hub.go): not this one's.
		return
	}
	delete(c.pending, t.ID)
	if t.retried && why == "" && a.Channel == ChannelConsole {
		c.answered[t.ID] = t
	}
	outcome := why
	if outcome == "" {
		outcome = describeAnswer(t, a)
	}
	c.inbox.finished(t, outcome, a.Channel)
	c.recent = append(c.recent, record{Time: c.now(), Tool: t.Tool, What: ticketSummary(t), Outcome: outcome, Channel: a.Channel})
	if len(c.recent) > maxRecent {
		c.recent = c.recent[len(c.recent)-maxRecent:]
	}
	c.bump()
}

// touch records a change of a ticket's card.
func (c *Console) touch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bump()
}

// bump records a change; c.mu is held.
func (c *Console) bump() {
	c.version++
	close(c.changed)
	c.changed = make(chan struct{})
}

// expire drops tickets past their deadline whose waiter is gone (a modern
// client that never retried). A joined server's ask with an answer in
// flight to it (route.forward) is not dropped: the server may take the
// answer, and the forward settles the ask (at the latest at its deadline,
// route.await). Called with c.mu held.
func (c *Console) expire() {
	now := c.now()
	for id, t := range c.pending {
		if now.After(t.Deadline.Add(time.Second)) && !(t.route != nil && t.isResolved()) {
			delete(c.pending, id)
			c.recent = append(c.recent, record{Time: now, Tool: t.Tool, What: ticketSummary(t), Outcome: "timed out"})
			c.bump()
		}
	}
	for id, t := range c.answered {
		if now.After(t.Deadline) {
			delete(c.answered, id)
		}
	}
	if len(c.recent) > maxRecent {
		c.recent = c.recent[len(c.recent)-maxRecent:]
	}
}

func describeAnswer(t *ticket, a answer) string {
	if a.Err != nil {
		return "failed: " + a.Err.Error()
	}
	if t.Kind == kindQuestion {
		if act, text, ok := answerOf(*t.Question, a); ok {
			if act == "accept" {
				return "answered " + quoteShort(text)
			}
			return act + "d"
		}
		return "answer outside the form"
	}
	if d, _ := decisionOf(a, sessionOffered(t.Asks)); d != "" {
		return strings.ReplaceAll(d, "_", " ")
	}
	if a.Action == mcp.ElicitationResponseActionCancel {
		return "cancelled"
	}
	return "denied"
}

func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// escapeAll escapes each string for display.
func escapeAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = display.Escape(s)
	}
	return out
}

func ticketSummary(t *ticket) string {
	if t.route != nil {
		return t.route.summary()
	}
	if t.Question != nil {
		return display.Escape(t.Question.Text)
	}
	var parts []string
	for _, d := range t.Asks {
		parts = append(parts, d.Request.Describe())
	}
	return strings.Join(parts, "; ")
}

// view is what the page and its JSON endpoint show.
type view struct {
	Version uint64        `json:"version"`
	Pending []pendingView `json:"pending"`
	Recent  []record      `json:"recent"`
	CSRF    string        `json:"-"`
	Nonce   string        `json:"-"`
}

type pendingView struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	Tool        string     `json:"tool"`
	Items       []itemView `json:"items,omitempty"`
	Question    string     `json:"question,omitempty"`
	Choices     []string   `json:"choices,omitempty"`
	Default     string     `json:"default,omitempty"`
	SecondsLeft int        `json:"seconds_left"`
	// Context is the call in full (approvals); Level is the highest risk of
	// its asks, which the page makes stand out; Session says whether
	// "allow for session" is offered.
	Context callContext `json:"context"`
	Level   string      `json:"level,omitempty"`
	Session bool        `json:"session"`
	// Server names the server whose call asks (pid and name), when the
	// console is shared (inbox.go).
	Server string `json:"server,omitempty"`
	// Awaiting says that an answer given here was sent to that server,
	// which has not confirmed it yet (hub.go).
	Awaiting string `json:"awaiting,omitempty"`
}

type itemView struct {
	What    string `json:"what"`
	Rule    string `json:"rule"`
	Risk    string `json:"risk"`
	Session string `json:"session"` // what "for this session" means here
}

func (c *Console) view() view {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire()
	now := c.now()
	v := view{Version: c.version, Pending: []pendingView{}, Recent: []record{}}
	for _, t := range c.pending {
		v.Pending = append(v.Pending, c.cardOf(t, now))
	}
	sort.Slice(v.Pending, func(i, j int) bool { return v.Pending[i].SecondsLeft < v.Pending[j].SecondsLeft })
	for i := len(c.recent) - 1; i >= 0; i-- {
		v.Recent = append(v.Recent, c.recent[i])
	}
	return v
}

// cardOf is how the page shows one pending ticket (called with c.mu held):
// a peer's as it was posted (hub.go), this server's from its asks.
func (c *Console) cardOf(t *ticket, now time.Time) pendingView {
	left := max(0, int(t.Deadline.Sub(now).Seconds()))
	if t.route != nil {
		pv := t.route.view
		pv.ID, pv.SecondsLeft, pv.Awaiting = t.ID, left, t.awaitingText()
		return pv
	}
	pv := pendingView{ID: t.ID, Kind: string(t.Kind), Tool: t.Tool, SecondsLeft: left,
		Context: t.Context, Session: sessionOffered(t.Asks), Server: c.label}
	var top grants.Risk
	for _, d := range t.Asks {
		top = max(top, d.Request.Risk)
		s := "once"
		if d.ApprovalExpires > 0 {
			s = d.ApprovalExpires.String()
		}
		pv.Items = append(pv.Items, itemView{What: d.Request.Describe(), Rule: orNone(d.RuleID), Risk: d.Request.Risk.String(), Session: s})
	}
	if len(t.Asks) > 0 {
		pv.Level = top.String()
	}
	if q := t.Question; q != nil {
		pv.Question, pv.Choices, pv.Default = display.Escape(q.Text), escapeAll(q.Choices), display.Escape(q.Default)
	}
	return pv
}

// Handler serves the console.
func (c *Console) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /s/{sid}/{$}", c.page)
	mux.HandleFunc("GET /s/{sid}/api/state", c.state)
	mux.HandleFunc("POST /s/{sid}/api/decide", c.decide)
	mux.HandleFunc("GET /s/{sid}/ask/{id}", c.askPage)    // askpage.go
	mux.HandleFunc("POST /s/{sid}/ask/{id}", c.askAnswer) // askpage.go
	// For scripts with the token in an Authorization header.
	mux.HandleFunc("GET /{$}", c.page)
	mux.HandleFunc("GET /api/state", c.state)
	mux.HandleFunc("POST /api/decide", c.decide)
	return c.guard(mux)
}

// guard applies the checks every request passes: Host, then the token.
func (c *Console) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if !c.hosts[strings.ToLower(r.Host)] {
			http.Error(w, "forbidden: unexpected Host", http.StatusForbidden)
			return
		}
		if c.serveAskLink(w, r) { // the link of a URL elicitation: no login needed, nothing shown
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == "/" && r.URL.Query().Has("token") {
			if !c.tokenOK(r.URL.Query().Get("token")) {
				http.Error(w, "forbidden: wrong token", http.StatusForbidden)
				return
			}
			// Keep the token out of the address bar and history, in a cookie
			// scoped to a fresh secret path.
			sid, secret := c.newSession()
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: secret, Path: "/s/" + sid + "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			next := "/s/" + sid + "/"
			if id, ok := parseAskID(r.URL.Query().Get("ask")); ok { // AskLoginURL: on to that ask's page
				next += "ask/" + id
			}
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
		if !c.authenticated(r) {
			http.Error(w, "forbidden: open the console with the token the server printed at start-up (?token=…)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (c *Console) tokenOK(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), []byte(c.token)) == 1
}

// maxSessions bounds the logins kept; the oldest are forgotten.
const maxSessions = 64

// newSession is a new login: its path segment and its cookie's value.
func (c *Console) newSession() (sid, secret string) {
	sid, secret = randomID(), randomID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sessions) >= maxSessions {
		for k := range c.sessions {
			delete(c.sessions, k)
			break
		}
	}
	c.sessions[sid] = secret
	return sid, secret
}

// sessionOK reports whether the request's path is under a login's path
// and cookie is that login's.
func (c *Console) sessionOK(path, cookie string) bool {
	rest, ok := strings.CutPrefix(path, "/s/")
	if !ok {
		return false
	}
	sid, _, _ := strings.Cut(rest, "/")
	c.mu.Lock()
	secret, ok := c.sessions[sid]
	c.mu.Unlock()
	return ok && subtle.ConstantTimeCompare([]byte(cookie), []byte(secret)) == 1
}

func (c *Console) authenticated(r *http.Request) bool {
	if ck, err := r.Cookie(cookieName); err == nil && c.sessionOK(r.URL.Path, ck.Value) {
		return true
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && c.tokenOK(tok) {
		return true
	}
	return false
}

// originOK: a browser's POST must come from the console's own page. A
// request with no Origin and no Sec-Fetch-Site is not from a browser; it is
// accepted only with the token in an Authorization header (which a page on
// another site cannot set without a CORS preflight this server never grants).
func (c *Console) originOK(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		return o == "http://"+r.Host
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && c.tokenOK(tok)
}

// stateWait bounds how long /api/state?after=V waits for a change (below
// the server's WriteTimeout).
const stateWait = 20 * time.Second

// state serves the view as JSON. With ?after=V (the version of a state
// read before) it first waits, up to stateWait, for a newer version, so a
// script learns of the next change without polling.
func (c *Console) state(w http.ResponseWriter, r *http.Request) {
	if s := r.URL.Query().Get("after"); s != "" {
		after, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			http.Error(w, "bad after: want the version of a state read before", http.StatusBadRequest)
			return
		}
		c.awaitVersion(r.Context(), after, stateWait)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(c.view())
}

// awaitVersion returns once the console's version is past after, d has
// passed, or ctx is done.
func (c *Console) awaitVersion(ctx context.Context, after uint64, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		c.mu.Lock()
		version, changed := c.version, c.changed
		c.mu.Unlock()
		if version > after {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (c *Console) page(w http.ResponseWriter, r *http.Request) {
	v := c.view()
	v.CSRF = c.csrf
	v.Nonce = randomID()
	setPageHeaders(w, v.Nonce)
	if err := c.templates().page.Execute(w, v); err != nil {
		c.log.Printf("approval console: %v", err)
	}
}

var errConsoleAnswer = errors.New("bad answer")

// decide takes an answer from the page: id, csrf, and decision (approvals:
// allow_once, allow_for_session, deny) or action (questions: accept with
// answer, decline).
func (c *Console) decide(w http.ResponseWriter, r *http.Request) {
	code, msg, checked := c.take(w, r, "")
	if !checked {
		http.Error(w, msg, code)
		return
	}
	c.reply(w, r, code, msg)
}

// take checks a posted answer (Origin, size, CSRF token) and gives it to
// the ask id ("": the form's id). checked is false when the request itself
// was refused, before any ask was looked at.
func (c *Console) take(w http.ResponseWriter, r *http.Request, id string) (code int, msg string, checked bool) {
	if !c.originOK(r) {
		return http.StatusForbidden, "forbidden: cross-origin request", false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		return http.StatusBadRequest, "bad form", false
	}
	csrf := r.PostForm.Get("csrf")
	if csrf == "" {
		csrf = r.Header.Get("X-CSRF-Token")
	}
	if subtle.ConstantTimeCompare([]byte(csrf), []byte(c.csrf)) != 1 {
		return http.StatusForbidden, "forbidden: missing or wrong CSRF token; reload the page", false
	}
	if id == "" {
		id = r.PostForm.Get("id")
	}
	t := c.lookup(id)
	if t == nil {
		return http.StatusConflict, "already decided, withdrawn or timed out", true
	}
	a, err := consoleAnswer(t, r.PostForm)
	if err != nil {
		return http.StatusBadRequest, "not an answer this question accepts", true
	}
	if t.route != nil { // a joined server's ask: it decides (hub.go)
		code, msg := t.route.forward(t, a)
		return code, msg, true
	}
	if !t.resolve(a) {
		return http.StatusConflict, "already decided through another channel", true
	}
	return http.StatusOK, "recorded", true
}

func consoleAnswer(t *ticket, f map[string][]string) (answer, error) {
	get := func(k string) string {
		if v := f[k]; len(v) == 1 {
			return v[0]
		}
		return ""
	}
	a := answer{Channel: ChannelConsole}
	if t.Kind == kindApproval {
		switch d := get("decision"); d {
		case AllowOnce, AllowForSession, Deny:
			a.Action, a.Content = mcp.ElicitationResponseActionAccept, map[string]any{"decision": d}
			return a, nil
		}
		return a, errConsoleAnswer
	}
	switch get("action") {
	case "accept":
		a.Action, a.Content = mcp.ElicitationResponseActionAccept, map[string]any{"answer": get("answer")}
		if _, _, ok := answerOf(*t.Question, a); !ok {
			return a, errConsoleAnswer
		}
		return a, nil
	case "decline":
		a.Action = mcp.ElicitationResponseActionDecline
		return a, nil
	}
	return a, errConsoleAnswer
}

// reply answers fetch() with JSON and a plain form post with a redirect
// back to the page.
func (c *Console) reply(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if r.Header.Get("X-CSRF-Token") == "" && code == http.StatusOK {
		http.Redirect(w, r, "./", http.StatusSeeOther) // back to the page, in this login's path
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"ok": code == http.StatusOK, "message": msg})
}

// pages are the console's HTML templates, parsed on the first page served
// (Console.templates) rather than at every start of the program.
type pages struct{ page, askLink, askPage *template.Template }

// parsePages parses the templates; their text is constant, so a failure is
// a bug (TestTemplatesParse).
func parsePages() *pages {
	return &pages{
		page:    template.Must(template.New("page").Parse(pageHTML)),
		askLink: template.Must(template.New("asklink").Parse(askLinkHTML)),
		askPage: template.Must(template.New("askpage").Parse(askPageHTML)),
	}
}
