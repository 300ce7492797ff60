package webtools

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/onellm/onellm-mcp/grants"
)

// httpCaps are the network.http.* capabilities, in TunnelMethods order.
func httpCaps() []grants.Capability {
	var out []grants.Capability
	for _, m := range TunnelMethods() {
		c, _ := grants.HTTPCapability(m)
		out = append(out, c)
	}
	return out
}

// ruleCaps returns the network.http capabilities a rule's capability
// pattern covers, as the policy reads it.
func ruleCaps(r *grants.Rule) []grants.Capability {
	var out []grants.Capability
	for _, c := range httpCaps() {
		if r.Covers(c) {
			out = append(out, c)
		}
	}
	return out
}

// globMeta matches a glob's wildcards; compiled on first use, not at
// every start of the server.
var globMeta = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\*\*|\*|\?|\[[^\]]*\]|\{[^}]*\}`) })

// TunnelPaths are sample paths for the path-scoped deny and ask rules on
// network.http.* that could apply to toolName: a tunnel is decided on each
// of them too (ProxyPolicy), so a deny on a path of a host is not bypassed
// by a tunnel the proxy cannot look into. Glob parts become "x".
func TunnelPaths(p *grants.Policy, toolName string) []string {
	var out []string
	for _, r := range p.Rules() {
		if r.Effect == grants.Allow || r.Config.Target.Path == "" || len(ruleCaps(r)) == 0 || !r.MayApplyTo(toolName) {
			continue
		}
		sample := globMeta().ReplaceAllString(r.Config.Target.Path, "x")
		if !strings.HasPrefix(sample, "/") {
			sample = "/" + sample
		}
		sample = path.Clean(sample)
		if !slices.Contains(out, sample) {
			out = append(out, sample)
		}
	}
	return out
}

// ReachableHosts describes the hosts allow rules open to toolName through
// the egress proxy: "api.example.com (any method, https included)" when a
// rule allows every network.http method for the host, or "host (GET, HEAD;
// plain http only)" otherwise. Deny rules and the mode may still refuse
// some of them; the proxy decides each connection.
func ReachableHosts(p *grants.Policy, toolName string) []string {
	type entry struct {
		host    string
		methods []string
		private bool
	}
	var order []*entry
	byHost := map[string]*entry{}
	for _, r := range p.Rules() {
		if r.Effect != grants.Allow || r.Config.Target.Host == "" || !r.MayApplyTo(toolName) {
			continue
		}
		caps := ruleCaps(r)
		if len(caps) == 0 {
			continue
		}
		e := byHost[r.Config.Target.Host]
		if e == nil {
			e = &entry{host: r.Config.Target.Host}
			byHost[e.host] = e
			order = append(order, e)
		}
		e.private = e.private || r.Config.Conditions.AllowPrivate
		for _, c := range caps {
			m := strings.ToUpper(strings.TrimPrefix(string(c), "network.http."))
			if len(r.Config.Conditions.Method) > 0 && !slices.ContainsFunc(r.Config.Conditions.Method, func(x string) bool { return strings.EqualFold(x, m) }) {
				continue
			}
			if r.Config.Target.Path != "" {
				continue // path-scoped: plain http only, and only there
			}
			if !slices.Contains(e.methods, m) {
				e.methods = append(e.methods, m)
			}
		}
	}
	var out []string
	for _, e := range order {
		if len(e.methods) == 0 {
			out = append(out, e.host+" (some paths; plain http only)")
			continue
		}
		s := e.host
		if len(e.methods) == len(TunnelMethods()) {
			s += " (any method, https included)"
		} else {
			order := TunnelMethods()
			slices.SortFunc(e.methods, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
			s += " (" + strings.Join(e.methods, ", ") + "; plain http only)"
		}
		if e.private {
			s += " [private addresses allowed]"
		}
		out = append(out, s)
	}
	return out
}
