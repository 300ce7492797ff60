package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// rewrite replaces the config the way editors do: write a temp file beside
// it, then rename it over the old one.
func (f *fixture) rewrite(t testing.TB, body string) {
	t.Helper()
	data, err := os.ReadFile(f.Config)
	if err != nil {
		t.Fatal(err)
	}
	_ = data
	cfg := "workspace = " + quote(f.Workspace) + "\n" + body + "\n[audit]\npath = " + quote(f.Audit) + "\n"
	tmp := filepath.Join(filepath.Dir(f.Config), ".onellm.toml.swp")
	if err := os.WriteFile(tmp, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f.Config); err != nil {
		t.Fatal(err)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// eventually retries check until it holds or the time is up.
func eventually(t testing.TB, within time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const reloadBase = `profile = "interactive-dev"`

const reloadDeny = `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-notes"
capability = "workspace.files.read"
target     = { path = "notes/**" }`

// Tighten the config on disk: the next call is denied; a broken config is
// refused with check's message and the old policy stays; a profile that
// hides read_file reaches a legacy client as tools/list_changed.
func TestReloadOverStdio(t *testing.T) {
	f := newFixture(t, reloadBase)
	f.write(t, "notes/a.txt", "note\n")
	var changed atomic.Int32
	stderr := &lockedBuffer{}
	tr := transport.NewStdioWithOptions(binary, []string{"HOME=" + f.Root}, []string{"serve", "--config", f.Config},
		transport.WithCommandStderrWriter(stderr))
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr)
		}
	})
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed.Add(1)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = string(Legacy)
	init.Params.ClientInfo = mcp.Implementation{Name: "reload", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}

	if res := call(t, c, "read_file", map[string]any{"path": "notes/a.txt"}); res.IsError {
		t.Fatalf("before the change: %q", text(res))
	}

	// Tighten: the next call is denied within a second or two.
	changedAt := time.Now()
	f.rewrite(t, reloadDeny)
	eventually(t, 15*time.Second, "the new deny rule is in force", func() bool {
		res := call(t, c, "read_file", map[string]any{"path": "notes/a.txt"})
		return res.IsError && strings.Contains(text(res), "no-notes")
	})
	t.Logf("deny in force %s after the write", time.Since(changedAt).Round(10*time.Millisecond))
	// (The tool descriptions are generated from the rules, so this change
	// may itself announce a new list.)

	// Broken: refused with the message check gives; the deny still applies.
	broken := reloadDeny + "\n[[rules.allow]]\nrule_id = \"x\"\ncapability = \"no.such.capability\"\n"
	f.rewrite(t, broken)
	_, checkErr, code := runCLI(t, f.Root, "check", "--config", f.Config)
	if code == 0 {
		t.Fatal("check accepted the broken config")
	}
	msg := strings.TrimPrefix(strings.TrimSpace(checkErr), "onellm-mcp: ")
	eventually(t, 15*time.Second, "the refusal is logged", func() bool {
		return strings.Contains(stderr.String(), "config change refused") && strings.Contains(stderr.String(), msg)
	})
	if res := call(t, c, "read_file", map[string]any{"path": "notes/a.txt"}); !res.IsError || !strings.Contains(text(res), "no-notes") {
		t.Errorf("after a broken change the old policy must stay: %q", text(res))
	}

	// A config group-writable is refused too (the same as at start-up).
	if err := os.Chmod(f.Config, 0o666); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the writable config is refused", func() bool {
		return strings.Contains(stderr.String(), "chmod go-w")
	})
	if err := os.Chmod(f.Config, 0o600); err != nil {
		t.Fatal(err)
	}

	// Hide read_file: the client hears of it and the list changes.
	time.Sleep(300 * time.Millisecond)
	n0 := changed.Load()
	f.rewrite(t, `profile = "strict-production"`)
	eventually(t, 15*time.Second, "tools/list_changed arrives", func() bool { return changed.Load() > n0 })
	if _, ok := toolNames(t, c)["read_file"]; ok {
		t.Error("read_file still listed under strict-production")
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.Arguments = map[string]any{"path": "notes/a.txt"}
	if res, err := c.CallTool(ctx, req); err == nil && !res.IsError {
		t.Errorf("a hidden tool ran: %q", text(res))
	}

	// And back: listed again.
	n := changed.Load()
	f.rewrite(t, reloadBase)
	eventually(t, 15*time.Second, "tools/list_changed arrives again", func() bool { return changed.Load() > n })
	if _, ok := toolNames(t, c)["read_file"]; !ok {
		t.Error("read_file not listed after the profile came back")
	}
}

// Over HTTP, a legacy client listening on its GET stream hears of a tool
// list change, and every client's next call sees the new policy.
func TestReloadOverHTTP(t *testing.T) {
	f := newFixture(t, reloadBase+"\n"+httpConfig)
	f.write(t, "notes/a.txt", "note\n")
	srv := startHTTP(t, f)
	var changed atomic.Int32
	legacy, err := tryHTTPClient(srv.URL, srv.Token, Legacy, []transport.StreamableHTTPCOption{transport.WithContinuousListening()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { legacy.Close() })
	legacy.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed.Add(1)
		}
	})
	modern := httpClient(t, srv.URL, srv.Token, Modern)
	for _, c := range []*client.Client{legacy, modern} {
		if res := call(t, c, "read_file", map[string]any{"path": "notes/a.txt"}); res.IsError {
			t.Fatalf("before: %q", text(res))
		}
	}
	time.Sleep(300 * time.Millisecond) // the GET stream is open

	f.rewrite(t, reloadDeny+"\n"+httpConfig)
	for _, c := range []*client.Client{legacy, modern} {
		eventually(t, 15*time.Second, "deny in force", func() bool {
			res := call(t, c, "read_file", map[string]any{"path": "notes/a.txt"})
			return res.IsError && strings.Contains(text(res), "no-notes")
		})
	}
	time.Sleep(300 * time.Millisecond)
	n0 := changed.Load()
	f.rewrite(t, `profile = "strict-production"`+"\n"+httpConfig)
	eventually(t, 15*time.Second, "tools/list_changed reaches the legacy client", func() bool { return changed.Load() > n0 })
	for _, c := range []*client.Client{legacy, modern} {
		if _, ok := toolNames(t, c)["read_file"]; ok {
			t.Error("read_file still listed")
		}
	}
}
