package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"mvdan.cc/sh/v3/shell"
)

// runIn runs the binary in dir with exactly env.
func runIn(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

// snippetJSON returns the JSON block init printed (from a line "{" to a
// line "}").
func snippetJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	start := strings.Index(out, "\n{\n")
	end := strings.Index(out, "\n}\n")
	if start < 0 || end < start {
		t.Fatalf("no JSON snippet in:\n%s", out)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out[start+1:end+2]), &v); err != nil {
		t.Fatalf("snippet does not parse: %v\n%s", err, out[start:end+2])
	}
	return v
}

// snippetServer digs the server's command and args out of a host's JSON.
func snippetServer(t *testing.T, v map[string]any, top string, wantType bool) (string, []string) {
	t.Helper()
	servers, _ := v[top].(map[string]any)
	s, _ := servers["onellm"].(map[string]any)
	command, _ := s["command"].(string)
	rawArgs, _ := s["args"].([]any)
	if command == "" || len(rawArgs) == 0 {
		t.Fatalf("no %s.onellm command/args in %v", top, v)
	}
	if typ, _ := s["type"].(string); wantType && typ != "stdio" {
		t.Errorf("type = %q, want stdio", typ)
	}
	var args []string
	for _, a := range rawArgs {
		args = append(args, a.(string))
	}
	return command, args
}

// snippetLine returns the shell words of the printed line starting with prefix.
func snippetLine(t *testing.T, out, prefix string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, prefix) {
			words, err := shell.Fields(l, func(string) string { return "" })
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			return words
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", prefix, out)
	return nil
}

// TestInitHosts: `init --host H` in a fresh folder writes a config that
// check accepts, refuses to overwrite it, and prints a snippet with which a
// host-shaped client (started elsewhere, as hosts do, with only the
// snippet's command and args) serves the workspace.
func TestInitHosts(t *testing.T) {
	realBinary, err := filepath.EvalSymlinks(binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"claude-desktop", "claude-code", "cursor", "vscode", "", "http"} {
		name := host
		if name == "" {
			name = "no-host"
		}
		t.Run(name, func(t *testing.T) {
			root, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws, home := filepath.Join(root, "my project"), filepath.Join(root, "home")
			for _, d := range []string{ws, home} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("hello from init\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
			httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			args := []string{"init", "--console", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--http", httpAddr}
			if host != "" {
				args = append(args, "--host", host)
			}
			out, errOut, code := runIn(t, ws, env, args...)
			if code != 0 {
				t.Fatalf("init exit %d: %s%s", code, out, errOut)
			}
			cfgPath := filepath.Join(ws, "onellm-mcp.toml")
			fi, err := os.Stat(cfgPath)
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("config %v mode %v", err, fi.Mode())
			}
			written, _ := os.ReadFile(cfgPath)
			if elicits := host != "claude-desktop" && host != "http"; elicits == strings.Contains(string(written), "\nconsole = ") {
				t.Errorf("console turned on = %v for host %q:\n%s", !elicits, host, written)
			}
			if !strings.Contains(string(written), "# Toolchains found when this file was written") || !strings.Contains(string(written), "git: git at ") {
				t.Errorf("toolchains not listed:\n%s", written)
			}
			if !strings.Contains(out, "explain --config '"+cfgPath+"'") {
				t.Errorf("no explain line to try:\n%s", out)
			}
			chk, chkErr, code := runIn(t, ws, env, "check", "--config", cfgPath)
			if code != 0 || !strings.Contains(chk, "pass reading the workspace is allowed") {
				t.Fatalf("check of what init wrote: exit %d\n%s%s", code, chk, chkErr)
			}
			// Never over an existing config.
			if _, again, code := runIn(t, ws, env, args...); code == 0 || !strings.Contains(again, "exists already") {
				t.Errorf("second init: exit %d %q", code, again)
			}
			if now, _ := os.ReadFile(cfgPath); string(now) != string(written) {
				t.Error("second init changed the config")
			}

			var command string
			var cmdArgs []string
			switch host {
			case "claude-desktop", "cursor", "":
				command, cmdArgs = snippetServer(t, snippetJSON(t, out), "mcpServers", false)
			case "vscode":
				command, cmdArgs = snippetServer(t, snippetJSON(t, out), "servers", true)
			case "claude-code":
				words := snippetLine(t, out, "claude mcp add onellm -- ")
				command, cmdArgs = words[5], words[6:]
			case "http":
				words := snippetLine(t, out, realBinary+" serve --http")
				initHTTPClient(t, words, env, out)
				return
			}
			if command != realBinary {
				t.Errorf("command %q, want the absolute binary %q", command, realBinary)
			}
			if strings.Join(cmdArgs, " ") != "serve --config "+cfgPath {
				t.Errorf("args %q", cmdArgs)
			}
			// The host starts the server from its own folder, not the workspace.
			tr := transport.NewStdioWithOptions(command, env, cmdArgs,
				transport.WithCommandStderrWriter(testWriter{t}),
				transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
					cmd := exec.CommandContext(ctx, command, args...)
					cmd.Env, cmd.Dir = env, "/"
					return cmd, nil
				}))
			c := client.NewClient(tr)
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			hostReads(t, c)
		})
	}
}

// hostReads initializes as a host and reads the workspace's README.
func hostReads(t *testing.T, c *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = string(Legacy)
	init.Params.ClientInfo = mcp.Implementation{Name: "host-shaped", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if _, ok := toolNames(t, c)["read_file"]; !ok {
		t.Fatal("read_file not listed")
	}
	res := call(t, c, "read_file", map[string]any{"path": "README.md"})
	if res.IsError || !strings.Contains(text(res), "hello from init") {
		t.Fatalf("read_file README.md: %q", text(res))
	}
}

var consoleLine = regexp.MustCompile(`approval console`)

// initHTTPClient starts the server with the printed serve line and the
// token variable the config names, then connects at the printed URL.
func initHTTPClient(t *testing.T, words, env []string, out string) {
	t.Helper()
	m := regexp.MustCompile(`URL:\s+(http://\S+/mcp)`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "Authorization: Bearer $ONELLM_MCP_TOKEN") {
		t.Fatalf("no URL and token instructions:\n%s", out)
	}
	token := "init-e2e-token-0123456789abcdef"
	cmd := exec.Command(words[0], words[1:]...)
	cmd.Env = append(env, "ONELLM_MCP_TOKEN="+token)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	stderr := &lockedBuffer{}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(stderr, sc.Text())
			if readyLine.MatchString(sc.Text()) {
				close(ready)
			}
		}
	}()
	done := make(chan struct{})
	go func() { cmd.Wait(); pw.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-done
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr)
		}
	})
	select {
	case <-ready:
	case <-done:
		t.Fatalf("server exited: %s", stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("server not ready: %s", stderr)
	}
	if !consoleLine.MatchString(stderr.String()) {
		t.Errorf("the approval console did not start for the http host:\n%s", stderr)
	}
	c, err := tryHTTPClient(m[1], token, Modern, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, ok := toolNames(t, c)["read_file"]; !ok {
		t.Fatal("read_file not listed")
	}
	res := call(t, c, "read_file", map[string]any{"path": "README.md"})
	if res.IsError || !strings.Contains(text(res), "hello from init") {
		t.Fatalf("read_file README.md over HTTP: %q", text(res))
	}
}
