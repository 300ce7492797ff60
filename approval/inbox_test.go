package approval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/statedir"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// logSink collects a console's log lines and lets a test wait for one.
type logSink struct {
	mu    sync.Mutex
	lines []string
	t     *testing.T
	// wrote, once a waiter made it, is closed on the next line.
	wrote chan struct{}
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.lines = append(s.lines, string(p))
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	s.mu.Unlock()
	s.t.Logf("%s", strings.TrimSpace(string(p)))
	return len(p), nil
}

func (s *logSink) has(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// await waits until a line holding sub is logged, looking again at each
// line written.
func (s *logSink) await(t *testing.T, sub string) {
	t.Helper()
	awaitChange(t, fmt.Sprintf("%q in the log", sub), func() <-chan struct{} {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.wrote == nil {
			s.wrote = make(chan struct{})
		}
		return s.wrote
	}, func() bool { return s.has(sub) })
}

// member is one server of a test inbox.
type member struct {
	c      *Console
	log    *logSink
	roles  chan string
	broker *Broker
}

// runtimeDir is a private folder with a short path (a unix socket's path
// has at most 107 bytes; t.TempDir's can be longer).
func runtimeDir(t testing.TB) string {
	base, err := os.MkdirTemp("", "oi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := filepath.Join(base, "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func join(t *testing.T, addr, dir, name string, holder func(string) string) *member {
	t.Helper()
	return joinWith(t, addr, dir, name, func(o *InboxOptions) { o.Holder = holder })
}

// joinWith is join with the options set sets.
func joinWith(t *testing.T, addr, dir, name string, set func(*InboxOptions)) *member {
	t.Helper()
	m := &member{log: &logSink{t: t}, roles: make(chan string, 16)}
	opts := InboxOptions{Addr: addr, RuntimeDir: dir, Name: name, Log: log.New(m.log, name+": ", 0),
		Ready: func(role, _, _ string) { m.roles <- role }, grace: 300 * time.Millisecond}
	set(&opts)
	c, err := OpenInbox(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	m.c = c
	if m.broker, err = New(Options{Console: c}); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *member) role(t *testing.T) string {
	t.Helper()
	select {
	case r := <-m.roles:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("the console never settled")
		return ""
	}
}

// approve runs one console-only approval on the member's broker.
func (m *member) approve(ctx context.Context, path string) chan toolkit.ApprovalOutcome {
	out := make(chan toolkit.ApprovalOutcome, 1)
	go func() {
		o, _ := m.broker.Approve(ctx, toolkit.ApprovalCall{Tool: "read_file", Args: []byte(fmt.Sprintf(`{"path":%q}`, path)),
			Principal: "p", Asks: []grants.Decision{askOn(path, "ask-outside")}, Policy: testPolicy(20 * time.Second)})
		out <- o
	}()
	return out
}

// consoleAPI drives a hub's console over HTTP with its token. hub is the
// Console serving the address, whose changes a wait looks at.
type consoleAPI struct {
	t              *testing.T
	base, tok, csr string
	hub            *Console
}

func apiOf(t *testing.T, c *Console) *consoleAPI {
	u, err := url.Parse(c.LoginURL())
	if err != nil {
		t.Fatal(err)
	}
	return &consoleAPI{t: t, base: "http://" + u.Host, tok: u.Query().Get("token"), hub: c}
}

func (a *consoleAPI) do(method, path string, form url.Values) (*http.Response, error) {
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, a.base+path, body)
	req.Header.Set("Authorization", "Bearer "+a.tok)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-CSRF-Token", a.csr)
	}
	return http.DefaultClient.Do(req)
}

func (a *consoleAPI) pending() ([]pendingView, error) {
	resp, err := a.do("GET", "/api/state", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var v struct{ Pending []pendingView }
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("state: %s", resp.Status)
	}
	return v.Pending, json.NewDecoder(resp.Body).Decode(&v)
}

// waitPending waits until the page lists n asks, reading it again at each
// change of the hub's console.
func (a *consoleAPI) waitPending(n int) []pendingView {
	a.t.Helper()
	var got []pendingView
	var err error
	awaitConsole(a.t, a.hub, fmt.Sprintf("%d asks on the page", n), func() bool {
		got, err = a.pending()
		return err == nil && len(got) == n
	})
	return got
}

func (a *consoleAPI) decide(id, decision string) int {
	a.t.Helper()
	resp, err := a.do("POST", "/api/decide", url.Values{"id": {id}, "decision": {decision}})
	if err != nil {
		a.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func byServer(list []pendingView, sub string) *pendingView {
	for i := range list {
		if strings.Contains(list[i].Server, sub) {
			return &list[i]
		}
	}
	return nil
}

// TestInboxJoin: a second server on the same address joins the first; one
// page lists both servers' asks with their labels; an answer reaches only
// the server that asked; a server that leaves takes its asks off the page
// and denies them on its side.
func TestInboxJoin(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := join(t, addr, dir, "alpha", nil)
	if r := a.role(t); r != roleHub {
		t.Fatalf("first server: %s", r)
	}
	b := join(t, addr, dir, "beta", nil)
	if r := b.role(t); r != rolePeer {
		t.Fatalf("second server: %s", r)
	}
	if fi, err := os.Stat(a.c.inbox.sock); err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rendezvous socket: %v %v", fi, err)
	}
	api := apiOf(t, a.c)
	api.csr = a.c.csrf
	if b.c.LoginURL() != a.c.LoginURL() {
		t.Fatalf("the joined server hands out another login: %s vs %s", b.c.LoginURL(), a.c.LoginURL())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fromA, fromB := a.approve(ctx, "/a.txt"), b.approve(ctx, "/b.txt")
	list := api.waitPending(2)
	pa, pb := byServer(list, "alpha"), byServer(list, "beta")
	if pa == nil || pb == nil || !strings.Contains(pb.Items[0].What, "/b.txt") || !strings.Contains(pa.Items[0].What, "/a.txt") {
		t.Fatalf("page: %+v", list)
	}
	if !strings.HasPrefix(pb.Server, fmt.Sprintf("pid %d ", os.Getpid())) || pb.Tool != "read_file" || pb.Level == "" {
		t.Fatalf("the joined server's ask: %+v", pb)
	}
	if code := api.decide(pb.ID, AllowOnce); code != 200 {
		t.Fatalf("answering the joined server's ask: %d", code)
	}
	o := <-fromB
	if !o.Approved || o.Channel != ChannelConsole {
		t.Fatalf("beta's outcome: %+v", o)
	}
	select {
	case o := <-fromA:
		t.Fatalf("alpha's ask was decided too: %+v", o)
	default:
	}
	if code := api.decide(pb.ID, Deny); code != 409 {
		t.Fatalf("a second answer: %d", code)
	}
	if list := api.waitPending(1); list[0].ID != pa.ID {
		t.Fatalf("left pending: %+v", list)
	}

	// beta asks again, then leaves: its ask is denied on its side and leaves the page.
	fromB = b.approve(ctx, "/b2.txt")
	api.waitPending(2)
	b.c.Close()
	if o := <-fromB; o.Approved || o.Reason != grants.ReasonApprovalUnavailable {
		t.Fatalf("beta's ask after beta left: %+v", o)
	}
	if list := api.waitPending(1); list[0].ID != pa.ID {
		t.Fatalf("after beta left: %+v", list)
	}
	a.log.await(t, "left (")
	api.decide(pa.ID, Deny)
	if o := <-fromA; o.Approved || o.Reason != grants.ReasonDeclined {
		t.Fatalf("alpha's outcome: %+v", o)
	}
}

// TestInboxTakeover: when the hub leaves, one of the joined servers takes
// the address over, the other joins it, and both pending asks are listed
// there again and answerable, with the NEW hub's token and CSRF token only:
// while the address was free anyone could have listened on it and been
// sent the person's cookie, so the old token, CSRF token and logins are
// refused, and the peer learns the new token when it joins.
func TestInboxTakeover(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := join(t, addr, dir, "alpha", nil)
	a.role(t)
	b, c := join(t, addr, dir, "beta", nil), join(t, addr, dir, "gamma", nil)
	b.role(t)
	c.role(t)
	old := apiOf(t, a.c)
	old.csr = a.c.csrf
	cookie, loc := browserLogin(t, a.c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fromB, fromC := b.approve(ctx, "/b.txt"), c.approve(ctx, "/c.txt")
	old.waitPending(2)
	a.c.Close()

	roles := map[string]int{}
	var hub, joined *member
	for _, m := range []*member{b, c} {
		r := m.role(t)
		roles[r]++
		if r == roleHub {
			hub = m
		} else {
			joined = m
		}
	}
	if roles[roleHub] != 1 || roles[rolePeer] != 1 {
		t.Fatalf("after the hub left: %v", roles)
	}
	api := apiOf(t, hub.c)
	api.csr = hub.c.csrf
	if api.tok == old.tok || api.csr == old.csr {
		t.Fatal("the console that took over serves with the old token or CSRF token")
	}
	if got := apiOf(t, joined.c).tok; got != api.tok {
		t.Fatalf("the joined server's token %q, want the new hub's %q", got, api.tok)
	}
	list := api.waitPending(2) // same address, new token
	old.hub = hub.c
	if _, err := old.pending(); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("the old token after the takeover: %v, want 403", err)
	}
	if code := old.decide(list[0].ID, AllowOnce); code != http.StatusForbidden {
		t.Fatalf("decide with the old token after the takeover: %d, want 403", code)
	}
	if code := browserGet(t, "http://"+addr+loc+"api/state", cookie); code != http.StatusForbidden {
		t.Fatalf("the old login's cookie after the takeover: %d, want 403", code)
	}
	pb, pc := byServer(list, "beta"), byServer(list, "gamma")
	if pb == nil || pc == nil {
		t.Fatalf("after the takeover: %+v", list)
	}
	if code := api.decide(pc.ID, AllowOnce); code != 200 {
		t.Fatalf("decide after the takeover (new CSRF token): %d", code)
	}
	if o := <-fromC; !o.Approved {
		t.Fatalf("gamma: %+v", o)
	}
	if code := api.decide(pb.ID, Deny); code != 200 {
		t.Fatalf("decide: %d", code)
	}
	if o := <-fromB; o.Approved || o.Reason != grants.ReasonDeclined {
		t.Fatalf("beta: %+v", o)
	}
}

// browserLogin logs in on c's console as the page does: the login cookie
// and the login's path.
func browserLogin(t *testing.T, c *Console) (*http.Cookie, string) {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(c.LoginURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("login: %s, %d cookies", resp.Status, len(resp.Cookies()))
	}
	return resp.Cookies()[0], resp.Header.Get("Location")
}

// browserGet is the status of a GET with cookie.
func browserGet(t *testing.T, u string, cookie *http.Cookie) int {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestInboxHeldByStranger: an address held by something that is not a hub
// of this user is an error naming the holder; an ask that could wait only
// on the console is denied (approval_unavailable).
func TestInboxHeldByStranger(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	m := join(t, ln.Addr().String(), runtimeDir(t), "alpha", func(string) string { return "pid 4242 (python3)" })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	early := m.approve(ctx, "/a.txt") // while still trying to join: waits, then is denied
	m.log.await(t, "ERROR")
	if !m.log.has("is in use by pid 4242 (python3), which is not an onellm-mcp console of this user") || !m.log.has(ln.Addr().String()) {
		t.Fatalf("the error does not name the holder: %q", m.log.lines)
	}
	if o := <-early; o.Reason != grants.ReasonApprovalUnavailable {
		t.Fatalf("an ask waiting when the console went down: %+v", o)
	}
	if o := <-m.approve(ctx, "/b.txt"); o.Reason != grants.ReasonApprovalUnavailable {
		t.Fatalf("an ask while the console is down: %+v", o)
	}
	// A client that could answer a form gets none: the holder of the
	// address could otherwise move approvals to the client.
	both := &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}
	if o, pending := m.broker.Approve(modernCtx(both), hostsCall()); pending != nil || o.Reason != grants.ReasonApprovalUnavailable {
		t.Fatalf("a form+url client while the console is down: %+v %+v", o, pending)
	}
	// Whoever holds the address would be handed a login URL (the desktop
	// notification's action opens it there): none is given while down.
	if u, au := m.c.LoginURL(), m.c.AskLoginURL(goodID); u != "" || au != "" {
		t.Fatalf("login URLs while the console is down: %q, %q", u, au)
	}
	ln.Close() // the stranger leaves: the server gets the address
	if r := m.role(t); r != roleHub {
		t.Fatalf("after the stranger left: %s", r)
	}
	// The console that came back has fresh credentials, and its login
	// URL logs in.
	if u := m.c.LoginURL(); u == "" {
		t.Fatal("no login URL once the console is back")
	}
	browserLogin(t, m.c)
}

// TestInboxRefusesBadPeers: a connection that does not start with a good
// hello, or sends what only a hub sends, is dropped and posts nothing.
func TestInboxRefusesBadPeers(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := join(t, addr, dir, "alpha", nil)
	a.role(t)
	for _, tc := range []struct{ name, msgs string }{
		{"no hello", `{"type":"post","id":"AAAAAAAAAAAAAAAAAAAAAA","ask":{"kind":"approval","tool":"x","items":[{"what":"w","rule":"r","risk":"low","session":"once"}],"context":{},"deadline_ms":99999999999999}}` + "\n"},
		{"wrong address", `{"type":"hello","version":3,"addr":"127.0.0.1:1","server":"x"}` + "\n"},
		{"answer from a peer", `{"type":"hello","version":3,"addr":"` + addr + `","server":"x"}` + "\n" +
			`{"type":"answer","id":"AAAAAAAAAAAAAAAAAAAAAA","action":"accept","decision":"allow_once"}` + "\n"},
		{"duplicate key", `{"type":"hello","version":3,"addr":"` + addr + `","server":"x","server":"y"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("unix", a.c.inbox.sock)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.Write([]byte(tc.msgs))
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 64<<10)
			var got []byte
			for {
				n, err := conn.Read(buf)
				got = append(got, buf[:n]...)
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("the hub did not hang up")
				}
				if err != nil {
					break // the hub hung up
				}
			}
			if !strings.Contains(tc.name, "answer") && len(got) > 0 {
				t.Fatalf("a bad hello got a reply: %q", got)
			}
		})
	}
	if list := a.c.view().Pending; len(list) != 0 {
		t.Fatalf("a bad peer posted: %+v", list)
	}
}

// TestInboxLongSocketPath: when the rendezvous socket's path would be too
// long, the console still serves this server, unshared, and says why.
func TestInboxLongSocketPath(t *testing.T) {
	dir := filepath.Join(runtimeDir(t), strings.Repeat("d", 100))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	a := join(t, addr, dir, "alpha", nil)
	if r := a.role(t); r != roleHub {
		t.Fatalf("role %s", r)
	}
	if !a.log.has("not shared with other servers") {
		t.Fatalf("no word on the console not being shared: %q", a.log.lines)
	}
	api := apiOf(t, a.c)
	if _, err := api.pending(); err != nil {
		t.Fatalf("the console does not serve: %v", err)
	}
}

// TestInboxChecksTheFolderAsStatedir: the hub checks its runtime folder
// with statedir's one check (the folder may have changed since start-up,
// before a takeover): a folder open to others, a symlink, and a file are
// refused with statedir's reason, and the console serves unshared.
func TestInboxChecksTheFolderAsStatedir(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, dir string)
	}{
		{"open to others", func(t *testing.T, dir string) {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"a symlink", func(t *testing.T, dir string) {
			real := dir + "-real"
			if err := os.Rename(dir, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"a file", func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := runtimeDir(t)
			tc.make(t, dir)
			want := statedir.CheckRuntime(dir)
			if want == nil {
				t.Fatalf("statedir accepts %s", tc.name)
			}
			a := join(t, freeAddr(t), dir, "alpha", nil)
			if r := a.role(t); r != roleHub {
				t.Fatalf("role %s", r)
			}
			if !a.log.has("other servers cannot join this console: " + want.Error()) {
				t.Fatalf("the hub's refusal is not statedir's %q: %q", want, a.log.lines)
			}
			if _, err := os.Lstat(a.c.inbox.sock); err == nil {
				t.Fatal("the rendezvous socket was opened")
			}
		})
	}
}

// pair is a hub (alpha) and a server joined to it (beta), with the hub's
// console API.
func pair(t *testing.T) (a, b *member, api *consoleAPI) {
	t.Helper()
	addr, dir := freeAddr(t), runtimeDir(t)
	a = join(t, addr, dir, "alpha", nil)
	a.role(t)
	b = join(t, addr, dir, "beta", nil)
	b.role(t)
	api = apiOf(t, a.c)
	api.csr = a.c.csrf
	return a, b, api
}

// TestInboxQuestion: a joined server's ask_user question is answered on
// the hub's page, within its choices only.
func TestInboxQuestion(t *testing.T) {
	_, b, api := pair(t)
	type got struct {
		ans toolkit.Answer
		err error
	}
	out := make(chan got, 1)
	go func() {
		env := &toolkit.Env{Policy: testPolicy(20 * time.Second), Principal: "p"}
		env.Request.Params.Name = "ask_user"
		ans, _, err := b.broker.AskUser(context.Background(), env, toolkit.Question{Text: "Ship it?", Choices: []string{"yes", "no"}})
		out <- got{ans, err}
	}()
	list := api.waitPending(1)
	if list[0].Question != "Ship it?" || list[0].Kind != "question" || !strings.Contains(list[0].Server, "beta") {
		t.Fatalf("the question on the page: %+v", list[0])
	}
	post := func(form url.Values) int {
		resp, err := api.do("POST", "/api/decide", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(url.Values{"id": {list[0].ID}, "action": {"accept"}, "answer": {"maybe"}}); code != 400 {
		t.Fatalf("an answer outside the choices: %d", code)
	}
	if code := post(url.Values{"id": {list[0].ID}, "action": {"accept"}, "answer": {"yes"}}); code != 200 {
		t.Fatalf("answer: %d", code)
	}
	if g := <-out; g.err != nil || g.ans.Action != "accept" || g.ans.Answer != "yes" {
		t.Fatalf("beta got %+v %v", g.ans, g.err)
	}
}

// TestInboxWithdraw: an ask that ends on the joined server (its client
// went away) leaves the hub's page, with its outcome in the recent list.
func TestInboxWithdraw(t *testing.T) {
	a, b, api := pair(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := b.approve(ctx, "/b.txt")
	list := api.waitPending(1)
	cancel()
	if o := <-done; o.Reason != grants.ReasonCancelled {
		t.Fatalf("beta: %+v", o)
	}
	api.waitPending(0)
	if code := api.decide(list[0].ID, AllowOnce); code != 409 {
		t.Fatalf("answering a withdrawn ask: %d", code)
	}
	v := a.c.view()
	if len(v.Recent) == 0 || !strings.Contains(v.Recent[0].Outcome, "client went away") || !strings.Contains(v.Recent[0].What, "/b.txt") {
		t.Fatalf("recent: %+v", v.Recent)
	}
}

// TestInboxPeerCannotTakeAnID: a joined server that posts an ask under an
// id already listed (another server's, which a URL elicitation's link
// shows) is refused; the page's ask stays the first one's.
func TestInboxPeerCannotTakeAnID(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := join(t, addr, dir, "alpha", nil)
	a.role(t)
	mine := pendingTicket(a.c)
	conn, err := net.Dial("unix", a.c.inbox.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, `{"type":"hello","version":3,"addr":%q,"server":"x"}`+"\n", addr)
	fmt.Fprintf(conn, `{"type":"post","id":%q,"ask":{"kind":"approval","tool":"read_file","items":[{"what":"w","rule":"r","risk":"low","session":"once"}],"context":{},"deadline_ms":%d}}`+"\n",
		mine.ID, time.Now().Add(time.Minute).UnixMilli())
	r := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var refused *wireMessage
	for refused == nil {
		m, err := readWire(r)
		if err != nil {
			t.Fatalf("no refusal: %v", err)
		}
		if m.Type == "refused" {
			refused = m
		}
	}
	if refused.ID != mine.ID {
		t.Fatalf("refused %+v", refused)
	}
	if got := a.c.lookup(mine.ID); got != mine || got.route != nil {
		t.Fatalf("the listed ask was replaced: %+v", got)
	}
}

// TestInboxRejoinKeepsAsks: a server that joins again (same pid) before
// the hub saw its old connection end moves its asks to the new one, and
// they stay listed when the old connection's end is seen: finishing the
// old ticket must not remove the new one, which has the same id.
func TestInboxRejoinKeepsAsks(t *testing.T) {
	addr, dir := freeAddr(t), runtimeDir(t)
	a := join(t, addr, dir, "alpha", nil)
	a.role(t)
	post := fmt.Sprintf(`{"type":"hello","version":3,"addr":%q,"server":"x"}`+"\n"+
		`{"type":"post","id":%q,"ask":{"kind":"approval","tool":"read_file","items":[{"what":"w","rule":"r","risk":"low","session":"once"}],"context":{},"deadline_ms":%d}}`+"\n",
		addr, goodID, time.Now().Add(time.Minute).UnixMilli())
	var owner *peer
	var conns []net.Conn
	for i := range 2 {
		conn, err := net.Dial("unix", a.c.inbox.sock)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns = append(conns, conn)
		conn.Write([]byte(post))
		prev := owner
		awaitConsole(t, a.c, fmt.Sprintf("the ask on connection %d", i+1), func() bool {
			got := a.c.lookup(goodID)
			if got == nil || got.route == nil || got.route.p == prev {
				return false
			}
			owner = got.route.p
			return true
		})
	}
	if n := len(a.c.view().Pending); n != 1 {
		t.Fatalf("%d asks listed", n)
	}
	conns[0].Close() // the old connection's end is seen now
	a.log.await(t, "left (1 pending asks withdrawn)")
	if got := a.c.lookup(goodID); got == nil || got.route == nil || got.route.p != owner {
		t.Fatalf("the ask that moved to the new connection went with the old one: %+v", got)
	}
}
