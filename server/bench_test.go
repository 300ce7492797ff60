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

// BenchmarkNewIngress is the ingress's share of a server's start-up: set
// up, then the shapes of an initialize and its notification.
func BenchmarkNewIngress(b *testing.B) {
	p, _ := interactiveDev(b)
	tools := DefaultTools()
	for b.Loop() {
		in := newIngress(tools, p)
		if _, err := in.shapeFor(peek{method: string(mcp.MethodInitialize), hasID: true}); err != nil {
			b.Fatal(err)
		}
		in.shapeFor(peek{method: string(mcp.MethodNotificationInitialized)})
	}
}

// BenchmarkNew is building the server (before the first answer), the
// audit log opened later as the command line does.
func BenchmarkNew(b *testing.B) {
	p, _ := interactiveDev(b)
	tools := DefaultTools()
	for b.Loop() {
		audit, err := OpenAuditLater(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := New(p, Options{Tools: tools, Audit: audit}); err != nil {
			b.Fatal(err)
		}
		audit.Close()
	}
}
