package approval

import "sync"

// noChannelHint says how to get an approval channel when an ask had none.
const noChannelHint = "No approval channel: this client cannot show an approval form (MCP elicitation) and no approval console is configured, " +
	"so every ask is refused. To approve asks in a browser, add to the config:\n\n[approval]\nconsole = \"127.0.0.1:8765\"\n\n" +
	"and open the address the server prints at start-up."

// maxHinted bounds the principals remembered as told.
const maxHinted = 4096

// hinted remembers which principals were told how to get an approval
// channel, so the hint comes once per session in results and once on
// stderr, not on every refusal.
type hinted struct {
	mu     sync.Mutex
	seen   map[string]bool
	logged bool
}

// once returns the hint the first time for a principal ("" after), and
// writes it to stderr the first time of all.
func (h *hinted) once(principal string, logf func(string, ...any)) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.logged {
		h.logged = true
		logf("approval: an ask was refused (approval_unavailable): %s", noChannelHint)
	}
	if h.seen[principal] {
		return ""
	}
	if len(h.seen) >= maxHinted {
		clear(h.seen)
	}
	h.seen[principal] = true
	return noChannelHint
}
