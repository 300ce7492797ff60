package approval

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
)

const (
	accept  = mcp.ElicitationResponseActionAccept
	decline = mcp.ElicitationResponseActionDecline
	cancel  = mcp.ElicitationResponseActionCancel
)

func TestDecisionOf(t *testing.T) {
	cases := []struct {
		name     string
		a        answer
		decision string
		reason   grants.Reason
	}{
		{"allow once", answer{Action: accept, Content: map[string]any{"decision": "allow_once"}}, AllowOnce, grants.ReasonApproved},
		{"allow for session", answer{Action: accept, Content: map[string]any{"decision": "allow_for_session"}}, AllowForSession, grants.ReasonApproved},
		{"deny", answer{Action: accept, Content: map[string]any{"decision": "deny"}}, "", grants.ReasonDeclined},
		{"decline", answer{Action: decline}, "", grants.ReasonDeclined},
		{"decline with content", answer{Action: decline, Content: map[string]any{"decision": "allow_once"}}, "", grants.ReasonDeclined},
		{"cancel", answer{Action: cancel}, "", grants.ReasonCancelled},
		{"no answer", answer{}, "", grants.ReasonDeclined},
		{"unknown action", answer{Action: "approve", Content: map[string]any{"decision": "allow_once"}}, "", grants.ReasonDeclined},
		{"missing decision", answer{Action: accept, Content: map[string]any{}}, "", grants.ReasonDeclined},
		{"nil content", answer{Action: accept}, "", grants.ReasonDeclined},
		{"value outside the enum", answer{Action: accept, Content: map[string]any{"decision": "ALLOW_ONCE"}}, "", grants.ReasonDeclined},
		{"not a string", answer{Action: accept, Content: map[string]any{"decision": true}}, "", grants.ReasonDeclined},
		{"extra field", answer{Action: accept, Content: map[string]any{"decision": "allow_once", "x": 1}}, "", grants.ReasonDeclined},
		{"content a string", answer{Action: accept, Content: "allow_once"}, "", grants.ReasonDeclined},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, r := decisionOf(tc.a)
			if d != tc.decision || r != tc.reason {
				t.Fatalf("got %q %s, want %q %s", d, r, tc.decision, tc.reason)
			}
		})
	}
}

func TestAnswerOf(t *testing.T) {
	choices := question{Text: "Colour?", Choices: []string{"red", "blue"}}
	free := question{Text: "Name?"}
	cases := []struct {
		name         string
		q            question
		a            answer
		action, text string
		ok           bool
	}{
		{"choice", choices, answer{Action: accept, Content: map[string]any{"answer": "blue"}}, "accept", "blue", true},
		{"not a choice", choices, answer{Action: accept, Content: map[string]any{"answer": "green"}}, "", "", false},
		{"free text", free, answer{Action: accept, Content: map[string]any{"answer": "Ada"}}, "accept", "Ada", true},
		{"empty free text", free, answer{Action: accept, Content: map[string]any{"answer": ""}}, "accept", "", true},
		{"too long", free, answer{Action: accept, Content: map[string]any{"answer": strings.Repeat("x", maxAnswerBytes+1)}}, "", "", false},
		{"number", free, answer{Action: accept, Content: map[string]any{"answer": 3.0}}, "", "", false},
		{"extra field", free, answer{Action: accept, Content: map[string]any{"answer": "a", "b": "c"}}, "", "", false},
		{"decline", choices, answer{Action: decline}, "decline", "", true},
		{"cancel", choices, answer{Action: cancel}, "cancel", "", true},
		{"unknown action", choices, answer{Action: "maybe"}, "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			act, text, ok := answerOf(tc.q, tc.a)
			if act != tc.action || text != tc.text || ok != tc.ok {
				t.Fatalf("got %q %q %v", act, text, ok)
			}
		})
	}
}

func TestApprovalFormListsEveryAsk(t *testing.T) {
	a := askOn("/etc/hosts", "r1")
	b := grants.Decision{Request: grants.Request{Capability: grants.CapProcessExec, Target: grants.Target{Resource: "git", Command: "git push origin main"}, Risk: grants.RiskCritical},
		Effect: grants.Ask, RuleID: "ask-git-push", ApprovalExpires: 10 * time.Minute}
	f := approvalForm("execute_terminal_command", []grants.Decision{a, b}, 2*time.Minute)
	for _, want := range []string{"execute_terminal_command", "2 requests", "/etc/hosts", "rule r1, risk high", "`git push origin main`", "rule ask-git-push, risk critical", "10m0s", "2m0s"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, f.Message)
		}
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	schema := f.RequestedSchema.(map[string]any)
	props := schema["properties"].(map[string]any)
	if len(props) != 1 || props["decision"] == nil {
		t.Fatalf("schema: %v", schema)
	}
}
