package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// inboxServer is one server of the shared-inbox test: its fixture, its
// client, and its process (to kill).
type inboxServer struct {
	f       *fixture
	client  *client.Client
	cmd     chan *exec.Cmd
	outside string
}

func startInboxServer(t *testing.T, port int, runDir string, opts ...client.ClientOption) (*inboxServer, func(args map[string]any) chan *mcp.CallToolResult) {
	t.Helper()
	f := newFixture(t, sessionConfig+fmt.Sprintf("\n[approval]\nconsole = \"127.0.0.1:%d\"\n", port))
	f.Env = append(f.Env, "XDG_RUNTIME_DIR="+runDir)
	s := &inboxServer{f: f, cmd: make(chan *exec.Cmd, 1)}
	s.outside = f.write(t, filepath.Join(f.Root, "o.txt"), "from "+f.Root+"\n")
	spawn := transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, command, args...)
		cmd.Env = append(os.Environ(), env...)
		s.cmd <- cmd
		return cmd, nil
	})
	c := stdioClientWith(t, f, Legacy, binary, []transport.StdioOption{spawn}, opts...) // by default no elicitation: the console decides
	s.client = c
	callAsync := func(args map[string]any) chan *mcp.CallToolResult {
		out := make(chan *mcp.CallToolResult, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "read_file", Arguments: args}})
			if err != nil {
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent("call failed: " + err.Error())}}
			}
			out <- res
		}()
		return out
	}
	return s, callAsync
}

type inboxPending struct {
	ID, Tool, Server string
	Context          struct{ Client, Workspace string }
	Items            []struct{ What string }
}

// inboxState reads the console's pending list and version (an error
// while it cannot be reached, as during a takeover). after > 0 waits for a
// change past that version (after < 0: read at once), at most a second: a
// console that took the address over counts its versions anew.
func (cc *consoleClient) inboxState(after int64) ([]inboxPending, int64, error) {
	var s struct {
		Version int64
		Pending []inboxPending
	}
	path := "/api/state"
	if after >= 0 {
		path = fmt.Sprintf("/api/state?after=%d", after)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := cc.getJSON(ctx, path, &s)
	return s.Pending, s.Version, err
}

func (cc *consoleClient) getJSON(ctx context.Context, path string, v any) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", cc.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+cc.tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// waitInbox waits until the page lists n asks, reading it again at each
// change (?after=V). Only while the console cannot be reached (a takeover
// under way, which nothing outside the servers can wait on) does it try
// again every 20 ms.
func (cc *consoleClient) waitInbox(n int, within time.Duration) []inboxPending {
	cc.t.Helper()
	var last []inboxPending
	var lastErr error
	version := int64(-1)
	for end := time.Now().Add(within); time.Now().Before(end); {
		if last, version, lastErr = cc.inboxState(version); lastErr == nil && len(last) == n {
			return last
		}
		if lastErr != nil {
			version = -1
			time.Sleep(20 * time.Millisecond)
		}
	}
	cc.t.Fatalf("the console never listed %d asks: %+v %v", n, last, lastErr)
	return nil
}

func inWorkspace(list []inboxPending, ws string) *inboxPending {
	for i := range list {
		if list[i].Context.Workspace == ws {
			return &list[i]
		}
	}
	return nil
}

// TestApprovalInboxTwoServers: two servers configured with the same
// console address both serve; one page lists both servers' asks with their
// labels; an answer reaches the server that asked (the other stays
// pending); killing the console's server moves the console to the other,
// where its pending ask is still answerable with the new token the
// survivor wrote, and not with the old one.
func TestApprovalInboxTwoServers(t *testing.T) {
	port := freePort(t)
	runDir := shortRunDir(t)

	one, call1 := startInboxServer(t, port, runDir)
	cc := openConsole(t, one.f, port)
	two, call2 := startInboxServer(t, port, runDir)
	// The second joins in the background; its token file says it has.
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(two.f.consoleToken()); err == nil && strings.TrimSpace(string(data)) == cc.tok {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the second server never joined the console (no token file with the console's token)")
		}
	}
	pid1, pid2 := (<-one.cmd).Process, (<-two.cmd).Process

	// Both serve.
	for _, s := range []*inboxServer{one, two} {
		s.f.write(t, "in.txt", "in\n")
		if res := call(t, s.client, "read_file", map[string]any{"path": "in.txt"}); res.IsError || text(res) != "in\n" {
			t.Fatalf("a server does not serve: %q", text(res))
		}
	}
	done1, done2 := call1(map[string]any{"path": one.outside}), call2(map[string]any{"path": two.outside})
	list := cc.waitInbox(2, 10*time.Second)
	p1, p2 := inWorkspace(list, one.f.Workspace), inWorkspace(list, two.f.Workspace)
	if p1 == nil || p2 == nil {
		t.Fatalf("the page does not list both servers' asks: %+v", list)
	}
	for _, c := range []struct {
		p    *inboxPending
		pid  int
		path string
	}{{p1, pid1.Pid, one.outside}, {p2, pid2.Pid, two.outside}} {
		if !strings.HasPrefix(c.p.Server, fmt.Sprintf("pid %d", c.pid)) || !strings.Contains(c.p.Context.Client, "onellm-e2e") ||
			len(c.p.Items) != 1 || !strings.Contains(c.p.Items[0].What, c.path) {
			t.Fatalf("ask of pid %d: %+v", c.pid, c.p)
		}
	}

	// An answer to the joined server's ask reaches it, and only it.
	if code := cc.decide(map[string][]string{"id": {p2.ID}, "decision": {"allow_once"}}); code != 200 {
		t.Fatalf("decide: %d", code)
	}
	if res := <-done2; res.IsError || text(res) != "from "+two.f.Root+"\n" {
		t.Fatalf("the joined server's call: %q", text(res))
	}
	if l := lastDecision(t, two.f, "read_file"); l["reason_code"] != "approved" || l["approval_channel"] != "console" {
		t.Fatalf("the joined server's audit: %v", l)
	}
	if list := cc.waitInbox(1, 5*time.Second); list[0].ID != p1.ID {
		t.Fatalf("left pending: %+v", list)
	}
	select {
	case res := <-done1:
		t.Fatalf("the console server's call ended too: %q", text(res))
	default:
	}

	// The joined server asks again; the console's server is killed.
	done2 = call2(map[string]any{"path": two.outside})
	cc.waitInbox(2, 10*time.Second)
	killed := time.Now()
	if err := pid1.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done1 // its client sees it die
	// The survivor serves the same address with a NEW token (the old one
	// may have been sent to whoever listened on the free address), which
	// it writes to its console.token: the person logs in again.
	old := cc
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(two.f.consoleToken()); err == nil && strings.TrimSpace(string(data)) != old.tok {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the surviving server never wrote a new token")
		}
	}
	cc = openConsole(t, two.f, port)
	list = cc.waitInbox(1, 10*time.Second)
	moved := time.Since(killed)
	t.Logf("the console moved to the other server in %v", moved)
	if list[0].Context.Workspace != two.f.Workspace || !strings.HasPrefix(list[0].Server, fmt.Sprintf("pid %d", pid2.Pid)) {
		t.Fatalf("after the takeover: %+v", list)
	}
	if _, _, err := old.inboxState(-1); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("the old token after the takeover: %v, want 403 Forbidden", err)
	}
	if old.decide(map[string][]string{"id": {list[0].ID}, "decision": {"allow_once"}}) != http.StatusForbidden {
		t.Fatal("the old token and CSRF token decide after the takeover")
	}
	if code := cc.decide(map[string][]string{"id": {list[0].ID}, "decision": {"allow_once"}}); code != 200 {
		t.Fatalf("decide after the takeover: %d", code)
	}
	if res := <-done2; res.IsError || text(res) != "from "+two.f.Root+"\n" {
		t.Fatalf("the surviving server's call: %q", text(res))
	}
	if moved > 5*time.Second {
		t.Fatalf("the console took %v to move", moved)
	}
}

// shortRunDir is a private runtime folder with a short path (a socket's
// path has at most 107 bytes; t.TempDir's can be longer).
func shortRunDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "oe-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	return dir
}

// TestApprovalInboxURLMode: a joined server whose client declared URL-mode
// elicitation sends a link to the shared console; the person, logged in
// there, opens it, answers on the ask's page, and the joined server's call
// completes.
func TestApprovalInboxURLMode(t *testing.T) {
	port, runDir := freePort(t), shortRunDir(t)
	one, _ := startInboxServer(t, port, runDir)
	e := &urlElicitor{asks: make(chan mcp.ElicitationParams, 4)}
	two, call2 := startInboxServer(t, port, runDir, client.WithElicitationHandler(e), urlAndForm)
	cc := openConsole(t, one.f, port)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(two.f.consoleToken()); err == nil && strings.TrimSpace(string(data)) == cc.tok {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the second server never joined the console")
		}
	}
	done := call2(map[string]any{"path": two.outside})
	var ask mcp.ElicitationParams
	select {
	case ask = <-e.asks:
	case <-time.After(20 * time.Second):
		t.Fatal("no URL elicitation")
	}
	if ask.Mode != mcp.ElicitationModeURL || !strings.HasPrefix(ask.URL, fmt.Sprintf("http://127.0.0.1:%d/ask/", port)) {
		t.Fatalf("the elicitation: %+v", ask)
	}
	person := logIn(t, one.f, port) // logged in on the console the first server serves
	page, csrf := person.open(ask.URL)
	if code, body := person.press(page, csrf, "allow_once"); code != 200 {
		t.Fatalf("answering on the ask's page: %d %q", code, body)
	}
	if res := <-done; res.IsError || text(res) != "from "+two.f.Root+"\n" {
		t.Fatalf("the joined server's call: %q", text(res))
	}
	if l := lastDecision(t, two.f, "read_file"); l["reason_code"] != "approved" || l["approval_channel"] != "console" {
		t.Fatalf("the joined server's audit: %v", l)
	}
}
