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
// fixture's temp folder with $ROOT, so the files are stable.
func golden(t *testing.T, name, root, got string) {
	t.Helper()
	got = strings.ReplaceAll(got, root, "$ROOT")
	got = strings.ReplaceAll(got, binary, "$BINARY")
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
	}{
		{"explain-read", []string{"workspace.files.read", "src/main.go"}},
		{"explain-denied-write", []string{"workspace.files.write", "deploy/prod/app.toml"}},
		{"explain-git-push", []string{"process.exec", "git push origin main"}},
		{"explain-credential", []string{"workspace.files.read", ".env"}},
		{"explain-protected", []string{"filesystem.write", f.Config}},
		{"explain-network", []string{"network.http.post", "https://api.github.com/repos"}},
		{"explain-host-exec", []string{"--surface", "host", "process.exec", "ls"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"explain", "--config", f.Config}, tt.args...)
			if tt.args[0] == "--surface" {
				args = append([]string{"explain", "--config", f.Config}, tt.args...)
			}
			out, errOut, code := runCLI(t, f.Root, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, "cli/"+tt.name, f.Root, out)
		})
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
	if code != 0 || !strings.Contains(out, "go1.") || !strings.Contains(out, "landlock: ABI") {
		t.Fatalf("version: %d %q", code, out)
	}
}
