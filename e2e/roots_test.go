package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// rootsHandler answers roots/list with fixed folders.
type rootsHandler struct{ paths []string }

func (h rootsHandler) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	res := &mcp.ListRootsResult{}
	for _, p := range h.paths {
		res.Roots = append(res.Roots, mcp.Root{URI: "file://" + p, Name: filepath.Base(p)})
	}
	return res, nil
}

// TestClientRootsNarrowTheWorkspace: a legacy client's root inside the
// workspace becomes the workspace for its calls; a root outside it widens
// nothing.
func TestClientRootsNarrowTheWorkspace(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	f.write(t, "top.txt", "top\n")
	sub := filepath.Dir(f.write(t, "sub/inner.txt", "inner\n"))
	outside := filepath.Dir(f.write(t, filepath.Join(f.Root, "elsewhere/x.txt"), "x\n"))

	t.Run("narrowed", func(t *testing.T) {
		c := stdioClient(t, f, Legacy, client.WithRootsHandler(rootsHandler{paths: []string{sub}}))
		if res := call(t, c, "read_file", map[string]any{"path": "inner.txt"}); res.IsError || text(res) != "inner\n" {
			t.Fatalf("a relative path resolves against the root: %s", text(res))
		}
		res := call(t, c, "read_file", map[string]any{"path": filepath.Join(f.Workspace, "top.txt")})
		if !res.IsError || !strings.Contains(text(res), "filesystem.read") {
			t.Fatalf("a file of the workspace outside the client's root must count as outside: %s", text(res))
		}
	})
	t.Run("a root outside widens nothing", func(t *testing.T) {
		c := stdioClient(t, f, Legacy, client.WithRootsHandler(rootsHandler{paths: []string{outside}}))
		if res := call(t, c, "read_file", map[string]any{"path": "top.txt"}); res.IsError {
			t.Fatalf("the configured workspace stays: %s", text(res))
		}
		res := call(t, c, "read_file", map[string]any{"path": filepath.Join(outside, "x.txt")})
		if !res.IsError || !strings.Contains(text(res), "filesystem.read") {
			t.Fatalf("a root outside the workspace must not widen it: %s", text(res))
		}
	})
}
