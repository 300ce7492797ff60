package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// BenchmarkStdioReadFile is one small read_file round trip over the stdio
// transport (pipes, as a host starts the server): the reader, the
// ingress, the hand-off to a worker, the call path and the response's
// encoding and write. Run it with -cpu 1 for the processor the command
// line gives stdio.
func BenchmarkStdioReadFile(b *testing.B) {
	p, ws := interactiveDev(b)
	os.WriteFile(filepath.Join(ws, "small.txt"), []byte("hello, world\n"), 0o644)
	audit, err := OpenAudit(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(p, Options{Tools: DefaultTools(), Audit: audit})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(context.Background(), inR, outW) }()
	out := bufio.NewReader(outR)
	call := func(id int, method, params string) {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		line, err := out.ReadBytes('\n')
		if err != nil || !bytes.HasPrefix(line, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result"`, id)) || bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("%s: %q, %v", method, line, err)
		}
	}
	call(0, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}`)
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	read := `{"name":"read_file","arguments":{"path":"small.txt"}}`
	id := 1
	for b.Loop() {
		call(id, "tools/call", read)
		id++
	}
	inW.Close()
	if err := <-served; err != nil {
		b.Fatal(err)
	}
}
