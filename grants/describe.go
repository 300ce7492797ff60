package grants

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Summary describes, for a tool's description, what the policy lets the
// given capabilities touch: every rule that can apply, in the order they
// decide, then the mode. It is generated from the compiled rules that
// decide, so the model is told what is enforced.
func (p *Policy) Summary(caps ...Capability) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Policy in force (profile %s, mode %s; workspace %s):\n", orString(p.Profile, "none"), p.Mode, p.Workspace)
	var mask uint32
	for _, c := range caps {
		mask |= capBit(c)
	}
	fmt.Fprintf(&b, "- always denied: files that look like credentials (.env, *.pem, *.key, id_rsa*, .ssh/…) unless a rule names the exact path")
	if slices.ContainsFunc(caps, Capability.Mutates) {
		b.WriteString("; writing the config, the audit log or the server's binary; a git directory's config, hooks and anything else but objects, refs, logs, index, HEAD and the other record files, unless a rule names the exact path")
	}
	if slices.ContainsFunc(caps, Capability.IsNetwork) {
		b.WriteString("; loopback, private and metadata addresses unless a rule names the host with allow_private")
	}
	b.WriteString("\n")
	for _, group := range []struct {
		label string
		rules []*Rule
	}{{"denied", p.deny}, {"asks a person", p.ask}, {"allowed", p.allow}} {
		for _, r := range group.rules {
			if r.caps&mask == 0 {
				continue
			}
			fmt.Fprintf(&b, "- %s: %s (rule %s)\n", group.label, r.describe(), r.ID)
		}
	}
	switch p.Mode {
	case ModePermissive:
		b.WriteString("- anything else: allowed (mode permissive)\n")
	case ModeInteractive:
		b.WriteString("- anything else: asks a person (mode interactive)\n")
	default:
		b.WriteString("- anything else: denied (mode strict)\n")
	}
	b.WriteString("A refused call says which request was refused, by which rule and why.")
	return b.String()
}

// describe renders the rule's capability, target and conditions compactly.
func (r *Rule) describe() string {
	parts := []string{r.Capability}
	t := r.Config.Target
	for _, kv := range [][2]string{{"tool", t.ToolName}, {"path", r.pathPattern()}, {"host", t.Host}, {"resource", t.Resource}, {"command", t.Command}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	c := r.Config.Conditions
	if len(c.RiskLevel) > 0 {
		parts = append(parts, "risk "+strings.Join(c.RiskLevel, "/"))
	}
	if c.ExecutionSurface != "" {
		parts = append(parts, "on the "+c.ExecutionSurface)
	}
	if len(c.ExcludeExecutionSurface) > 0 {
		parts = append(parts, "not on the "+strings.Join(c.ExcludeExecutionSurface, "/"))
	}
	if len(c.ExcludeCapability) > 0 {
		parts = append(parts, "except "+strings.Join(c.ExcludeCapability, ", "))
	}
	if len(c.Method) > 0 {
		parts = append(parts, "method "+strings.Join(c.Method, "/"))
	}
	if len(c.DataClasses) > 0 {
		parts = append(parts, "carrying "+strings.Join(c.DataClasses, "/"))
	}
	if c.AllowPrivate {
		parts = append(parts, "private addresses allowed")
	}
	if r.unconfiguredSecretsOnly {
		parts = append(parts, "secrets not configured for brokering")
	}
	if r.sandboxRequired {
		parts = append(parts, "sandbox required")
	}
	return strings.Join(parts, ", ")
}

func (r *Rule) pathPattern() string {
	if r.path == nil {
		return ""
	}
	return r.path.pattern
}

// String renders the rule for `check`: id, effect, source and what it matches.
func (r *Rule) String() string {
	s := fmt.Sprintf("%-6s %-45s %s [%s]", r.Effect, r.ID, r.describe(), r.Source)
	if r.expires > 0 {
		s += fmt.Sprintf(" approval holds %s", r.expires)
	}
	return s
}

// DeniedWriteFolders lists folders that a deny rule closes to writing as a
// whole: a rule on workspace.files.write or filesystem.write (or a glob
// covering either), whose only target is a path "FOLDER/**", with no
// conditions. The sandbox makes those inside its writable roots read-only,
// so a command cannot write there by other means than the redirections the
// policy sees (cp, tee, an editor).
func (p *Policy) DeniedWriteFolders() []string {
	var out []string
	for _, r := range p.deny {
		c := r.Config
		if r.caps&(capBit(CapWorkspaceWrite)|capBit(CapFilesystemWrite)) == 0 || r.path == nil || r.path.literal ||
			c.Target.ToolName != "" || c.Target.Host != "" || c.Target.Resource != "" || c.Target.Command != "" ||
			!reflect.DeepEqual(c.Conditions, ConditionsConfig{}) || r.unconfiguredSecretsOnly {
			continue
		}
		if strings.TrimPrefix(r.path.pattern, escapeGlob(r.path.base)) != "/**" {
			continue
		}
		out = append(out, r.path.base)
	}
	return out
}

// Shadowed describes rules that can never decide anything: an allow rule
// every request of which a deny or ask rule without target or conditions
// takes first (deny > ask > allow), or an ask rule such a deny rule covers.
// `check` prints them, because a rule that looks like it allows something
// and never does is worse than no rule.
func (p *Policy) Shadowed() []string {
	var out []string
	covers := func(by []*Rule, r *Rule) *Rule {
		for _, b := range by {
			if b.unconditional() && r.caps&^b.caps == 0 {
				return b
			}
		}
		return nil
	}
	for _, r := range p.allow {
		if b := covers(p.deny, r); b != nil {
			out = append(out, fmt.Sprintf("allow rule %s never applies: deny rule %s takes every request it matches", r.ID, b.ID))
		} else if b := covers(p.ask, r); b != nil {
			out = append(out, fmt.Sprintf("allow rule %s never applies: ask rule %s takes every request it matches first (an ask outranks an allow)", r.ID, b.ID))
		}
	}
	for _, r := range p.ask {
		if b := covers(p.deny, r); b != nil {
			out = append(out, fmt.Sprintf("ask rule %s never applies: deny rule %s takes every request it matches", r.ID, b.ID))
		}
	}
	return out
}

// LiftedCredentialPaths lists the credential files an allow rule names
// exactly for reading (workspace.files.read or filesystem.read): the files
// the sandbox leaves visible. A command with a network that can see one of
// them can send it out, so its requests carry the credential class.
func (p *Policy) LiftedCredentialPaths() []string {
	var out []string
	for _, r := range p.allow {
		if r.path == nil || !r.path.literal || r.caps&(capBit(CapWorkspaceRead)|capBit(CapFilesystemRead)) == 0 {
			continue
		}
		if IsCredentialPath(r.path.pattern) {
			out = append(out, r.path.pattern)
		}
	}
	return out
}
