// Package server owns the MCP server: tool registration from the compiled
// policy, the one path every tool call takes (validate, decide, audit, ask,
// act), the mid-action gate for requests that arise while a call runs, the
// transports, the audit log and config reload.
//
// Security model: nothing runs before its decision is audited; an ask is
// settled by a person (or a remembered session approval) before the call
// runs, and never while it runs (a mid-action ask holds only for what was
// approved, else approval_unavailable); an audit log that cannot be written
// refuses; principals given credential data carry it into their later
// outbound requests.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/approval"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/server/metrics"
	"github.com/onellm/onellm-mcp/server/telemetry"
	"github.com/onellm/onellm-mcp/shelltool"
)

// Version is the server's version, set at build time.
var Version = "dev"

// Options configure a Server.
type Options struct {
	Tools    []toolkit.Tool
	Approver toolkit.Approver // nil: every ask is denied (approval_unavailable)
	Asker    toolkit.Asker    // nil: ask_user is unavailable
	Audit    *Audit           // required
	Log      *log.Logger      // stderr
	// Telemetry makes the calls' spans; nil: traces are off.
	Telemetry *telemetry.Tracer
}

// Server is one onellm-mcp server: a compiled policy, the tools and the MCP
// protocol machinery.
type Server struct {
	mcp    *mcpserver.MCPServer
	policy atomic.Pointer[grants.Policy]
	// policyMu serialises policy swaps, so the listed tools always match
	// the last policy stored.
	policyMu sync.Mutex
	roots    clientRoots
	tools    []toolkit.Tool
	ingress  *ingress // the strict parse of every client message
	approver toolkit.Approver
	asker    toolkit.Asker
	// metrics are what /metrics shows.
	metrics *metrics.Server
	// tel makes the calls' spans; nil when traces are off.
	tel     *telemetry.Tracer
	console *approval.Console // nil unless [approval] console is set
	// stateDir is the state folder in use when it was proven out of every
	// root (the audit key, the console token): a reload may not open a root
	// over it.
	stateDir string
	// stopHangup stops reopening the audit log on SIGHUP.
	stopHangup func()
	audit      *Audit
	log        *log.Logger
	callSeq    atomic.Uint64
	// started is closed once Start's work is done: begun after the first
	// answer is out, so nothing competes with it, or by the first call of
	// a tool that needs it, which waits.
	startOnce  sync.Once
	started    chan struct{}
	afterStart func() // run once Start's work is done (AfterStart)
	afterAudit func() // run once Start has opened the audit log (AfterAuditOpen)
	// needTools is closed (once, kickTools) when a call to a Starter waits
	// for the tools: their start then waits for nothing else.
	needTools chan struct{}
	kickTools sync.Once
	// exposed records principals that were given credential data, so their
	// later network requests carry the credential data class.
	exposed sync.Map // principal → struct{}
}

// New builds a server for the policy.
func New(p *grants.Policy, opts Options) (*Server, error) {
	if opts.Audit == nil {
		return nil, fmt.Errorf("server: an audit log is required")
	}
	in := newIngress(opts.Tools, p)
	s := &Server{tools: opts.Tools, ingress: in, approver: opts.Approver, asker: opts.Asker, audit: opts.Audit, log: opts.Log,
		metrics: metrics.NewServer(), tel: opts.Telemetry, started: make(chan struct{}), needTools: make(chan struct{})}
	s.stateDir = opts.Audit.stateDir // the audit key is kept there: a reload may not open a root over it
	if s.approver == nil {
		s.approver = toolkit.NoApprover{}
	}
	if s.log == nil {
		s.log = log.New(io.Discard, "", 0)
	}
	s.policy.Store(p)
	hooks := &mcpserver.Hooks{}
	hooks.AddOnUnregisterSession(func(_ context.Context, sess mcpserver.ClientSession) { s.forgetRoots(sess) })
	s.mcp = mcpserver.NewMCPServer("onellm-mcp", Version,
		mcpserver.WithHooks(hooks),
		mcpserver.WithToolCapabilities(true),
		mcpserver.WithRecovery(),
		mcpserver.WithInstructions("onellm-mcp: every tool call is decided by the host's policy before it acts; a refusal names the request, the rule and the reason code."),
	)
	s.mcp.AddNotificationHandler(mcp.MethodNotificationRootsListChanged, func(ctx context.Context, _ mcp.JSONRPCNotification) {
		s.forgetRoots(mcpserver.ClientSessionFromContext(ctx))
	})
	s.mcp.SetTools(s.serverTools(p)...)
	return s, nil
}

// Start does, in the background and once, what no first answer needs: it
// opens the audit log (when it was left for later, OpenAuditLater) and lets
// the tools that need it prepare for calls (probe the sandbox, start a
// helper in advance; planning a call never does). The transports call it
// once the first answer is out (the stdio initialize response; beside the
// HTTP listener), so that answer waits for none of it. A call waits for
// the audit log, a call to a tool that is a Starter for the start too
// (toolsStarted); each fails closed if what it waits for failed.
func (s *Server) Start() { s.startWhen(nil) }

// startWhen is Start with the tools' start held back until quiet (when
// set) says no request is in flight, or a call to a Starter needs them:
// over stdio the sandbox probe, a helper process, would otherwise compete
// for the CPU with the calls a client sends right after initialize.
func (s *Server) startWhen(quiet func() <-chan struct{}) {
	s.startOnce.Do(func() {
		go func() {
			if err := s.audit.Open(); err != nil && !errors.Is(err, errAuditClosed) {
				s.log.Printf("%v; every tool call is refused", err)
			}
			if s.afterAudit != nil {
				s.afterAudit()
			}
			if quiet != nil {
				select {
				case <-quiet():
				case <-s.needTools:
				}
			}
			s.policyMu.Lock() // a reload starts the tools under its own policy after this
			s.startTools(s.Policy())
			s.policyMu.Unlock()
			close(s.started)
			if s.afterStart != nil {
				s.afterStart()
			}
		}()
	})
}

// AfterAuditOpen sets fn to run once Start has opened the audit log,
// before the tools' start (which may wait for a quiet moment): the command
// line starts the config watch there, so a changed config is applied
// whatever the client keeps in flight. Set it before serving.
func (s *Server) AfterAuditOpen(fn func()) { s.afterAudit = fn }

// AfterStart sets fn to run once Start has done its work, off the path of
// any answer (the command line hands start-up garbage back to the OS
// then). Set it before serving.
func (s *Server) AfterStart(fn func()) { s.afterStart = fn }

// toolsStarted waits until the tools' Start has run (starting it if no
// transport did), or ctx ends.
func (s *Server) toolsStarted(ctx context.Context) error {
	s.Start()
	s.kickTools.Do(func() { close(s.needTools) })
	select {
	case <-s.started:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startTools lets the tools that need it prepare for calls under p.
func (s *Server) startTools(p *grants.Policy) {
	for _, t := range s.tools {
		if st, ok := t.(toolkit.Starter); ok {
			st.Start(p)
		}
	}
}

// Policy is the policy in force.
func (s *Server) Policy() *grants.Policy { return s.policy.Load() }

// Calls counts the tool calls begun so far (the command line releases
// memory once they stop for a while).
func (s *Server) Calls() uint64 { return s.callSeq.Load() }

// MCP exposes the underlying mcp-go server (for transports and tests).
func (s *Server) MCP() *mcpserver.MCPServer { return s.mcp }

// serverTools lists the tools the policy could ever let act, each described
// from that policy.
func (s *Server) serverTools(p *grants.Policy) []mcpserver.ServerTool {
	var out []mcpserver.ServerTool
	for _, t := range s.tools {
		listed := false
		for _, c := range t.Capabilities() {
			listed = listed || p.CanEver(c)
		}
		if !listed {
			continue
		}
		out = append(out, mcpserver.ServerTool{Tool: t.Definition(p), Handler: s.handler(t)})
	}
	return out
}

// ToolNames lists the tools the current policy lists.
func (s *Server) ToolNames() []string {
	var names []string
	for _, st := range s.serverTools(s.Policy()) {
		names = append(names, st.Tool.Name)
	}
	return names
}

// handler is the one path every call of tool t takes: validate, decide,
// audit, ask, and only then act.
func (s *Server) handler(t toolkit.Tool) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.call(ctx, t, req), nil
	}
}

// Outcomes of a call, as /metrics counts them.
const (
	outcomeOK            = "ok"
	outcomeToolError     = "tool_error"
	outcomeRefused       = "refused"
	outcomeInvalid       = "invalid_arguments"
	outcomeInputRequired = "input_required"
	outcomeAuditFailure  = "audit_failure"
)

func (s *Server) call(ctx context.Context, t toolkit.Tool, req mcp.CallToolRequest) *mcp.CallToolResult {
	ctx, span := s.startCallSpan(ctx, t, req)
	res, outcome := s.callOutcome(ctx, t, req, span)
	s.metrics.Calls.Inc(t.Name(), outcome)
	span.End(outcome, res.IsError)
	return res
}

// countDecisions counts audited decisions for /metrics.
func (s *Server) countDecisions(ds []grants.Decision) {
	for _, d := range ds {
		s.metrics.Decisions.Inc(d.Effect.String(), string(d.Reason))
	}
}

// approve puts a call's asks to the person, counting the wait.
func (s *Server) approve(ctx context.Context, call toolkit.ApprovalCall, span *telemetry.Call) (toolkit.ApprovalOutcome, *mcp.CallToolResult) {
	s.metrics.PendingApprovals.Add(1)
	defer s.metrics.PendingApprovals.Add(-1)
	start := time.Now()
	wait := span.StartApproval(ctx)
	outcome, pending := s.approver.Approve(ctx, call)
	wait.EndApproval(outcome.Reason, outcome.Channel, pending != nil)
	if pending == nil {
		s.metrics.ApprovalWait.Since(start, string(outcome.Reason))
	}
	return outcome, pending
}

func (s *Server) callOutcome(ctx context.Context, t toolkit.Tool, req mcp.CallToolRequest, span *telemetry.Call) (*mcp.CallToolResult, string) {
	p := s.narrowToRoots(ctx, s.Policy()) // the call finishes under the policy it started with
	principal := principalFrom(ctx)
	ref := callRef{id: fmt.Sprintf("c%d", s.callSeq.Add(1)), session: principal, tool: t.Name()}
	raw, err := rawArguments(req)
	if err != nil {
		return s.invalid(ref, err.Error()), outcomeInvalid
	}
	if _, ok := t.(toolkit.Starter); ok {
		if err := s.toolsStarted(ctx); err != nil {
			return s.refusePlan(ref, &toolkit.Refusal{Reason: grants.ReasonCancelled, Msg: "the call ended while the tool was starting: " + err.Error()}), outcomeRefused
		}
	}
	gate := &midAction{s: s, p: p, ref: ref, principal: principal}
	env := &toolkit.Env{Policy: p, Principal: principal, Ask: s.asker, Request: req, MidAction: gate.decide}
	plan, err := t.Plan(ctx, env, raw)
	if err != nil {
		if ae, ok := err.(*toolkit.ArgError); ok {
			return s.invalid(ref, ae.Msg), outcomeInvalid
		}
		if rf, ok := err.(*toolkit.Refusal); ok {
			return s.refusePlan(ref, rf), outcomeRefused
		}
		// Any other failure to plan is still a refused call: audited like
		// one, so no call leaves no trace.
		return s.refusePlan(ref, &toolkit.Refusal{Reason: grants.ReasonInvalidArguments, Msg: "the call could not be planned: " + err.Error()}), outcomeRefused
	}
	if _, ok := s.exposed.Load(principal); ok {
		for i := range plan.Requests {
			markCredentialFlow(&plan.Requests[i], p)
		}
	}
	decideStart := span.Now()
	verdict := p.DecideAll(plan.Requests)
	asked, decided := verdict.Decisions, span.Now()
	var hint string // how to get an approval channel, when none answered
	if verdict.Effect == grants.Ask {
		outcome, pending := s.approve(ctx, toolkit.ApprovalCall{
			Tool: t.Name(), Args: raw, Principal: principal, Request: req, Asks: verdict.Asks(), Policy: p,
		}, span)
		if pending != nil {
			span.Decided(ctx, p.Profile, asked, asked, decideStart, decided)
			return pending, outcomeInputRequired // the client answers and retries; the call is decided again then
		}
		verdict = settle(verdict, outcome)
		hint = outcome.Hint
		ref.channel = outcome.Channel
		gate.ref.channel, gate.approved = outcome.Channel, approvedAsks(verdict)
	}
	span.Decided(ctx, p.Profile, asked, verdict.Decisions, decideStart, decided)
	if err := s.audit.Decisions(ref, verdict.Decisions); err != nil {
		s.metrics.AuditFailures.Inc()
		return mcp.NewToolResultError(fmt.Sprintf("refused: the audit log cannot be written, so nothing runs (%v)", err)), outcomeAuditFailure
	}
	s.countDecisions(verdict.Decisions)
	if verdict.Effect != grants.Allow {
		res := refusal(t.Name(), verdict)
		if hint != "" {
			res.Content = append(res.Content, mcp.NewTextContent(hint))
		}
		return res, outcomeRefused
	}
	start := time.Now()
	runCtx, run := ctx, (*telemetry.Span)(nil)
	if t.Name() == shelltool.Name {
		runCtx, run = span.StartRun(ctx, runSurface(verdict))
	}
	res := plan.Run(runCtx, toolkit.Grant{Decisions: verdict.Decisions})
	if res.Tool == nil {
		res = toolkit.Failed("%s: no result", t.Name())
	}
	if t.Name() == shelltool.Name {
		result := commandResult(res.Outcome)
		s.metrics.CommandDuration.Since(start, result)
		if d := res.Outcome.SandboxStart; d > 0 {
			s.metrics.SandboxStart.Observe(d.Seconds())
		}
		run.EndRun(result, start, res.Outcome.SandboxStart)
	}
	// The action ran; a failure to record its outcome is said on stderr
	// by the log (once per failure streak).
	if s.audit.Outcome(ref, time.Since(start), res.Outcome) != nil {
		s.metrics.AuditFailures.Inc()
	}
	for _, c := range res.Outcome.Exposed {
		if c == grants.DataCredential {
			s.exposed.Store(principal, struct{}{})
		}
	}
	if res.Tool.IsError {
		return res.Tool, outcomeToolError
	}
	return res.Tool, outcomeOK
}

// runSurface is where a command runs: the surface its process.exec
// requests were decided for.
func runSurface(v grants.Verdict) grants.Surface {
	for _, d := range v.Decisions {
		if d.Request.Capability == grants.CapProcessExec && d.Request.Surface != grants.SurfaceNone {
			return d.Request.Surface
		}
	}
	return grants.SurfaceSandbox
}

// commandResult labels a command's outcome for /metrics.
func commandResult(o toolkit.Outcome) string {
	switch {
	case o.ExitCode == nil:
		return "not_run"
	case *o.ExitCode == 0:
		return "ok"
	}
	return "failed"
}

// settle applies a person's answer to the asks of a verdict. A verdict
// without decisions stays refused: nothing was approved.
func settle(v grants.Verdict, o toolkit.ApprovalOutcome) grants.Verdict {
	if len(v.Decisions) == 0 {
		return grants.Verdict{Effect: grants.Deny}
	}
	out := grants.Verdict{Effect: grants.Allow, Decisions: make([]grants.Decision, len(v.Decisions))}
	for i, d := range v.Decisions {
		if d.Effect == grants.Ask {
			d.Reason = o.Reason
			if o.Approved {
				d.Effect = grants.Allow
			} else {
				d.Effect = grants.Deny
			}
		}
		if d.Effect < out.Effect {
			out.Effect = d.Effect
		}
		out.Decisions[i] = d
	}
	return out
}

// markCredentialFlow adds the credential data class to requests that could
// carry data off the machine once the principal has seen credential data.
func markCredentialFlow(r *grants.Request, p *grants.Policy) {
	outbound := r.Capability.IsNetwork() ||
		(r.Capability == grants.CapProcessExec && p.Sandbox.Network != "none")
	if outbound && !r.HasClass(grants.DataCredential) {
		r.DataClasses = append(r.DataClasses, grants.DataCredential)
	}
}

func (s *Server) invalid(ref callRef, msg string) *mcp.CallToolResult {
	if s.audit.Invalid(ref, msg) != nil { // a refusal either way; a failure is said by the log
		s.metrics.AuditFailures.Inc()
	}
	return mcp.NewToolResultError(fmt.Sprintf("%s: invalid arguments (reason %s): %s", ref.tool, grants.ReasonInvalidArguments, msg))
}

// refusePlan records and returns a call a tool refused while planning.
func (s *Server) refusePlan(ref callRef, rf *toolkit.Refusal) *mcp.CallToolResult {
	if s.audit.Refused(ref, rf.Reason, rf.Msg) != nil { // a refusal either way; a failure is said by the log
		s.metrics.AuditFailures.Inc()
	}
	return mcp.NewToolResultError(fmt.Sprintf("%s refused (reason %s): %s", ref.tool, rf.Reason, rf.Msg))
}

// refusal is the tool error for a call that was not allowed: every refused
// request with its rule and reason, so the model can adapt.
func refusal(tool string, v grants.Verdict) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "%s refused; nothing was done.\n", tool)
	for _, d := range v.Decisions {
		if d.Effect != grants.Allow {
			fmt.Fprintf(&b, "- %s\n", d.Explain())
		}
	}
	if len(v.Decisions) == 0 {
		b.WriteString("- the call made no request the policy could decide\n")
	}
	return mcp.NewToolResultError(strings.TrimRight(b.String(), "\n"))
}

// rawArguments returns the call's arguments as JSON, as the client sent them
// when available.
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	if req.Params.Arguments == nil {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return nil, fmt.Errorf("arguments cannot be encoded: %v", err)
	}
	return b, nil
}

type principalKey struct{}

// WithPrincipal returns a context carrying an authenticated principal (the
// HTTP transport sets the token's identity).
func WithPrincipal(ctx context.Context, p string) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principalFrom names who is calling: the authenticated principal and the
// MCP session when there is one; on stdio, the one connected client.
func principalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	if p == "" {
		p = "stdio"
	}
	if sess := mcpserver.ClientSessionFromContext(ctx); sess != nil && sess.SessionID() != "" && sess.SessionID() != "stdio" {
		p += "/" + sess.SessionID()
	}
	return p
}
