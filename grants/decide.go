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
	d := p.decide(r)
	// A workspace narrowed to a client's root makes the rest of the
	// configured workspace "outside" (filesystem.*); such a request must
	// not escape the workspace rules it had: the stricter answer stands.
	if o := p.outer; o != nil && d.Effect != Deny && o.InWorkspace(r.Target.Path) {
		if wc, ok := workspaceTwin(r.Capability); ok {
			w := r
			w.Capability = wc
			if d2 := o.Decide(w); d2.Effect < d.Effect {
				d2.Request = d.Request
				return d2
			}
		}
	}
	return d
}

// workspaceTwin is the workspace capability a filesystem capability stands
// for inside the workspace.
func workspaceTwin(c Capability) (Capability, bool) {
	switch c {
	case CapFilesystemRead:
		return CapWorkspaceRead, true
	case CapFilesystemWrite:
		return CapWorkspaceWrite, true
	case CapFilesystemDelete:
		return CapWorkspaceDelete, true
	}
	return "", false
}

func (p *Policy) decide(r Request) Decision {
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
		// workspace.files.* speaks of the workspace only: a path beyond it
		// under that name would borrow the workspace's rules.
		if strings.HasPrefix(string(r.Capability), "workspace.") && !p.InWorkspace(r.Target.Path) {
			return deny(ReasonInvalidArguments, "")
		}
		if p.InStateDir(r.Target.Path) {
			return deny(ReasonProtectedPath, RuleProtectedPath)
		}
		isSecret := slices.Contains(p.secretFiles, r.Target.Path)
		if (isSecret || IsCredentialPath(r.Target.Path)) && !r.HasClass(DataCredential) {
			r.DataClasses = append(slices.Clip(r.DataClasses), DataCredential)
		}
		if isSecret {
			// A brokered secret's source: its value reaches requests only
			// through the broker, never a tool, so no rule can lift this.
			return deny(ReasonProtectedPath, RuleProtectedPath)
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
	v := newView(r)
	deny_, ask_, allow_ := p.rulesFor(v.idx)
	if rule := firstMatch(deny_, &v, p); rule != nil {
		return deny(ReasonMatchedDeny, rule.ID)
	}
	d := Decision{Request: r}
	if rule := firstMatch(ask_, &v, p); rule != nil {
		d.Effect, d.Reason, d.RuleID = Ask, ReasonMatchedAsk, rule.ID
		d.ApprovalExpires = rule.expires
		if rule.sandboxRequired && r.Surface == SurfaceHost {
			return deny(ReasonSandboxUnavailable, rule.ID)
		}
	} else if rule := firstMatch(allow_, &v, p); rule != nil {
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

func firstMatch(l *ruleList, v *reqView, p *Policy) *Rule {
	if l == nil {
		return nil
	}
	path := v.r.Target.Path
	switch {
	case l.byBase == nil:
		// Few path rules: a plain scan is cheapest.
		for _, rule := range l.all {
			if rule.matchView(v, p) {
				return rule
			}
		}
		return nil
	case path == "":
		// Path rules never match a request without a path.
		for _, i := range l.pathless {
			if rule := l.all[i]; rule.matchView(v, p) {
				return rule
			}
		}
		return nil
	}
	// Only rules without a path, and path rules whose literal folder is the
	// request's path or one of its ancestors, can match; try them in order
	// by merging the two sorted index lists.
	var buf [32]int
	extra := buf[:0]
	for dir := path; ; {
		extra = append(extra, l.byBase[dir]...)
		if dir == "/" {
			break
		}
		if i := strings.LastIndexByte(dir, '/'); i > 0 {
			dir = dir[:i]
		} else {
			dir = "/"
		}
	}
	slices.Sort(extra)
	for i, j := 0, 0; i < len(l.pathless) || j < len(extra); {
		var k int
		if j == len(extra) || (i < len(l.pathless) && l.pathless[i] < extra[j]) {
			k, i = l.pathless[i], i+1
		} else {
			k, j = extra[j], j+1
		}
		if rule := l.all[k]; rule.matchView(v, p) {
			return rule
		}
	}
	return nil
}

// ruleList is the rules of one effect for one capability, in order, with
// the path rules indexed by the literal folder their pattern starts with
// (the exact path for a literal pattern): a path request checks only the
// rules that could match it, which keeps many path rules cheap.
type ruleList struct {
	all      []*Rule
	pathless []int
	byBase   map[string][]int
}

// indexedPathRules is how many path rules a list needs before indexing them
// pays for walking a request path's folders.
const indexedPathRules = 16

func newRuleList(rules []*Rule) ruleList {
	l := ruleList{all: rules}
	byBase := map[string][]int{}
	paths := 0
	for i, r := range rules {
		key := ""
		if r.path != nil {
			key = r.path.base
			if r.path.literal {
				key = r.path.pattern
			}
			key = strings.TrimSuffix(key, "/")
			if key == "" {
				key = "/"
			}
		}
		if r.path == nil {
			l.pathless = append(l.pathless, i)
			continue
		}
		byBase[key] = append(byBase[key], i)
		paths++
	}
	if paths >= indexedPathRules {
		l.byBase = byBase
	}
	return l
}

// capBit is c's bit in Rule.caps; 0 for an unknown capability, which no
// rule matches.
func capBit(c Capability) uint32 {
	i := slices.Index(capabilities, c)
	if i < 0 {
		return 0
	}
	return 1 << i
}

// matches reports whether the rule applies to the request. A target field
// the rule constrains but the request lacks does not match.
func (rule *Rule) matches(r Request, p *Policy) bool {
	v := newView(r)
	return rule.matchView(&v, p)
}

// reqView is a request with what matching needs computed once per decision
// rather than once per rule.
type reqView struct {
	r      Request
	idx    int    // index in capabilities, -1 when unknown
	bit    uint32 // capBit
	host   string // lower case, no trailing dot
	labels []string
	words  []string // the command's words
}

func newView(r Request) reqView {
	v := reqView{r: r, idx: slices.Index(capabilities, r.Capability)}
	if v.idx >= 0 {
		v.bit = 1 << v.idx
	}
	if r.Target.Host != "" {
		v.host = strings.TrimSuffix(strings.ToLower(r.Target.Host), ".")
		v.labels = strings.Split(v.host, ".")
	}
	if r.Target.Command != "" {
		v.words = strings.Fields(r.Target.Command)
	}
	return v
}

// rulesFor returns the deny, ask and allow rules that can apply to the
// capability with index idx, in evaluation order.
func (p *Policy) rulesFor(idx int) (deny, ask, allow *ruleList) {
	if idx < 0 || idx >= len(p.byCap) {
		return nil, nil, nil
	}
	b := &p.byCap[idx]
	return &b[Deny], &b[Ask], &b[Allow]
}

// indexRules fills byCap from the deny, ask and allow lists.
func (p *Policy) indexRules() {
	p.byCap = make([][3]ruleList, len(capabilities))
	for i := range capabilities {
		for effect, rules := range map[Effect][]*Rule{Deny: p.deny, Ask: p.ask, Allow: p.allow} {
			var mine []*Rule
			for _, rule := range rules {
				if rule.caps&(1<<i) != 0 {
					mine = append(mine, rule)
				}
			}
			p.byCap[i][effect] = newRuleList(mine)
		}
	}
}

func (rule *Rule) matchView(v *reqView, p *Policy) bool {
	r := &v.r
	if rule.caps&v.bit == 0 {
		return false
	}
	t := &r.Target
	if rule.tool != nil && !rule.tool.match(t.ToolName) {
		return false
	}
	if rule.path != nil && (t.Path == "" || !rule.path.match(t.Path)) {
		return false
	}
	if rule.host != nil && (t.Host == "" || !rule.host.matchLabels(v.host, v.labels)) {
		return false
	}
	if rule.resource != nil && (t.Resource == "" || !rule.resource.match(t.Resource)) {
		return false
	}
	if rule.command != nil && (t.Command == "" || !rule.command.matchPrepared(t.Command, v.words)) {
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
	if len(rule.methods) > 0 && !rule.methodMatches(*r) {
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

// methodMatches reports whether the request's HTTP method is one the rule
// lists. A request without Target.Method takes it from its capability, so a
// deny rule on a method cannot be missed by a tool that left it out.
func (rule *Rule) methodMatches(r Request) bool {
	m := r.Target.Method
	if m == "" && r.Capability.IsNetwork() {
		m = strings.TrimPrefix(string(r.Capability), "network.http.")
	}
	for _, x := range rule.methods {
		if strings.EqualFold(x, m) {
			return true
		}
	}
	return false
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
	if !c.Known() {
		return false
	}
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
