package e2e

import (
	"bufio"
	"context"
	"path/filepath"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkReadFileRoundTrip is one read_file of a 4 KiB file through the
// built binary over stdio with the mcp-go client: policy and audit included.
func BenchmarkReadFileRoundTrip(b *testing.B) {
	for _, era := range eras {
		b.Run(string(era), func(b *testing.B) {
			f := newFixture(b, `profile = "interactive-dev"`)
			f.write(b, "four.txt", strings.Repeat(strings.Repeat("x", 63)+"\n", 64))
			c := stdioClient(b, f, era)
			args := map[string]any{"path": "four.txt"}
			for b.Loop() {
				if res := call(b, c, "read_file", args); res.IsError {
					b.Fatal(text(res))
				}
			}
		})
	}
}

// BenchmarkStartup measures process start to a served initialize response
// over stdio (legacy handshake, read directly from the pipe), for
// onellm-mcp and for the bare mcp-go server as a reference.
func BenchmarkStartup(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	b.Run("onellm-mcp", func(b *testing.B) { benchStartup(b, binary, "serve", "--config", f.Config) })
	b.Run("baseline", func(b *testing.B) { benchStartup(b, buildBaseline(b)) })
}

func benchStartup(b *testing.B, bin string, args ...string) {
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	for b.Loop() {
		cmd := exec.Command(bin, args...)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := stdin.Write([]byte(initialize)); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.Contains(line, `"protocolVersion"`) {
			b.Fatalf("initialize: %q %v", line, err)
		}
		b.StopTimer() // shutting down is not start-up
		stdin.Close()
		cmd.Wait()
		b.StartTimer()
	}
}

// TestIdleMemory reports the resident memory of a served, idle server (the
// target is under 15 MiB); it fails only far above it, as a guard.
func TestIdleMemory(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	f.write(t, "a.txt", "a\n")
	cmd := exec.Command(binary, "serve", "--config", f.Config)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`,
	} {
		stdin.Write([]byte(msg + "\n"))
		if !strings.Contains(msg, `"id"`) {
			continue
		}
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	status, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.Atoi(strings.Fields(line)[1])
			t.Logf("idle resident memory: %.1f MiB", float64(kb)/1024)
			if kb > 64<<10 {
				t.Fatalf("idle RSS %d KiB is far above the 15 MiB target", kb)
			}
		}
	}
}

// BenchmarkPingRoundTrip is the protocol floor: a ping through the same
// client and pipes, for comparison with a tool call.
func BenchmarkPingRoundTrip(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	c := stdioClient(b, f, Legacy)
	for b.Loop() {
		if err := c.Ping(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBaselineReadFileRoundTrip is the same read through the smallest
// mcp-go server (e2e/internal/baseline): the reference for the figure above.
func BenchmarkBaselineReadFileRoundTrip(b *testing.B) {
	bin := buildBaseline(b)
	file := filepath.Join(b.TempDir(), "four.txt")
	if err := os.WriteFile(file, []byte(strings.Repeat(strings.Repeat("x", 63)+"\n", 64)), 0o644); err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(transport.NewStdio(bin, nil), client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = string(Legacy)
	if _, err := c.Initialize(context.Background(), init); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"path": file}
	for b.Loop() {
		if res := call(b, c, "read_file", args); res.IsError {
			b.Fatal(text(res))
		}
	}
}

// buildBaseline builds e2e/internal/baseline the way the server is built.
func buildBaseline(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "baseline")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./internal/baseline")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build baseline: %v\n%s", err, out)
	}
	return bin
}
