package e2e

import (
	"strings"
	"testing"
)

// A call that makes no request at all (a command line that is only a
// comment) is refused, and that refusal is in the audit log like every
// other decided call.
func TestReviewNoRequestCallIsAudited(t *testing.T) {
	f := newFixture(t, "profile = \"interactive-dev\"\n\n[sandbox]\nrequired = false\n")
	c := stdioClient(t, f, Legacy)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": "# only a comment"})
	if !res.IsError {
		t.Fatalf("a call with no request ran: %q", text(res))
	}
	if !strings.Contains(text(res), "reason ") {
		t.Errorf("refusal names no reason code: %q", text(res))
	}
	if len(decisionLines(t, f, "execute_terminal_command")) == 0 {
		t.Fatalf("refused call missing from the audit log; refusal was %q", text(res))
	}
}
