package grants

import (
	"fmt"
	"reflect"
	"slices"
)

// Weakenings lists what next allows that old did not: deny and ask rules
// removed or changed, allow rules added or changed, a looser mode, a relaxed
// sandbox, a secret sent to more hosts, HTTP without auth. A reload logs
// them, so a change that opens the policy is never silent. Strengthening
// changes are not listed.
func Weakenings(old, next *Policy) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if next.Mode > old.Mode { // strict < interactive < permissive
		add("mode %s → %s", old.Mode, next.Mode)
	}
	if next.Profile != old.Profile {
		add("profile %s → %s", orString(old.Profile, "(none)"), orString(next.Profile, "(none)"))
	}
	oldRules, nextRules := rulesByID(old), rulesByID(next)
	for _, r := range old.Rules() {
		if r.Effect == Allow {
			continue
		}
		n, ok := nextRules[r.ID]
		switch {
		case !ok || n.Effect > r.Effect:
			if ok {
				add("%s rule %s is now %s", r.Effect, r.ID, n.Effect)
			} else {
				add("%s rule %s removed", r.Effect, r.ID)
			}
		case n.Effect == r.Effect && !reflect.DeepEqual(n.Config, r.Config):
			add("%s rule %s changed", r.Effect, r.ID)
		}
	}
	for _, n := range next.Rules() {
		if n.Effect != Allow {
			continue
		}
		r, ok := oldRules[n.ID]
		switch {
		case !ok:
			add("allow rule %s added", n.ID)
		case r.Effect == Allow && !reflect.DeepEqual(n.Config, r.Config):
			add("allow rule %s changed", n.ID)
		}
	}
	ob, nb := old.Sandbox, next.Sandbox
	if ob.Required && !nb.Required {
		add("sandbox.required true → false (commands may run on the host)")
	}
	if networkRank(nb.Network) > networkRank(ob.Network) {
		add("sandbox.network %s → %s", ob.Network, nb.Network)
	}
	for _, l := range []struct {
		key       string
		old, next []string
	}{{"sandbox.writable", ob.Writable, nb.Writable}, {"sandbox.readable", ob.Readable, nb.Readable}, {"sandbox.env", ob.Env, nb.Env}} {
		for _, v := range l.next {
			if !slices.Contains(l.old, v) {
				add("%s adds %s", l.key, v)
			}
		}
	}
	for name, s := range next.Secrets {
		o, ok := old.Secrets[name]
		for _, h := range s.Hosts {
			if !ok || !slices.Contains(o.Hosts, h) {
				add("secret %s may now be sent to %s", name, h)
			}
		}
	}
	if old.HTTP.Auth != "none" && next.HTTP.Auth == "none" {
		add("http.auth %s → none", old.HTTP.Auth)
	}
	for _, o := range next.HTTP.AllowedOrigins {
		if !slices.Contains(old.HTTP.AllowedOrigins, o) {
			add("http.allowed_origins adds %s", o)
		}
	}
	return out
}

func rulesByID(p *Policy) map[string]*Rule {
	m := map[string]*Rule{}
	for _, r := range p.Rules() {
		m[r.ID] = r
	}
	return m
}

func networkRank(n string) int {
	switch n {
	case "full":
		return 2
	case "proxy":
		return 1
	}
	return 0
}
