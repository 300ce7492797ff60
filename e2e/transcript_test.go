package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// TestProtocolTranscripts replays JSON-RPC exchanges over raw stdio and
// compares every response with testdata/transcripts/NAME.golden (temp
// paths, the version and timings normalised). What a client sees — the tool
// list, schemas, descriptions generated from the policy, results and
// refusals — cannot drift unnoticed; refresh with -update.
func TestProtocolTranscripts(t *testing.T) {
	tests := []struct {
		name, config string
		requests     []string
	}{
		{
			name:   "interactive-dev",
			config: prodDenyConfig,
			requests: []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt"}}}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"deploy/prod/app.toml"}}}`,
				`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"hello.txt","bogus":1}}}`,
				`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"apply_patch","arguments":{"edits":[{"path":"hello.txt","old_text":"hello","new_text":"hi"}]}}}`,
			},
		},
		{
			name:   "strict-production",
			config: `profile = "strict-production"`,
			requests: []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"transcript","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.config)
			f.write(t, "hello.txt", "hello world\n")
			f.write(t, "deploy/prod/app.toml", "x = 1\n")
			cmd := exec.Command(binary, "serve", "--config", f.Config)
			cmd.Env = append(os.Environ(), "HOME="+f.Root)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stdin.Close(); cmd.Wait() }()
			r := bufio.NewReaderSize(stdout, 1<<20)
			var got strings.Builder
			for _, req := range tt.requests {
				fmt.Fprintf(&got, "> %s\n", req)
				fmt.Fprintln(stdin, req)
				if !strings.Contains(req, `"id"`) {
					continue
				}
				line, err := testkit.ReadLine(r, 20*time.Second)
				if err != nil {
					t.Fatalf("answer to %s: %v", req, err)
				}
				fmt.Fprintf(&got, "< %s\n", indent(t, normalise(line, f)))
			}
			golden(t, "transcripts/"+tt.name, f.Root, got.String())
		})
	}
}

var (
	versionField = regexp.MustCompile(`"version":"[^"]*"`)
	durationMS   = regexp.MustCompile(`"duration_ms":\d+`)
)

func normalise(line string, f *fixture) string {
	line = strings.ReplaceAll(line, f.Root, "$ROOT")
	line = versionField.ReplaceAllString(line, `"version":"$$VERSION"`)
	return durationMS.ReplaceAllString(line, `"duration_ms":0`)
}

// indent pretty-prints a JSON line so golden diffs are readable.
func indent(t *testing.T, line string) string {
	var v any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("not JSON: %q", line)
	}
	b, _ := json.MarshalIndent(v, "  ", "  ")
	return string(b)
}
