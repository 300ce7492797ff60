package server

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/fstools"
)

// TestToolResponseAsMCPGo: what the stdio link writes for a response is
// byte for byte what mcp-go's own encoding gives, for tool results taking
// the one-pass shape and for those that do not.
func TestToolResponseAsMCPGo(t *testing.T) {
	text := mcp.NewToolResultText("a <b> & \"c\"\n\u2028 é \x01 " + string([]byte{0xff}))
	structured := mcp.NewToolResultStructured(fstools.ReadFileResult{Path: "/w/<x>.txt", StartLine: 1, EndLine: 2, TotalLines: 2, SizeBytes: 9}, "one\ntwo\n")
	raw := mcp.NewToolResultText("t")
	raw.RawStructuredContent = json.RawMessage(`{ "b" : [1, 2],  "a":"<"}`)
	annotated := mcp.NewTextContent("x")
	annotated.Annotations = &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}, Priority: ptr(0.5)}
	mixed := &mcp.CallToolResult{Content: []mcp.Content{annotated, mcp.NewImageContent("AAAA", "image/png"),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///x", MIMEType: "text/plain", Text: "r"})}}
	meta := mcp.NewToolResultText("m")
	meta.Meta = mcp.NewMetaFromMap(map[string]any{"k": "v"})
	typed := mcp.NewToolResultText("r")
	typed.ResultType = "complete"
	failedWith := mcp.NewToolResultStructured(map[string]int{"exit_code": 1}, "failed")
	failedWith.IsError = true
	var nilPtr *fstools.ReadFileResult
	for name, result := range map[string]any{
		"text":              text,
		"error":             mcp.NewToolResultError("refused: <no>"),
		"structured":        structured,
		"raw structured":    raw,
		"error, structured": failedWith,
		"mixed content":     mixed,
		"no content":        &mcp.CallToolResult{},
		"empty content":     &mcp.CallToolResult{Content: []mcp.Content{}},
		"a typed nil":       &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: nilPtr},
		"by value":          *structured,
		"meta (as it is)":   meta,
		"a type (as it is)": typed,
		"input required":    &mcp.CallToolResult{MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: "s"}},
		"not a tool result": map[string]any{"tools": []string{"a"}},
	} {
		for _, id := range []any{int64(7), "id-<1>", nil} {
			resp := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), result)
			want, werr := json.Marshal(resp)
			got, gerr := json.Marshal(encodable(resp))
			if werr != nil || gerr != nil || !bytes.Equal(got, want) {
				t.Errorf("%s, id %v:\n got %s (%v)\nwant %s (%v)", name, id, got, gerr, want, werr)
			}
		}
	}
	if e := mcp.NewJSONRPCError(mcp.NewRequestId(1), -1, "x", nil); !reflect.DeepEqual(encodable(e), mcp.JSONRPCMessage(e)) {
		t.Errorf("an error response was changed")
	}
}

// TestToolResultFieldsKnown fails when mcp-go's CallToolResult gains a
// field encodable does not know of: it would be dropped from responses.
func TestToolResultFieldsKnown(t *testing.T) {
	var names []string
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for f := range rt.Fields() {
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			names = append(names, f.Name)
		}
	}
	walk(reflect.TypeFor[mcp.CallToolResult]())
	slices.Sort(names)
	known := []string{"Content", "InputRequests", "IsError", "Meta", "RawStructuredContent", "RequestState", "ResultType", "StructuredContent"}
	if !slices.Equal(names, known) {
		t.Fatalf("mcp.CallToolResult has fields %v; encodable knows %v", names, known)
	}
}

func ptr[T any](v T) *T { return &v }

// BenchmarkToolResponse encodes a read_file response of 4 KiB as mcp-go
// does and in one pass (encodable).
func BenchmarkToolResponse(b *testing.B) {
	res := mcp.NewToolResultStructured(fstools.ReadFileResult{Path: "/w/four.txt", StartLine: 1, EndLine: 64, TotalLines: 64, SizeBytes: 4096},
		string(bytes.Repeat([]byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"), 64)))
	resp := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(12)), res)
	for name, v := range map[string]func() any{"mcp-go": func() any { return resp }, "one-pass": func() any { return encodable(resp) }} {
		b.Run(name, func(b *testing.B) {
			enc := json.NewEncoder(io.Discard)
			for b.Loop() {
				if err := enc.Encode(v()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
