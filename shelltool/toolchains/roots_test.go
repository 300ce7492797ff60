package toolchains

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goroot makes a folder that looks like a Go installation, with its bin/go.
func goroot(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"bin", "src/runtime", "pkg/tool/linux_amd64"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"VERSION", "bin/go"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("go1.26\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// layout builds a home folder: folders (ending in /), files, and
// symlinks ("link -> target", target relative to the home).
func layout(t *testing.T, home string, entries []string) {
	t.Helper()
	for _, e := range entries {
		p := filepath.Join(home, e)
		var err error
		switch link, target, isLink := strings.Cut(e, " -> "); {
		case isLink:
			p = filepath.Join(home, link)
			os.MkdirAll(filepath.Dir(p), 0o755)
			err = os.Symlink(filepath.Join(home, target), p)
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			os.MkdirAll(filepath.Dir(p), 0o755)
			err = os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestDetectRefusesBroadRoots: no detector grants a folder that is or
// holds the home, nor ~/.local, ~/.config, ~/.cache, ~/.local/share; a go
// whose derived GOROOT is no Go installation grants no GOROOT.
func TestDetectRefusesBroadRoots(t *testing.T) {
	tests := []struct {
		name    string
		entries []string
		goroot  string            // made to look like a GOROOT, relative to the home ("" none)
		env     map[string]string // relative values are joined to the home
		tool    string
		want    string // a root that must be readable, relative to the home ("" none)
		refused []string
	}{
		{name: "mise shim", tool: Go,
			entries: []string{".local/bin/mise", ".local/share/mise/shims/go -> .local/bin/mise", ".local/share/keyrings/"},
			env:     map[string]string{"PATH": ".local/share/mise/shims"},
			refused: []string{".local"}},
		{name: "copied go in ~/bin", tool: Go,
			entries: []string{"bin/go", ".ssh/"},
			env:     map[string]string{"PATH": "bin"},
			refused: []string{"."}},
		{name: "copied go in ~/tools/bin", tool: Go,
			entries: []string{"tools/bin/go", "tools/secrets/"},
			env:     map[string]string{"PATH": "tools/bin"},
			refused: []string{"tools"}},
		{name: "go in ~/.config/bin", tool: Go,
			entries: []string{".config/bin/go"}, env: map[string]string{"PATH": ".config/bin"}, refused: []string{".config"}},
		{name: "real GOROOT under home", tool: Go, goroot: "sdk/go1.26",
			entries: []string{"bin/go -> sdk/go1.26/bin/go"},
			env:     map[string]string{"PATH": "bin"},
			want:    "sdk/go1.26"},
		{name: "mise-installed GOROOT under ~/.local/share", tool: Go, goroot: ".local/share/mise/installs/go/1.26",
			env:  map[string]string{"PATH": ".local/share/mise/installs/go/1.26/bin"},
			want: ".local/share/mise/installs/go/1.26"},
		{name: "GOROOT variable not a GOROOT", tool: Go, goroot: "sdk/go",
			entries: []string{"bin/go -> sdk/go/bin/go"},
			env:     map[string]string{"PATH": "bin", "GOROOT": ".cache"},
			refused: []string{".cache", "sdk/go"}},
		{name: "home that looks like a GOROOT", tool: Go, goroot: ".",
			env: map[string]string{"PATH": "bin"}, refused: []string{"."}},
		{name: "GOROOT variable a symlink to the home", tool: Go, goroot: ".",
			entries: []string{"link -> ."},
			env:     map[string]string{"PATH": "bin", "GOROOT": "link"}, refused: []string{".", "link"}},
		{name: "git in ~/.local", tool: Git,
			entries: []string{".local/git"}, env: map[string]string{"PATH": ".local"}, refused: []string{".local"}},
		{name: "git in the home", tool: Git,
			entries: []string{"git"}, env: map[string]string{"PATH": "."}, refused: []string{"."}},
		{name: "git in ~/.local/share", tool: Git,
			entries: []string{".local/share/git"}, env: map[string]string{"PATH": ".local/share"}, refused: []string{".local/share"}},
		{name: "git in ~/bin", tool: Git,
			entries: []string{"bin/git"}, env: map[string]string{"PATH": "bin"}, want: "bin"},
		{name: "RUSTUP_HOME is the home", tool: Rust,
			entries: []string{"toolchains/"}, env: map[string]string{"RUSTUP_HOME": "."}, refused: []string{"."}},
		{name: "PYENV_ROOT is ~/.config", tool: Python,
			entries: []string{".config/versions/"}, env: map[string]string{"PYENV_ROOT": ".config"}, refused: []string{".config"}},
		{name: "VIRTUAL_ENV is the home", tool: Python,
			entries: []string{".ssh/"}, env: map[string]string{"VIRTUAL_ENV": "."}, refused: []string{"."}},
		{name: "XDG_DATA_HOME moved", tool: Git,
			entries: []string{"data/git"}, env: map[string]string{"PATH": "data", "XDG_DATA_HOME": "data"}, refused: []string{"data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			if tt.goroot != "" {
				goroot(t, filepath.Join(home, tt.goroot))
			}
			layout(t, home, append([]string{"./"}, tt.entries...))
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = filepath.Join(home, v)
			}
			h := Host{Home: home, Getenv: func(k string) string { return env[k] }}
			s := Detect(h, []string{tt.tool})
			got := s.Readable()
			for _, r := range tt.refused {
				if p := filepath.Join(home, r); slices.Contains(got, p) {
					t.Errorf("%s is readable; readable %v", p, got)
				}
			}
			for _, r := range got {
				if r == home || strings.HasPrefix(home, r+"/") {
					t.Errorf("readable %s holds the home", r)
				}
			}
			if tt.want != "" && !slices.Contains(got, filepath.Join(home, tt.want)) {
				t.Errorf("%s not readable; readable %v, found %v", tt.want, got, s.Describe())
			}
			for _, tc := range s.Found {
				if tc.rustupHome != "" && !slices.Contains(got, tc.rustupHome) || tc.pyenvRoot != "" && !slices.Contains(got, tc.pyenvRoot) {
					t.Errorf("private root of a refused one kept: rustup %q pyenv %q", tc.rustupHome, tc.pyenvRoot)
				}
			}
		})
	}
}

// TestRefusedRoot checks the shared rule on each forbidden root, and on
// folders inside them that stay grantable.
func TestRefusedRoot(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	layout(t, home, []string{".local/share/mise/", ".local/bin/", ".config/", ".cache/", "go/bin/", "to-home -> ."})
	h := Host{Home: home, Getenv: func(string) string { return "" }}
	for _, r := range []string{".", "..", "/", ".local", ".local/share", ".config", ".cache", "to-home", ".local/bin/.."} {
		if why := refusedRoot(h, abs(home, r)); why == "" {
			t.Errorf("%s granted", r)
		}
	}
	for _, r := range []string{".local/bin", ".local/share/mise", "go/bin"} {
		if why := refusedRoot(h, filepath.Join(home, r)); why != "" {
			t.Errorf("%s refused: %s", r, why)
		}
	}
	if refusedRoot(h, filepath.Join(home, "missing")) == "" {
		t.Errorf("a root that does not resolve is granted")
	}
	// Without a HOME to compare with, the root folder still holds them all.
	if refusedRoot(Host{Getenv: h.Getenv}, "/") == "" {
		t.Errorf("/ granted when HOME is unset")
	}
}

// abs is r, joined to home unless absolute.
func abs(home, r string) string {
	if filepath.IsAbs(r) {
		return r
	}
	return filepath.Join(home, r)
}
