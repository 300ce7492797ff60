package shelltool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/testkit"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/webtools"
)

// fixture is a started tool under a policy compiled from src, in a fresh
// workspace.
type fixture struct {
	tool *Tool
	p    *grants.Policy
	root string
	ws   string
}

func newFixture(t testing.TB, src string) fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello\n"), 0o644)
	cfg, err := grants.Parse([]byte(src+fmt.Sprintf("\n[audit]\npath = %q\n", filepath.Join(root, "audit.jsonl"))), filepath.Join(root, "c.toml"), ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	tool := &Tool{}
	tool.Start(p)
	if _, _, err := tool.state(); err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("the sandbox cannot be applied here: %v", err)
	} else if err != nil {
		t.Skipf("the sandbox cannot be applied here: %v", err)
	}
	t.Cleanup(func() {
		if tool.runner != nil {
			tool.runner.Close()
		}
	})
	return fixture{tool: tool, p: p, root: root, ws: ws}
}

// allowAll is a mid-action gate that allows everything (with private
// addresses) and records what it was asked.
type allowAll struct {
	mu   sync.Mutex
	seen []grants.Request
}

func (g *allowAll) decide(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
	g.mu.Lock()
	g.seen = append(g.seen, r)
	g.mu.Unlock()
	return grants.Decision{Request: r, Effect: grants.Allow, Reason: grants.ReasonMatchedAllow, AllowPrivate: true}, nil
}

func (f fixture) plan(t *testing.T, args map[string]any) (*toolkit.Plan, *toolkit.Env, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	env := envFor(f, &allowAll{})
	plan, err := f.tool.Plan(context.Background(), env, raw)
	return plan, env, err
}

// envFor is a call's environment under f's policy with g as its mid-action
// gate.
func envFor(f fixture, g *allowAll) *toolkit.Env {
	return &toolkit.Env{Policy: f.p, Principal: "stdio", MidAction: g.decide}
}

// grantAll is the grant of a plan whose every request was allowed.
func grantAll(plan *toolkit.Plan) toolkit.Grant {
	var g toolkit.Grant
	for _, r := range plan.Requests {
		g.Decisions = append(g.Decisions, grants.Decision{Request: r, Effect: grants.Allow, Reason: grants.ReasonMatchedAllow})
	}
	return g
}

func output(t *testing.T, res toolkit.Result) Output {
	t.Helper()
	var out Output
	b, _ := json.Marshal(res.Tool.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestPlanArguments: bad arguments are refused before anything is decided,
// and a good line becomes one request per command and redirection.
func TestPlanArguments(t *testing.T) {
	t.Setenv("ONELLM_TEST_TOKEN", "tok-value-123456") // a secret with no value is refused at plan (TestSecretWithoutValue)
	f := newFixture(t, `profile = "interactive-dev"
[secrets.tok]
env   = "ONELLM_TEST_TOKEN"
hosts = ["api.test"]
`)
	tests := []struct {
		name string
		args map[string]any
		err  string   // an *ArgError containing this, or "" for a plan
		reqs []string // capability and resource/path of each request
	}{
		{"no command", map[string]any{"command": "  "}, "required", nil},
		{"negative timeout", map[string]any{"command": "true", "timeout_seconds": -1}, "positive", nil},
		{"timeout over the cap", map[string]any{"command": "true", "timeout_seconds": 100000}, "over the limit", nil},
		{"missing cwd", map[string]any{"command": "true", "cwd": "nowhere"}, "does not exist", nil},
		{"unknown secret", map[string]any{"command": "true", "secrets": []string{"nope"}}, "not configured", nil},
		{"unparsable line", map[string]any{"command": "echo 'unterminated"}, "command:", nil},
		{"unknown argument", map[string]any{"command": "true", "shell": "zsh"}, "unknown argument", nil},
		{"pipeline", map[string]any{"command": "cat hello.txt | wc -l"}, "", []string{"process.exec cat", "process.exec wc"}},
		{"redirections", map[string]any{"command": "echo x > out.txt < hello.txt"}, "",
			[]string{"process.exec echo", "workspace.files.write $WS/out.txt", "workspace.files.read $WS/hello.txt"}},
		{"network redirection", map[string]any{"command": "echo x > /dev/tcp/127.0.0.1/80"}, "",
			[]string{"process.exec echo", "process.exec bash"}},
		{"dynamic redirection", map[string]any{"command": "echo x > $F"}, "", []string{"process.exec echo", "process.exec <dynamic>"}},
		{"cwd beneath the workspace", map[string]any{"command": "true", "cwd": "sub"}, "",
			[]string{"workspace.files.read $WS/sub", "process.exec true"}},
		{"secret", map[string]any{"command": "true", "secrets": []string{"tok"}}, "", []string{"process.exec true", "secret.use tok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, _, err := f.plan(t, tt.args)
			if tt.err != "" {
				var ae *toolkit.ArgError
				if !errors.As(err, &ae) || !strings.Contains(ae.Msg, tt.err) {
					t.Fatalf("error %v, want an argument error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range plan.Requests {
				what := r.Target.Resource
				if r.Capability.IsFile() {
					what = strings.Replace(r.Target.Path, f.ws, "$WS", 1)
				}
				got = append(got, string(r.Capability)+" "+what)
			}
			if strings.Join(got, "; ") != strings.Join(tt.reqs, "; ") {
				t.Fatalf("requests %q, want %q", got, tt.reqs)
			}
		})
	}
}

// TestPlanReadsNoSecret: planning a call reads no secret's content. The
// secret's file is a named pipe: opening it to read blocks until someone
// writes, so a Plan that read it would never return. (Plan checks that the
// secret is available, which for a pipe is only that it exists.) The pipe
// is then removed: the run cannot read the secret, fails and runs nothing.
func TestPlanReadsNoSecret(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "onellm-token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, `profile = "interactive-dev"
[secrets.tok]
file  = "`+fifo+`"
hosts = ["api.test"]
`)
	type planned struct {
		plan *toolkit.Plan
		err  error
	}
	done := make(chan planned, 1)
	go func() {
		plan, _, err := f.plan(t, map[string]any{"command": "touch ran", "secrets": []string{"tok"}})
		done <- planned{plan, err}
	}()
	var got planned
	select {
	case got = <-done:
	case <-time.After(10 * time.Second): // a failure bound, not a speed target
		w, _ := os.OpenFile(fifo, os.O_WRONLY, 0) // let the stuck read end
		w.Close()
		t.Fatal("planning opened the secret's file to read it")
	}
	if got.err != nil {
		t.Fatalf("planning: %v", got.err)
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	res := got.plan.Run(context.Background(), grantAll(got.plan))
	if !res.Tool.IsError || !strings.Contains(text(res.Tool), "cannot be read") {
		t.Fatalf("result %q", text(res.Tool))
	}
	if _, err := os.Stat(filepath.Join(f.ws, "ran")); err == nil {
		t.Fatal("the command ran without its secret")
	}
}

// TestRunGranted: Run does what was granted and nothing else: a secret
// whose secret.use is not in the grant stops the run; a granted one is in
// the command's environment and redacted from its output.
func TestRunGranted(t *testing.T) {
	t.Setenv("ONELLM_TEST_TOKEN", "tok-value-123456")
	f := newFixture(t, `profile = "interactive-dev"
[secrets.tok]
env   = "ONELLM_TEST_TOKEN"
hosts = ["api.test"]
`)
	plan, _, err := f.plan(t, map[string]any{"command": "echo \"$ONELLM_TEST_TOKEN\"; cat hello.txt", "secrets": []string{"tok"}})
	if err != nil {
		t.Fatal(err)
	}
	g := grantAll(plan)
	withoutSecret := toolkit.Grant{Decisions: g.Decisions[:len(g.Decisions)-1]}
	if res := plan.Run(context.Background(), withoutSecret); !res.Tool.IsError || !strings.Contains(text(res.Tool), "not granted") {
		t.Fatalf("ungranted secret: %q", text(res.Tool))
	}
	res := plan.Run(context.Background(), g)
	out := output(t, res)
	if out.ExitCode != 0 || out.Stdout != sandbox.RedactedMarker+"\nhello\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", out.ExitCode, out.Stdout, out.Stderr)
	}
	if res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 {
		t.Fatalf("outcome %+v", res.Outcome)
	}
}

// TestRunChecksCwd: the working folder is checked when the command runs
// (Plan does not stat it): a file is refused and nothing runs.
func TestRunChecksCwd(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	plan, _, err := f.plan(t, map[string]any{"command": "pwd", "cwd": "hello.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if res := plan.Run(context.Background(), grantAll(plan)); !res.Tool.IsError || !strings.Contains(text(res.Tool), "not an existing folder") {
		t.Fatalf("result %q", text(res.Tool))
	}
	plan, _, err = f.plan(t, map[string]any{"command": "pwd; exit 3", "cwd": "sub"})
	if err != nil {
		t.Fatal(err)
	}
	res := plan.Run(context.Background(), grantAll(plan))
	if out := output(t, res); out.ExitCode != 3 || strings.TrimSpace(out.Stdout) != filepath.Join(f.ws, "sub") || !res.Tool.IsError {
		t.Fatalf("exit %d, stdout %q", out.ExitCode, out.Stdout)
	}
}

// TestHiddenCredentialsAreDecided: the credential files a command would be
// kept from are decided through the call's gate (so they are audited), and
// hidden unless the gate allows them.
func TestHiddenCredentialsAreDecided(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	os.WriteFile(filepath.Join(f.ws, ".env"), []byte("SECRET=1\n"), 0o600)
	raw, _ := json.Marshal(map[string]any{"command": "cat .env"})
	var seen []grants.Request
	var mu sync.Mutex
	deny := func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		if !r.Capability.IsFile() { // the programs the command execs
			return grants.Decision{Request: r, Effect: grants.Allow, Reason: grants.ReasonMatchedAllow}, nil
		}
		mu.Lock()
		seen = append(seen, r)
		mu.Unlock()
		d := grants.Decision{Request: r, Effect: grants.Deny, Reason: grants.ReasonMatchedDeny, RuleID: grants.RuleDenyCredentialFlow}
		return d, &toolkit.MidActionRefused{Decision: d}
	}
	env := &toolkit.Env{Policy: f.p, Principal: "stdio", MidAction: deny}
	plan, err := f.tool.Plan(context.Background(), env, raw)
	if err != nil {
		t.Fatal(err)
	}
	res := plan.Run(context.Background(), grantAll(plan))
	if out := output(t, res); out.ExitCode == 0 || strings.Contains(out.Stdout, "SECRET") {
		t.Fatalf("a hidden credential was read: exit %d %q", out.ExitCode, out.Stdout)
	}
	if len(seen) != 1 || seen[0].Target.Path != filepath.Join(f.ws, ".env") || !seen[0].HasClass(grants.DataCredential) {
		t.Fatalf("gate saw %+v", seen)
	}
}

// TestHiddenReplacedStops: a hidden credential file the host replaces by a
// rename while the command reads it stops the command, and the result says
// so, with no output.
func TestHiddenReplacedStops(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	env := filepath.Join(f.ws, ".env")
	os.WriteFile(env, []byte("OLD=1\n"), 0o600)
	raw, _ := json.Marshal(map[string]any{"command": "touch started; while :; do read -r l < .env && echo \"$l\"; done 2>/dev/null", "timeout_seconds": 120})
	deny := func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		if !r.Capability.IsFile() {
			return grants.Decision{Request: r, Effect: grants.Allow, Reason: grants.ReasonMatchedAllow}, nil
		}
		d := grants.Decision{Request: r, Effect: grants.Deny, Reason: grants.ReasonMatchedDeny, RuleID: grants.RuleDenyCredentialFlow}
		return d, &toolkit.MidActionRefused{Decision: d}
	}
	plan, err := f.tool.Plan(context.Background(), &toolkit.Env{Policy: f.p, Principal: "stdio", MidAction: deny}, raw)
	if err != nil {
		t.Fatal(err)
	}
	res := runAndReplaceOnHost(t, f.ws, plan, env)
	out := output(t, res)
	want := "stopped: " + env + " was replaced or removed on the host while the command ran; the command was killed so it could not read it (its output was dropped)"
	if !strings.HasPrefix(text(res.Tool), want) || out.Stopped == "" || out.Stdout != "" || !res.Tool.IsError {
		t.Fatalf("got %q %+v", text(res.Tool), out)
	}
}

// TestStoppedResultHasNoCommandText: a stopped command may have read a file
// renamed in over a hidden one, so its result carries nothing it chose:
// not the argv of a program the policy refused, not the name of a
// repository it made, only their counts.
func TestStoppedResultHasNoCommandText(t *testing.T) {
	needProgram(t, "git")
	f := newFixture(t, `profile = "interactive-dev"`)
	env := filepath.Join(f.ws, ".env")
	os.WriteFile(env, []byte("OLD=1\n"), 0o600)
	cmd := `/bin/true LEAKMARK-argv; git init -q LEAKMARK-repo; touch started; while :; do read -r l < .env && echo "$l"; done 2>/dev/null`
	raw, _ := json.Marshal(map[string]any{"command": cmd, "timeout_seconds": 120})
	decide := func(_ context.Context, r grants.Request, st grants.Stage) (grants.Decision, error) {
		if r.Capability.IsFile() || st == grants.StageExec && strings.Contains(r.Target.Command, "LEAKMARK-argv") {
			d := grants.Decision{Request: r, Effect: grants.Deny, Reason: grants.ReasonMatchedDeny, RuleID: "no-mark"}
			return d, &toolkit.MidActionRefused{Decision: d}
		}
		return grants.Decision{Request: r, Effect: grants.Allow, Reason: grants.ReasonMatchedAllow}, nil
	}
	plan, err := f.tool.Plan(context.Background(), &toolkit.Env{Policy: f.p, Principal: "stdio", MidAction: decide}, raw)
	if err != nil {
		t.Fatal(err)
	}
	res := runAndReplaceOnHost(t, f.ws, plan, env)
	out := output(t, res)
	blob, _ := json.Marshal(out)
	if out.Stopped == "" || strings.Contains(text(res.Tool)+string(blob), "LEAKMARK") || len(out.RefusedPrograms) != 0 {
		t.Fatalf("a stopped command's text reached the result: %q %s", text(res.Tool), blob)
	}
	if !strings.Contains(text(res.Tool), "0 egress proxy decisions, 1 programs refused by the policy") {
		t.Errorf("the counts are missing: %q", text(res.Tool))
	}
}

// TestNotStarted: a tool the server did not start plans nothing, whatever
// [sandbox] required says: whether the sandbox works is unknown.
func TestNotStarted(t *testing.T) {
	for _, required := range []string{"true", "false"} {
		f := newFixture(t, "profile = \"interactive-dev\"\n[sandbox]\nrequired = "+required+"\n")
		raw, _ := json.Marshal(map[string]any{"command": "true"})
		_, err := (&Tool{}).Plan(context.Background(), &toolkit.Env{Policy: f.p}, raw)
		var rf *toolkit.Refusal
		if !errors.As(err, &rf) || rf.Reason != grants.ReasonSandboxUnavailable || !strings.Contains(rf.Msg, "not started") {
			t.Fatalf("required=%s: %v", required, err)
		}
	}
}

// TestSandboxUnavailable: when the probe failed, a required sandbox refuses
// (sandbox_unavailable) and an optional one runs on the host, decided for
// surface host.
func TestSandboxUnavailable(t *testing.T) {
	for _, tt := range []struct {
		required string
		refused  bool
	}{{"true", true}, {"false", false}} {
		f := newFixture(t, "profile = \"interactive-dev\"\n[sandbox]\nrequired = "+tt.required+"\n")
		broken := &Tool{started: true, probeErr: fmt.Errorf("%w: no landlock (test)", sandbox.ErrUnavailable)}
		raw, _ := json.Marshal(map[string]any{"command": "echo on-host"})
		plan, err := broken.Plan(context.Background(), &toolkit.Env{Policy: f.p}, raw)
		if tt.refused {
			var rf *toolkit.Refusal
			if !errors.As(err, &rf) || rf.Reason != grants.ReasonSandboxUnavailable {
				t.Fatalf("required: %v", err)
			}
			continue
		}
		if err != nil || plan.Requests[0].Surface != grants.SurfaceHost {
			t.Fatalf("optional: %v %+v", err, plan)
		}
		res := plan.Run(context.Background(), grantAll(plan))
		if out := output(t, res); out.Stdout != "on-host\n" {
			t.Fatalf("host run: %q %q", out.Stdout, text(res.Tool))
		}
	}
}

// TestEgressThroughTheGate: with [sandbox] network = "proxy" each
// destination goes through the call's mid-action gate as network.http.*,
// and the result lists what the proxy decided.
func TestEgressThroughTheGate(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "upstream says hi") })}
	go srv.Serve(up)
	defer srv.Close()
	f := newFixture(t, "profile = \"interactive-dev\"\n[sandbox]\nnetwork = \"proxy\"\n")
	port := up.Addr().(*net.TCPAddr).Port
	line := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d; printf 'GET http://127.0.0.1:%d/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3; cat <&3`, sandbox.ProxyPort, port)
	raw, _ := json.Marshal(map[string]any{"command": line})
	g := &allowAll{}
	env := &toolkit.Env{Policy: f.p, Principal: "stdio", MidAction: g.decide}
	plan, err := f.tool.Plan(context.Background(), env, raw)
	if err != nil {
		t.Fatal(err)
	}
	out := output(t, plan.Run(context.Background(), grantAll(plan)))
	if !strings.Contains(out.Stdout, "upstream says hi") || len(out.Egress) != 1 || !strings.Contains(out.Egress[0], "allowed") {
		t.Fatalf("stdout %q stderr %q egress %q", out.Stdout, out.Stderr, out.Egress)
	}
	var hops []grants.Request
	for _, r := range g.seen {
		if r.Capability.IsNetwork() {
			hops = append(hops, r)
		}
	}
	if len(hops) != 1 || hops[0].Capability != grants.CapHTTPGet || hops[0].Target.Port != port || hops[0].Target.ToolName != Name {
		t.Fatalf("gate saw %+v", g.seen)
	}
}

// TestResultLinesBound: the result lists at most maxResultLines lines
// (destinations, refused programs), then how many more.
func TestResultLinesBound(t *testing.T) {
	var l lineLog
	for i := range maxResultLines + 5 {
		l.add(webtoolsEvent(i).String())
	}
	got := l.list()
	if len(got) != maxResultLines+1 || got[maxResultLines] != "(5 more)" {
		t.Fatalf("egress lines %q", got)
	}
}

// TestDefinition: the description says what the policy lets a command
// reach, for each network mode.
func TestDefinition(t *testing.T) {
	for mode, want := range map[string]string{"none": "it has no network", "full": "the host's network", "proxy": "its only network is an HTTP proxy"} {
		f := newFixture(t, "profile = \"interactive-dev\"\n[sandbox]\nnetwork = \""+mode+"\"\nrequired = false\n")
		d := f.tool.Definition(f.p)
		if !strings.Contains(d.Description, want) || !strings.Contains(d.Description, f.ws) || !strings.Contains(d.Description, "runs on the host") {
			t.Errorf("%s: %q", mode, d.Description)
		}
	}
	if reqs, err := LineRequests(newFixture(t, `profile = "interactive-dev"`).p, "git push", "/", grants.SurfaceSandbox); err != nil || len(reqs) != 1 || reqs[0].Target.Resource != "git" {
		t.Fatalf("LineRequests: %v %+v", err, reqs)
	}
}

func webtoolsEvent(i int) webtools.ProxyEvent {
	return webtools.ProxyEvent{Method: "GET", Host: "h.test", Port: 80 + i, Path: "/", Allowed: true}
}

// TestLineRequestsDecideBaseNames: a program the line names by a path is
// decided by its base name too when a deny or ask rule names that program,
// so `deny curl` holds for `/usr/bin/curl` and `./curl` before the line
// runs (and on the host, where no exec gate runs); a program no rule names
// is decided once.
func TestLineRequestsDecideBaseNames(t *testing.T) {
	ws := t.TempDir()
	p := policyFor(t, ws, `profile = "interactive-dev"
[[rules.deny]]
rule_id = "no-curl"
capability = "process.exec"
target = { resource = "curl" }
[[rules.deny]]
rule_id = "no-kubectl-delete"
capability = "process.exec"
target = { command = "kubectl delete*" }
[[rules.ask]]
rule_id = "ask-push"
capability = "process.exec"
target = { command = "git push*" }
[[rules.deny]]
rule_id = "no-perl"
capability = "process.exec"
target = { resource = "perl" }
[[rules.deny]]
rule_id = "no-python3"
capability = "process.exec"
target = { command = "python3 -c*" }
`)
	for _, tc := range []struct {
		line    string
		surface grants.Surface
		want    grants.Effect
		rule    string
		n       int
	}{
		{"curl x", grants.SurfaceSandbox, grants.Deny, "no-curl", 1},
		{"/usr/bin/curl x", grants.SurfaceSandbox, grants.Deny, "no-curl", 2},
		{"./curl x", grants.SurfaceSandbox, grants.Deny, "no-curl", 2},
		{"/usr/bin/curl x", grants.SurfaceHost, grants.Deny, "no-curl", 2},
		{"/usr/local/bin/kubectl delete pod p", grants.SurfaceSandbox, grants.Deny, "no-kubectl-delete", 2},
		{"/usr/local/bin/kubectl get pods", grants.SurfaceSandbox, grants.Allow, "", 2},
		{"/usr/bin/git push origin main", grants.SurfaceSandbox, grants.Ask, "ask-push", 2},
		{"./build.sh", grants.SurfaceSandbox, grants.Allow, "", 1},
		// git by its subcommand however reached, as the exec gate reads it.
		{"git -C . push origin main", grants.SurfaceSandbox, grants.Ask, "ask-push", 2},
		{"git --shallow-file x push origin", grants.SurfaceSandbox, grants.Ask, "ask-push", 2},
		{"git --shallow-file x push origin", grants.SurfaceHost, grants.Ask, "", 2}, // every host exec asks first
		{"git psuh origin", grants.SurfaceSandbox, grants.Ask, "ask-push", 2},
		{"git send-pack ../r.git main", grants.SurfaceSandbox, grants.Ask, "ask-push", 2},
		{"git receive-pack r.git", grants.SurfaceSandbox, grants.Ask, "ask-push", 2},
		{"git --later x push origin", grants.SurfaceSandbox, grants.Ask, "ask-push", 3},
		{"git status", grants.SurfaceSandbox, grants.Allow, "", 1},
		// A versioned or triplet-named program by its family (rev20c M1).
		{"perl5.36-x86_64-linux-gnu -e 1", grants.SurfaceSandbox, grants.Deny, "no-perl", 2},
		{"/usr/bin/perl5.36-x86_64-linux-gnu -e 1", grants.SurfaceHost, grants.Deny, "no-perl", 2},
		{"perl5.36.0 x.pl", grants.SurfaceSandbox, grants.Deny, "no-perl", 2},
		{"python3.11 -c 1", grants.SurfaceSandbox, grants.Deny, "no-python3", 2},
		{"python3.11 x.py", grants.SurfaceSandbox, grants.Allow, "", 2},
		// A program whose script is known only when run, by its own name.
		{"perl", grants.SurfaceSandbox, grants.Deny, "no-perl", 2},
		{"perl5.36 -e \"$x\"", grants.SurfaceSandbox, grants.Deny, "no-perl", 2},
		{"/usr/bin/perl -", grants.SurfaceHost, grants.Deny, "no-perl", 2},
	} {
		reqs, err := LineRequests(p, tc.line, ws, tc.surface)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		v := p.DecideAll(reqs)
		if v.Effect != tc.want || len(reqs) != tc.n {
			t.Errorf("%s (%s): %v with %d requests, want %v with %d", tc.line, tc.surface, v.Effect, len(reqs), tc.want, tc.n)
		}
		if tc.rule != "" && !slices.ContainsFunc(v.Decisions, func(d grants.Decision) bool { return d.RuleID == tc.rule }) {
			t.Errorf("%s: no decision by %s: %+v", tc.line, tc.rule, v.Decisions)
		}
		// The first request is the line's own words (what the person sees);
		// the base-name one has the words the exec gate will decide, so an
		// approval of it holds when the program runs.
		words := strings.Fields(tc.line)
		if !slices.Equal(reqs[0].Argv, words) {
			t.Errorf("%s: the line's request has argv %q", tc.line, reqs[0].Argv)
		}
		if tc.n == 2 && tc.surface == grants.SurfaceSandbox {
			ev := sandbox.ExecEvent{Exe: words[0], Argv: words, ExecPath: words[0], Cwd: ws}
			if strings.HasPrefix(words[0], "./") {
				ev.Written = ws + words[0][1:] // as the tracer marks it
			}
			if !slices.ContainsFunc(execRequests(ev, identity{}, ""), func(x grants.Request) bool { return x.KeyInCall() == reqs[1].KeyInCall() }) {
				t.Errorf("%s: the base-name request %q is not what the exec gate decides for it", tc.line, reqs[1].KeyInCall())
			}
		}
	}
}

// runAndReplaceOnHost runs plan, waits for its command to touch "started"
// in ws, then renames a new file over env on the host, as an editor saving
// it does, and returns the result.
func runAndReplaceOnHost(t *testing.T, ws string, plan *toolkit.Plan, env string) toolkit.Result {
	t.Helper()
	w := testkit.WatchDir(t, ws)
	done := make(chan toolkit.Result, 1)
	go func() { done <- plan.Run(context.Background(), grantAll(plan)) }()
	for deadline := time.Now().Add(60 * time.Second); ; w.Wait(100 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not start within 60 s")
		}
	}
	if err := os.WriteFile(env+".new", []byte("NEW=SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(env+".new", env); err != nil {
		t.Fatal(err)
	}
	return <-done
}

// TestLinePassedEnv: a variable [sandbox] env passes from the server's
// environment names the index the line's installer uses (review rev16c
// medium), unless the toolchains set it in its place on the sandbox
// surface (npm_config_registry is pinned there; on the host it is not).
func TestLinePassedEnv(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("PIP_INDEX_URL", "https://corp.example/simple")
	t.Setenv("npm_config_registry", "https://npm.corp.example/")
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[sandbox]\nenv = [\"PIP_INDEX_URL\", \"npm_config_registry\"]\n")
	for _, tc := range []struct {
		line    string
		surface grants.Surface
		host    string
	}{
		{"pip install x", grants.SurfaceSandbox, "corp.example"},
		{"pip install x", grants.SurfaceHost, "corp.example"},
		{"npm i lodash", grants.SurfaceSandbox, "registry.npmjs.org"},
		{"npm i lodash", grants.SurfaceHost, "npm.corp.example"},
	} {
		reqs, err := LineRequests(p, tc.line, ws, tc.surface)
		if err != nil {
			t.Fatal(err)
		}
		var hosts []string
		for _, r := range reqs {
			if r.Capability == grants.CapPackageInstall {
				hosts = append(hosts, r.Target.Host)
			}
		}
		if !slices.Equal(hosts, []string{tc.host}) {
			t.Errorf("%s (%s): hosts %q, want %s", tc.line, tc.surface, hosts, tc.host)
		}
	}
}
