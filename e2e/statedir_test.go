package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// tokenConfig writes a config with the approval console on, the audit log
// at audit and [sandbox] readable = readable (a folder standing in for a
// system folder such as /opt), and returns the fixture.
func tokenConfig(t *testing.T, port int, network string, audit func(f *fixture) string, readable func(f *fixture) string) *fixture {
	t.Helper()
	f := newFixture(t, "")
	sys, a := readable(f), audit(f)
	for _, d := range []string{sys, filepath.Dir(a)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("workspace = %q\nprofile = \"interactive-dev\"\n\n[sandbox]\nnetwork = %q\nreadable = [%q]\n\n[approval]\nconsole = \"127.0.0.1:%d\"\n\n[audit]\npath = %q\n",
		f.Workspace, network, sys, port, a)
	if err := os.WriteFile(f.Config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	f.Audit = a
	return f
}

// TestConsoleTokenOutOfReach: wherever the audit log is — the workspace,
// /tmp, a system folder (a [sandbox] readable root stands in for one) —
// the console token is in the user's state folder, mode 0700, and a
// command reads it neither there nor beside the audit log.
func TestConsoleTokenOutOfReach(t *testing.T) {
	places := map[string]func(f *fixture) string{
		"workspace":     func(f *fixture) string { return filepath.Join(f.Workspace, "audit.jsonl") },
		"tmp":           func(f *fixture) string { return filepath.Join(f.Root, "audit.jsonl") },
		"system folder": func(f *fixture) string { return filepath.Join(f.Root, "opt", "onellm", "audit.jsonl") },
	}
	for name, audit := range places {
		t.Run(name, func(t *testing.T) {
			f := tokenConfig(t, freePort(t), "none", audit, func(f *fixture) string { return filepath.Join(f.Root, "opt") })
			c := stdioClient(t, f, Legacy)
			tok, err := os.ReadFile(f.consoleToken())
			if err != nil || len(strings.TrimSpace(string(tok))) < 16 {
				t.Fatalf("console token: %q %v", tok, err)
			}
			if fi, err := os.Stat(filepath.Dir(f.consoleToken())); err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("state folder: %v %v, want mode 0700", fi.Mode(), err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f.Audit), "console.token")); err == nil {
				t.Fatalf("a token file lies beside the audit log")
			}
			cmd := fmt.Sprintf("cat %s; cat %s; ls %s; exit 0", f.consoleToken(), filepath.Join(filepath.Dir(f.Audit), "console.token"), filepath.Dir(f.consoleToken()))
			res := call(t, c, "execute_terminal_command", map[string]any{"command": cmd})
			if strings.Contains(text(res), strings.TrimSpace(string(tok))) {
				t.Fatalf("a command read the console token: %s", text(res))
			}
			res = call(t, c, "read_file", map[string]any{"path": f.consoleToken()})
			if !res.IsError || strings.Contains(text(res), strings.TrimSpace(string(tok))) || !strings.Contains(text(res), "protected_path") {
				t.Fatalf("read_file of the token: %s", text(res))
			}
		})
	}
}

// TestServeRefusesReachableStateFolder: when the state folder lies under a
// root a tool reads, the server does not start.
func TestServeRefusesReachableStateFolder(t *testing.T) {
	f := tokenConfig(t, freePort(t), "none", func(f *fixture) string { return filepath.Join(f.Root, "audit.jsonl") },
		func(f *fixture) string { return f.Root }) // HOME is f.Root: the state folder is under a readable root
	cmd := runServe(t, f)
	if cmd.code == 0 || !strings.Contains(cmd.stderr, "state folder") || !strings.Contains(cmd.stderr, "a tool could read it") {
		t.Fatalf("serve started or said something else: exit %d, stderr %q", cmd.code, cmd.stderr)
	}
	if _, err := os.Stat(f.consoleToken()); err == nil {
		t.Fatalf("the token was written anyway")
	}
}

// TestCommandCannotAnswerPendingAsk: the approval-forgery path. With the
// host's network, a command tries to read the console token (in the state
// folder, and beside an audit log in a folder commands read) and to answer
// a pending ask of the same server through the console. The ask stays
// pending until the person answers it.
func TestCommandCannotAnswerPendingAsk(t *testing.T) {
	needCurl(t)
	port := freePort(t)
	f := tokenConfig(t, port, "full", func(f *fixture) string { return filepath.Join(f.Root, "opt", "onellm", "audit.jsonl") },
		func(f *fixture) string { return filepath.Join(f.Root, "opt") })
	c := stdioClient(t, f, Legacy) // no elicitation: the console is the only channel
	cc := openConsole(t, f, port)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- call(t, c, "ask_user", map[string]any{"question": "deploy?"}) }()
	s := cc.waitPending(1)
	id := s.Pending[0].ID
	attack := fmt.Sprintf(`T=$(cat %s 2>/dev/null || cat %s 2>/dev/null); echo "token length ${#T}"
for h in "Authorization: Bearer $T" "Cookie: x=y"; do
  curl -s -o /dev/null -w 'state %%{http_code}\n' -H "$h" http://127.0.0.1:%d/api/state
  curl -s -o /dev/null -w 'decide %%{http_code}\n' -H "$h" -H 'Origin: http://127.0.0.1:%d' -d 'id=%s&action=accept&answer=yes' http://127.0.0.1:%d/api/decide
done; exit 0`, f.consoleToken(), filepath.Join(filepath.Dir(f.Audit), "console.token"), port, port, id, port)
	// The person lets the command run (a curl with the host's network
	// asks), not knowing what it tries.
	ran := make(chan *mcp.CallToolResult, 1)
	go func() {
		ran <- call(t, c, "execute_terminal_command", map[string]any{"command": attack, "timeout_seconds": 20})
	}()
	for _, p := range cc.waitPending(2).Pending {
		if p.Tool == "execute_terminal_command" {
			if code := cc.decide(url.Values{"id": {p.ID}, "decision": {"allow_once"}}); code != 200 {
				t.Fatalf("approving the command: %d", code)
			}
		}
	}
	out := text(<-ran)
	if !strings.Contains(out, "token length 0") || strings.Contains(out, "decide 200") || strings.Contains(out, "state 200") {
		t.Fatalf("the command got at the console: %s", out)
	}
	if !strings.Contains(out, "state 401") && !strings.Contains(out, "state 403") {
		t.Fatalf("the command did not reach the console at all (the test proves nothing): %q", out)
	}
	select {
	case r := <-done:
		t.Fatalf("the ask was answered by the command: %s", text(r))
	default:
	}
	if s := cc.state(); len(s.Pending) != 1 || s.Pending[0].ID != id {
		t.Fatalf("the ask is no longer pending: %+v", s)
	}
	if code := cc.decide(url.Values{"id": {id}, "action": {"decline"}}); code != 200 {
		t.Fatalf("the person's answer: %d", code)
	}
	if r := <-done; !strings.Contains(text(r), "decline") {
		t.Fatalf("ask_user after the person declined: %s", text(r))
	}
}

type served struct {
	code   int
	stderr string
}

// runServe runs `serve` on the fixture's config with stdin closed (a server
// that starts ends at end of input) and returns its exit code and stderr.
func runServe(t *testing.T, f *fixture) served {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--config", f.Config)
	cmd.Env = append(os.Environ(), "HOME="+f.Root, "XDG_STATE_HOME=")
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return served{code: code, stderr: errb.String()}
}

// TestStateFolderHiddenInsideRoots: with no console the server may start
// with its state folder inside the workspace (HOME is the workspace); the
// folder is then hidden from commands, and no tool reads it.
func TestStateFolderHiddenInsideRoots(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	f.Env = append(f.Env, "HOME="+f.Workspace)
	key := f.write(t, filepath.Join(f.Workspace, ".local", "state", "onellm-mcp", "key"), "k3y-material\n")
	c := stdioClient(t, f, Legacy)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": "cat .local/state/onellm-mcp/key; ls -la .local/state/onellm-mcp; grep -r k3y . ; echo done"})
	if strings.Contains(text(res), "k3y-material") || !strings.Contains(text(res), "done") {
		t.Fatalf("a command read the state folder: %s", text(res))
	}
	res = call(t, c, "read_file", map[string]any{"path": key})
	if !res.IsError || !strings.Contains(text(res), "protected_path") {
		t.Fatalf("read_file in the state folder: %s", text(res))
	}
}
