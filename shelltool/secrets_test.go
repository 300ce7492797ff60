package shelltool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// policyGate is a mid-action gate that lets through what p allows.
func policyGate(p *grants.Policy) toolkit.MidAction {
	return func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		d := p.Decide(r)
		if d.Effect != grants.Allow {
			return d, &toolkit.MidActionRefused{Decision: d}
		}
		return d, nil
	}
}

func TestCredentialFiles(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ws := filepath.Join(root, "ws")
	for _, f := range []string{".env", "a/b/key.pem", ".ssh/config", "node_modules/x/.env", "src/main.go", "ok/.env"} {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, f)), 0o755)
		os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644)
	}
	cfg, err := grants.Parse([]byte("profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"ok\"\ncapability = \"workspace.files.read\"\ntarget = { path = \"ok/.env\" }\n"), "t.toml", ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: root})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range credentialFiles(context.Background(), policyGate(p), p, []string{ws}) {
		rel, _ := filepath.Rel(ws, f)
		got[rel] = true
	}
	want := map[string]bool{".env": true, "a/b/key.pem": true, ".ssh": true}
	if len(got) != len(want) {
		t.Fatalf("hidden %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("hidden %v, want %v", got, want)
		}
	}
}

// BenchmarkCredentialFiles walks this repository (dependency folders
// skipped), as a command's start does for its workspace.
func BenchmarkCredentialFiles(b *testing.B) {
	root, _ := filepath.Abs("..")
	cfg, _ := grants.Parse([]byte(`profile = "interactive-dev"`), "t.toml", root)
	p, err := grants.Compile(cfg, grants.CompileOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		credentialFiles(context.Background(), policyGate(p), p, []string{root})
	}
}
