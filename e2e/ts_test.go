package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// The tests in this file drive the binary with programs nobody here wrote:
// the official TypeScript SDK clients, the MCP Inspector CLI and the MCP
// conformance suite, all pinned in e2e/ts/package-lock.json. They need
// `npm install --no-save` in e2e/ts first (the CI script runs it); without
// node_modules they skip, except under CI=true where they fail, and with
// node_modules but no node they fail.

// tsDir returns the absolute e2e/ts folder, skipping when it is not set up.
func tsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("ts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		testkit.Missing(t, "e2e/ts/node_modules is absent: run `npm install --no-save` in e2e/ts (as .ci/run does) to run the TypeScript, Inspector and conformance tests")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("e2e/ts/node_modules is installed but node is not on PATH")
	}
	return dir
}

// runNode runs a node program in e2e/ts and returns stdout, stderr and the
// exit code.
func runNode(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("node %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

const tsConfig = prodDenyConfig + httpConfig

func TestTypeScriptClients(t *testing.T) {
	dir := tsDir(t)
	f := newFixture(t, tsConfig)
	f.write(t, "src/a.txt", "hello from ts\n")
	f.write(t, "deploy/prod/app.toml", "secret = 1\n")
	srv := startHTTP(t, f)
	for _, tc := range []struct {
		mode, a, b, version string
	}{
		{"sdk-http", srv.URL, srv.Token, "2025-11-25"}, // @modelcontextprotocol/sdk 1.x
		{"v2-http", srv.URL, srv.Token, "2026-07-28"},  // @modelcontextprotocol/client 2.x
		{"sdk-stdio", binary, f.Config, ""},            // @modelcontextprotocol/sdk 1.x over stdio
	} {
		t.Run(tc.mode, func(t *testing.T) {
			out, errOut, code := runNode(t, dir, []string{"HOME=" + f.Root}, "clients.mjs", tc.mode, tc.a, tc.b, "src/a.txt", "deploy/prod/app.toml")
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			var got struct {
				Version *string  `json:"version"`
				Tools   []string `json:"tools"`
				Read    struct {
					IsError bool   `json:"isError"`
					Text    string `json:"text"`
				} `json:"read"`
				Denied struct {
					IsError bool   `json:"isError"`
					Text    string `json:"text"`
				} `json:"denied"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if !contains(got.Tools, "read_file") {
				t.Errorf("tools %v lack read_file", got.Tools)
			}
			if got.Read.IsError || got.Read.Text != "hello from ts\n" {
				t.Errorf("read: %+v", got.Read)
			}
			if !got.Denied.IsError || !strings.Contains(got.Denied.Text, "no-prod-config") || strings.Contains(got.Denied.Text, "secret = 1") {
				t.Errorf("denied read: %+v", got.Denied)
			}
			if tc.version != "" && (got.Version == nil || *got.Version != tc.version) {
				t.Errorf("protocol version %v, want %s", got.Version, tc.version)
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// The Inspector CLI declares no elicitation, so a call that needs approval
// is denied (approval_unavailable) and the CLI exits with its isError code.
const inspectorToolError = 5

func TestInspectorCLI(t *testing.T) {
	dir := tsDir(t)
	f := newFixture(t, tsConfig)
	f.write(t, "src/a.txt", "hello from the inspector\n")
	outside := f.write(t, filepath.Join(f.Root, "outside.txt"), "outside\n") // reading it needs approval
	home := filepath.Join(f.Root, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	srv := startHTTP(t, f)
	// The Inspector's own --config flag takes the server's arguments, so
	// stdio goes through a session file naming the command.
	session := filepath.Join(f.Root, "mcp.json")
	sj, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"onellm": map[string]any{
		"command": binary, "args": []string{"serve", "--config", f.Config}, "env": map[string]string{"HOME": f.Root},
	}}})
	if err := os.WriteFile(session, sj, 0o600); err != nil {
		t.Fatal(err)
	}
	inspector := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	targets := map[string][]string{
		"stdio": {"--config", session, "--server", "onellm"},
		"http":  {srv.URL, "--transport", "http", "--header", "Authorization: Bearer " + srv.Token},
	}
	for _, name := range []string{"stdio", "http"} {
		t.Run(name, func(t *testing.T) {
			run := func(extra ...string) (string, string, int) {
				args := append([]string{inspector, "--cli"}, targets[name]...)
				return runNode(t, dir, []string{"HOME=" + home}, append(args, extra...)...)
			}
			out, errOut, code := run("--method", "tools/list")
			if code != 0 || !strings.Contains(out, `"read_file"`) {
				t.Fatalf("tools/list: exit %d\n%s\n%s", code, out, errOut)
			}
			out, errOut, code = run("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=src/a.txt")
			if code != 0 || !strings.Contains(out, "hello from the inspector") {
				t.Fatalf("read_file: exit %d\n%s\n%s", code, out, errOut)
			}
			out, errOut, code = run("--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path="+outside)
			if code != inspectorToolError || !strings.Contains(out, "approval_unavailable") || strings.Contains(out, "outside\\n") {
				t.Fatalf("a call needing approval: exit %d (want %d)\n%s\n%s", code, inspectorToolError, out, errOut)
			}
		})
	}
}

// conformanceScenarios are the server scenarios of
// @modelcontextprotocol/conformance that apply to onellm-mcp. The others
// need the suite's own test tools (tools-call-*), resources, prompts,
// completion or logging, none of which this server declares.
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"}

// The suite's client sends no token, so it runs against a loopback server
// with http.auth = "none". The suite imports fs.globSync (Node 22);
// node20-shim.mjs supplies it on Node 20.
func TestConformance(t *testing.T) {
	dir := tsDir(t)
	f := newFixture(t, "profile = \"interactive-dev\"\n[http]\nauth = \"none\"\n")
	srv := startHTTP(t, f)
	if !strings.Contains(srv.stderr.String(), "NO AUTHENTICATION") {
		t.Errorf("auth none was not announced: %s", srv.stderr)
	}
	suite := filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			out, errOut, code := runNode(t, dir, []string{"HOME=" + f.Root, "NO_COLOR=1"}, "--import", "./node20-shim.mjs", suite,
				"server", "--url", srv.URL, "--scenario", sc, "-o", filepath.Join(f.Root, "conformance-"+sc))
			if code != 0 || !strings.Contains(out, "0 failed") {
				t.Fatalf("scenario %s: exit %d\n%s\n%s", sc, code, out, errOut)
			}
			t.Log(lastLines(out, 3))
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return fmt.Sprint(strings.Join(lines, " | "))
}
