package approval

import (
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/display"
)

// The approval form has one field, decision, with these values.
const (
	AllowOnce       = "allow_once"
	AllowForSession = "allow_for_session"
	Deny            = "deny"
)

// elicitKey names the one input request of a call's input-required result.
const elicitKey = "onellm_approval"

// maxAnswerBytes caps an ask_user free-text answer.
const maxAnswerBytes = 64 << 10

// approvalForm is the one form put to the person for a call's asks: the
// call in full, every request with its rule and risk, and the decision
// field (a titled single-select: oneOf of const/title). "Allow for this
// session" is offered only when every ask's rule gives it an expiry.
func approvalForm(tool string, cc callContext, asks []grants.Decision, timeout time.Duration) mcp.ElicitationParams {
	options := []map[string]any{{"const": AllowOnce, "title": "Allow once"}}
	if sessionOffered(asks) {
		options = append(options, map[string]any{"const": AllowForSession, "title": "Allow this exact request for the session"})
	}
	options = append(options, map[string]any{"const": Deny, "title": "Deny"})
	return mcp.ElicitationParams{
		Message: approvalMessage(tool, cc, asks, timeout),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type":        "string",
					"title":       "Decision",
					"description": "Allow once, allow this exact request for the session (when offered), or deny",
					"oneOf":       options,
					"default":     Deny,
				},
			},
			"required": []string{"decision"},
		},
	}
}

// approvalMessage tells the truth about the call: the tool, the whole line
// or URL, the working folder, the client and the workspace, then each
// request that asks with its rule and risk (high and critical stand out),
// and how long the person has. Model-chosen text is escaped.
func approvalMessage(tool string, cc callContext, asks []grants.Decision, timeout time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s asks, through %s, for your approval", tool, cc.Client)
	if len(asks) > 1 {
		fmt.Fprintf(&b, " of %d requests", len(asks))
	}
	b.WriteString(".\n")
	if cc.Line != "" {
		fmt.Fprintf(&b, "Call: %s\n", cc.Line)
	}
	if cc.Cwd != "" {
		fmt.Fprintf(&b, "In: %s\n", cc.Cwd)
	}
	if cc.Workspace != "" {
		fmt.Fprintf(&b, "Workspace: %s\n", cc.Workspace)
	}
	for i, d := range asks {
		fmt.Fprintf(&b, "%d. %s\n   %s, rule %s", i+1, d.Request.Describe(), riskLabel(d.Request.Risk), display.Escape(orNone(d.RuleID)))
		if len(d.Request.DataClasses) > 0 {
			fmt.Fprintf(&b, ", data %v", d.Request.DataClasses)
		}
		if d.ApprovalExpires > 0 {
			fmt.Fprintf(&b, "; \"for this session\" holds %s", d.ApprovalExpires)
		}
		b.WriteString("\n")
	}
	if !sessionOffered(asks) {
		b.WriteString("\"For this session\" is not offered: the rule sets no approval_expires_seconds, so an approval holds once.\n")
	}
	fmt.Fprintf(&b, "Nothing runs unless you allow it; no answer within %s denies it.", timeout)
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "(mode)"
	}
	return s
}

// questionForm is ask_user's form: the question as the message and one
// field, answer: a single-select enum when there are choices.
func questionForm(q question) mcp.ElicitationParams {
	field := map[string]any{"type": "string", "title": "Answer"}
	if len(q.Choices) > 0 {
		field["enum"] = q.Choices
	}
	if q.Default != "" {
		field["default"] = q.Default
	}
	return mcp.ElicitationParams{
		Message: q.Text,
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"answer": field},
			"required":   []string{"answer"},
		},
	}
}

// question is an ask_user question (toolkit.Question, validated).
type question struct {
	Text    string
	Choices []string
	Default string
}

// answer is a person's reply through any channel, before it is checked
// against the form.
type answer struct {
	Channel string // "elicitation" or "console"
	Action  mcp.ElicitationResponseAction
	Content any // the form's content on accept
	Err     error
}

// decisionOf checks an answer against the approval form. Only accept with a
// content of exactly {"decision": one of the values offered} counts
// (allow_for_session only when sessionOK); decline
// is declined, cancel is cancelled, anything else (a missing or unknown
// decision, extra fields, an unknown action) is declined.
func decisionOf(a answer, sessionOK bool) (decision string, reason grants.Reason) {
	switch a.Action {
	case mcp.ElicitationResponseActionAccept:
		m, ok := a.Content.(map[string]any)
		if !ok || len(m) != 1 {
			return "", grants.ReasonDeclined
		}
		d, ok := m["decision"].(string)
		switch {
		case !ok:
			return "", grants.ReasonDeclined
		case d == AllowOnce || d == AllowForSession && sessionOK:
			return d, grants.ReasonApproved
		default: // Deny, or a value outside the form
			return "", grants.ReasonDeclined
		}
	case mcp.ElicitationResponseActionCancel:
		return "", grants.ReasonCancelled
	default:
		return "", grants.ReasonDeclined
	}
}

// answerOf checks an answer against a question's form. ok is false for an
// accept whose content is not exactly {"answer": string} (one of the choices
// when there are any), or an unknown action.
func answerOf(q question, a answer) (action, text string, ok bool) {
	switch a.Action {
	case mcp.ElicitationResponseActionAccept:
		m, isMap := a.Content.(map[string]any)
		if !isMap || len(m) != 1 {
			return "", "", false
		}
		s, isStr := m["answer"].(string)
		if !isStr || len(s) > maxAnswerBytes {
			return "", "", false
		}
		if len(q.Choices) > 0 && !contains(q.Choices, s) {
			return "", "", false
		}
		return "accept", s, true
	case mcp.ElicitationResponseActionDecline:
		return "decline", "", true
	case mcp.ElicitationResponseActionCancel:
		return "cancel", "", true
	}
	return "", "", false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
