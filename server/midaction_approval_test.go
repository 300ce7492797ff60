package server

import (
	"testing"

	"github.com/onellm/onellm-mcp/grants"
)

// TestSameApprovalFolder: an in-call approval holds only in the folder it
// was given for, at any risk (review rev20c M2), unless the line could not
// know that folder (cd "$d": grants.CwdKnownWhenRun).
func TestSameApprovalFolder(t *testing.T) {
	req := func(risk grants.Risk, cwd string) grants.Request {
		return grants.Request{Capability: grants.CapProcessExec, Surface: grants.SurfaceSandbox, Risk: risk, Cwd: cwd,
			Argv: []string{"git", "push", "origin", "main"}, Target: grants.Target{ToolName: "execute_terminal_command", Resource: "git", Command: "git push origin main"}}
	}
	for _, tc := range []struct {
		risk     grants.Risk
		approved string
		at       string
		want     bool
	}{
		{grants.RiskCritical, "/tmp", "/var/tmp", false},
		{grants.RiskCritical, "/tmp", "/tmp", true},
		{grants.RiskHigh, "/w", "/w/sub", false},
		{grants.RiskMedium, "/w", "/other", false},
		{grants.RiskHigh, "/w", "/w", true},
		{grants.RiskHigh, grants.CwdKnownWhenRun, "/w/sub", true},
		{grants.RiskCritical, grants.CwdKnownWhenRun, "/anywhere", true},
		{grants.RiskHigh, "/w", grants.CwdKnownWhenRun, false},
	} {
		if got := sameApproval(req(tc.risk, tc.approved), req(tc.risk, tc.at)); got != tc.want {
			t.Errorf("%v approval in %s, request in %s: %v, want %v", tc.risk, tc.approved, tc.at, got, tc.want)
		}
	}
	other := req(grants.RiskHigh, "/w")
	other.Risk = grants.RiskCritical
	if sameApproval(req(grants.RiskHigh, "/w"), other) {
		t.Error("a high approval holds for the critical request")
	}
}
