package grants

import "slices"

// Stage says when a request arises, and so which decision applies to it.
// The zero value is no stage: a request that names none is refused.
type Stage int

// Stages of a call at which a request is decided while its action runs
// (the call's own requests are decided before it runs, with DecideAll).
const (
	// StageHop is a request a running action makes on its way, decided by
	// Decide exactly as if the call had made it: a redirect's next hop, an
	// egress proxy destination, a secret attached to them, a credential
	// file a command could read (hidden unless allowed).
	StageHop Stage = iota + 1
	// StageExec is a program that a running command executes (a child of
	// the command line, seen by the sandbox's exec gate). It is decided by
	// DecideExec.
	StageExec
)

func (s Stage) String() string {
	switch s {
	case StageHop:
		return "hop"
	case StageExec:
		return "exec"
	}
	return "none"
}

// Built-in rule ids of exec-time decisions (DecideExec).
const (
	// RuleExecUnderCommandLine allows a program no deny rule, no ask rule
	// naming it and no critical risk stops: it runs under the decision of
	// the command line that started it (which was decided, and asked about,
	// before anything ran).
	RuleExecUnderCommandLine = "exec_under_command_line"
	// RuleExecCriticalRisk asks about a program at critical risk that no
	// ask rule names; only an approval given in the same call lets it run.
	RuleExecCriticalRisk = "exec_critical_risk"
)

// DecideExec decides a program that a running command executes. The line
// that started it was decided in full before it ran; at exec time only what
// the person wrote about programs is enforced again, so ordinary builds are
// not turned into a string of refusals:
//
//   - a deny rule or a built-in protection that matches denies;
//   - an ask rule whose target names a resource or a command pattern
//     (`ask git push*`) asks;
//   - a program at critical risk asks (rule exec_critical_risk, which no
//     session approval holds: only an approval in the same call);
//   - everything else is allowed (reason matched_allow, with the allow rule
//     that matches, or rule exec_under_command_line): the mode, and ask
//     rules that match by capability or risk alone, do not refuse a program
//     at exec time.
//
// A package.install request (an install a running program makes: a
// Makefile's `npm i x`, pip's build isolation installing setuptools, tox
// or pre-commit filling their environments) is decided by DecideExecInstall.
//
// No person can be asked inside a running command: the caller (the server's
// mid-action gate) turns an Ask into an Allow only for a request approved in
// the same call or remembered for the session, and into a Deny otherwise.
// It does no I/O.
func (p *Policy) DecideExec(r Request) Decision {
	switch r.Capability {
	case CapPackageInstall:
		return p.decideExecInstall(r)
	case CapProcessExec:
	default:
		return Decision{Request: r, Effect: Deny, Reason: ReasonInvalidArguments}
	}
	d := p.Decide(r)
	if d.Effect == Deny && d.RuleID != RuleMode {
		return d // a deny rule, or a protection above every rule
	}
	r = d.Request // with the defaults Decide filled in (risk)
	v := newView(r)
	_, ask, allow := p.rulesFor(v.idx)
	for _, rule := range ask.all {
		if (rule.resource != nil || rule.command != nil) && rule.matchView(&v, p) {
			return Decision{Request: r, Effect: Ask, Reason: ReasonMatchedAsk, RuleID: rule.ID, ApprovalExpires: rule.expires}
		}
	}
	if r.Risk >= RiskCritical {
		// Never remembered for the session (no approval is stored under
		// this rule id): only this call's approval lets it run.
		return Decision{Request: r, Effect: Ask, Reason: ReasonMatchedAsk, RuleID: RuleExecCriticalRisk}
	}
	if rule := firstMatch(allow, &v, p); rule != nil {
		return Decision{Request: r, Effect: Allow, Reason: ReasonMatchedAllow, RuleID: rule.ID}
	}
	return Decision{Request: r, Effect: Allow, Reason: ReasonMatchedAllow, RuleID: RuleExecUnderCommandLine}
}

// decideExecInstall decides an install a running program makes. What the
// person wrote about packages and indexes holds: a deny rule, a protection
// and the mode's deny deny (strict-production admits an index by an allow
// rule only, inside a command too); an ask rule whose target names a
// package or a host asks. An ask by capability alone (interactive-dev's
// ask on every install) does not refuse it: the line that started the
// program was asked, and installers install from within an approved
// install (pip's build isolation, npm's git dependencies, tox and
// pre-commit's environments); the egress proxy's network rules bound
// where it fetches from.
func (p *Policy) decideExecInstall(r Request) Decision {
	d := p.Decide(r)
	if d.Effect != Ask {
		return d
	}
	r = d.Request
	v := newView(r)
	_, ask, allow := p.rulesFor(v.idx)
	for _, rule := range ask.all {
		if (rule.resource != nil || rule.host != nil) && rule.matchView(&v, p) {
			return Decision{Request: r, Effect: Ask, Reason: ReasonMatchedAsk, RuleID: rule.ID, ApprovalExpires: rule.expires}
		}
	}
	if rule := firstMatch(allow, &v, p); rule != nil {
		return Decision{Request: r, Effect: Allow, Reason: ReasonMatchedAllow, RuleID: rule.ID}
	}
	return Decision{Request: r, Effect: Allow, Reason: ReasonMatchedAllow, RuleID: RuleExecUnderCommandLine}
}

// RuleDecidesExec reports whether a rule or a protection refuses or asks
// about the exec-time request r at its risk (DecideExec's answer is no
// Allow and not its built-in exec_critical_risk ask). The sandbox's exec
// gate asks it to see whether an emptying's own words are decided at the
// emptying's critical risk: it only raises what is decided, so it lets
// nothing happen itself.
func (p *Policy) RuleDecidesExec(r Request) bool {
	d := p.DecideExec(r)
	return d.Effect != Allow && d.RuleID != RuleExecCriticalRisk
}

// NamesProgram reports whether a deny rule or an ask rule on process.exec
// can name a program called name: its resource glob matches name, or the
// first word of its command pattern does (a regular expression counts as
// naming every program). The sandbox's exec gate recognises such programs
// by identity and content too, whatever a copy of them is called. Rules
// that name no program (by capability or risk alone) do not count.
func (p *Policy) NamesProgram(name string) bool {
	deny, ask, _ := p.rulesFor(slices.Index(capabilities, CapProcessExec))
	for _, l := range []*ruleList{deny, ask} {
		for _, rule := range l.all {
			if rule.namesProgram(name) {
				return true
			}
		}
	}
	return false
}

func (rule *Rule) namesProgram(name string) bool {
	if rule.resource == nil && rule.command == nil {
		return false
	}
	if rule.resource != nil && !rule.resource.match(name) {
		return false
	}
	if c := rule.command; c != nil && c.re == nil && !matchWord(c.words[0], name) {
		return false
	}
	return true
}
