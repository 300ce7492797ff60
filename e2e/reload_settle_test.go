package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestReloadNeverAppliesAPartialConfig: a writer that writes the config in
// two steps — two writes before one close, or a truncating write, a close
// and an append — 200 times in a row while calls run never puts the first
// half (a valid config without its deny rule) in force; the finished file
// is applied once it has settled; and a change that removes the deny is
// logged as weakening the policy.
func TestReloadNeverAppliesAPartialConfig(t *testing.T) {
	for _, writer := range []string{"two-writes", "close-then-append"} {
		t.Run(writer, func(t *testing.T) {
			f := newFixture(t, reloadDeny)
			f.write(t, "notes/a.txt", "note\n")
			f.write(t, "final/b.txt", "final\n")
			head := fmt.Sprintf("workspace = %q\nprofile = \"interactive-dev\"\n\n[audit]\npath = %q\n", f.Workspace, f.Audit)
			deny := "\n[[rules.deny]]\nrule_id    = \"no-notes\"\ncapability = \"workspace.files.read\"\ntarget     = { path = \"notes/**\" }\n"
			finalDeny := "\n[[rules.deny]]\nrule_id    = \"no-final\"\ncapability = \"workspace.files.read\"\ntarget     = { path = \"final/**\" }\n"

			stderr := &lockedBuffer{}
			tr := transport.NewStdioWithOptions(binary, []string{"HOME=" + f.Root}, []string{"serve", "--config", f.Config},
				transport.WithCommandStderrWriter(stderr))
			c := client.NewClient(tr)
			if err := c.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				c.Close()
				if t.Failed() {
					t.Logf("server stderr:\n%s", stderr)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = string(Legacy)
			init.Params.ClientInfo = mcp.Implementation{Name: "reload-settle", Version: "1"}
			if _, err := c.Initialize(ctx, init); err != nil {
				t.Fatal(err)
			}
			readDenied := func(path, rule string) bool {
				res := call(t, c, "read_file", map[string]any{"path": path})
				return res.IsError && strings.Contains(text(res), rule)
			}
			if !readDenied("notes/a.txt", "no-notes") {
				t.Fatal("the deny is not in force at the start")
			}

			// Calls run all the time the writer writes.
			var calls, leaks atomic.Int32
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					req := mcp.CallToolRequest{}
					req.Params.Name = "read_file"
					req.Params.Arguments = map[string]any{"path": "notes/a.txt"}
					res, err := c.CallTool(ctx, req)
					calls.Add(1)
					if err == nil && !res.IsError {
						leaks.Add(1)
					}
					time.Sleep(time.Millisecond) // leave the shared cores to the server and the writer
				}
			}()
			for i := range 200 {
				second := deny + fmt.Sprintf("# generation %d\n", i)
				if i == 199 {
					second += finalDeny
				}
				// Most writers finish within milliseconds; every 40th pauses
				// 400 ms between its steps, longer than a short debounce
				// (this server's used to be 150 ms), shorter than the settle.
				gap := 2 * time.Millisecond
				if i%40 == 20 {
					gap = 400 * time.Millisecond
				}
				writeInTwoSteps(t, f.Config, writer, head, second, gap)
			}
			// The finished file is applied once it settles.
			eventually(t, 10*time.Second, "the last generation is in force", func() bool { return readDenied("final/b.txt", "no-final") })
			close(stop)
			wg.Wait()
			if n := leaks.Load(); n > 0 {
				t.Fatalf("%d of %d reads of notes/a.txt were allowed: a half-written config was in force", n, calls.Load())
			}
			if calls.Load() < 20 {
				t.Errorf("only %d calls ran during the rewrites", calls.Load())
			}
			t.Logf("%d calls during 200 rewrites, none allowed", calls.Load())

			// Removing the deny (written atomically) is applied and logged
			// as a weakening.
			tmp := filepath.Join(filepath.Dir(f.Config), ".onellm.toml.tmp")
			if err := os.WriteFile(tmp, []byte(head), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, f.Config); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "the weakening is logged", func() bool {
				return strings.Contains(stderr.String(), "config change weakens the policy: deny rule no-notes removed; deny rule no-final removed")
			})
			if readDenied("notes/a.txt", "no-notes") {
				t.Error("the deny is still in force after it was removed")
			}
		})
	}
}

// writeInTwoSteps writes first then second to path the way careless
// writers do: two writes before one close, or a truncating write and close
// and then an append.
func writeInTwoSteps(t *testing.T, path, writer, first, second string, gap time.Duration) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString(first); err != nil {
		t.Fatal(err)
	}
	if writer == "close-then-append" {
		if err := fh.Close(); err != nil {
			t.Fatal(err)
		}
		// The half-written file stays on disk for a moment, as it does
		// between a slow writer's steps.
		time.Sleep(gap)
		if fh, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err != nil {
			t.Fatal(err)
		}
	} else {
		time.Sleep(gap)
	}
	if _, err := fh.WriteString(second); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReloadRefusesFailingPolicyTests: a change whose [[tests]] fail is
// refused on reload, naming the test, and the policy in force stays.
func TestReloadRefusesFailingPolicyTests(t *testing.T) {
	const test = `
[[tests]]
name       = "notes are closed"
capability = "workspace.files.read"
target     = { path = "notes/a.txt" }
expect     = "deny"
rule_id    = "no-notes"
`
	f := newFixture(t, reloadDeny+test)
	f.write(t, "notes/a.txt", "note\n")
	stderr := &lockedBuffer{}
	tr := transport.NewStdioWithOptions(binary, []string{"HOME=" + f.Root}, []string{"serve", "--config", f.Config},
		transport.WithCommandStderrWriter(stderr))
	c := client.NewClient(tr)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = string(Legacy)
	init.Params.ClientInfo = mcp.Implementation{Name: "reload-tests", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	f.rewrite(t, strings.Replace(reloadDeny, "notes/**", "other/**", 1)+test)
	eventually(t, 10*time.Second, "the failing test refuses the change", func() bool {
		s := stderr.String()
		return strings.Contains(s, "config change refused, the policy in force stays") && strings.Contains(s, `[[tests]] #1 "notes are closed"`) &&
			strings.Contains(s, "policy test failed: expected deny, got allow")
	})
	if res := call(t, c, "read_file", map[string]any{"path": "notes/a.txt"}); !res.IsError || !strings.Contains(text(res), "no-notes") {
		t.Errorf("the policy in force changed: %q", text(res))
	}
}
