package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// fakeTool plans the requests its build function makes and, when run,
// makes the mid-action requests it was given through the gate.
type fakeTool struct {
	build   func(p *grants.Policy) []grants.Request
	mid     []midReq
	exposes bool // the run returns credential data to the model

	ran    *int
	midOut *[]midResult
}

type midReq struct {
	req   grants.Request
	stage grants.Stage
}

type midResult struct {
	d   grants.Decision
	err error
}

func (fakeTool) Name() string { return "fake" }
func (fakeTool) Capabilities() []grants.Capability {
	return grants.Capabilities()
}
func (fakeTool) Definition(*grants.Policy) mcp.Tool { return mcp.NewTool("fake") }
func (f fakeTool) Plan(_ context.Context, env *toolkit.Env, _ json.RawMessage) (*toolkit.Plan, error) {
	return &toolkit.Plan{Requests: f.build(env.Policy), Run: func(ctx context.Context, _ toolkit.Grant) toolkit.Result {
		*f.ran++
		for _, m := range f.mid {
			d, err := env.MidAction.Decide(ctx, m.req, m.stage)
			*f.midOut = append(*f.midOut, midResult{d, err})
		}
		res := toolkit.Result{Tool: mcp.NewToolResultText("done")}
		if f.exposes {
			res.Outcome.Exposed = []grants.DataClass{grants.DataCredential}
		}
		return res
	}}, nil
}

// fakeApprover answers every ask with outcome and remembers the keys in
// session; before, when set, runs first (to break the audit log).
type fakeApprover struct {
	outcome toolkit.ApprovalOutcome
	pending *mcp.CallToolResult
	session map[string]bool // Request.Key()+rule remembered for the session
	before  func()
	asked   int
}

func (a *fakeApprover) Approve(_ context.Context, call toolkit.ApprovalCall) (toolkit.ApprovalOutcome, *mcp.CallToolResult) {
	a.asked++
	if a.before != nil {
		a.before()
	}
	return a.outcome, a.pending
}

func (a *fakeApprover) pendingNil() bool { return a == nil || a.pending == nil }

func (a *fakeApprover) Remembered(_ string, d grants.Decision) bool {
	return a.session[d.Request.Key()+"|"+d.RuleID]
}

// callEnv is a server over a policy compiled from src, with its audit log.
type callEnv struct {
	s     *Server
	p     *grants.Policy
	ws    string
	audit *Audit
	log   string
}

func newCallEnv(t testing.TB, src string, ap toolkit.Approver) callEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(root, "state", "audit.jsonl")
	cfg, err := grants.Parse([]byte(src+"\n[audit]\npath = \""+logPath+"\"\n"), "", ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	audit, err := OpenAudit(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	s, err := New(p, Options{Approver: ap, Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	return callEnv{s: s, p: p, ws: ws, audit: audit, log: logPath}
}

func (e callEnv) call(t *testing.T, tool toolkit.Tool) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool.Name()
	return e.s.call(context.Background(), tool, req)
}

// lines are the audit log's records of calls (checkpoints left out).
func (e callEnv) lines(t *testing.T) []map[string]any {
	t.Helper()
	f, err := os.Open(e.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if m["event"] == "checkpoint" {
			continue
		}
		out = append(out, m)
	}
	return out
}

// decisions renders the audit log's decision lines as
// "capability effect reason rule [channel]".
func (e callEnv) decisions(t *testing.T) []string {
	var out []string
	for _, l := range e.lines(t) {
		if l["event"] != "decision" {
			continue
		}
		s := strings.TrimSpace(strings.Join([]string{str(l["capability"]), str(l["effect"]), str(l["reason_code"]), str(l["rule_id"]), str(l["approval_channel"])}, " "))
		out = append(out, s)
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func read(path string) func(p *grants.Policy) []grants.Request {
	return func(p *grants.Policy) []grants.Request {
		c := grants.CapWorkspaceRead
		if !p.InWorkspace(filepath.Join(p.Workspace, path)) {
			c = grants.CapFilesystemRead
		}
		return []grants.Request{{Capability: c, Target: grants.Target{ToolName: "fake", Path: filepath.Join(p.Workspace, path)}, Risk: grants.RiskLow}}
	}
}

func del(path string) func(p *grants.Policy) []grants.Request {
	return func(p *grants.Policy) []grants.Request {
		return []grants.Request{{Capability: grants.CapWorkspaceDelete, Target: grants.Target{ToolName: "fake", Path: filepath.Join(p.Workspace, path)}, Risk: grants.RiskHigh}}
	}
}

func get(host string) grants.Request {
	return grants.Request{Capability: grants.CapHTTPGet, Target: grants.Target{ToolName: "fake", Host: host, Port: 443, Path: "/"}, Risk: grants.RiskMedium}
}

func exec(line string, risk grants.Risk) grants.Request {
	name, _, _ := strings.Cut(line, " ")
	return grants.Request{Capability: grants.CapProcessExec, Target: grants.Target{ToolName: "fake", Resource: name, Command: line}, Risk: risk, Surface: grants.SurfaceSandbox}
}

// under is r run as the plumbing of the request u (grants.Request.Under).
func under(r, u grants.Request) grants.Request {
	r.Under = &u
	return r
}

func reqs(rs ...grants.Request) func(*grants.Policy) []grants.Request {
	return func(*grants.Policy) []grants.Request { return rs }
}

// callPolicy: an interactive policy with a rule of each kind.
const callPolicy = `mode = "interactive"
[[rules.deny]]
rule_id    = "no-secrets-folder"
capability = "workspace.files.*"
target     = { path = "secrets/**" }
[[rules.deny]]
rule_id    = "no-rm"
capability = "process.exec"
target     = { resource = "rm" }
[[rules.ask]]
rule_id    = "ask-git-push"
capability = "process.exec"
target     = { command = "git push*" }
constraints = { approval_expires_seconds = 600 }
[[rules.ask]]
rule_id    = "ask-delete"
capability = "workspace.files.delete"
[[rules.ask]]
rule_id    = "ask-high-risk"
capability = "*"
conditions = { risk_level = ["high", "critical"] }
[[rules.allow]]
rule_id    = "read"
capability = "workspace.files.read"
[[rules.allow]]
rule_id    = "exec"
capability = "process.exec"
conditions = { execution_surface = "sandbox" }
[[rules.allow]]
rule_id    = "docs"
capability = "network.http.get"
target     = { host = "docs.test" }
`

// TestCallTable: the one path a call takes, with fake tools and a fake
// approver: what runs, what the client is told, what the log says.
func TestCallTable(t *testing.T) {
	approved := toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApproved, Channel: "elicitation"}
	tests := []struct {
		name     string
		build    func(*grants.Policy) []grants.Request
		approver *fakeApprover
		breakLog bool // the audit log fails before the call
		ran      int
		asked    int
		text     string   // in the result
		log      []string // decision lines
	}{
		{name: "allow", build: read("a.go"), ran: 1,
			text: "done", log: []string{"workspace.files.read allow matched_allow read"}},
		{name: "deny", build: read("secrets/k"), text: "no-secrets-folder",
			log: []string{"workspace.files.read deny matched_deny no-secrets-folder"}},
		{name: "no requests", build: reqs(), text: "made no request"},
		{name: "ask approved", build: del("a.go"), approver: &fakeApprover{outcome: approved}, ran: 1, asked: 1,
			text: "done", log: []string{"workspace.files.delete allow approved ask-delete elicitation"}},
		{name: "ask declined", build: del("a.go"), asked: 1, text: "declined",
			approver: &fakeApprover{outcome: toolkit.ApprovalOutcome{Reason: grants.ReasonDeclined, Channel: "elicitation"}},
			log:      []string{"workspace.files.delete deny declined ask-delete elicitation"}},
		{name: "ask timed out", build: del("a.go"), asked: 1, text: "approval_timeout",
			approver: &fakeApprover{outcome: toolkit.ApprovalOutcome{Reason: grants.ReasonApprovalTimeout, Channel: "console"}},
			log:      []string{"workspace.files.delete deny approval_timeout ask-delete console"}},
		{name: "ask without a channel", build: del("a.go"), text: "approval_unavailable",
			log: []string{"workspace.files.delete deny approval_unavailable ask-delete"}},
		{name: "ask pending", build: del("a.go"), asked: 1, text: "input required",
			approver: &fakeApprover{pending: mcp.NewToolResultText("input required")}},
		{name: "one deny denies the call", build: func(p *grants.Policy) []grants.Request {
			return append(read("a.go")(p), read("secrets/k")(p)...)
		}, text: "no-secrets-folder", log: []string{
			"workspace.files.read allow matched_allow read",
			"workspace.files.read deny matched_deny no-secrets-folder"}},
		{name: "audit fails before the call", build: read("a.go"), breakLog: true, text: "audit log cannot be written"},
		{name: "audit fails before the ask", build: del("a.go"), breakLog: true, asked: 1, approver: &fakeApprover{outcome: approved},
			text: "audit log cannot be written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ap toolkit.Approver
			if tt.approver != nil {
				ap = tt.approver
			}
			e := newCallEnv(t, callPolicy, ap)
			if tt.breakLog {
				e.audit.Close()
			}
			ran := 0
			var mids []midResult
			res := e.call(t, fakeTool{build: tt.build, ran: &ran, midOut: &mids})
			if ran != tt.ran {
				t.Errorf("ran %d times, want %d", ran, tt.ran)
			}
			if tt.approver != nil && tt.approver.asked != tt.asked {
				t.Errorf("asked %d times, want %d", tt.approver.asked, tt.asked)
			}
			if got := resultText(res); !strings.Contains(got, tt.text) || res.IsError != (tt.ran == 0 && tt.approver.pendingNil()) {
				t.Errorf("result (error %v): %q, want %q", res.IsError, got, tt.text)
			}
			if tt.breakLog {
				return
			}
			if got := e.decisions(t); strings.Join(got, "\n") != strings.Join(tt.log, "\n") && !(tt.log == nil && len(got) == 1 && strings.Contains(got[0], "deny")) {
				t.Errorf("audit decisions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.log, "\n"))
			}
			if tt.ran > 0 {
				if ls := e.lines(t); ls[len(ls)-1]["event"] != "outcome" {
					t.Errorf("no outcome line after the run: %v", ls)
				}
			}
		})
	}
}

// TestCallAuditFailsAfterTheAsk: a person approved, but the log cannot be
// written: nothing runs.
func TestCallAuditFailsAfterTheAsk(t *testing.T) {
	ap := &fakeApprover{outcome: toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApproved}}
	e := newCallEnv(t, callPolicy, ap)
	ap.before = func() { e.audit.Close() }
	ran := 0
	res := e.call(t, fakeTool{build: del("a.go"), ran: &ran})
	if ran != 0 || !res.IsError || !strings.Contains(resultText(res), "audit log cannot be written") {
		t.Fatalf("ran %d, result %q", ran, resultText(res))
	}
}

// TestCredentialFlow: once a principal was given credential data, its
// network requests and, when commands have a network, its commands carry
// the credential class and are denied by the built-in rule; a sandbox
// without network keeps commands allowed.
func TestCredentialFlow(t *testing.T) {
	for _, tt := range []struct {
		name, network string
		req           grants.Request
		before, after string // decision of the request before and after the exposure
	}{
		{"http_request", "none", get("docs.test"), "allow", "deny matched_deny deny_credential_flow"},
		{"command with the proxy", "proxy", exec("ls", grants.RiskMedium), "allow", "deny matched_deny deny_credential_flow"},
		{"command with full network", "full", exec("ls", grants.RiskMedium), "allow", "deny matched_deny deny_credential_flow"},
		{"command without network", "none", exec("ls", grants.RiskMedium), "allow", "allow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newCallEnv(t, callPolicy+"\n[sandbox]\nnetwork = \""+tt.network+"\"\n", nil)
			ran := 0
			call := func(build func(*grants.Policy) []grants.Request, exposes bool) string {
				before := len(e.decisions(t))
				e.call(t, fakeTool{build: build, exposes: exposes, ran: &ran})
				return e.decisions(t)[before]
			}
			if got := call(reqs(tt.req), false); !strings.Contains(got, tt.before) {
				t.Fatalf("before: %s", got)
			}
			call(read("a.go"), true) // the model is given credential data
			if got := call(reqs(tt.req), false); !strings.Contains(got, tt.after) {
				t.Fatalf("after: %s, want %s", got, tt.after)
			}
		})
	}
}

// TestMidAction: requests that arise while an action runs go through the
// server's gate: decided at their stage, audited with the call, and only
// Allow lets them through; an ask holds only for what was approved in this
// call or is remembered for the session.
func TestMidAction(t *testing.T) {
	approved := toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApproved, Channel: "elicitation"}
	push := exec("git push origin main", grants.RiskMedium)
	plumbing := exec("git push --stateless-rpc https://h/r.git/ --stdin", grants.RiskMedium) // git send-pack's push form
	sendPack := exec("git send-pack --stateless-rpc https://h/r.git/ --stdin", grants.RiskCritical)
	fetch := exec("git fetch origin", grants.RiskMedium) // (a stand-in for a push allowed unasked)
	tests := []struct {
		name    string
		upfront func(*grants.Policy) []grants.Request
		outcome toolkit.ApprovalOutcome
		session map[string]bool
		mid     midReq
		allowed bool
		log     string // the mid-action decision's audit line
	}{
		{"hop allowed", read("a.go"), approved, nil, midReq{get("docs.test"), grants.StageHop}, true,
			"network.http.get allow matched_allow docs"},
		{"hop asked: no person mid-action", read("a.go"), approved, nil, midReq{get("other.test"), grants.StageHop}, false,
			"network.http.get deny approval_unavailable mode"},
		{"hop approved in this call", reqs(get("other.test")), approved, nil, midReq{get("other.test"), grants.StageHop}, true,
			"network.http.get allow approved mode elicitation"},
		{"hop approved for another host", reqs(get("other.test")), approved, nil, midReq{get("third.test"), grants.StageHop}, false,
			"network.http.get deny approval_unavailable mode"},
		{"hop remembered for the session", read("a.go"), approved,
			map[string]bool{get("other.test").Key() + "|mode": true},
			midReq{get("other.test"), grants.StageHop}, true,
			"network.http.get allow approved_for_session mode memory"},
		{"exec denied by rule", read("a.go"), approved, nil, midReq{exec("rm build/x.o", grants.RiskMedium), grants.StageExec}, false,
			"process.exec deny matched_deny no-rm"},
		{"exec at high risk runs under the line", read("a.go"), approved, nil, midReq{exec("sh -c x", grants.RiskHigh), grants.StageExec}, true,
			"process.exec allow matched_allow exec"},
		{"exec named by an ask rule", read("a.go"), approved, nil, midReq{push, grants.StageExec}, false,
			"process.exec deny approval_unavailable ask-git-push"},
		{"exec named by an ask rule, approved in this call", reqs(push), approved, nil, midReq{push, grants.StageExec}, true,
			"process.exec allow approved ask-git-push elicitation"},
		{"exec named by an ask rule, remembered", read("a.go"), approved,
			map[string]bool{push.Key() + "|ask-git-push": true}, midReq{push, grants.StageExec}, true,
			"process.exec allow approved_for_session ask-git-push memory"},
		{"exec at critical risk", read("a.go"), approved, nil, midReq{exec("mkfs /dev/sda", grants.RiskCritical), grants.StageExec}, false,
			"process.exec deny approval_unavailable exec_critical_risk"},
		{"exec at critical risk, approved in this call", reqs(exec("mkfs /dev/sda", grants.RiskCritical)), approved, nil,
			midReq{exec("mkfs /dev/sda", grants.RiskCritical), grants.StageExec}, true,
			"process.exec allow approved exec_critical_risk elicitation"},
		{"an approval does not stretch to a higher risk", reqs(push), approved, nil,
			midReq{exec("git push origin main", grants.RiskCritical), grants.StageExec}, false,
			"process.exec deny approval_unavailable ask-git-push"},
		{"plumbing of a push approved in this call", reqs(push), approved, nil, midReq{under(plumbing, push), grants.StageExec}, true,
			"process.exec allow approved ask-git-push elicitation"},
		{"plumbing of a push remembered", read("a.go"), approved,
			map[string]bool{push.Key() + "|ask-git-push": true}, midReq{under(plumbing, push), grants.StageExec}, true,
			"process.exec allow approved_for_session ask-git-push memory"},
		{"plumbing of a push no one approved", read("a.go"), approved, nil, midReq{under(plumbing, push), grants.StageExec}, false,
			"process.exec deny approval_unavailable ask-git-push"},
		{"under an approved push, a deny rule holds", reqs(push), approved, nil, midReq{under(exec("rm x", grants.RiskMedium), push), grants.StageExec}, false,
			"process.exec deny matched_deny no-rm"},
		{"under another program", reqs(push), approved, nil,
			midReq{under(sendPack, exec("ls", grants.RiskMedium)), grants.StageExec}, false,
			"process.exec deny approval_unavailable exec_critical_risk"},
		{"critical plumbing of a push allowed unasked", read("a.go"), approved, nil,
			midReq{under(sendPack, fetch), grants.StageExec}, true,
			"process.exec allow matched_allow exec_critical_risk"},
		{"plumbing asked by a rule, under a push allowed unasked", read("a.go"), approved, nil,
			midReq{under(plumbing, fetch), grants.StageExec}, false,
			"process.exec deny approval_unavailable ask-git-push"},
		{"critical plumbing of a push no one approved", read("a.go"), approved, nil,
			midReq{under(sendPack, exec("git push --force origin main", grants.RiskCritical)), grants.StageExec}, false,
			"process.exec deny approval_unavailable exec_critical_risk"},
		{"under an approved push, at a hop", reqs(push), approved, nil, midReq{under(get("other.test"), push), grants.StageHop}, false,
			"network.http.get deny approval_unavailable mode"},
		{"no stage", read("a.go"), approved, nil, midReq{get("docs.test"), 0}, false,
			"network.http.get deny invalid_arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := &fakeApprover{outcome: tt.outcome, session: tt.session}
			e := newCallEnv(t, callPolicy, ap)
			ran := 0
			var mids []midResult
			res := e.call(t, fakeTool{build: tt.upfront, mid: []midReq{tt.mid}, ran: &ran, midOut: &mids})
			if ran != 1 || len(mids) != 1 {
				t.Fatalf("ran %d, %d mid-action results; result %q", ran, len(mids), resultText(res))
			}
			m := mids[0]
			if (m.err == nil) != tt.allowed || (m.d.Effect == grants.Allow) != tt.allowed {
				t.Errorf("allowed = %v (effect %s, err %v), want %v", m.err == nil, m.d.Effect, m.err, tt.allowed)
			}
			if !tt.allowed {
				var rf *toolkit.MidActionRefused
				if !errors.As(m.err, &rf) || rf.Decision.Effect != grants.Deny {
					t.Errorf("refusal is %T %v", m.err, m.err)
				}
			}
			ds := e.decisions(t)
			if got := ds[len(ds)-1]; got != tt.log {
				t.Errorf("audit: %q, want %q", got, tt.log)
			}
			var last map[string]any
			for _, l := range e.lines(t) {
				if l["event"] == "decision" {
					last = l
				}
			}
			want := "" // what an exec allowed as an approved request's plumbing says it ran under
			if u := tt.mid.req.Under; u != nil && tt.allowed {
				want = "run as the plumbing of " + u.Target.Command + " (" + str(last["reason_code"]) + ")"
			}
			if got := str(last["detail"]); got != want {
				t.Errorf("audit detail %q, want %q", got, want)
			}
			for _, l := range e.lines(t) {
				if l["call"] != "c1" {
					t.Errorf("line of another call: %v", l)
				}
				if l["capability"] == "process.exec" && l["execution_surface"] != "sandbox" {
					t.Errorf("exec line without surface: %v", l)
				}
			}
		})
	}
}

// TestMidActionUnaudited: a mid-action request the log cannot record is
// refused, whatever the policy says; and a nil gate refuses too.
func TestMidActionUnaudited(t *testing.T) {
	e := newCallEnv(t, callPolicy, nil)
	ran := 0
	var mids []midResult
	tool := fakeTool{build: read("a.go"), ran: &ran, midOut: &mids, mid: []midReq{{get("docs.test"), grants.StageHop}}}
	env := &toolkit.Env{Policy: e.p}
	plan, _ := tool.Plan(context.Background(), env, nil)
	plan.Run(context.Background(), toolkit.Grant{}) // no gate at all
	if mids[0].err == nil || mids[0].d.Effect != grants.Deny {
		t.Fatalf("nil gate let %v through", mids[0].d)
	}
	gate := &midAction{s: e.s, p: e.p, ref: callRef{id: "c9", tool: "fake"}, principal: "stdio"}
	e.audit.Close()
	d, err := toolkit.MidAction(gate.decide).Decide(context.Background(), get("docs.test"), grants.StageHop)
	if err == nil || d.Effect != grants.Deny || !strings.Contains(err.Error(), "audit log") {
		t.Fatalf("unaudited: %v %v", d.Effect, err)
	}
	// A gate that returns a non-Allow decision without an error is still
	// a refusal.
	sloppy := toolkit.MidAction(func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		return grants.Decision{Request: r, Effect: grants.Ask}, nil
	})
	if d, err := sloppy.Decide(context.Background(), get("x"), grants.StageHop); err == nil || d.Effect != grants.Deny {
		t.Fatalf("sloppy gate: %v %v", d.Effect, err)
	}
}

// TestSettle: a person's answer applies to the asks only; one refusal
// refuses the call; allows stay as they were.
func TestSettle(t *testing.T) {
	allow := grants.Decision{Effect: grants.Allow, Reason: grants.ReasonMatchedAllow, RuleID: "a"}
	ask := grants.Decision{Effect: grants.Ask, Reason: grants.ReasonMatchedAsk, RuleID: "q"}
	deny := grants.Decision{Effect: grants.Deny, Reason: grants.ReasonMatchedDeny, RuleID: "d"}
	v := grants.Verdict{Effect: grants.Ask, Decisions: []grants.Decision{allow, ask, ask}}
	for _, tt := range []struct {
		name   string
		v      grants.Verdict
		o      toolkit.ApprovalOutcome
		effect grants.Effect
		asks   grants.Reason // the reason the settled asks carry
	}{
		{"approved", v, toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApproved}, grants.Allow, grants.ReasonApproved},
		{"for session", v, toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApprovedForSession}, grants.Allow, grants.ReasonApprovedForSession},
		{"declined", v, toolkit.ApprovalOutcome{Reason: grants.ReasonDeclined}, grants.Deny, grants.ReasonDeclined},
		{"timed out", v, toolkit.ApprovalOutcome{Reason: grants.ReasonApprovalTimeout}, grants.Deny, grants.ReasonApprovalTimeout},
		{"a deny stays a deny", grants.Verdict{Effect: grants.Deny, Decisions: []grants.Decision{deny, ask}},
			toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApproved}, grants.Deny, grants.ReasonApproved},
		{"nothing to settle stays refused", grants.Verdict{Effect: grants.Deny}, toolkit.ApprovalOutcome{Approved: true}, grants.Deny, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := settle(tt.v, tt.o)
			if got.Effect != tt.effect {
				t.Errorf("effect %s, want %s", got.Effect, tt.effect)
			}
			for i, d := range got.Decisions {
				was := tt.v.Decisions[i]
				switch {
				case was.Effect == grants.Ask && (d.Reason != tt.asks || d.RuleID != was.RuleID || (d.Effect == grants.Allow) != tt.o.Approved):
					t.Errorf("ask %d settled as %+v", i, d)
				case was.Effect != grants.Ask && !reflect.DeepEqual(d, was):
					t.Errorf("decision %d changed: %+v", i, d)
				}
			}
			if len(tt.v.Decisions) > 0 && &got.Decisions[0] == &tt.v.Decisions[0] {
				t.Error("settle wrote into the verdict it was given")
			}
		})
	}
}

// TestRefusalText: a refusal names each refused request with its rule and
// reason, and none that was allowed.
func TestRefusalText(t *testing.T) {
	r := func(path string) grants.Request {
		return grants.Request{Capability: grants.CapWorkspaceRead, Target: grants.Target{Path: path}, Risk: grants.RiskLow}
	}
	v := grants.Verdict{Effect: grants.Deny, Decisions: []grants.Decision{
		{Request: r("/ws/ok"), Effect: grants.Allow, Reason: grants.ReasonMatchedAllow, RuleID: "fine"},
		{Request: r("/ws/no"), Effect: grants.Deny, Reason: grants.ReasonMatchedDeny, RuleID: "nope"},
		{Request: r("/ws/ask"), Effect: grants.Deny, Reason: grants.ReasonDeclined, RuleID: "q"},
	}}
	got := resultText(refusal("fake", v))
	for _, want := range []string{"fake refused; nothing was done.", "/ws/no: deny (reason matched_deny, rule nope", "/ws/ask: deny (reason declined, rule q"} {
		if !strings.Contains(got, want) {
			t.Errorf("refusal %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "/ws/ok") || strings.Contains(got, "fine") {
		t.Errorf("refusal names an allowed request: %q", got)
	}
	if got := resultText(refusal("fake", grants.Verdict{})); !strings.Contains(got, "made no request") {
		t.Errorf("empty verdict: %q", got)
	}
	if res := refusal("fake", v); !res.IsError {
		t.Error("a refusal is a tool error")
	}
}

// TestMarkCredentialFlow: only requests that can carry data off the machine
// get the credential class, once.
func TestMarkCredentialFlow(t *testing.T) {
	for _, tt := range []struct {
		name    string
		network string
		req     grants.Request
		marked  bool
	}{
		{"http", "none", get("x.test"), true},
		{"post", "none", grants.Request{Capability: grants.CapHTTPPost}, true},
		{"command without network", "none", exec("ls", grants.RiskMedium), false},
		{"command with the proxy", "proxy", exec("ls", grants.RiskMedium), true},
		{"command with full network", "full", exec("ls", grants.RiskMedium), true},
		{"file read", "full", grants.Request{Capability: grants.CapWorkspaceRead, Target: grants.Target{Path: "/ws/a"}}, false},
		{"secret use", "full", grants.Request{Capability: grants.CapSecretUse, Target: grants.Target{Resource: "s"}}, false},
		{"already marked", "none", func() grants.Request {
			r := get("x.test")
			r.DataClasses = []grants.DataClass{grants.DataCredential}
			return r
		}(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &grants.Policy{Sandbox: grants.Sandbox{Network: tt.network}}
			r := tt.req
			markCredentialFlow(&r, p)
			n := 0
			for _, c := range r.DataClasses {
				if c == grants.DataCredential {
					n++
				}
			}
			if (n > 0) != tt.marked || n > 1 {
				t.Errorf("credential classes %v, want marked=%v once", r.DataClasses, tt.marked)
			}
		})
	}
}

// BenchmarkMidActionExec is the server's whole share of one exec-time
// decision: the policy, the session check, and the audit line written.
func BenchmarkMidActionExec(b *testing.B) {
	e := newCallEnv(b, callPolicy, nil)
	gate := &midAction{s: e.s, p: e.p, ref: callRef{id: "c1", session: "stdio", tool: "execute_terminal_command"}, principal: "stdio"}
	r := exec("cc -c -o build/x.o src/x.c", grants.RiskMedium)
	ctx := context.Background()
	for b.Loop() {
		if _, err := gate.decide(ctx, r, grants.StageExec); err != nil {
			b.Fatal(err)
		}
	}
}
