package server

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/fstools"
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
		{"nested argument twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"x":[{"k":1,"k":2}]}}}`, toolError, 0, `argument \"x[0].k\"`},
		{"number beyond float64", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","offset":1e400}}}`, toolError, 0, `argument \"offset\": number 1e400 is out of range`},
		{"argument trouble and an ambiguous name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1,"a":2},"name":"read_file","Name":"probe"}}`, rpcErr, rpcInvalidParams, ``},
		{"argument trouble for an unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{"a":1,"a":2}}}`, rpcErr, rpcInvalidParams, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply, ok := s.admit("test", []byte(tc.msg))
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
	if n := strings.Count(string(data), string(`"invalid_arguments"`)); n != 3 {
		t.Errorf("%d invalid_arguments audit records, want 3:\n%s", n, data)
	}
}

// Whatever tool call the ingress lets through, mcp-go routes to the tool an
// exact, first-key reading names, with the arguments that reading sees.
func FuzzIngress(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","Name":"execute_terminal_command"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"nam\u0065":"probe","name":"read_file"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a","PATH":"b"}}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"offset":1e400}}}`,
	} {
		f.Add([]byte(seed))
	}
	s, _ := testServer(f, fstools.ReadFile{})
	f.Fuzz(func(t *testing.T, msg []byte) {
		_, ok := s.admit("fuzz", msg)
		if !ok {
			return
		}
		var lenient mcp.CallToolRequest
		if json.Unmarshal(msg, &lenient) != nil || lenient.Method != string(mcp.MethodToolsCall) {
			return // mcp-go routes only an exact "tools/call" to a tool
		}
		// An exact reading: the first key spelled exactly, by encoding/json's
		// tokenizer (a struct decode would fold case itself).
		first := string(firstRaw(msg, "method"))
		params := firstRaw(msg, "params")
		name, args := firstRaw(params, "name"), firstRaw(params, "arguments")
		var method, tool string
		json.Unmarshal([]byte(first), &method)
		json.Unmarshal(name, &tool)
		if lenient.Method != method {
			t.Fatalf("%s: method read as %q, first exact key says %q", msg, lenient.Method, method)
		}
		if lenient.Params.Name != tool {
			t.Fatalf("%s: routed to %q, exact reading names %q", msg, lenient.Params.Name, tool)
		}
		if len(args) > 0 && !bytes.Equal(lenient.Params.RawArguments, args) {
			t.Fatalf("%s: arguments %s, exact reading %s", msg, lenient.Params.RawArguments, args)
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
		if _, ok := s.admit("bench", msg); !ok {
			b.Fatal("refused")
		}
	}
}
