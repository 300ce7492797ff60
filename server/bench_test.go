package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkCallReadFile is one read_file call through the server's single
// call path (decode, plan, decide, audit, run, audit) without the transport.
func BenchmarkCallReadFile(b *testing.B) {
	p, ws := interactiveDev(b)
	os.WriteFile(filepath.Join(ws, "four.txt"), []byte(strings.Repeat(strings.Repeat("x", 63)+"\n", 64)), 0o644)
	audit, err := OpenAudit(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(p, Options{Tools: DefaultTools(), Audit: audit})
	if err != nil {
		b.Fatal(err)
	}
	tool := s.tools[0]
	req := mcp.CallToolRequest{}
	req.Params.Name = tool.Name()
	req.Params.RawArguments = json.RawMessage(`{"path":"four.txt"}`)
	ctx := context.Background()
	for b.Loop() {
		if res := s.call(ctx, tool, req); res.IsError {
			b.Fatal(res.Content)
		}
	}
}
