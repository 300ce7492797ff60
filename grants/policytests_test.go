package grants

import (
	"path/filepath"
	"strings"
	"testing"
)

// simpleTestRequests builds one request per test the way a tool would for
// plain targets (the command line uses explain's builder, with the tools'
// path resolution and command-line splitting).
func simpleTestRequests(p *Policy, t PolicyTest) ([]Request, error) {
	tg := t.Target
	r := Request{Capability: t.Capability, Surface: t.Surface, Target: Target{ToolName: tg.ToolName, Host: tg.Host, Port: tg.Port, Resource: tg.Resource, Command: tg.Command}}
	switch {
	case t.Capability.IsFile():
		path := tg.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(p.Workspace, path)
		}
		r.Target.Path = resolveExisting(path)
		if IsCredentialPath(r.Target.Path) {
			r.DataClasses = append(r.DataClasses, DataCredential)
		}
	case t.Capability == CapProcessExec:
		if r.Target.Resource == "" {
			r.Target.Resource, _, _ = strings.Cut(tg.Command, " ")
		}
		if r.Surface == "" {
			r.Surface = SurfaceSandbox
		}
	case t.Capability.IsNetwork():
		r.Target.Method = strings.ToUpper(strings.TrimPrefix(string(t.Capability), "network.http."))
	}
	r.Risk = BaseRisk(r.Capability, r.Surface)
	return []Request{r}, nil
}

func TestPolicyTestsRun(t *testing.T) {
	ws := t.TempDir()
	src := `profile = "interactive-dev"
[[rules.deny]]
rule_id    = "no-prod"
capability = "workspace.files.*"
target     = { path = "deploy/prod/**" }

[[tests]]
name       = "prod is closed"
capability = "workspace.files.write"
target     = { path = "deploy/prod/app.toml" }
expect     = "deny"
rule_id    = "no-prod"

[[tests]]
name       = "src is open"
capability = "workspace.files.write"
target     = { path = "src/a.go" }
expect     = "allow"

[[tests]]
name       = "host commands ask"
capability = "process.exec"
target     = { command = "ls -l" }
execution_surface = "host"
expect     = "ask"
rule_id    = "interactive-dev/ask-host-exec"

[[tests]]
name       = "critical risk asks"
capability = "workspace.files.read"
target     = { path = "README.md" }
risk_level = "critical"
expect     = "ask"

[[tests]]
name         = "credential flows are denied"
capability   = "network.http.get"
target       = { host = "example.com" }
data_classes = ["credential"]
expect       = "deny"
rule_id      = "deny_credential_flow"
`
	cfg, err := Parse([]byte(src), "t.toml", ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome})
	if err != nil {
		t.Fatal(err)
	}
	results := p.RunTests(simpleTestRequests)
	if len(results) != 5 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		if !r.Pass() || !strings.HasPrefix(r.Summary(), "pass ") {
			t.Errorf("%s", r.Summary())
		}
	}
	if err := TestsError(results); err != nil {
		t.Fatal(err)
	}
	// Flip every expectation: each test must fail, and the refusal names
	// the first with the count of the others.
	flipped := strings.NewReplacer(`expect     = "deny"`, `expect = "allow"`, `expect     = "allow"`, `expect = "deny"`, `expect     = "ask"`, `expect = "allow"`, `expect       = "deny"`, `expect = "ask"`).Replace(src)
	cfg, err = Parse([]byte(flipped), "t.toml", ws)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome}); err != nil {
		t.Fatal(err)
	}
	results = p.RunTests(simpleTestRequests)
	for _, r := range results {
		if r.Pass() || !strings.HasPrefix(r.Summary(), "FAIL ") {
			t.Errorf("flipped test passed: %s", r.Summary())
		}
	}
	err = TestsError(results)
	if err == nil || !strings.Contains(err.Error(), `[[tests]] #1 "prod is closed" (line 7)`) || !strings.Contains(err.Error(), "and 4 more failing") {
		t.Errorf("refusal: %v", err)
	}
}
