package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/fstools"
)

// BenchmarkHTTPReadFile32 is HTTP throughput with 32 concurrent read_file
// calls (modern era, 4 KiB file) through ServeHTTP on a real loopback
// listener: the guard, the connection bounds, mcp-go, policy, audit and the
// read. ns/op is the inverse of calls per second.
func BenchmarkHTTPReadFile32(b *testing.B) {
	s, ws := testServer(b, fstools.ReadFile{})
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("0123456789abcdef\n", 4096/17)), 0o644); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeHTTP(ctx, ln, HTTPOptions{Token: testToken, Loopback: true}) }()
	defer func() { stop(); <-served }()
	c := connect(b, "http://"+ln.Addr().String()+"/mcp", true)
	b.ReportAllocs()
	b.SetParallelism(max(1, 32/runtime.GOMAXPROCS(0))) // RunParallel starts parallelism × GOMAXPROCS goroutines
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := callTool(context.Background(), c, "read_file", map[string]any{"path": "f.txt"})
			if err != nil || res.IsError {
				b.Errorf("%v %v", err, res)
				return
			}
		}
	})
}
