package grants

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecideExec walks issue 20's exec-time rules for each profile: deny
// rules and protections deny, ask rules naming a program ask, critical risk
// asks, and everything else runs under the command line's decision.
func TestDecideExec(t *testing.T) {
	e := newEnv(t)
	const rules = `
[[rules.deny]]
rule_id    = "no-rm"
capability = "process.exec"
target     = { resource = "rm" }

[[rules.deny]]
rule_id    = "no-push"
capability = "process.exec"
target     = { command = "git push*" }

[[rules.ask]]
rule_id    = "ask-curl"
capability = "process.exec"
target     = { resource = "curl" }
constraints = { approval_expires_seconds = 60 }

[[rules.ask]]
rule_id    = "ask-medium"
capability = "process.exec"
conditions = { risk_level = ["medium"] }

[[rules.allow]]
rule_id    = "allow-make"
capability = "process.exec"
target     = { resource = "make" }

[[rules.ask]]
rule_id    = "ask-evil-index"
capability = "package.install"
target     = { host = "npm.evil.example" }

[[rules.deny]]
rule_id    = "no-event-stream"
capability = "package.install"
target     = { resource = "event-stream" }

[[rules.allow]]
rule_id    = "allow-left-pad"
capability = "package.install"
target     = { resource = "left-pad" }
`
	underLine := allowBy(RuleExecUnderCommandLine)
	critical := askBy(RuleExecCriticalRisk)
	cred := func(r Request) Request { r.DataClasses = []DataClass{DataCredential}; return r }
	tests := []struct {
		name                            string
		req                             Request
		strict, interactive, permissive want
	}{
		{"deny rule on the resource", execReq("rm build/x.o", SurfaceSandbox),
			denyBy("no-rm"), denyBy("no-rm"), denyBy("no-rm")},
		{"deny rule on a command pattern", execReq("git push origin main", SurfaceSandbox),
			denyBy("no-push"), denyBy("no-push"), denyBy("no-push")},
		{"deny beats critical", withRisk(execReq("rm -rf /", SurfaceSandbox), RiskCritical),
			denyBy("no-rm"), denyBy("no-rm"), denyBy("no-rm")},
		{"built-in credential flow", cred(execReq("cc -o a a.c", SurfaceSandbox)),
			credDeny, credDeny, credDeny},
		{"ask rule naming the program", execReq("curl https://x.test", SurfaceSandbox),
			askBy("ask-curl"), askBy("ask-curl"), askBy("ask-curl")},
		{"ask rule naming it beats critical", withRisk(execReq("curl https://x.test", SurfaceSandbox), RiskCritical),
			askBy("ask-curl"), askBy("ask-curl"), askBy("ask-curl")},
		{"critical risk no rule names", withRisk(execReq("mkfs.ext4 /dev/sda", SurfaceSandbox), RiskCritical),
			critical, critical, critical},
		// The mode and ask rules that match by risk alone do not refuse.
		{"ask rule by risk alone", execReq("cc -c a.c", SurfaceSandbox),
			underLine, allowBy("interactive-dev/allow-sandboxed-exec"), allowBy("permissive-dev/allow-rest")},
		{"high risk under the profile's ask", withRisk(execReq("sh -c x", SurfaceSandbox), RiskHigh),
			underLine, allowBy("interactive-dev/allow-sandboxed-exec"), allowBy("permissive-dev/allow-rest")},
		{"allow rule names it", execReq("make clean", SurfaceSandbox),
			allowBy("allow-make"), allowBy("interactive-dev/allow-sandboxed-exec"), allowBy("permissive-dev/allow-rest")},
		{"not an exec", httpReq("GET", "example.com"), invalidDeny, invalidDeny, invalidDeny},
		// An install a running program makes: deny rules and the mode's
		// deny hold, an ask rule naming a package or host asks, an ask by
		// capability alone (interactive-dev's) does not refuse it.
		{"an install at exec", pkgReq("lodash", "registry.npmjs.org"),
			byMode[Deny], underLine, denyBy("permissive-dev/deny-package-install")},
		{"an install an allow rule names", pkgReq("left-pad", "registry.npmjs.org"),
			allowBy("allow-left-pad"), allowBy("allow-left-pad"), denyBy("permissive-dev/deny-package-install")},
		{"an install an ask rule names by host", pkgReq("x", "npm.evil.example"),
			askBy("ask-evil-index"), askBy("ask-evil-index"), denyBy("permissive-dev/deny-package-install")},
		{"an install a deny rule names", pkgReq("event-stream", "registry.npmjs.org"),
			denyBy("no-event-stream"), denyBy("no-event-stream"), denyBy("permissive-dev/deny-package-install")},
		{"unknown risk takes the base risk", withRisk(execReq("ls", SurfaceSandbox), 0),
			underLine, allowBy("interactive-dev/allow-sandboxed-exec"), allowBy("permissive-dev/allow-rest")},
	}
	for _, prof := range []string{"strict-production", "interactive-dev", "permissive-dev"} {
		p := e.policy(t, fmt.Sprintf("profile = %q\n", prof)+rules)
		for _, tt := range tests {
			w := map[string]want{"strict-production": tt.strict, "interactive-dev": tt.interactive, "permissive-dev": tt.permissive}[prof]
			t.Run(prof+"/"+tt.name, func(t *testing.T) {
				d := p.DecideExec(tt.req)
				if got := (want{d.Effect, d.Reason, d.RuleID}); got != w {
					t.Errorf("DecideExec(%s risk %s):\n got  %s\n want %s", tt.req.Describe(), tt.req.Risk, got, w)
				}
				if d.Effect == Ask && d.RuleID == RuleExecCriticalRisk && d.ApprovalExpires != 0 {
					t.Error("a critical-risk exec ask must not be remembered for the session")
				}
			})
		}
	}
	// An ask rule's approval lifetime comes with its exec-time ask.
	p := e.policy(t, "profile = \"interactive-dev\"\n"+rules)
	if d := p.DecideExec(execReq("curl x", SurfaceSandbox)); d.ApprovalExpires.Seconds() != 60 {
		t.Errorf("ApprovalExpires = %s, want 60s", d.ApprovalExpires)
	}
}

// TestStageNames: the stage is logged by name.
func TestStageNames(t *testing.T) {
	for s, n := range map[Stage]string{0: "none", StageHop: "hop", StageExec: "exec", 9: "none"} {
		if s.String() != n {
			t.Errorf("Stage(%d) = %q, want %q", s, s.String(), n)
		}
	}
}

// BenchmarkDecideExec is the policy's share of one exec-time decision
// (issue 20 budgets 0.3 ms per exec for the whole gate).
func BenchmarkDecideExec(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		p, _ := benchPolicy(b, n)
		r := execReq("cc -c -o build/x.o src/x.c", SurfaceSandbox)
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			for b.Loop() {
				p.DecideExec(r)
			}
		})
	}
}

// TestNamesProgram: which program names a deny or ask rule on process.exec
// can name (the exec gate recognises those by identity too).
func TestNamesProgram(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"
[[rules.deny]]
rule_id    = "no-rm"
capability = "process.exec"
target     = { resource = "rm" }
[[rules.deny]]
rule_id    = "no-mkfs"
capability = "process.exec"
target     = { resource = "mkfs.*" }
[[rules.ask]]
rule_id    = "ask-push"
capability = "process.exec"
target     = { command = "git push*" }
[[rules.ask]]
rule_id    = "ask-both"
capability = "process.exec"
target     = { resource = "curl", command = "wget *" }
[[rules.ask]]
rule_id    = "ask-high"
capability = "process.exec"
conditions = { risk_level = ["high"] }
[[rules.deny]]
rule_id    = "no-read"
capability = "filesystem.read"
target     = { path = "/srv/**" }
[[rules.allow]]
rule_id    = "allow-make"
capability = "process.exec"
target     = { resource = "make" }
`)
	for name, want := range map[string]bool{
		"rm": true, "mkfs.ext4": true, "git": true, "curl": false, "wget": false,
		"make": false, "cc": false, "srv": false, "": false,
	} {
		if got := p.NamesProgram(name); got != want {
			t.Errorf("NamesProgram(%q) = %v, want %v", name, got, want)
		}
	}
	re := e.policy(t, "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"re\"\ncapability = \"process.exec\"\ntarget = { command = \"re:.*push.*\" }\n")
	if !re.NamesProgram("anything") {
		t.Error("a regular expression names every program")
	}
}

// TestKeyExe: a request for a program the command wrote (Target.Exe) is
// never the same request as the one the line named, in a call or for the
// session; every other key is as before.
func TestKeyExe(t *testing.T) {
	r := execReq("git push origin main", SurfaceSandbox)
	w := r
	w.Target.Exe = "/tmp/git"
	if r.Key() == w.Key() || r.KeyInCall() == w.KeyInCall() {
		t.Error("a written program's request has the named program's key")
	}
	if strings.Contains(r.Key(), "\x00exe\x00") {
		t.Errorf("key without Exe changed: %q", r.Key())
	}
	if !strings.Contains(w.Describe(), "/tmp/git") {
		t.Errorf("Describe hides the written path: %s", w.Describe())
	}
}

// TestRuleDecidesExec: a deny rule or an ask rule naming the program
// decides an exec at its risk; the built-in critical ask and the command
// line's allow do not.
func TestRuleDecidesExec(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"
[[rules.deny]]
rule_id = "keep"
capability = "process.exec"
target = { command = "re:.*precious.*" }
conditions = { risk_level = ["critical"] }
`)
	for _, tc := range []struct {
		req  Request
		want bool
	}{
		{withRisk(execReq("rm -rf a precious", SurfaceSandbox), RiskCritical), true},
		{withRisk(execReq("rm -rf a precious", SurfaceSandbox), RiskHigh), false},
		{withRisk(execReq("rm -rf a b", SurfaceSandbox), RiskCritical), false},
		{execReq("ls", SurfaceSandbox), false},
	} {
		if got := p.RuleDecidesExec(tc.req); got != tc.want {
			t.Errorf("%s at %s: %v, want %v", tc.req.Describe(), tc.req.Risk, got, tc.want)
		}
	}
}
