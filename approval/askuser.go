package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// AskUserName is the ask_user tool's public name.
const AskUserName = "ask_user"

// Limits on a question, so a form stays readable.
const (
	maxQuestionBytes = 4 << 10
	maxChoices       = 50
	maxChoiceBytes   = 200
)

// AskUserArgs are ask_user's arguments.
type AskUserArgs struct {
	Question string   `json:"question" jsonschema:"The question to put to the person"`
	Choices  []string `json:"choices,omitempty" jsonschema:"Optional answers to pick one from"`
	Default  string   `json:"default,omitempty" jsonschema:"Optional suggested answer (one of the choices when there are any)"`
}

// AskUserResult is ask_user's structured result.
type AskUserResult struct {
	Action string `json:"action" jsonschema:"accept, decline or cancel"`
	Answer string `json:"answer" jsonschema:"The answer when action is accept"`
}

// AskUser is the ask_user tool.
type AskUser struct{}

// Name implements toolkit.Tool.
func (AskUser) Name() string { return AskUserName }

// Capabilities implements toolkit.Tool.
func (AskUser) Capabilities() []grants.Capability { return []grants.Capability{grants.CapUserAsk} }

// Definition implements toolkit.Tool.
func (t AskUser) Definition(p *grants.Policy) mcp.Tool {
	desc := fmt.Sprintf("Ask the person a question and wait for the answer (at most %s). "+
		"With choices the person picks one; default is the suggested answer. "+
		"Returns {action: accept|decline|cancel, answer}.\n\n%s", p.Limits.ApprovalTimeout, p.Summary(t.Capabilities()...))
	return mcp.NewTool(AskUserName,
		mcp.WithDescription(desc),
		toolkit.WithSchemas(toolkit.EmbeddedSchema(schemaFiles, "ask_user.input.json"), toolkit.EmbeddedSchema(schemaFiles, "ask_user.output.json")),
		mcp.WithToolAnnotation(toolkit.Annotations("Ask the user", true, false, false, false)),
	)
}

// Plan implements toolkit.Tool.
func (AskUser) Plan(_ context.Context, env *toolkit.Env, raw json.RawMessage) (*toolkit.Plan, error) {
	var args AskUserArgs
	if err := toolkit.Decode(raw, &args); err != nil {
		return nil, err
	}
	if err := checkQuestion(args); err != nil {
		return nil, err
	}
	req := grants.Request{Capability: grants.CapUserAsk, Target: grants.Target{ToolName: AskUserName},
		Risk: grants.BaseRisk(grants.CapUserAsk, grants.SurfaceNone)}
	q := toolkit.Question{Text: args.Question, Choices: args.Choices, Default: args.Default}
	return &toolkit.Plan{
		Requests: []grants.Request{req},
		Run: func(ctx context.Context, _ toolkit.Grant) toolkit.Result {
			if env.Ask == nil {
				return toolkit.Failed("ask_user: no answer (reason %s): %s", grants.ReasonApprovalUnavailable, reasonText(grants.ReasonApprovalUnavailable))
			}
			ans, pending, err := env.Ask.AskUser(ctx, env, q)
			if pending != nil {
				return toolkit.Result{Tool: pending}
			}
			if err != nil {
				var re *ReasonError
				if errors.As(err, &re) {
					return toolkit.Failed("ask_user: no answer (reason %s): %s", re.Reason, re.Msg)
				}
				return toolkit.Failed("ask_user: %v", err)
			}
			out := AskUserResult(ans)
			text := "The person chose to " + ans.Action
			if ans.Action == "accept" {
				text = "The person answered: " + ans.Answer
			}
			return toolkit.Result{Tool: mcp.NewToolResultStructured(out, text), Outcome: toolkit.Outcome{Bytes: int64(len(ans.Answer))}}
		},
	}, nil
}

func checkQuestion(a AskUserArgs) error {
	switch {
	case a.Question == "":
		return toolkit.Argf("argument \"question\" is required")
	case len(a.Question) > maxQuestionBytes:
		return toolkit.Argf("question is longer than %d bytes", maxQuestionBytes)
	case !utf8.ValidString(a.Question):
		return toolkit.Argf("question is not valid UTF-8")
	case len(a.Choices) > maxChoices:
		return toolkit.Argf("at most %d choices", maxChoices)
	}
	seen := map[string]bool{}
	for _, c := range a.Choices {
		switch {
		case c == "":
			return toolkit.Argf("a choice is empty")
		case len(c) > maxChoiceBytes:
			return toolkit.Argf("choice %.40q is longer than %d bytes", c, maxChoiceBytes)
		case seen[c]:
			return toolkit.Argf("choice %q is listed twice", c)
		}
		seen[c] = true
	}
	if a.Default != "" && len(a.Choices) > 0 && !seen[a.Default] {
		return toolkit.Argf("default %q is not one of the choices", a.Default)
	}
	return nil
}
