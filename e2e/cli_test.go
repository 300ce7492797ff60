package e2e

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/NAME.golden after replacing the
// fixture's temp folder with $ROOT (the binary with $BINARY, its helper
// with $HELPER), so the files are stable.
func golden(t *testing.T, name, root, got string) {
	t.Helper()
	got = strings.ReplaceAll(got, root, "$ROOT")
	got = strings.ReplaceAll(got, binary, "$BINARY")
	got = strings.ReplaceAll(got, filepath.Join(filepath.Dir(binary), "onellm-sandbox"), "$HELPER")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./e2e -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

const cliConfig = `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-prod-config"
capability = "workspace.files.*"
target     = { path = "deploy/prod/**" }

[[rules.ask]]
rule_id     = "ask-git-push"
capability  = "process.exec"
target      = { resource = "git", command = "git push*" }
constraints = { approval_expires_seconds = 600 }

[[rules.allow]]
rule_id    = "github-api"
capability = "network.http.get"
target     = { host = "api.github.com" }
`

func TestCLICheck(t *testing.T) {
	f := newFixture(t, cliConfig)
	out, errOut, code := runCLI(t, f.Root, "check", "--config", f.Config)
	if code != 0 {
		t.Fatalf("check exit %d: %s", code, errOut)
	}
	golden(t, "cli/check", f.Root, out)
}

func TestCLIExplain(t *testing.T) {
	f := newFixture(t, cliConfig)
	tests := []struct {
		name string
		args []string
		code int // 0 allow, 1 deny, 3 ask
	}{
		{"explain-read", []string{"workspace.files.read", "src/main.go"}, 0},
		{"explain-denied-write", []string{"workspace.files.write", "deploy/prod/app.toml"}, 1},
		{"explain-git-push", []string{"process.exec", "git push origin main"}, 3},
		{"explain-credential", []string{"workspace.files.read", ".env"}, 1},
		{"explain-protected", []string{"filesystem.write", f.Config}, 1},
		{"explain-network", []string{"network.http.post", "https://api.github.com/repos"}, 3},
		{"explain-host-exec", []string{"--surface", "host", "process.exec", "ls"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"explain", "--config", f.Config}, tt.args...)
			out, errOut, code := runCLI(t, f.Root, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tt.code, out, errOut)
			}
			golden(t, "cli/"+tt.name, f.Root, out)
		})
	}
	// Usage mistakes and refused configs exit 2.
	bad := filepath.Join(f.Root, "bad.toml")
	if err := os.WriteFile(bad, []byte("profile = \"yolo\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"explain"},
		{"explain", "--config", f.Config, "files.read", "x"},
		{"explain", "--config", f.Config, "--surface", "vm", "process.exec", "ls"},
		{"explain", "--bogus", "user.ask"},
		{"explain", "--config", bad, "user.ask"},
		{"explain", "--config", f.Config, "network.http.get", "port=x"},
	} {
		out, errOut, code := runCLI(t, f.Root, args...)
		if code != 2 || out != "" || errOut == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and a message", args, code, out, errOut)
		}
	}
	_, errOut, _ := runCLI(t, f.Root, "explain", "--config", f.Config, "files.read", "x")
	if !strings.Contains(errOut, `known, closest first: workspace.files.read`) {
		t.Errorf("unknown capability does not list the closest first: %s", errOut)
	}
}

// TestCLIHelp: help and --help/-h on every command print its usage with
// every flag to stdout and exit 0; an unknown flag or command prints the
// usage to stderr and exits 2.
func TestCLIHelp(t *testing.T) {
	dir := t.TempDir()
	flags := map[string][]string{
		"serve":   {"--config", "--http"},
		"check":   {"--config"},
		"explain": {"--config", "--surface", "exit codes: 0 allow, 1 deny, 3 ask", "2 a usage mistake or a config that is refused"},
		"init":    {"--profile", "--host", "claude-desktop|claude-code|cursor|vscode|http", "--console", "--http"},
		"version": {},
	}
	for cmd, want := range flags {
		for _, args := range [][]string{{cmd, "--help"}, {cmd, "-h"}, {"help", cmd}} {
			out, errOut, code := runCLI(t, dir, args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: onellm-mcp "+cmd) {
				t.Errorf("%q: exit %d, stderr %q, stdout %q", args, code, errOut, out)
				continue
			}
			for _, w := range append(want, "-h, --help") {
				if !strings.Contains(out, w) {
					t.Errorf("%q: usage lacks %q:\n%s", args, w, out)
				}
			}
		}
		if cmd == "version" {
			continue
		}
		out, errOut, code := runCLI(t, dir, cmd, "--no-such-flag")
		if code != 2 || out != "" || !strings.Contains(errOut, "--no-such-flag") && !strings.Contains(errOut, "-no-such-flag") || !strings.Contains(errOut, "usage: onellm-mcp "+cmd) {
			t.Errorf("%s --no-such-flag: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"help", "--help"}, {"help", "help"}, {"--help", "-h"}} {
		out, _, code := runCLI(t, dir, args...)
		if code != 0 || !strings.Contains(out, "usage: onellm-mcp COMMAND") || !strings.Contains(out, "init") {
			t.Errorf("%q: exit %d %q", args, code, out)
		}
	}
	for _, args := range [][]string{{}, {"frobnicate"}, {"help", "frobnicate"}} {
		out, errOut, code := runCLI(t, dir, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage: onellm-mcp COMMAND") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestCLIPolicyTests: check prints each [[tests]] entry's result; a failing
// test refuses the config in check, serve and explain, naming the test.
func TestCLIPolicyTests(t *testing.T) {
	const tests = `
[[tests]]
name       = "prod config is closed"
capability = "workspace.files.write"
target     = { path = "deploy/prod/app.toml" }
expect     = "deny"
rule_id    = "no-prod-config"

[[tests]]
name       = "force push is critical"
capability = "process.exec"
target     = { command = "git push --force origin main" }
expect     = "ask"
`
	f := newFixture(t, cliConfig+tests)
	out, errOut, code := runCLI(t, f.Root, "check", "--config", f.Config)
	if code != 0 || !strings.Contains(out, "pass prod config is closed: deny (rule no-prod-config)") || !strings.Contains(out, "pass force push is critical: ask") {
		t.Fatalf("check: exit %d\n%s%s", code, out, errOut)
	}
	failing := newFixture(t, strings.Replace(cliConfig, "deploy/prod/**", "deploy/production/**", 1)+tests)
	out, errOut, code = runCLI(t, failing.Root, "check", "--config", failing.Config)
	if code != 1 || !strings.Contains(out, "FAIL prod config is closed: expected deny, got allow") ||
		!strings.Contains(errOut, `[[tests]] #1 "prod config is closed" (line`) {
		t.Fatalf("check of a failing test: exit %d\n%s%s", code, out, errOut)
	}
	golden(t, "cli/error-policy-test", failing.Root, errOut)
	for _, args := range [][]string{{"serve", "--config", failing.Config}, {"explain", "--config", failing.Config, "user.ask"}} {
		out, e, code := runCLI(t, failing.Root, args...)
		if code == 0 || out != "" || e != errOut {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want check's refusal", args, code, out, e)
		}
	}
}

func TestCLIConfigErrors(t *testing.T) {
	tests := []struct {
		name, body string
		mode       os.FileMode
	}{
		{name: "unknown-key", body: "profile = \"interactive-dev\"\n\n[[rules.allow]]\nrule_id = \"x\"\ncapabilty = \"workspace.files.read\"\n"},
		{name: "unknown-profile", body: "profile = \"yolo\"\n"},
		{name: "unknown-capability", body: "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"x\"\ncapability = \"files.read\"\n"},
		{name: "bad-regexp", body: "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { command = \"re:git (push\" }\n"},
		{name: "syntax", body: "profile = \"interactive-dev\n"},
		{name: "writable-by-others", body: "profile = \"interactive-dev\"\n", mode: 0o666},
		{name: "wrong-type", body: "profile = \"interactive-dev\"\n\n[approval]\ntimeout_seconds = \"soon\"\n"},
		{name: "case-variant", body: "profile = \"strict-production\"\nPROFILE = \"permissive-dev\"\n"},
		{name: "bad-glob", body: "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"x\"\ncapability = \"*\"\ntarget = { path = \"deploy/[prod/**\" }\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cfg := filepath.Join(root, "bad.toml")
			if err := os.WriteFile(cfg, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.mode != 0 {
				if err := os.Chmod(cfg, tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			for _, cmd := range []string{"check", "serve"} {
				out, errOut, code := runCLI(t, root, cmd, "--config", cfg)
				if code == 0 || out != "" || strings.Count(errOut, "\n") != 1 {
					t.Fatalf("%s: exit %d, stdout %q, stderr %q: want one line on stderr and a non-zero exit", cmd, code, out, errOut)
				}
				golden(t, "cli/error-"+tt.name, root, errOut)
			}
		})
	}
}

func TestCLIVersion(t *testing.T) {
	out, _, code := runCLI(t, t.TempDir(), "version")
	if code != 0 || !strings.Contains(out, "go1.") || !strings.Contains(out, "landlock: ABI") || !strings.Contains(out, "exec gate: available") {
		t.Fatalf("version: %d %q", code, out)
	}
}
