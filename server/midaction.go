package server

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// midAction is the gate of one call for the requests that arise while its
// action runs (toolkit.Env.MidAction): a redirect's next hop, an egress
// proxy destination, a program the running command executes. It decides
// under the call's policy, audits every decision with the call's id, and
// lets nothing but Allow through. No person can be asked mid-action, so an
// ask holds only when that exact request was approved in this call or is
// remembered for the principal's session; otherwise it is denied with
// reason approval_unavailable.
type midAction struct {
	s         *Server
	p         *grants.Policy
	ref       callRef
	principal string
	// approved are this call's asks a person approved. They are set once,
	// after the approval and before the action runs (so before any
	// mid-action request), and only read afterwards.
	approved []grants.Decision
}

// decide implements toolkit.MidAction.
func (m *midAction) decide(ctx context.Context, r grants.Request, stage grants.Stage) (grants.Decision, error) {
	var start time.Time
	if m.s.tel != nil {
		start = time.Now()
	}
	if _, ok := m.s.exposed.Load(m.principal); ok {
		markCredentialFlow(&r, m.p)
	}
	var d grants.Decision
	switch stage {
	case grants.StageHop:
		d = m.p.Decide(r)
	case grants.StageExec:
		if r.Surface == grants.SurfaceNone {
			r.Surface = grants.SurfaceSandbox // only the sandbox sees a command's own execs
		}
		d = m.p.DecideExec(r)
	default:
		d = grants.Decision{Request: r, Effect: grants.Deny, Reason: grants.ReasonInvalidArguments}
	}
	ref := m.ref
	ref.stage = stage.String()
	asked := d
	if d.Effect == grants.Ask {
		d, ref.channel = m.settleAsk(d)
		if d.Effect != grants.Allow && stage == grants.StageExec && r.Under != nil {
			d, ref.channel, ref.detail = m.settleUnder(asked, r, *r.Under)
		}
	}
	if err := m.s.audit.Decisions(ref, []grants.Decision{d}); err != nil {
		m.s.metrics.AuditFailures.Inc()
		d.Effect = grants.Deny // unaudited means refused (the log says why on stderr, once per failure streak)
		m.s.tel.Decided(ctx, m.p.Profile, asked, d, ref.stage, start)
		return d, &toolkit.MidActionRefused{Decision: d, Err: fmt.Errorf("the audit log cannot be written: %w", err)}
	}
	m.s.tel.Decided(ctx, m.p.Profile, asked, d, ref.stage, start)
	m.s.countDecisions([]grants.Decision{d})
	if d.Effect != grants.Allow {
		return d, &toolkit.MidActionRefused{Decision: d}
	}
	return d, nil
}

// settleAsk answers a mid-action ask without a person: an approval of this
// exact request given in this call, or one remembered for the session, or
// a deny (approval_unavailable). It returns the channel to record.
func (m *midAction) settleAsk(d grants.Decision) (grants.Decision, string) {
	for _, a := range m.approved {
		if sameApproval(a.Request, d.Request) {
			d.Effect, d.Reason = grants.Allow, a.Reason
			return d, m.ref.channel
		}
	}
	if m.s.approver.Remembered(m.principal, d) {
		d.Effect, d.Reason = grants.Allow, grants.ReasonApprovedForSession
		return d, "memory"
	}
	d.Effect, d.Reason = grants.Deny, grants.ReasonApprovalUnavailable
	return d, ""
}

// settleUnder settles the exec-time ask d (of the request r) as under is
// decided, the request whose program started r's as its plumbing
// (grants.Request.Under: the exec gate says so, narrowly): under, a
// process.exec request on the same resource, asked about itself and
// settled by an approval in this call or for the session, allows d with
// that approval's reason; under allowed without asking allows d only when
// d is the built-in ask at critical risk (git gives its helpers GIT_DIR,
// which makes their push forms critical), never an ask rule the person
// wrote. d keeps its rule; the record's detail says what it ran under.
// Otherwise d is refused as an ask no one can answer.
func (m *midAction) settleUnder(d grants.Decision, r, under grants.Request) (grants.Decision, string, string) {
	refused := d
	refused.Effect, refused.Reason = grants.Deny, grants.ReasonApprovalUnavailable
	if under.Capability != grants.CapProcessExec || under.Target.Resource != r.Target.Resource || under.Target.ToolName != r.Target.ToolName {
		return refused, "", ""
	}
	if under.Surface == grants.SurfaceNone {
		under.Surface = grants.SurfaceSandbox
	}
	u, channel := m.p.DecideExec(under), ""
	switch {
	case u.Effect == grants.Ask:
		u, channel = m.settleAsk(u)
	case u.Effect == grants.Allow && d.RuleID != grants.RuleExecCriticalRisk:
		return refused, "", ""
	}
	if u.Effect != grants.Allow {
		return refused, "", ""
	}
	d.Effect, d.Reason = grants.Allow, u.Reason
	return d, channel, "run as the plumbing of " + under.Target.Command + " (" + string(u.Reason) + ")"
}

// approvedAsks are the decisions of a settled verdict that a person's
// approval turned into Allow.
func approvedAsks(v grants.Verdict) []grants.Decision {
	var out []grants.Decision
	for _, d := range v.Decisions {
		if d.Effect == grants.Allow && (d.Reason == grants.ReasonApproved || d.Reason == grants.ReasonApprovedForSession) {
			out = append(out, d)
		}
	}
	return out
}

// sameApproval reports whether an approval given for a holds for b: the
// same capability, exact target and argv, at the same risk, with the same
// data classes, in the same working folder, so an approval never stretches
// to a riskier or more sensitive request, nor to the same words in another
// folder (the approved `git push origin main` is no approval of a script's
// `cd ../other && git push origin main`: review rev20c M2). A request
// whose folder the line could not know (grants.CwdKnownWhenRun: cd "$d"
// before it) holds in any folder of the call: the person saw that cd.
func sameApproval(a, b grants.Request) bool {
	if a.KeyInCall() != b.KeyInCall() || a.Risk != b.Risk || len(a.DataClasses) != len(b.DataClasses) {
		return false
	}
	if a.Cwd != b.Cwd && a.Cwd != grants.CwdKnownWhenRun {
		return false
	}
	for _, c := range a.DataClasses {
		if !slices.Contains(b.DataClasses, c) {
			return false
		}
	}
	return true
}
