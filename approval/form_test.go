package approval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
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
			d, r := decisionOf(tc.a, true)
			if d != tc.decision || r != tc.reason {
				t.Fatalf("got %q %s, want %q %s", d, r, tc.decision, tc.reason)
			}
			// When "for session" was not offered, choosing it is an answer
			// outside the form: declined; every other answer is the same.
			d, r = decisionOf(tc.a, false)
			if tc.decision == AllowForSession {
				if d != "" || r != grants.ReasonDeclined {
					t.Fatalf("allow_for_session not offered: got %q %s", d, r)
				}
			} else if d != tc.decision || r != tc.reason {
				t.Fatalf("session not offered: got %q %s, want %q %s", d, r, tc.decision, tc.reason)
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
	a.ApprovalExpires = time.Minute
	b := grants.Decision{Request: grants.Request{Capability: grants.CapProcessExec, Target: grants.Target{Resource: "git", Command: "git push origin main"}, Risk: grants.RiskCritical},
		Effect: grants.Ask, RuleID: "ask-git-push", ApprovalExpires: 10 * time.Minute}
	cc := callContext{Line: "cat /etc/hosts; git push origin main", Cwd: "(the workspace)", Client: "claude-code 2.1", Workspace: "/home/me/app"}
	f := approvalForm("execute_terminal_command", cc, []grants.Decision{a, b}, 2*time.Minute)
	for _, want := range []string{"execute_terminal_command", "through claude-code 2.1", "2 requests", "Call: cat /etc/hosts; git push origin main",
		"In: (the workspace)", "Workspace: /home/me/app", "/etc/hosts", "! risk high, rule r1", "`git push origin main`",
		"!! risk critical !!, rule ask-git-push", "10m0s", "2m0s"} {
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
	dec := props["decision"].(map[string]any)
	if _, old := dec["enumNames"]; old {
		t.Error("the form uses the deprecated enumNames")
	}
	if got := consts(dec); strings.Join(got, ",") != "allow_once,allow_for_session,deny" {
		t.Errorf("options %v", got)
	}
}

// consts lists a titled single-select's values.
func consts(field map[string]any) []string {
	var out []string
	for _, o := range field["oneOf"].([]map[string]any) {
		if o["title"] == "" {
			return nil
		}
		out = append(out, o["const"].(string))
	}
	return out
}

// TestApprovalFormWithoutSession: an ask whose rule sets no expiry is not
// offered "for this session" (it would mean once), and says why.
func TestApprovalFormWithoutSession(t *testing.T) {
	f := approvalForm("read_file", callContext{Client: "c"}, []grants.Decision{askOn("/etc/hosts", "r1")}, time.Minute)
	dec := f.RequestedSchema.(map[string]any)["properties"].(map[string]any)["decision"].(map[string]any)
	if got := consts(dec); strings.Join(got, ",") != "allow_once,deny" {
		t.Errorf("options %v", got)
	}
	if !strings.Contains(f.Message, "not offered") {
		t.Errorf("message does not say why:\n%s", f.Message)
	}
}

// TestPromptEscapesModelText: control characters, ANSI escapes and bidi
// overrides chosen by the model are shown escaped in the prompt, so the
// person reads one line per value and the bytes that will run.
func TestPromptEscapesModelText(t *testing.T) {
	line := "ls\x1b[2K\r\u202egnp.exe\nrule allow, risk low"
	d := grants.Decision{Request: grants.Request{Capability: grants.CapProcessExec,
		Target: grants.Target{Resource: "ls", Command: line}, Risk: grants.RiskMedium}, Effect: grants.Ask, RuleID: "r"}
	cc := contextOf(context.Background(), toolkit.ApprovalCall{Args: []byte(`{"command":"` + jsonEscape(line) + `","cwd":"a\u202eb"}`)})
	f := approvalForm("execute_terminal_command", cc, []grants.Decision{d}, time.Minute)
	for _, bad := range []string{"\x1b", "\r", "\u202e"} {
		if strings.Contains(f.Message, bad) {
			t.Errorf("the prompt carries %q raw:\n%q", bad, f.Message)
		}
	}
	for _, want := range []string{`\x1b[2K\rU+202Egnp.exe\nrule allow, risk low`, "In: aU+202Eb"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, f.Message)
		}
	}
	if n := strings.Count(f.Message, "\n"); n != 6 {
		t.Errorf("the prompt has %d lines, want 6 (model text added lines?):\n%s", n, f.Message)
	}
}

func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
