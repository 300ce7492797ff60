// Package e2e builds the onellm-mcp binary and drives it as real MCP clients
// do: over stdio and HTTP, in both protocol eras.
package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// binary is the onellm-mcp binary built once for the whole package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "onellm-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "onellm-mcp")
	if err := buildServer(binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildServer builds the server at binary as `make build` builds it:
// static, the sandbox helper (cmd/onellm-sandbox) first beside it and its
// SHA-256 linked into the server, so what is measured is what ships.
func buildServer(binary string) error {
	helper := filepath.Join(filepath.Dir(binary), "onellm-sandbox")
	if err := goBuild(helper, "../cmd/onellm-sandbox"); err != nil {
		return err
	}
	data, err := os.ReadFile(helper)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	return goBuild(binary, "../cmd/onellm-mcp", "-ldflags", "-X github.com/onellm/onellm-mcp/shelltool/sandbox.helperSHA256="+hex.EncodeToString(sum[:]))
}

func goBuild(out, pkg string, flags ...string) error {
	args := append(append([]string{"build", "-trimpath"}, flags...), "-o", out, pkg)
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building %s: %w", pkg, err)
	}
	return nil
}

// Era selects the protocol era a client speaks.
type Era string

const (
	Legacy Era = "2025-11-25"
	Modern Era = "2026-07-28"
)

var eras = []Era{Legacy, Modern}

// prodDenyConfig is interactive-dev with one deny rule on a workspace
// folder: the policy most e2e tests exercise.
const prodDenyConfig = `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-prod-config"
capability = "workspace.files.*"
target     = { path = "deploy/prod/**" }
`

// fixture is a workspace, a config and an audit log in a temp folder.
type fixture struct {
	Root, Workspace, Config, Audit string
	// Env is added to the server's environment.
	Env []string
}

// newFixture writes a config (the body is appended after the workspace and
// audit lines) and returns the paths.
func newFixture(t testing.TB, body string) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{Root: root, Workspace: filepath.Join(root, "ws"), Config: filepath.Join(root, "onellm.toml"), Audit: filepath.Join(root, "audit.jsonl")}
	if err := os.MkdirAll(f.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("workspace = %q\n%s\n[audit]\npath = %q\n", f.Workspace, body, f.Audit)
	if err := os.WriteFile(f.Config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// consoleToken is where the server writes the approval console's token: the
// user's state folder under the HOME the harness gives the server.
func (f *fixture) consoleToken() string {
	return filepath.Join(f.Root, ".local", "state", "onellm-mcp", "console.token")
}

// write creates a file in the workspace (or at an absolute path).
func (f *fixture) write(t testing.TB, name, content string) string {
	t.Helper()
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.Workspace, name)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// auditLines returns the audit log's lines, decoded.
func (f *fixture) auditLines(t testing.TB) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(f.Audit)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// stdioClient starts the binary with the fixture's config and connects an
// mcp-go client of the given era.
func stdioClient(t testing.TB, f *fixture, era Era, opts ...client.ClientOption) *client.Client {
	t.Helper()
	return stdioClientWith(t, f, era, binary, nil, opts...)
}

// stdioClientWith is stdioClient for another binary path and with options
// for the process (for example, another user's credentials).
func stdioClientWith(t testing.TB, f *fixture, era Era, bin string, trOpts []transport.StdioOption, opts ...client.ClientOption) *client.Client {
	t.Helper()
	tr := transport.NewStdioWithOptions(bin, append([]string{"HOME=" + f.Root}, f.Env...), []string{"serve", "--config", f.Config},
		append([]transport.StdioOption{transport.WithCommandStderrWriter(testWriter{t})}, trOpts...)...)
	if era == Legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(context.Background()); err != nil { // the process lives as long as this context
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "onellm-e2e", Version: "1"}
	init.Params.ProtocolVersion = string(era)
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ProtocolVersion != string(era) {
		t.Fatalf("negotiated protocol %s, want %s", res.ProtocolVersion, era)
	}
	return c
}

// call makes a tool call and returns the result.
func call(t testing.TB, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	return res
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structuredContent into v.
func structured(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// toolNames lists the tools the server offers.
func toolNames(t testing.TB, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// runCLI runs the binary with args and returns stdout, stderr and the exit code.
func runCLI(t testing.TB, dir string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIEnv(t, dir, nil, args...)
}

// runCLIEnv is runCLI with variables added to the environment.
func runCLIEnv(t testing.TB, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIBinary(t, binary, dir, env, args...)
}

// runCLIWith is runCLI for another binary.
func runCLIWith(t testing.TB, bin, dir string, args ...string) (string, string, int) {
	t.Helper()
	return runCLIBinary(t, bin, dir, nil, args...)
}

func runCLIBinary(t testing.TB, bin, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// testWriter sends a server's stderr to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("server stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
