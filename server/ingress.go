package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/strictjson"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// The ingress is the one strict parse every client message goes through on
// both transports, before mcp-go dispatches it. mcp-go reads messages with
// encoding/json, which takes the last of duplicate keys and matches keys to
// fields case-insensitively: {"name":"read_file","Name":"execute_terminal_command"}
// would run the second tool while a log or a person reading the message saw
// the first. The ingress parses each message against the shape of what
// mcp-go will decode it into (strictjson), and a tool call's arguments
// against the input schema the tool publishes, and refuses any ambiguity:
//
//   - in a tool call's arguments (a duplicate key, a key that is an
//     argument's name only case-insensitively, an unknown argument, a
//     number beyond its argument's range): a tool error with reason
//     invalid_arguments naming the key, audited like any invalid call;
//   - anywhere else in the message: a JSON-RPC error (-32700 when it is not
//     JSON, -32602 inside params, -32600 in the envelope); a notification
//     gets none, as JSON-RPC says, and is dropped.
//
// What goes on is not the client's bytes but the canonical encoding of the
// ingress's own parse (strictjson.Canonical): one spelling of every key and
// string, no whitespace, numbers in the form their field reads. mcp-go
// decodes only those bytes, and the arguments the tool decodes, the policy
// decides on, the audit records and a person is shown are the slice of them
// mcp-go keeps (RawArguments): every reader downstream reads the one
// interpretation the ingress made. To choose the shape, the ingress first
// peeks at the method, the id and a call's tool name; the parse then
// refuses any second or case-varied spelling of them, so what the peek
// read (and the transports route by) is what the canonical form says.

// JSON-RPC error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcInvalidParams  = -32602
)

// ingress holds the shape of every message the server reads, by method.
// Each shape is built by reflection the first time a message needs it
// (sync.OnceValue; safe for the HTTP transport's concurrent readers), so a
// start-up pays only for initialize's and the notification's shapes before
// the first answer, not for the eighteen methods and five tools at once.
type ingress struct {
	byMethod     map[string]func() *strictjson.Shape
	byTool       map[string]func() (*strictjson.Shape, error) // tools/call of each tool, its arguments by its input schema
	other        func() *strictjson.Shape                     // a request with another method
	notification func() *strictjson.Shape
	response     func() *strictjson.Shape // a client's answer to a server request
	callSkipArgs func() *strictjson.Shape // tools/call with its arguments skipped
}

// ingressParts are the shapes the message shapes are built from, built once.
type ingressParts struct {
	str, meta, elicitResult, errDetails *strictjson.Shape
	overrides                           map[reflect.Type]*strictjson.Shape
}

func newIngressParts() *ingressParts {
	str := strictjson.Of(reflect.TypeFor[string](), false, nil)
	elicitResult := strictjson.Of(reflect.TypeFor[mcp.ElicitationResult](), false, nil)
	meta := strictjson.Object(map[string]*strictjson.Shape{
		"progressToken":                strictjson.Free(),
		mcp.MetaKeyProtocolVersion:     str,
		mcp.MetaKeyClientInfo:          strictjson.Of(reflect.TypeFor[mcp.Implementation](), false, nil),
		mcp.MetaKeyClientCapabilities:  strictjson.Of(reflect.TypeFor[mcp.ClientCapabilities](), false, nil),
		mcp.MetaKeyLogLevel:            str,
		mcp.MetaKeySubscriptionID:      strictjson.Free(),
		"io.modelcontextprotocol/task": strictjson.Free(),
	}, strictjson.Free())
	ps := &ingressParts{str: str, meta: meta, elicitResult: elicitResult}
	ps.errDetails = strictjson.Of(reflect.TypeFor[struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data"`
	}](), false, nil)
	// Types with their own UnmarshalJSON, by what they read.
	ps.overrides = map[reflect.Type]*strictjson.Shape{
		reflect.TypeFor[mcp.Meta]():           meta,
		reflect.TypeFor[mcp.RequestId]():      strictjson.Free(),
		reflect.TypeFor[mcp.InputResponse]():  elicitResult,
		reflect.TypeFor[mcp.CallToolParams](): ps.callParams(strictjson.Free()),
	}
	return ps
}

func (ps *ingressParts) callParams(args *strictjson.Shape) *strictjson.Shape {
	return strictjson.Object(map[string]*strictjson.Shape{
		"name":           ps.str,
		"arguments":      args,
		"_meta":          ps.meta,
		"task":           strictjson.Of(reflect.TypeFor[mcp.TaskParams](), false, nil),
		"inputResponses": strictjson.Map(ps.elicitResult),
		"requestState":   ps.str,
	}, strictjson.Free())
}

// envelope is s with every JSON-RPC member it does not name: mcp-go reads
// them all before it looks at the method.
func (ps *ingressParts) envelope(s *strictjson.Shape) *strictjson.Shape {
	add := map[string]*strictjson.Shape{}
	for k, v := range map[string]*strictjson.Shape{
		"jsonrpc": ps.str, "id": strictjson.Free(), "method": ps.str,
		"params": strictjson.Free(), "result": strictjson.Free(), "error": ps.errDetails,
	} {
		if !slices.Contains(s.Fields(), k) {
			add[k] = v
		}
	}
	return s.With(add)
}

// ingressMethods are the request types mcp-go decodes, by method.
var ingressMethods = map[mcp.MCPMethod]reflect.Type{
	mcp.MethodInitialize:             reflect.TypeFor[mcp.InitializeRequest](),
	mcp.MethodPing:                   reflect.TypeFor[mcp.PingRequest](),
	mcp.MethodServerDiscover:         reflect.TypeFor[mcp.DiscoverRequest](),
	mcp.MethodSubscriptionsListen:    reflect.TypeFor[mcp.SubscriptionsListenRequest](),
	mcp.MethodSetLogLevel:            reflect.TypeFor[mcp.SetLevelRequest](),
	mcp.MethodResourcesList:          reflect.TypeFor[mcp.ListResourcesRequest](),
	mcp.MethodResourcesTemplatesList: reflect.TypeFor[mcp.ListResourceTemplatesRequest](),
	mcp.MethodResourcesRead:          reflect.TypeFor[mcp.ReadResourceRequest](),
	mcp.MethodResourcesSubscribe:     reflect.TypeFor[mcp.SubscribeRequest](),
	mcp.MethodResourcesUnsubscribe:   reflect.TypeFor[mcp.UnsubscribeRequest](),
	mcp.MethodPromptsList:            reflect.TypeFor[mcp.ListPromptsRequest](),
	mcp.MethodPromptsGet:             reflect.TypeFor[mcp.GetPromptRequest](),
	mcp.MethodToolsList:              reflect.TypeFor[mcp.ListToolsRequest](),
	mcp.MethodToolsCall:              reflect.TypeFor[mcp.CallToolRequest](),
	mcp.MethodTasksGet:               reflect.TypeFor[mcp.GetTaskRequest](),
	mcp.MethodTasksList:              reflect.TypeFor[mcp.ListTasksRequest](),
	mcp.MethodTasksResult:            reflect.TypeFor[mcp.TaskResultRequest](),
	mcp.MethodTasksCancel:            reflect.TypeFor[mcp.CancelTaskRequest](),
}

// newIngress sets up the shapes, each tool's arguments from the input
// schema its definition under p publishes (the schema is the same under
// every policy: only descriptions vary). A schema that cannot be read
// refuses that tool's every call (TestIngressShapesBuild builds them all).
func newIngress(tools []toolkit.Tool, p *grants.Policy) *ingress {
	parts := sync.OnceValue(newIngressParts)
	in := &ingress{byMethod: map[string]func() *strictjson.Shape{}, byTool: map[string]func() (*strictjson.Shape, error){}}
	for method, t := range ingressMethods {
		in.byMethod[string(method)] = sync.OnceValue(func() *strictjson.Shape {
			ps := parts()
			return ps.envelope(strictjson.Of(t, false, ps.overrides))
		})
	}
	call := in.byMethod[string(mcp.MethodToolsCall)]
	in.callSkipArgs = sync.OnceValue(func() *strictjson.Shape {
		return call().With(map[string]*strictjson.Shape{"params": parts().callParams(strictjson.Skip())})
	})
	for _, t := range tools {
		in.byTool[t.Name()] = sync.OnceValues(func() (*strictjson.Shape, error) {
			args, err := argumentShape(t.Definition(p))
			if err != nil {
				return nil, fmt.Errorf("tool %s: its input schema: %w", t.Name(), err)
			}
			return call().With(map[string]*strictjson.Shape{"params": parts().callParams(args)}), nil
		})
	}
	in.other = sync.OnceValue(func() *strictjson.Shape {
		ps := parts()
		return ps.envelope(strictjson.Object(map[string]*strictjson.Shape{
			"params": strictjson.Object(map[string]*strictjson.Shape{"_meta": ps.meta}, strictjson.Free()),
		}, strictjson.Free()))
	})
	// Notifications' params are read from a map by exact key (requestId of
	// notifications/cancelled): the fields named are the ones read.
	in.notification = sync.OnceValue(func() *strictjson.Shape {
		ps := parts()
		return ps.envelope(strictjson.Object(map[string]*strictjson.Shape{
			"params": strictjson.Object(map[string]*strictjson.Shape{
				"_meta": strictjson.Free(), "requestId": strictjson.Free(), "reason": ps.str,
			}, strictjson.Free()),
		}, strictjson.Free()))
	})
	// A client's answer: to elicitation/create or roots/list.
	in.response = sync.OnceValue(func() *strictjson.Shape {
		ps := parts()
		roots := strictjson.Of(reflect.TypeFor[mcp.ListRootsResult](), false, nil)
		return ps.envelope(strictjson.Object(map[string]*strictjson.Shape{
			"result": ps.elicitResult.With(map[string]*strictjson.Shape{"roots": roots.Field("roots")}),
		}, strictjson.Free()))
	})
	return in
}

// argumentShape is the shape of a tool's arguments: its published input
// schema, read strictly.
func argumentShape(def mcp.Tool) (*strictjson.Shape, error) {
	raw := def.RawInputSchema
	if len(raw) == 0 {
		b, err := json.Marshal(def.InputSchema)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return strictjson.FromSchema(raw)
}

// peek is what the ingress reads before the strict check chooses a shape:
// the exact top-level "method" and the raw "id" (first occurrences; the
// strict check refuses any other).
type peek struct {
	method string
	// tool is the first exact params.name of a tools/call: it chooses the
	// arguments' shape.
	tool  string
	id    json.RawMessage // nil: none, or not a valid JSON-RPC id
	hasID bool
	// reply is set when the message holds "result" or "error" (an answer
	// to a request of the server's).
	reply bool
	// nullID: the first "id" is JSON null (allowed only in some error
	// responses; the strict shape decides the rest).
	nullID bool
	idSeen bool // an "id" key was read (nullID is set from the first)
}

func peekMessage(msg []byte) peek {
	var p peek
	var params []byte
	_ = strictjson.Members(msg, func(key []byte, value func() ([]byte, error)) bool {
		switch string(key) {
		case "method":
			if raw, err := value(); err == nil && p.method == "" {
				p.method, _ = strictjson.String(raw)
			}
		case "params":
			if raw, err := value(); err == nil && params == nil {
				params = raw
			}
		case "id":
			raw, err := value()
			if !p.idSeen {
				p.idSeen, p.nullID = true, err == nil && string(raw) == "null"
			}
			if err == nil && !p.hasID {
				p.hasID = true
				p.id = validID(raw)
			}
		case "result", "error":
			p.reply = true
		}
		return true
	})
	if p.method == string(mcp.MethodToolsCall) && params != nil {
		_ = strictjson.Members(params, func(key []byte, value func() ([]byte, error)) bool {
			if string(key) != "name" {
				return true
			}
			if raw, err := value(); err == nil {
				p.tool, _ = strictjson.String(raw)
			}
			return false
		})
	}
	return p
}

// validID is raw when it is a JSON-RPC id (a string or a number).
func validID(raw []byte) json.RawMessage {
	if len(raw) > 0 && (raw[0] == '"' || raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		return json.RawMessage(raw)
	}
	return nil
}

// shapeFor is the shape p's message is read by; an error when it cannot be
// built (the message is then refused).
func (in *ingress) shapeFor(p peek) (*strictjson.Shape, error) {
	switch {
	case p.method == "" && p.hasID:
		return in.response(), nil
	case strings.HasPrefix(p.method, "notifications/"):
		return in.notification(), nil
	}
	if p.method == string(mcp.MethodToolsCall) {
		if s, ok := in.byTool[p.tool]; ok {
			return s()
		}
	}
	if s, ok := in.byMethod[p.method]; ok {
		return s(), nil
	}
	return in.other(), nil
}

// admission is the ingress's verdict on one client message.
type admission struct {
	// msg is the canonical encoding of the message, the only bytes that may
	// go on to mcp-go; nil when the message was refused.
	msg []byte
	// reply is what to send back instead of a refused message (nil:
	// nothing, for a refused notification).
	reply []byte
	// peek is the message's method, id and tool, as the shape was chosen by.
	peek peek
}

// admit parses one client message. principal names the caller for the
// audit log.
func (s *Server) admit(principal string, msg []byte) admission {
	if t := bytes.TrimLeft(msg, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		// mcp-go serves no batches; refused here, an array is never read.
		return admission{reply: rpcError(nil, rpcInvalidRequest, "refused: a message must be one JSON object (batches are not supported)")}
	}
	p := peekMessage(msg)
	switch {
	case p.method != "" && p.reply:
		// A request and an answer at once: mcp-go's stdio reader would take
		// it for an answer (an approval) while the strict shape read it as a
		// request. JSON-RPC forbids it; refused.
		return admission{reply: rpcError(nil, rpcInvalidRequest, "refused: a message is a request or a response, never both (method with result or error)"), peek: p}
	case p.method != "" && p.hasID && p.nullID:
		// MCP: unlike base JSON-RPC, a request id is never null. mcp-go
		// would take it for a notification and answer nothing, so the
		// request would stay in flight for ever.
		return admission{reply: rpcError(nil, rpcInvalidRequest, "refused: a request id is a string or a number, never null"), peek: p}
	case p.hasID && p.id == nil && !p.nullID:
		return admission{reply: rpcError(nil, rpcInvalidRequest, "refused: a JSON-RPC id is a string or a number"), peek: p}
	}
	shape, err := s.ingress.shapeFor(p)
	if err != nil {
		s.log.Printf("refused a client message (%s): %v", p.method, err)
		if !p.hasID {
			return admission{peek: p} // a notification gets no answer
		}
		return admission{reply: rpcError(p.id, -32603, "refused: "+err.Error()), peek: p}
	}
	canonical, err := strictjson.Canonical(msg, shape)
	if err == nil {
		return admission{msg: canonical, peek: p}
	}
	return admission{reply: s.refuse(principal, msg, p, err), peek: p}
}

// refuse is the answer to a message the strict parse refused (nil for a
// notification).
func (s *Server) refuse(principal string, msg []byte, p peek, err error) []byte {
	se, _ := err.(*strictjson.Error)
	if se == nil {
		se = &strictjson.Error{Msg: err.Error()}
	}
	if p.method == string(mcp.MethodToolsCall) && se.Problem != strictjson.Syntax && se.In("params", "arguments") {
		if res := s.refuseArguments(principal, msg, p.tool, se); res != nil {
			return rpcResult(p.id, res)
		}
	}
	code := rpcInvalidRequest
	switch {
	case se.Problem == strictjson.Syntax:
		code = rpcParseError
		p.id = nil
	case se.In("params"):
		code = rpcInvalidParams
	}
	if len(se.Path) == 0 && strings.EqualFold(se.Key, "id") {
		p.id = nil // which id is meant is the ambiguity
	}
	s.log.Printf("refused a client message (%s): %v", orString(p.method, "no method"), se)
	if !p.hasID && code != rpcParseError {
		return nil // a notification gets no answer, not even an error
	}
	return rpcError(p.id, code, "refused: "+se.Error())
}

// refuseArguments answers a tool call whose arguments are ambiguous or
// unknown with an audited invalid_arguments tool error, when the rest of
// the message names a listed tool unambiguously (name, the peeked first
// exact params.name, is then the only one); nil otherwise.
func (s *Server) refuseArguments(principal string, msg []byte, name string, se *strictjson.Error) *mcp.CallToolResult {
	if strictjson.Check(msg, s.ingress.callSkipArgs()) != nil {
		return nil
	}
	var tool toolkit.Tool
	for _, st := range s.serverTools(s.Policy()) {
		if st.Tool.Name == name {
			tool = s.toolNamed(st.Tool.Name)
		}
	}
	if tool == nil {
		return nil
	}
	ref := callRef{id: fmt.Sprintf("c%d", s.callSeq.Add(1)), session: principal, tool: tool.Name()}
	s.metrics.Calls.Inc(tool.Name(), outcomeInvalid) // a call refused here is counted as one the tool refused
	return s.invalid(ref, toolkit.DescribeArgProblem(se, 2))
}

func (s *Server) toolNamed(name string) toolkit.Tool {
	for _, t := range s.tools {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

func rpcID(id json.RawMessage) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	return id
}

func rpcResult(id json.RawMessage, res *mcp.CallToolResult) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string              `json:"jsonrpc"`
		ID      json.RawMessage     `json:"id"`
		Result  *mcp.CallToolResult `json:"result"`
	}{mcp.JSONRPC_VERSION, rpcID(id), res})
	if err != nil {
		return rpcError(id, -32603, "the result cannot be encoded")
	}
	return b
}

func rpcError(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: mcp.JSONRPC_VERSION, ID: rpcID(id), Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}

func orString(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// principalFromContext is the audit principal of a message read on ctx's
// connection, before mcp-go attaches its session.
func principalFromContext(ctx context.Context, sessionID string) string {
	p, _ := ctx.Value(principalKey{}).(string)
	if p == "" {
		p = "stdio"
	}
	if sessionID != "" {
		p += "/" + sessionID
	}
	return p
}
