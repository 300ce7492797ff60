package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/strictjson"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// The ingress passes what is unambiguous, answers ambiguous tool arguments
// with an audited invalid_arguments tool error, and any other ambiguity
// with a JSON-RPC error (or, for a notification, silence).
func TestAdmit(t *testing.T) {
	s, _ := testServer(t, fstools.ReadFile{}, probeTool{})
	const (
		pass = iota
		toolError
		rpcErr
		silent
	)
	for _, tc := range []struct {
		name string
		msg  string
		want int
		code int    // JSON-RPC error code
		text string // in the answer
	}{
		{"plain call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`, pass, 0, ""},
		{"modern call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"},` + meta + `}}`, pass, 0, ""},
		{"params before method", `{"params":{"name":"read_file","arguments":{}},"id":"x","method":"tools/call","jsonrpc":"2.0"}`, pass, 0, ""},
		{"initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`, pass, 0, ""},
		{"unknown extra fields pass", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c","x-vendor":{"a":1}},"extra":true}`, pass, 0, ""},
		{"elicitation answer", `{"jsonrpc":"2.0","id":3,"result":{"action":"accept","content":{"decision":"allow_once"}}}`, pass, 0, ""},
		{"cancel notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"x"}}`, pass, 0, ""},
		{"trace context and other meta keys", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"k=v","x.vendor/Anything":{"A":1,"a":2},"progressToken":7}}}`, pass, 0, ""},
		{"initialize with URL elicitation", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"x-new":{"Y":1}},"clientInfo":{"name":"c","version":"1"}}}`, pass, 0, ""},
		{"modern call with URL elicitation", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}}}}}}`, pass, 0, ""},

		{"tool name case variant", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","Name":"execute_terminal_command","arguments":{}}}`, rpcErr, rpcInvalidParams, `params.Name`},
		{"tool name only in a case variant", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"execute_terminal_command"}}`, rpcErr, rpcInvalidParams, `did you mean \"name\"`},
		{"tool name twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","name":"read_file"}}`, rpcErr, rpcInvalidParams, `params.name: duplicate`},
		{"arguments twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"},"arguments":{"path":"b"}}}`, rpcErr, rpcInvalidParams, `duplicate`},
		{"Arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","Arguments":{"path":"a"}}}`, rpcErr, rpcInvalidParams, `params.Arguments`},
		{"method case variant", `{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`, rpcErr, rpcInvalidRequest, `Method`},
		{"method twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`, rpcErr, rpcInvalidRequest, `method: duplicate`},
		{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, rpcErr, rpcInvalidRequest, `"id":null`},
		{"ID", `{"jsonrpc":"2.0","ID":1,"method":"ping"}`, silent, 0, ""},
		{"meta capability case variant", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"Elicitation":{}}}}}`, rpcErr, rpcInvalidParams, `Elicitation`},
		{"meta key case variant", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"IO.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, rpcErr, rpcInvalidParams, `IO.modelcontextprotocol`},
		{"initialize client info", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","Name":"b"}}}`, rpcErr, rpcInvalidParams, `clientInfo.Name`},
		{"elicitation answer twice", `{"jsonrpc":"2.0","id":3,"result":{"action":"decline","action":"accept"}}`, rpcErr, rpcInvalidRequest, `result.action`},
		{"elicitation answer case variant", `{"jsonrpc":"2.0","id":3,"result":{"Action":"accept"}}`, rpcErr, rpcInvalidRequest, `result.Action`},
		{"MRTR answer case variant", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","inputResponses":{"k":{"Action":"accept"}},"requestState":"s"}}`, rpcErr, rpcInvalidParams, `inputResponses.k.Action`},
		{"notification with a duplicate", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}`, silent, 0, ""},
		{"cancel notification case variant", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"RequestId":1}}`, silent, 0, ""},
		{"not JSON", `{"jsonrpc":"2.0","id":1,`, rpcErr, rpcParseError, `"id":null`},
		{"a request and an answer at once", `{"jsonrpc":"2.0","id":7,"method":"ping","result":{"action":"decline","Action":"accept"}}`, rpcErr, rpcInvalidRequest, `never both`},
		{"a method with an error", `{"jsonrpc":"2.0","id":7,"method":"tools/list","error":{"code":1,"message":"x"}}`, rpcErr, rpcInvalidRequest, `never both`},
		{"an object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`, rpcErr, rpcInvalidRequest, `string or a number`},
		{"a boolean id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, rpcErr, rpcInvalidRequest, `string or a number`},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","Name":"x"}}]`, rpcErr, rpcInvalidRequest, `batches`},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}`, rpcErr, rpcParseError, ""},

		{"argument twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","path":"b"}}}`, toolError, 0, `argument \"path\" is given more than once`},
		{"nested argument twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","arguments":{"x":[{"k":1,"k":2}]}}}`, toolError, 0, `argument \"x[0].k\"`},
		{"argument case variant", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"PATH":"/etc/passwd"}}}`, toolError, 0, `argument \"PATH\": keys are case-sensitive: did you mean \"path\"?`},
		{"argument case variant beside the argument", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"path":"a","Path":"b"},"name":"read_file"}}`, toolError, 0, `argument \"Path\"`},
		{"argument case variant by Unicode folding", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","offſet":1}}}`, toolError, 0, `did you mean \"offset\"`},
		{"unknown argument", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","mode":"x"}}}`, toolError, 0, `unknown argument \"mode\"; accepted: limit, offset, path`},
		{"integer argument with a fraction", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","offset":1.5}}}`, toolError, 0, `argument \"offset\": number 1.5 is out of range: expected an integer`},
		{"case variant of a probe argument", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","arguments":{"MODE":"wait"}}}`, toolError, 0, `did you mean \"mode\"`},
		{"number beyond float64", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","offset":1e400}}}`, toolError, 0, `argument \"offset\": number 1e400 is out of range`},
		{"argument trouble and an ambiguous name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1,"a":2},"name":"read_file","Name":"probe"}}`, rpcErr, rpcInvalidParams, ``},
		{"argument trouble for an unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{"a":1,"a":2}}}`, rpcErr, rpcInvalidParams, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adm := s.admit("test", []byte(tc.msg))
			reply, ok := adm.reply, adm.msg != nil
			got := string(reply)
			switch tc.want {
			case pass:
				if !ok {
					t.Fatalf("refused: %s", reply)
				}
				return
			case silent:
				if ok || reply != nil {
					t.Fatalf("pass=%v reply %s; want it dropped without an answer", ok, reply)
				}
				return
			}
			if ok {
				t.Fatal("passed an ambiguous message")
			}
			var m struct {
				Result *mcp.CallToolResult `json:"result"`
				Error  *struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal(reply, &m); err != nil {
				t.Fatalf("answer %s: %v", reply, err)
			}
			if tc.want == toolError && (m.Result == nil || !m.Result.IsError || !strings.Contains(got, "invalid_arguments")) {
				t.Errorf("answer %s, want an invalid_arguments tool error", got)
			}
			if tc.want == rpcErr && (m.Error == nil || m.Error.Code != tc.code) {
				t.Errorf("answer %s, want JSON-RPC error %d", got, tc.code)
			}
			if !strings.Contains(got, tc.text) {
				t.Errorf("answer %s does not contain %s", got, tc.text)
			}
		})
	}
	// The argument refusals were audited as invalid calls.
	data, err := os.ReadFile(s.Policy().AuditPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), string(`"invalid_arguments"`)); n != 9 {
		t.Errorf("%d invalid_arguments audit records, want 9:\n%s", n, data)
	}
}

// Whatever the ingress lets through, it hands on as a canonical form that
// it admits again unchanged and that a lenient reader (encoding/json, as
// mcp-go) reads as the same value as the client's bytes; and a tool call
// in that form is routed to the tool an exact, first-key reading of it
// names, with the arguments that reading sees.
func FuzzIngress(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","Name":"execute_terminal_command"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"nam\u0065":"probe","name":"read_file"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","PATH":"b"}}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"offset":1e400}}}`,
		` {"id":1.0e0, "method":"tools/c\u0061ll","params":{"arguments":{"p\u0061th":"\ud800\/"},"n\u0061me":"read_file","_meta":{"progressToken":1E2}},"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"c","version":"1"},"protocolVersion":"2025-11-25"}}`,
	} {
		f.Add([]byte(seed))
	}
	s, _ := testServer(f, fstools.ReadFile{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		adm := s.admit("fuzz", msg)
		if adm.msg == nil {
			return
		}
		canonical := adm.msg
		if again := s.admit("fuzz", canonical); !bytes.Equal(again.msg, canonical) {
			t.Fatalf("%s: canonical %s admitted as %s (%s)", msg, canonical, again.msg, again.reply)
		}
		var raw, canon any
		if json.Unmarshal(msg, &raw) != nil || json.Unmarshal(canonical, &canon) != nil || !reflect.DeepEqual(raw, canon) {
			t.Fatalf("%s and its canonical %s read differently: %v / %v", msg, canonical, raw, canon)
		}
		var lenient mcp.CallToolRequest
		if json.Unmarshal(canonical, &lenient) != nil || lenient.Method != string(mcp.MethodToolsCall) {
			return // mcp-go routes only an exact "tools/call" to a tool
		}
		// An exact reading: the first key spelled exactly, by encoding/json's
		// tokenizer (a struct decode would fold case itself).
		first := string(firstRaw(canonical, "method"))
		params := firstRaw(canonical, "params")
		name, args := firstRaw(params, "name"), firstRaw(params, "arguments")
		var method, tool string
		json.Unmarshal([]byte(first), &method)
		json.Unmarshal(name, &tool)
		if lenient.Method != method {
			t.Fatalf("%s: method read as %q, first exact key says %q", canonical, lenient.Method, method)
		}
		if lenient.Params.Name != tool {
			t.Fatalf("%s: routed to %q, exact reading names %q", canonical, lenient.Params.Name, tool)
		}
		if len(args) > 0 && !bytes.Equal(lenient.Params.RawArguments, args) {
			t.Fatalf("%s: arguments %s, exact reading %s", canonical, lenient.Params.RawArguments, args)
		}
	})
}

// firstRaw is the raw value of the first member of an object spelled
// exactly key, or nil.
func firstRaw(obj []byte, key string) []byte {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil
		}
		if tok == key {
			return v
		}
	}
	return nil
}

// BenchmarkAdmitTypicalCall is the ingress check of a typical tool call.
func BenchmarkAdmitTypicalCall(b *testing.B) {
	s, _ := testServer(b, fstools.ReadFile{})
	msg := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/server/main.go","offset":120,"limit":80},` + meta + `}}`)
	b.ReportAllocs()
	for b.Loop() {
		if s.admit("bench", msg).msg == nil {
			b.Fatal("refused")
		}
	}
}

// recordTool passes on what it is given: the arguments it plans from and
// the request mcp-go handed over.
type recordTool struct{ saw chan mcp.CallToolRequest }

func (recordTool) Name() string { return "record" }
func (recordTool) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapWorkspaceRead}
}
func (recordTool) Definition(*grants.Policy) mcp.Tool {
	return mcp.NewTool("record", toolkit.WithSchemas(json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"number"},"deep":{}}}`), nil))
}

func (rt recordTool) Plan(_ context.Context, env *toolkit.Env, args json.RawMessage) (*toolkit.Plan, error) {
	req := env.Request
	req.Params.RawArguments = args // what the tool plans from
	rt.saw <- req
	r := grants.Request{Capability: grants.CapWorkspaceRead, Target: grants.Target{ToolName: "record", Path: filepath.Join(env.Policy.Workspace, "x")}, Risk: grants.RiskLow}
	return &toolkit.Plan{Requests: []grants.Request{r}, Run: func(context.Context, toolkit.Grant) toolkit.Result {
		return toolkit.Result{Tool: mcp.NewToolResultText("recorded")}
	}}, nil
}

// A message whose bytes can be read more than one way (escaped keys and
// names, an escaped solidus, a lone surrogate, numbers with exponents and
// trailing zeros, whitespace) reaches mcp-go, and its arguments the tool,
// only in the canonical form of the ingress's one parse, on both
// transports.
func TestIngressHandsOnOnlyTheCanonicalForm(t *testing.T) {
	const sent = ` { "jsonrpc" : "2.0", "id" : 7, "method" : "tools/c\u0061ll", "params" : { "n\u0061me" : "rec\u006frd",` +
		` "arguments" : { "p\u0061th" : "caf\u00e9\/x\ud800", "n" : 1.0E1 , "deep": {"k\u0065y": [ 1e0 , "\u0041", -0.0 ] } },` +
		` "_meta": {"progressToken": 2.50, "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"} } } `
	const wantArgs = `{"path":"café/x` + "\ufffd" + `","n":10,"deep":{"key":[1,"A",-0]}}`
	const want = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"record","arguments":` + wantArgs +
		`,"_meta":{"progressToken":2.5,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`
	rec := recordTool{saw: make(chan mcp.CallToolRequest, 1)}
	s, _ := testServer(t, rec)

	adm := s.admit("test", []byte(sent))
	if string(adm.msg) != want {
		t.Fatalf("canonical form\n%s\nwant\n%s", adm.msg, want)
	}

	t.Run("http", func(t *testing.T) {
		var got []byte
		g, _, _ := guardFor(HTTPOptions{Loopback: true}, grants.HTTPSettings{MaxBodyBytes: 1 << 20})
		g.admit = s.admit
		g.next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ = io.ReadAll(r.Body)
			if r.ContentLength != int64(len(got)) {
				t.Errorf("Content-Length %d for a body of %d bytes", r.ContentLength, len(got))
			}
		})
		w := httptest.NewRecorder()
		g.ServeHTTP(w, post(sent, "Authorization", "Bearer "+testToken))
		if string(got) != want {
			t.Fatalf("mcp-go was handed\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		peer := startStdio(t, s, context.Background(), StdioOptions{})
		peer.send(sent)
		res := peer.expect(7)
		if !strings.Contains(fmt.Sprint(res["result"]), "recorded") {
			t.Fatalf("result %v", res)
		}
		req := <-rec.saw
		if string(req.Params.RawArguments) != wantArgs || req.Params.Name != "record" {
			t.Fatalf("the tool planned from %s (tool %q), want %s", req.Params.RawArguments, req.Params.Name, wantArgs)
		}
		if req.Params.Meta == nil || req.Params.Meta.AdditionalFields["traceparent"] == nil {
			t.Errorf("_meta lost on the way: %+v", req.Params.Meta)
		}
	})
}

// Every argument of every built-in tool, spelled in another case, is
// refused at the ingress with an audited invalid_arguments naming it,
// before the call is dispatched: the shapes come from the schemas the
// tools publish, so a new argument is covered when it is published.
func TestIngressArgumentCaseVariants(t *testing.T) {
	e := newCallEnv(t, `profile = "permissive-dev"`, nil)
	s, err := New(e.p, Options{Tools: DefaultTools(), Audit: e.audit})
	if err != nil {
		t.Fatal(err)
	}
	listed := s.serverTools(e.p)
	if len(listed) < 4 {
		t.Fatalf("%d tools listed, want read_file, apply_patch, execute_terminal_command and http_request at least", len(listed))
	}
	call := func(tool, args string) string {
		t.Helper()
		adm := s.admit("test", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`))
		if adm.msg != nil {
			t.Fatalf("%s %s: admitted", tool, args)
		}
		return string(adm.reply)
	}
	n := 0
	for _, st := range listed {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(st.Tool.RawInputSchema, &schema); err != nil || len(schema.Properties) == 0 {
			t.Fatalf("%s: schema %s: %v", st.Tool.Name, st.Tool.RawInputSchema, err)
		}
		for name := range schema.Properties {
			variant := strings.ToUpper(name[:1]) + name[1:]
			reply := call(st.Tool.Name, `{"`+variant+`":null}`)
			want := fmt.Sprintf(`argument \"%s\": keys are case-sensitive: did you mean \"%s\"?`, variant, name)
			if !strings.Contains(reply, "invalid_arguments") || !strings.Contains(reply, want) {
				t.Errorf("%s %s: %s", st.Tool.Name, variant, reply)
			}
			n++
		}
	}
	if reply := call("apply_patch", `{"edits":[{"path":"a","old_text":"x","new_text":"y"},{"PATH":"b"}]}`); !strings.Contains(reply, `argument \"edits[1].PATH\"`) {
		t.Errorf("nested: %s", reply)
	}
	data, err := os.ReadFile(e.log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), `"invalid_arguments"`); got != n+1 {
		t.Errorf("%d invalid_arguments audit records, want %d", got, n+1)
	}
	// /metrics counts them as the invalid calls they are.
	w := httptest.NewRecorder()
	s.metrics.Registry.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if want := `onellm_tool_calls_total{tool="read_file",outcome="invalid_arguments"} 3`; !strings.Contains(w.Body.String(), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, w.Body)
	}
}

// The ingress builds its shapes when a message first needs them: every
// method's and every built-in tool's shape builds under each profile, and
// a tool whose input schema cannot be read has its every call refused
// (fail closed), not read by a looser shape.
func TestIngressShapesBuild(t *testing.T) {
	for _, profile := range []string{"interactive-dev", "permissive-dev", "strict-production"} {
		p, _ := profilePolicy(t, profile)
		in := newIngress(DefaultTools(), p)
		for method, shape := range in.byMethod {
			if shape() == nil {
				t.Errorf("%s: no shape for %s", profile, method)
			}
		}
		for _, tool := range DefaultTools() {
			if s, err := in.shapeFor(peek{method: string(mcp.MethodToolsCall), tool: tool.Name(), hasID: true}); err != nil || s == nil {
				t.Errorf("%s: tool %s: %v", profile, tool.Name(), err)
			}
		}
		for _, s := range []*strictjson.Shape{in.other(), in.notification(), in.response(), in.callSkipArgs()} {
			if s == nil {
				t.Errorf("%s: a shape is missing", profile)
			}
		}
	}

	s, _ := testServer(t, badSchemaTool{})
	adm := s.admit("test", []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bad","arguments":{}}}`))
	if adm.msg != nil || !strings.Contains(string(adm.reply), "input schema") || !strings.Contains(string(adm.reply), `"id":3`) {
		t.Fatalf("a call to a tool whose schema cannot be read: msg %s reply %s", adm.msg, adm.reply)
	}
	if adm := s.admit("test", []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"bad","arguments":{}}}`)); adm.msg != nil || adm.reply != nil {
		t.Fatalf("as a notification: msg %s reply %s", adm.msg, adm.reply)
	}
}

type badSchemaTool struct{ fakeTool }

func (badSchemaTool) Name() string { return "bad" }
func (badSchemaTool) Definition(*grants.Policy) mcp.Tool {
	return mcp.NewTool("bad", toolkit.WithSchemas(json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/y"}}}`), nil))
}
