package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
)

// Every profile and host init offers writes a config that loads, compiles
// and passes its own policy test, with the console exactly when the host
// cannot elicit.
func TestInitTOMLLoads(t *testing.T) {
	ws := t.TempDir()
	for _, profile := range grants.ProfileNames() {
		for _, h := range append(hosts, struct {
			name        string
			elicits     bool
			description string
		}{"", true, "none"}) {
			console := ""
			if !h.elicits {
				console = "127.0.0.1:8765"
			}
			text := initTOML(profile, ws, h.name, console, []string{"git (/usr/bin/git)"})
			cfg, err := grants.Parse([]byte(text), "onellm-mcp.toml", ws)
			if err != nil {
				t.Fatalf("%s/%s: %v\n%s", profile, h.name, err, text)
			}
			p, err := grants.Compile(cfg, grants.CompileOptions{})
			if err != nil {
				t.Fatalf("%s/%s: %v", profile, h.name, err)
			}
			if err := grants.TestsError(p.RunTests(testRequests)); err != nil {
				t.Errorf("%s/%s: %v", profile, h.name, err)
			}
			if p.Profile != profile || (p.Console != "") == h.elicits {
				t.Errorf("%s/%s: profile %s console %q", profile, h.name, p.Profile, p.Console)
			}
			if (h.name == "http") != (p.HTTP.TokenEnv == "ONELLM_MCP_TOKEN") {
				t.Errorf("%s/%s: token_env %q", profile, h.name, p.HTTP.TokenEnv)
			}
		}
	}
}

func TestFindToolchains(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, f := range []struct {
		dir, name string
		mode      os.FileMode
	}{{a, "go", 0o755}, {b, "go", 0o755}, {a, "node", 0o644}, {b, "node", 0o755}, {b, "git", 0o755}} {
		if err := os.WriteFile(filepath.Join(f.dir, f.name), nil, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(a, "cargo"), 0o755); err != nil { // a folder is no toolchain
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir()) // no pyenv, nvm or rustup to find
	for _, k := range []string{"PYENV_ROOT", "NVM_DIR", "VOLTA_HOME", "CARGO_HOME", "RUSTUP_HOME", "GOROOT", "GOPATH", "GOMODCACHE", "VIRTUAL_ENV"} {
		t.Setenv(k, "")
	}
	got := strings.Join(findToolchains("relative/bin:"+a+"::"+b), ", ")
	// a/go lies in no GOROOT (no VERSION, src/runtime, pkg/tool above
	// it): found, its folder not granted.
	want := "git: git at " + b + "/git, go: go at " + a + "/go (" + filepath.Dir(a) + " is no GOROOT: not granted), node: node at " + b + "/node"
	if got != want {
		t.Errorf("found %q, want %q", got, want)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/onellm-mcp": "/usr/bin/onellm-mcp",
		"/home/me/my project": "'/home/me/my project'",
		"it's":                `'it'\''s'`,
		"":                    "''",
		"$HOME":               "'$HOME'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
