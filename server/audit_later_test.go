package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// TestAuditOpenedLater: a log left for later is opened by the first call;
// while it cannot be opened every call is refused and nothing runs; once
// it can, the next call opens it and runs; a log closed unopened is not
// created.
func TestAuditOpenedLater(t *testing.T) {
	p, ws := interactiveDev(t)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644)

	unused, err := OpenAuditLater(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := unused.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.AuditPath); !os.IsNotExist(err) {
		t.Fatalf("a log closed unopened was created: %v", err)
	}
	if err := unused.Open(); err == nil {
		t.Fatalf("a closed log opened")
	}

	os.MkdirAll(filepath.Dir(p.AuditPath), 0o700)
	os.Mkdir(p.AuditPath, 0o700) // a folder where the log goes
	audit, err := OpenAuditLater(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	s, err := New(p, Options{Tools: []toolkit.Tool{fstools.ReadFile{}}, Audit: audit})
	if err != nil {
		t.Fatal(err)
	}
	read := func() (string, bool) {
		req := mcp.CallToolRequest{}
		req.Params.Name = fstools.ReadFileName
		req.Params.RawArguments = json.RawMessage(`{"path":"a.txt"}`)
		res := s.call(context.Background(), fstools.ReadFile{}, req)
		b, _ := json.Marshal(res.Content)
		return string(b), res.IsError
	}
	if text, isErr := read(); !isErr || strings.Contains(text, "alpha") || !strings.Contains(text, "audit log") {
		t.Fatalf("a call without an audit log: %s", text)
	}
	os.Remove(p.AuditPath)
	if text, isErr := read(); isErr || !strings.Contains(text, "alpha") {
		t.Fatalf("a call once the log can be opened: %s", text)
	}
	data, err := os.ReadFile(p.AuditPath)
	if err != nil || !strings.Contains(string(data), `"event":"checkpoint"`) || !strings.Contains(string(data), `"event":"outcome"`) {
		t.Fatalf("the log: %s (%v)", data, err)
	}
}

// interactiveDev compiles the interactive-dev profile for a workspace in a
// new temp folder that is also the home folder; it returns the policy and
// the workspace.
func interactiveDev(t testing.TB) (*grants.Policy, string) {
	t.Helper()
	return profilePolicy(t, "interactive-dev")
}

// profilePolicy compiles a built-in profile the same way (a new temp folder
// that is also the home folder, its workspace in it).
func profilePolicy(t testing.TB, profile string) (*grants.Policy, string) {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.MkdirAll(ws, 0o755)
	cfg, err := grants.Parse([]byte(`profile = "`+profile+`"`), "", ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	return p, ws
}
