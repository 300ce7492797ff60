package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// TestExecGateRefusesOverStdio: a line the policy allows runs a script that
// calls a program a deny rule names; the exec gate kills that program
// before it runs, the result lists it with its rule and reason, and the
// audit log has its decision with the call id on the sandbox surface.
func TestExecGateRefusesOverStdio(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-rm"
capability = "process.exec"
target     = { resource = "rm" }
`)
	victim := f.write(t, "victim.txt", "keep me\n")
	script := f.write(t, "clean.sh", "#!/bin/sh\nrm "+victim+"\necho rc=$?\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, f, Legacy)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": "./clean.sh"})
	var out struct {
		Stdout          string   `json:"stdout"`
		RefusedPrograms []string `json:"refused_programs"`
	}
	structured(t, res, &out)
	if out.Stdout != "rc=137\n" || len(out.RefusedPrograms) != 1 ||
		!strings.Contains(out.RefusedPrograms[0], "process.exec `rm ") || !strings.Contains(out.RefusedPrograms[0], "rule no-rm") {
		t.Fatalf("result: %s", text(res))
	}
	if !strings.Contains(text(res), "programs refused by the policy") {
		t.Errorf("the text does not list the refused program: %s", text(res))
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("rm ran: %v", err)
	}
	var call, line string
	for _, l := range f.auditLines(t) {
		tgt, _ := l["target"].(map[string]any)
		if l["event"] == "decision" && l["rule_id"] == "no-rm" && l["effect"] == "deny" &&
			l["execution_surface"] == "sandbox" && tgt["resource"] == "rm" {
			call, _ = l["call"].(string)
			line = tgt["command"].(string)
		}
	}
	if call == "" || line != "rm "+victim {
		t.Fatalf("no exec-time deny of rm in the audit log: %v", f.auditLines(t))
	}
	// The same call's upfront decision of the line carries the same id.
	same := false
	for _, l := range f.auditLines(t) {
		tgt, _ := l["target"].(map[string]any)
		if l["call"] == call && tgt["command"] == "./clean.sh" {
			same = true
		}
	}
	if !same {
		t.Errorf("the exec-time decision's call %s is not the line's", call)
	}
}

// TestExecGateAskRuleOverStdio: a program an ask rule names runs at exec
// time only when that exact request was approved in the same call or is
// remembered for the session; otherwise it is killed (approval_unavailable).
func TestExecGateAskRuleOverStdio(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"

[[rules.ask]]
rule_id     = "ask-push"
capability  = "process.exec"
target      = { command = "git push*" }
constraints = { approval_expires_seconds = 600 }
`)
	// A repository of the person's whose ssh command is false: an allowed
	// push fails as git does (128, no connection made), a killed one is 137. (Outside any repository a
	// workspace in /tmp would have the sandbox's private /tmp above it,
	// where the command could make the repository a push reads.)
	init := exec.Command("sh", "-c", "git init -q -b main . && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m init && git remote add origin git@example.invalid:x/y.git && git config core.sshCommand false")
	init.Dir = f.Workspace
	if b, err := init.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, b)
	}
	script := f.write(t, "push.sh", "#!/bin/sh\ngit push origin main\necho rc=$?\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &elicitor{answer: decide("deny")}
	c := stdioClient(t, f, Legacy, client.WithElicitationHandler(e))
	type result struct {
		Stdout          string   `json:"stdout"`
		RefusedPrograms []string `json:"refused_programs"`
	}
	run := func(line string) result {
		t.Helper()
		var out result
		structured(t, call(t, c, "execute_terminal_command", map[string]any{"command": line}), &out)
		return out
	}
	// Not asked for in the line, not remembered: killed at its exec.
	if out := run("./push.sh"); out.Stdout != "rc=137\n" || len(out.RefusedPrograms) != 1 ||
		!strings.Contains(out.RefusedPrograms[0], "rule ask-push") || !strings.Contains(out.RefusedPrograms[0], "approval_unavailable") {
		t.Fatalf("unapproved push from a script: %+v", out)
	}
	// Approved once in the call: the line's own git push runs (and fails
	// as git does when ssh fails, 128), not killed.
	e.answer = decide("allow_once")
	if out := run("git push origin main; echo rc=$?"); out.Stdout != "rc=128\n" || len(out.RefusedPrograms) != 0 {
		t.Fatalf("push approved in the call: %+v", out)
	}
	// An approval holds in the folder it was given for: the same words a
	// script runs in another folder are killed (review rev20c M2); after a
	// cd the line cannot read (cd "$d"), wherever the program runs.
	if out := run("mkdir -p sub; git push origin main; echo rc=$?; cd sub && ../push.sh"); out.Stdout != "rc=128\nrc=137\n" || len(out.RefusedPrograms) != 1 {
		t.Fatalf("an approval in the workspace held for a push in sub: %+v", out)
	}
	if out := run(`d=sub; cd "$d" && git push origin main; echo rc=$?`); out.Stdout != "rc=128\n" || len(out.RefusedPrograms) != 0 {
		t.Fatalf("push after cd \"$d\", approved: %+v", out)
	}
	// allow_once is not remembered: the script's push is killed again.
	if out := run("./push.sh"); out.Stdout != "rc=137\n" {
		t.Fatalf("allow_once remembered: %+v", out)
	}
	// Approved for the session: the same request started by a script runs.
	e.answer = decide("allow_for_session")
	if out := run("git push origin main; echo rc=$?"); out.Stdout != "rc=128\n" {
		t.Fatalf("push approved for the session: %+v", out)
	}
	if out := run("./push.sh"); out.Stdout != "rc=128\n" || len(out.RefusedPrograms) != 0 {
		t.Fatalf("push remembered for the session, from a script: %+v", out)
	}
	// A program the command wrote and called git gets neither approval,
	// the session's nor this call's own (the line's real push runs, 128):
	// a script, a copy of another program, a copy of git itself.
	for _, make := range []string{
		"printf '#!/bin/sh\\necho fake\\n' >fake/git && chmod +x fake/git",
		"cp /usr/bin/true fake/git",
		"cp \"$(command -v git)\" fake/git",
	} {
		out := run("mkdir -p fake && " + make + "; printf 'fake/git push origin main\\n' >p2.sh; git push origin main; echo rc=$?; sh p2.sh; echo rc=$?")
		if out.Stdout != "rc=128\nrc=137\n" || len(out.RefusedPrograms) != 1 ||
			!strings.Contains(out.RefusedPrograms[0], "rule ask-push") || !strings.Contains(out.RefusedPrograms[0], "fake/git") {
			t.Errorf("%s: a written git rode the approval: %+v", make, out)
		}
	}
	// A line that names the written program asks for it by its path
	// (written in the sandbox: …/fake/git): approved, it runs in this call
	// (review rev20d M3: the copy of git fails as git does, 128),
	// and is not remembered for the session: the file
	// may hold something else by the next call.
	if out := run("fake/git push origin main; echo rc=$?"); out.Stdout != "rc=128\n" || len(out.RefusedPrograms) != 0 {
		t.Errorf("the line's approved fake/git did not run: %+v", out)
	}
	if out := run("sh p2.sh; echo rc=$?"); out.Stdout != "rc=137\n" || len(out.RefusedPrograms) != 1 {
		t.Errorf("the approval of a written program was remembered for the session: %+v", out)
	}
	// The audit log names the written program's path (target.exe).
	written := false
	for _, l := range f.auditLines(t) {
		tgt, _ := l["target"].(map[string]any)
		if exe, _ := tgt["exe"].(string); l["stage"] == "exec" && strings.HasSuffix(exe, "/fake/git") && l["effect"] == "deny" {
			written = true
		}
	}
	if !written {
		t.Errorf("no exec-time decision with target.exe of the written git in the audit log")
	}
}
