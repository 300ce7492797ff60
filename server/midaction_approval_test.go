package server

import (
	"testing"

	"github.com/onellm/onellm-mcp/grants"
)

// TestSameApprovalCriticalFolder: an in-call approval of a critical
// program holds only in the folder it was given for; a lower one holds
// wherever the call's folder moved.
func TestSameApprovalCriticalFolder(t *testing.T) {
	req := func(risk grants.Risk, cwd string) grants.Request {
		return grants.Request{Capability: grants.CapProcessExec, Surface: grants.SurfaceSandbox, Risk: risk, Cwd: cwd,
			Argv: []string{"rm", "-r", "x"}, Target: grants.Target{ToolName: "execute_terminal_command", Resource: "rm", Command: "rm -r x"}}
	}
	if sameApproval(req(grants.RiskCritical, "/tmp"), req(grants.RiskCritical, "/var/tmp")) {
		t.Error("a critical approval in /tmp holds in /var/tmp")
	}
	if !sameApproval(req(grants.RiskCritical, "/tmp"), req(grants.RiskCritical, "/tmp")) {
		t.Error("a critical approval does not hold in its own folder")
	}
	if !sameApproval(req(grants.RiskHigh, "/w"), req(grants.RiskHigh, "/w/sub")) {
		t.Error("a high approval does not hold once the folder moved")
	}
}
