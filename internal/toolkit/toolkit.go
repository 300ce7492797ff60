// Package toolkit is the contract between the server and the tools: a tool
// validates its arguments into a Plan (the requests it would make and the
// action that makes them), and the server decides, audits, asks and only then
// runs the action with the Grant that let it. No tool can act without
// passing through that one path.
//
// Security model: Plan changes nothing (no process, no probe, no secret
// read; work that must happen before calls is a Starter's); Run acts only on
// what was granted; a request that arises while the action runs goes
// through Env.MidAction, the server's gate, which audits it and lets nothing
// but Allow through (its error is nil exactly then). Tools never call the
// policy's Decide themselves (internal/archtest enforces it).
package toolkit

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/strictjson"
)

// Tool is one built-in tool.
type Tool interface {
	// Name is the tool's public name.
	Name() string
	// Capabilities are what the tool may request; it is listed only when the
	// policy could allow or ask for at least one of them.
	Capabilities() []grants.Capability
	// Definition describes the tool from the compiled policy that decides its
	// calls, so what the model is told cannot drift from what is enforced.
	Definition(p *grants.Policy) mcp.Tool
	// Plan validates the raw arguments and returns the requests the call
	// makes and the action that makes them. It must not change anything. An
	// *ArgError means invalid_arguments; any other error is a failure.
	Plan(ctx context.Context, env *Env, args json.RawMessage) (*Plan, error)
}

// Env is what a tool may use while planning and running one call.
type Env struct {
	Policy    *grants.Policy
	Principal string
	// Ask puts a question to the person (ask_user); nil when no channel
	// exists. It may return an input-required result to hand back as is.
	Ask Asker
	// Request is the raw MCP call, for tools that need protocol details.
	Request mcp.CallToolRequest
	// MidAction is the server's gate for requests that arise while the
	// action runs (a redirect's next hop, a proxy destination, a program a
	// running command executes). Nil refuses everything.
	MidAction MidAction
}

// MidAction decides a request that arises while an action runs, at the
// stage given, under the call's policy, and audits the decision with the
// call. Only the server makes one. No person can be asked mid-action: an
// ask lets the request through only when that exact request was approved
// in this call or is remembered for the session, and is refused otherwise
// (reason approval_unavailable).
//
// The error is nil exactly when the request may proceed; it is then the
// decision that let it (Allow, with its reason and rule). Otherwise it is a
// *MidActionRefused carrying the refusing decision, so a caller that only
// checks the error cannot let a refusal through.
type MidAction func(ctx context.Context, r grants.Request, s grants.Stage) (grants.Decision, error)

// Decide calls the gate; a nil gate refuses (fail closed).
func (g MidAction) Decide(ctx context.Context, r grants.Request, s grants.Stage) (grants.Decision, error) {
	if g == nil {
		d := grants.Decision{Request: r, Effect: grants.Deny, Reason: grants.ReasonApprovalUnavailable}
		return d, &MidActionRefused{Decision: d}
	}
	d, err := g(ctx, r, s)
	if err == nil && d.Effect != grants.Allow {
		// A gate that forgot to refuse is still a refusal.
		d.Effect = grants.Deny
		err = &MidActionRefused{Decision: d}
	}
	return d, err
}

// MidActionRefused is a mid-action request the gate refused.
type MidActionRefused struct {
	Decision grants.Decision
	// Err is why a request the policy let through was refused all the same
	// (the audit log could not be written).
	Err error
}

func (e *MidActionRefused) Error() string {
	msg := e.Decision.Explain()
	if e.Err != nil {
		msg += ": refused: " + e.Err.Error()
	}
	if e.Decision.Reason == grants.ReasonApprovalUnavailable {
		msg += "; it needs a person's approval, which cannot be asked while the call runs: make that request in a call of its own"
	}
	return msg
}

func (e *MidActionRefused) Unwrap() error { return e.Err }

// Asker puts a question to the person through whichever channel the host
// offers.
type Asker interface {
	AskUser(ctx context.Context, env *Env, q Question) (Answer, *mcp.CallToolResult, error)
}

// Question is an ask_user question.
type Question struct {
	Text    string
	Choices []string
	Default string
}

// Answer is the person's answer.
type Answer struct {
	Action string `json:"action"` // accept, decline, cancel
	Answer string `json:"answer"`
}

// Plan is a validated call: the requests to decide, and the action that runs
// only when every request is allowed or approved. Making a Plan changes
// nothing and reads no secret: no process starts, nothing is probed, no
// file is opened but to resolve a path.
type Plan struct {
	Requests []grants.Request
	// Run performs the call with what was granted, and nothing else:
	// anything further it needs goes through Env.MidAction.
	Run func(ctx context.Context, g Grant) Result
}

// Grant is what a call's decision let it do: each of the plan's requests
// with the decision that allowed it (an allow rule or a person's approval),
// in plan order.
type Grant struct {
	Decisions []grants.Decision
}

// Allows reports whether exactly this request (capability and every target
// field) was granted.
func (g Grant) Allows(r grants.Request) bool {
	for _, d := range g.Decisions {
		if d.Effect == grants.Allow && d.Request.Key() == r.Key() {
			return true
		}
	}
	return false
}

// Requests are the granted requests, in plan order.
func (g Grant) Requests() []grants.Request {
	out := make([]grants.Request, 0, len(g.Decisions))
	for _, d := range g.Decisions {
		if d.Effect == grants.Allow {
			out = append(out, d.Request)
		}
	}
	return out
}

// Starter is a tool with work to do before calls come: probing what the
// machine offers, starting helpers in advance. The server calls Start when
// it starts and after each policy change, so Plan never has to.
type Starter interface {
	Start(p *grants.Policy)
}

// Result is what an action produced, for the client and for the audit log.
type Result struct {
	Tool    *mcp.CallToolResult
	Outcome Outcome
}

// Outcome is the audited summary of what an action did.
type Outcome struct {
	ExitCode     *int   `json:"exit_code,omitempty"`
	HTTPStatus   int    `json:"http_status,omitempty"`
	Bytes        int64  `json:"bytes,omitempty"`
	FilesChanged int    `json:"files_changed,omitempty"`
	Error        string `json:"error,omitempty"`
	// SandboxStart is how long the sandbox took from its start to the
	// command running (0: not reported), for /metrics and traces.
	SandboxStart time.Duration `json:"-"`
	// Exposed lists data classes the action returned to the model (a
	// credential file read), for data-flow tracking.
	Exposed []grants.DataClass `json:"-"`
}

// Failed returns a tool error result with the text, and the outcome recording it.
func Failed(format string, a ...any) Result {
	msg := fmt.Sprintf(format, a...)
	return Result{Tool: mcp.NewToolResultError(msg), Outcome: Outcome{Error: msg}}
}

// ArgError is a problem with a call's arguments.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

// Refusal is a call refused while planning for a reason other than its
// arguments (sandbox_unavailable): audited as a deny with that reason.
type Refusal struct {
	Reason grants.Reason
	Msg    string
}

func (e *Refusal) Error() string { return e.Msg }

// Argf returns an *ArgError.
func Argf(format string, a ...any) error { return &ArgError{Msg: fmt.Sprintf(format, a...)} }

// Decode decodes a tool's arguments strictly into dst (a pointer to a
// struct): unknown fields, a duplicate key, a key that matches an argument
// only case-insensitively, a number out of its field's range, wrong types
// and trailing data are *ArgError with a message that names the argument
// and lists the accepted ones.
//
// The server's ingress has refused all of these but the wrong types already,
// from the tool's published schema, and hands the tool the canonical form
// of its parse; the strict check here is the same matcher (strictjson) over
// the shape of dst, kept as defence in depth for arguments that reach a
// tool another way, so the lenient decode after it cannot read them
// differently either.
func Decode(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := strictjson.Check(raw, argShape(reflect.TypeOf(dst))); err != nil {
		return &ArgError{Msg: DescribeArgProblem(err, 0)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return &ArgError{Msg: describeDecodeError(err, dst)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &ArgError{Msg: "arguments: unexpected data after the object"}
	}
	return nil
}

// argShapes memoises strictjson.Of for argument types. It is a cache of a
// pure function of the type (as encoding/json caches its field lists), not
// state: every entry is what Of would return again.
var argShapes sync.Map // reflect.Type → *strictjson.Shape

func argShape(t reflect.Type) *strictjson.Shape {
	if s, ok := argShapes.Load(t); ok {
		return s.(*strictjson.Shape)
	}
	s, _ := argShapes.LoadOrStore(t, strictjson.Of(t, true, nil))
	return s.(*strictjson.Shape)
}

// DescribeArgProblem words a strictjson error found in a call's arguments
// for the model; skip drops the leading path elements that lead to the
// arguments object.
func DescribeArgProblem(err error, skip int) string {
	se, ok := err.(*strictjson.Error)
	if !ok {
		return "arguments: " + err.Error()
	}
	where := se.Where(skip)
	switch se.Problem {
	case strictjson.Syntax:
		return "arguments are not valid JSON: " + se.Msg
	case strictjson.Duplicate:
		return fmt.Sprintf("argument %q is given more than once; give each argument once", where)
	case strictjson.CaseVariant:
		return fmt.Sprintf("argument %q: %s", where, strings.TrimPrefix(se.Msg, "unknown key; "))
	case strictjson.Unknown:
		return fmt.Sprintf("unknown argument %q; %s", where, strings.TrimPrefix(se.Msg, "unknown key; "))
	}
	if where == "" {
		return "arguments: " + se.Msg
	}
	return fmt.Sprintf("argument %q: %s", where, se.Msg)
}

func describeDecodeError(err error, dst any) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return "arguments must be a JSON object"
		}
		return fmt.Sprintf("argument %q: expected %s, got JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return "arguments are not valid JSON: " + syntaxErr.Error()
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return fmt.Sprintf("unknown argument %s; accepted: %s", name, strings.Join(fieldNames(dst), ", "))
	}
	return "arguments: " + err.Error()
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}

func fieldNames(dst any) []string {
	t := reflect.TypeOf(dst)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Annotations returns all four hints set explicitly (mcp-go defaults
// destructive and open-world to true).
func Annotations(title string, readOnly, destructive, idempotent, openWorld bool) mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(destructive),
		IdempotentHint:  mcp.ToBoolPtr(idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(openWorld),
	}
}

// Approver puts a call's asks to a person. When it returns a non-nil result
// the server hands that result back as is (an input-required round trip for
// clients of the stateless protocol era); otherwise the outcome decides.
type Approver interface {
	Approve(ctx context.Context, call ApprovalCall) (ApprovalOutcome, *mcp.CallToolResult)
	// Remembered reports whether a live "allow for session" answer of the
	// principal holds exactly this ask (same request, risk, data classes
	// and rule), without asking anyone: for asks that arise mid-action.
	Remembered(principal string, ask grants.Decision) bool
}

// ApprovalCall is everything an approver needs to ask about one call.
type ApprovalCall struct {
	Tool      string
	Args      json.RawMessage // the arguments as received
	Principal string
	Request   mcp.CallToolRequest
	Asks      []grants.Decision
	Policy    *grants.Policy
}

// ApprovalOutcome is a person's answer (or its absence) for a call's asks.
type ApprovalOutcome struct {
	Approved bool
	// Reason is approved, approved_for_session, declined, cancelled,
	// approval_timeout or approval_unavailable.
	Reason grants.Reason
	// Channel is how the answer came: elicitation, console, or memory (a
	// remembered allow_for_session); empty when nobody was asked.
	Channel string
	// Hint tells the person how to get an approval channel, on the first
	// approval_unavailable of a principal; added to the refusal text.
	Hint string
}

// NoApprover answers every ask with a deny: no channel to a person exists.
type NoApprover struct{}

// Approve implements Approver.
func (NoApprover) Approve(context.Context, ApprovalCall) (ApprovalOutcome, *mcp.CallToolResult) {
	return ApprovalOutcome{Reason: grants.ReasonApprovalUnavailable}, nil
}

// Remembered implements Approver: nothing is remembered.
func (NoApprover) Remembered(string, grants.Decision) bool { return false }

// EmbeddedSchema returns a JSON schema file a tool package embeds. The files
// are generated from the argument and result types by the package's tests
// (schematest.Check, refreshed with -update-schemas) so that start-up does
// not reflect over types; a missing file is a build mistake those tests
// catch, hence the panic.
func EmbeddedSchema(files embed.FS, name string) json.RawMessage {
	b, err := files.ReadFile("schemas/" + name)
	if err != nil {
		panic("toolkit: schema " + name + " is not embedded: " + err.Error())
	}
	return b
}

// WithSchemas sets a tool's input and output JSON schemas from raw JSON
// (see EmbeddedSchema), clearing the default object schema mcp.NewTool sets,
// which mcp-go refuses to send beside a raw one.
func WithSchemas(input, output json.RawMessage) mcp.ToolOption {
	return func(t *mcp.Tool) {
		t.InputSchema = mcp.ToolInputSchema{}
		t.RawInputSchema = input
		t.RawOutputSchema = output
	}
}
