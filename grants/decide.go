package grants

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
)

// Decision is the policy's answer to one request. The zero value denies.
type Decision struct {
	Request Request `json:"request"`
	Effect  Effect  `json:"effect"`
	Reason  Reason  `json:"reason_code"`
	RuleID  string  `json:"rule_id,omitempty"`
	// ApprovalExpires is how long an "allow for session" answer to this ask
	// holds (0: once).
	ApprovalExpires time.Duration `json:"-"`
	// AllowPrivate is set when the deciding rule lets this host resolve to a
	// loopback or private address.
	AllowPrivate bool `json:"-"`
}

// Explain renders the decision in one line for refusals, logs and explain.
func (d Decision) Explain() string {
	s := fmt.Sprintf("%s: %s (reason %s", d.Request.Describe(), d.Effect, d.Reason)
	if d.RuleID != "" {
		s += ", rule " + d.RuleID
	}
	return s + ", risk " + d.Request.Risk.String() + ")"
}

// Verdict is the decision on a whole call: one deny denies it; otherwise
// every ask is gathered for one approval; otherwise it is allowed.
type Verdict struct {
	Effect    Effect
	Decisions []Decision // one per request, in request order
}

// Asks returns the decisions that need a person.
func (v Verdict) Asks() []Decision {
	var out []Decision
	for _, d := range v.Decisions {
		if d.Effect == Ask {
			out = append(out, d)
		}
	}
	return out
}

// FirstDeny returns the first denying decision, if any.
func (v Verdict) FirstDeny() (Decision, bool) {
	for _, d := range v.Decisions {
		if d.Effect == Deny {
			return d, true
		}
	}
	return Decision{}, false
}

// DecideAll decides every request of one call. A call with no requests is
// denied: a tool that acts must say what it does.
func (p *Policy) DecideAll(reqs []Request) Verdict {
	v := Verdict{Effect: Allow, Decisions: make([]Decision, len(reqs))}
	if len(reqs) == 0 {
		return Verdict{Effect: Deny}
	}
	for i, r := range reqs {
		d := p.Decide(r)
		v.Decisions[i] = d
		if d.Effect < v.Effect {
			v.Effect = d.Effect
		}
	}
	return v
}

// Decide decides one request: built-in protections, then deny > ask > allow
// rules, then the mode. It does no I/O.
func (p *Policy) Decide(r Request) Decision {
	deny := func(reason Reason, rule string) Decision {
		return Decision{Request: r, Effect: Deny, Reason: reason, RuleID: rule}
	}
	if !r.Capability.Known() {
		return deny(ReasonUnknownCapability, "")
	}
	if r.Risk < RiskLow || r.Risk > RiskCritical {
		r.Risk = BaseRisk(r.Capability, r.Surface)
	}
	if r.Capability.IsFile() {
		if !path.IsAbs(r.Target.Path) || path.Clean(r.Target.Path) != r.Target.Path {
			return deny(ReasonInvalidArguments, "")
		}
		if IsCredentialPath(r.Target.Path) && !r.HasClass(DataCredential) {
			r.DataClasses = append(slices.Clip(r.DataClasses), DataCredential)
		}
		if r.Capability.Mutates() {
			if slices.Contains(p.protected, r.Target.Path) {
				return deny(ReasonProtectedPath, RuleProtectedPath)
			}
			if isGitCodePath(r.Target.Path) && !p.namesExactly(r) {
				return deny(ReasonProtectedPath, RuleGitCodeFiles)
			}
		}
	}
	if r.HasClass(DataCredential) && !p.credentialFlowAllowed(r) {
		return deny(ReasonMatchedDeny, RuleDenyCredentialFlow)
	}
	if rule := firstMatch(p.deny, r, p); rule != nil {
		return deny(ReasonMatchedDeny, rule.ID)
	}
	d := Decision{Request: r}
	if rule := firstMatch(p.ask, r, p); rule != nil {
		d.Effect, d.Reason, d.RuleID = Ask, ReasonMatchedAsk, rule.ID
		d.ApprovalExpires = rule.expires
		if rule.sandboxRequired && r.Surface == SurfaceHost {
			return deny(ReasonSandboxUnavailable, rule.ID)
		}
	} else if rule := firstMatch(p.allow, r, p); rule != nil {
		d.Effect, d.Reason, d.RuleID = Allow, ReasonMatchedAllow, rule.ID
		if rule.sandboxRequired && r.Surface == SurfaceHost {
			return deny(ReasonSandboxUnavailable, rule.ID)
		}
	} else {
		d.Reason, d.RuleID = ReasonUnknownCapability, RuleMode
		switch p.Mode {
		case ModePermissive:
			d.Effect = Allow
		case ModeInteractive:
			d.Effect = Ask
		default:
			d.Effect = Deny
		}
	}
	if r.Private && d.Effect != Deny {
		d.AllowPrivate = p.privateAllowed(r)
		if !d.AllowPrivate {
			return deny(ReasonMatchedDeny, RuleDenyPrivateAddress)
		}
	}
	return d
}

// privateAllowed reports whether an allow or ask rule that names this host
// sets allow_private.
func (p *Policy) privateAllowed(r Request) bool {
	for _, rules := range [][]*Rule{p.ask, p.allow} {
		for _, rule := range rules {
			if rule.allowPrivate && rule.matches(r, p) {
				return true
			}
		}
	}
	return false
}

// RuleDenyPrivateAddress is recorded when a network request's host resolves
// to a private address and no rule naming that host sets allow_private.
const RuleDenyPrivateAddress = "deny_private_address"

// namesExactly reports whether an allow or ask rule names this request's path
// literally (no glob): the only way to write git's code-running files.
func (p *Policy) namesExactly(r Request) bool {
	for _, rules := range [][]*Rule{p.ask, p.allow} {
		for _, rule := range rules {
			if rule.path != nil && rule.path.literal && rule.matches(r, p) {
				return true
			}
		}
	}
	return false
}

// credentialFlowAllowed reports whether an allow rule lets credential data
// through: for a file, a rule naming that exact path; otherwise a rule that
// lists the credential data class and names its host or resource literally.
func (p *Policy) credentialFlowAllowed(r Request) bool {
	for _, rule := range p.allow {
		if !rule.matches(r, p) {
			continue
		}
		if r.Capability.IsFile() {
			if rule.path != nil && rule.path.literal {
				return true
			}
			continue
		}
		named := (rule.host != nil && rule.host.literal) || (rule.resource != nil && !hasGlobMeta(rule.resource.pattern))
		if named && slices.Contains(rule.classes, DataCredential) {
			return true
		}
	}
	return false
}

func firstMatch(rules []*Rule, r Request, p *Policy) *Rule {
	for _, rule := range rules {
		if rule.matches(r, p) {
			return rule
		}
	}
	return nil
}

func capBit(c Capability) uint32 {
	return 1 << slices.Index(capabilities, c)
}

// matches reports whether the rule applies to the request. A target field
// the rule constrains but the request lacks does not match.
func (rule *Rule) matches(r Request, p *Policy) bool {
	if rule.caps&capBit(r.Capability) == 0 {
		return false
	}
	t := r.Target
	if rule.tool != nil && !rule.tool.match(t.ToolName) {
		return false
	}
	if rule.path != nil && (t.Path == "" || !rule.path.match(t.Path)) {
		return false
	}
	if rule.host != nil && (t.Host == "" || !rule.host.match(t.Host)) {
		return false
	}
	if rule.resource != nil && (t.Resource == "" || !rule.resource.match(t.Resource)) {
		return false
	}
	if rule.command != nil && (t.Command == "" || !rule.command.match(t.Command)) {
		return false
	}
	if len(rule.risks) > 0 && !slices.Contains(rule.risks, r.Risk) {
		return false
	}
	if rule.surface != SurfaceNone && rule.surface != r.Surface {
		return false
	}
	if slices.Contains(rule.exclSurface, r.Surface) && r.Surface != SurfaceNone {
		return false
	}
	for _, g := range rule.exclCaps {
		if matchCapability(g, r.Capability) {
			return false
		}
	}
	if len(rule.methods) > 0 && !slices.Contains(rule.methods, strings.ToUpper(t.Method)) {
		return false
	}
	if len(rule.classes) > 0 && !slices.ContainsFunc(rule.classes, r.HasClass) {
		return false
	}
	if rule.unconfiguredSecretsOnly {
		if _, configured := p.Secrets[t.Resource]; configured && r.Capability == CapSecretUse {
			return false
		}
	}
	return true
}

// BaseRisk is a request's risk before a tool knows more (a destructive
// command, an option that runs code).
func BaseRisk(c Capability, s Surface) Risk {
	switch {
	case c == CapWorkspaceRead || c == CapUserAsk:
		return RiskLow
	case c == CapWorkspaceWrite:
		return RiskMedium
	case c == CapProcessExec:
		if s == SurfaceHost {
			return RiskHigh
		}
		return RiskMedium
	case c == CapHTTPGet || c == CapHTTPHead || c == CapHTTPOptions || c == CapSecretUse:
		return RiskMedium
	}
	return RiskHigh
}

// CanEver reports whether any request of capability c could be allowed or
// put to a person. A tool whose capabilities all answer false is not listed.
func (p *Policy) CanEver(c Capability) bool {
	for _, rule := range p.deny {
		if rule.caps&capBit(c) != 0 && rule.unconditional() {
			return false
		}
	}
	if p.Mode != ModeStrict {
		return true
	}
	for _, rules := range [][]*Rule{p.ask, p.allow} {
		for _, rule := range rules {
			if rule.caps&capBit(c) != 0 {
				return true
			}
		}
	}
	return false
}

// unconditional reports whether the rule matches every request of its
// capabilities.
func (rule *Rule) unconditional() bool {
	return rule.tool == nil && rule.path == nil && rule.host == nil && rule.resource == nil &&
		rule.command == nil && len(rule.risks) == 0 && rule.surface == SurfaceNone &&
		len(rule.exclSurface) == 0 && len(rule.exclCaps) == 0 && len(rule.methods) == 0 &&
		len(rule.classes) == 0 && !rule.unconfiguredSecretsOnly
}
