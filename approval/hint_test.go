package approval

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// TestNoChannelHint: an ask refused for approval_unavailable says how to
// get an approval channel, once per principal in the result and once on
// stderr.
func TestNoChannelHint(t *testing.T) {
	var logged []string
	b, err := New(Options{Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	approve := func(principal string) toolkit.ApprovalOutcome {
		out, pending := b.Approve(context.Background(), toolkit.ApprovalCall{Tool: "read_file", Args: []byte(`{}`),
			Principal: principal, Asks: []grants.Decision{askOn("/etc/hosts", "r")}, Policy: testPolicy(time.Minute)})
		if pending != nil || out.Approved || out.Reason != grants.ReasonApprovalUnavailable {
			t.Fatalf("no channel: %+v %v", out, pending)
		}
		return out
	}
	if h := approve("alice").Hint; !strings.Contains(h, "[approval]\nconsole = ") {
		t.Fatalf("first refusal hint: %q", h)
	}
	if h := approve("alice").Hint; h != "" {
		t.Fatalf("second refusal repeats the hint: %q", h)
	}
	if h := approve("bob").Hint; h == "" {
		t.Fatal("another principal was not told")
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "approval_unavailable") {
		t.Fatalf("stderr lines: %q", logged)
	}
}
