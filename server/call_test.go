package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// failingTool fails to plan with an error that is neither an argument
// error nor a refusal.
type failingTool struct{}

func (failingTool) Name() string { return "failing" }
func (failingTool) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapWorkspaceRead}
}
func (failingTool) Definition(*grants.Policy) mcp.Tool { return mcp.NewTool("failing") }
func (failingTool) Plan(context.Context, *toolkit.Env, json.RawMessage) (*toolkit.Plan, error) {
	return nil, errors.New("disk on fire")
}

// TestPlanFailureIsAudited: every call leaves an audit line, even one whose
// tool could not plan it.
func TestPlanFailureIsAudited(t *testing.T) {
	p, _ := interactiveDev(t)
	auditPath := p.AuditPath
	audit, err := OpenAudit(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(p, Options{Tools: []toolkit.Tool{failingTool{}}, Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "failing"
	res := s.call(context.Background(), failingTool{}, req)
	text, _ := json.Marshal(res.Content)
	if !res.IsError || !strings.Contains(string(text), "disk on fire") {
		t.Fatalf("result: %s", text)
	}
	log, _ := os.ReadFile(auditPath)
	if !strings.Contains(string(log), `"tool":"failing"`) || !strings.Contains(string(log), `"effect":"deny"`) {
		t.Fatalf("audit log: %q", log)
	}
}
