package approval

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// memory holds "allow for session" answers: for each principal, the exact
// request keys (grants.Request.Key: capability and every target field, never
// a prefix or a glob) and when each stops holding. It lives in memory only
// and is never shared between principals.
type memory struct {
	now func() time.Time
	max int // keys kept per principal

	mu   sync.Mutex
	byID map[string]map[string]time.Time
}

func newMemory(now func() time.Time, maxPerPrincipal int) *memory {
	return &memory{now: now, max: maxPerPrincipal, byID: map[string]map[string]time.Time{}}
}

// remember stores each ask's request for the principal for its rule's
// approval_expires_seconds; an ask whose rule sets none (0) is not stored,
// nor one for a program the command may have written (Target.Exe).
func (m *memory) remember(principal string, asks []grants.Decision) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.byID[principal]
	for _, d := range asks {
		if d.ApprovalExpires <= 0 || d.Request.Target.Exe != "" {
			// (Target.Exe: a program the command may have written, by
			// its path: what the path holds may change by the next
			// call, so only this call's approval lets it run.)
			continue
		}
		if keys == nil {
			keys = map[string]time.Time{}
			m.byID[principal] = keys
		}
		if len(keys) >= m.max {
			m.prune(keys, now)
			if len(keys) >= m.max {
				return // full of live approvals: asking again is the safe side
			}
		}
		keys[memKey(d)] = now.Add(d.ApprovalExpires)
	}
}

// unremembered returns the asks the principal has no live approval for.
func (m *memory) unremembered(principal string, asks []grants.Decision) []grants.Decision {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := m.byID[principal]
	if len(keys) == 0 {
		return asks
	}
	var out []grants.Decision
	for _, d := range asks {
		k := memKey(d)
		exp, ok := keys[k]
		if ok && now.Before(exp) {
			continue
		}
		if ok {
			delete(keys, k)
		}
		out = append(out, d)
	}
	if len(keys) == 0 {
		delete(m.byID, principal)
	}
	return out
}

// memKey is what an approval is remembered by: the request's key, the risk
// and data classes the person was shown, and the rule that asked — so an
// approval given for a request without credential data, or at a lower risk,
// does not hold for one with them, and a reload that puts a new rule in
// charge of the request asks again.
func memKey(d grants.Decision) string {
	r := d.Request
	classes := make([]string, len(r.DataClasses))
	for i, c := range r.DataClasses {
		classes[i] = string(c)
	}
	sort.Strings(classes)
	return r.Key() + "\x00" + r.Risk.String() + "\x00" + strings.Join(classes, ",") + "\x00" + d.RuleID
}

func (m *memory) prune(keys map[string]time.Time, now time.Time) {
	for k, exp := range keys {
		if !now.Before(exp) {
			delete(keys, k)
		}
	}
}
