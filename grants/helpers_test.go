package grants

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testExecutable and testHome pin what Compile would otherwise take from the
// environment.
const (
	testExecutable = "/opt/onellm/bin/onellm-mcp"
	testHome       = "/home/tester"
)

// env is a workspace on disk with a config beside it.
type env struct {
	root  string // real temp folder holding everything
	ws    string // real workspace path
	cfg   string // config file path (not necessarily written)
	audit string // audit log path
}

func newEnv(t testing.TB) env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := env{root: root, ws: filepath.Join(root, "ws"), cfg: filepath.Join(root, "onellm.toml"), audit: filepath.Join(root, "state", "audit.jsonl")}
	if err := os.MkdirAll(e.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

// policy compiles src (a config without workspace and audit path: they are
// added) against the env.
func (e env) policy(t testing.TB, src string) *Policy {
	t.Helper()
	p, err := e.compile(src)
	if err != nil {
		t.Fatalf("compile:\n%s\nerror: %v", src, err)
	}
	return p
}

func (e env) compile(src string) (*Policy, error) {
	full := fmt.Sprintf("workspace = %q\n", e.ws) + src
	if !strings.Contains(src, "[audit]") {
		full += fmt.Sprintf("\n[audit]\npath = %q\n", e.audit)
	}
	cfg, err := Parse([]byte(full), e.cfg, e.root)
	if err != nil {
		return nil, err
	}
	return Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome})
}

// in returns the absolute path of rel inside the workspace.
func (e env) in(rel string) string { return filepath.Join(e.ws, rel) }

func fileReq(c Capability, p string) Request {
	return Request{Capability: c, Target: Target{ToolName: "test", Path: p}, Risk: BaseRisk(c, SurfaceNone)}
}

func execReq(command string, s Surface) Request {
	name, _, _ := strings.Cut(command, " ")
	return Request{Capability: CapProcessExec, Target: Target{ToolName: "execute_terminal_command", Resource: name, Command: command},
		Risk: BaseRisk(CapProcessExec, s), Surface: s}
}

func httpReq(method, host string) Request {
	c, ok := HTTPCapability(method)
	if !ok {
		panic("bad method " + method)
	}
	return Request{Capability: c, Target: Target{ToolName: "http_request", Host: host, Port: 443, Path: "/", Method: strings.ToUpper(method)},
		Risk: BaseRisk(c, SurfaceNone)}
}

func secretReq(name string) Request {
	return Request{Capability: CapSecretUse, Target: Target{ToolName: "http_request", Resource: name}, Risk: RiskMedium}
}

func withRisk(r Request, k Risk) Request { r.Risk = k; return r }

type want struct {
	effect Effect
	reason Reason
	rule   string
}

func (w want) String() string { return fmt.Sprintf("%s/%s/%s", w.effect, w.reason, w.rule) }

func check(t *testing.T, p *Policy, r Request, w want) {
	t.Helper()
	d := p.Decide(r)
	got := want{d.Effect, d.Reason, d.RuleID}
	if got != w {
		t.Errorf("Decide(%s risk %s surface %q classes %v):\n got  %s\n want %s", r.Describe(), r.Risk, r.Surface, r.DataClasses, got, w)
	}
}

func allowBy(rule string) want { return want{Allow, ReasonMatchedAllow, rule} }
func askBy(rule string) want   { return want{Ask, ReasonMatchedAsk, rule} }
func denyBy(rule string) want  { return want{Deny, ReasonMatchedDeny, rule} }

var (
	byMode       = map[Effect]want{Deny: {Deny, ReasonUnknownCapability, RuleMode}, Ask: {Ask, ReasonUnknownCapability, RuleMode}, Allow: {Allow, ReasonUnknownCapability, RuleMode}}
	credDeny     = denyBy(RuleDenyCredentialFlow)
	protectDeny  = want{Deny, ReasonProtectedPath, RuleProtectedPath}
	gitDeny      = want{Deny, ReasonProtectedPath, RuleGitCodeFiles}
	invalidDeny  = want{Deny, ReasonInvalidArguments, ""}
	privateDeny  = denyBy(RuleDenyPrivateAddress)
	unknownCapDn = want{Deny, ReasonUnknownCapability, ""}
)
