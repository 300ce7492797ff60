package grants

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/errors/*.golden")

// TestConfigErrors: every way a config is refused names the file, the line
// where it can, the key and what is wrong. The messages are kept as golden
// files (go test ./grants -run TestConfigErrors -update rewrites them).
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int    // expected ConfigError.Line (0: none)
		key  string // expected ConfigError.Key prefix
	}{
		{"syntax", "profile = \"interactive-dev\"\nmode = \n", 2, ""},
		{"syntax_unclosed_table", "profile = \"interactive-dev\"\n[rules\n", 2, ""},
		{"unknown_top_key", "profile = \"interactive-dev\"\n\nworkspaces = \".\"\n", 3, "workspaces"},
		{"unknown_nested_key", "profile = \"interactive-dev\"\n\n[[rules.allow]]\nrule_id = \"a\"\ncapabilty = \"user.ask\"\n", 5, "rules.allow.capabilty"},
		{"unknown_section_key", "profile = \"interactive-dev\"\n[sandbox]\nrequire = true\n", 3, "sandbox.require"},
		{"wrong_type", "profile = \"interactive-dev\"\n[limits]\nread_max_bytes = \"1MB\"\n", 3, ""},
		{"unknown_profile", "profile = \"interactive\"\n", 0, "profile"},
		{"unknown_mode", "profile = \"interactive-dev\"\nmode = \"lenient\"\n", 0, "mode"},
		{"no_profile_no_mode", "workspace = \".\"\n", 0, "profile"},
		{"unknown_capability", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"x\"\ncapability = \"filesystem.list\"\n", 0, "rules.allow[0] (x)"},
		{"missing_capability", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"x\"\n", 0, "rules.allow[0] (x)"},
		{"bad_path_glob", "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"x\"\ncapability = \"*\"\ntarget = { path = \"src/[\" }\n", 0, "rules.deny[0] (x)"},
		{"bad_regex", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { command = \"re:(\" }\n", 0, "rules.ask[0] (x)"},
		{"bad_command_glob", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { command = \"git [\" }\n", 0, "rules.ask[0] (x)"},
		{"bad_host_glob", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"x\"\ncapability = \"network.*\"\ntarget = { host = \"https://api.github.com\" }\n", 0, "rules.allow[0] (x)"},
		{"bad_host_label", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"x\"\ncapability = \"network.*\"\ntarget = { host = \"a..com\" }\n", 0, "rules.allow[0] (x)"},
		{"bad_resource_glob", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { resource = \"[\" }\n", 0, "rules.allow[0] (x)"},
		{"duplicate_rule_id", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"x\"\ncapability = \"user.ask\"\n[[rules.deny]]\nrule_id = \"x\"\ncapability = \"user.ask\"\n", 0, "rules.allow[0] (x)"},
		{"duplicate_profile_rule_id", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"interactive-dev/allow-ask-user\"\ncapability = \"user.ask\"\n", 0, "rules.allow[0]"},
		{"missing_rule_id", "profile = \"interactive-dev\"\n[[rules.allow]]\ncapability = \"user.ask\"\n", 0, "rules.allow[0]"},
		{"allow_private_without_host", "profile = \"interactive-dev\"\n[[rules.allow]]\nrule_id = \"x\"\ncapability = \"network.*\"\nconditions = { allow_private = true }\n", 0, "rules.allow[0] (x)"},
		{"allow_private_on_deny", "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"x\"\ncapability = \"network.*\"\ntarget = { host = \"a.lan\" }\nconditions = { allow_private = true }\n", 0, "rules.deny[0] (x)"},
		{"unknown_risk", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { risk_level = [\"severe\"] }\n", 0, "rules.ask[0] (x)"},
		{"unknown_surface", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { execution_surface = \"vm\" }\n", 0, "rules.ask[0] (x)"},
		{"unknown_exclude_capability", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { exclude_capability = [\"network.ftp\"] }\n", 0, "rules.ask[0] (x)"},
		{"unknown_method", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"network.*\"\nconditions = { method = [\"TRACE\"] }\n", 0, "rules.ask[0] (x)"},
		{"unknown_data_class", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { data_classes = [\"pii\"] }\n", 0, "rules.ask[0] (x)"},
		{"negative_expiry", "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconstraints = { approval_expires_seconds = -1 }\n", 0, "rules.ask[0] (x)"},
		{"bad_sandbox_network", "profile = \"interactive-dev\"\n[sandbox]\nnetwork = \"some\"\n", 0, "sandbox.network"},
		{"negative_limit", "profile = \"interactive-dev\"\n[limits]\nread_max_bytes = -1\n", 0, "limits.read_max_bytes"},
		{"secret_two_sources", "profile = \"interactive-dev\"\n[secrets.gh]\nenv = \"GH\"\nfile = \"gh.txt\"\n", 0, "secrets.gh"},
		{"secret_bad_host", "profile = \"interactive-dev\"\n[secrets.gh]\nenv = \"GH\"\nhosts = [\"api.github.com/x\"]\n", 0, "secrets.gh.hosts"},
		{"escaped_unknown_key", "profile = \"interactive-dev\"\n\"\\u0000\" = 1\n", 0, ""}, // go-toml panicked on this
		{"workspace_missing", "profile = \"interactive-dev\"\nworkspace = \"does-not-exist\"\n", 0, "workspace"},
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const file = "/etc/onellm/onellm.toml"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			if !strings.Contains(src, "workspace") {
				src = "workspace = \".\"\n" + src
				if tt.line > 0 {
					tt.line++
				}
			}
			var p *Policy
			cfg, err := Parse([]byte(src), file, root)
			if err == nil {
				p, err = Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome})
			}
			if err == nil {
				t.Fatalf("accepted:\n%s\nrules: %v", src, p.Rules())
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not a *ConfigError: %v", err, err)
			}
			if ce.File != file {
				t.Errorf("File = %q", ce.File)
			}
			if ce.Line != tt.line {
				t.Errorf("Line = %d, want %d (%v)", ce.Line, tt.line, err)
			}
			if !strings.HasPrefix(ce.Key, tt.key) {
				t.Errorf("Key = %q, want prefix %q", ce.Key, tt.key)
			}
			got := strings.ReplaceAll(err.Error(), root, "$WS") + "\n"
			golden := filepath.Join("testdata", "errors", tt.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("message changed:\n got  %s want %s(run with -update if intended)", got, want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "ws"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "onellm.toml")
	src := "profile = \"strict-production\"\nworkspace = \"ws\"\n[audit]\npath = \"log/audit.jsonl\"\n[secrets.gh]\nfile = \"gh.token\"\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != path || cfg.Dir != dir {
		t.Errorf("Path %q Dir %q", cfg.Path, cfg.Dir)
	}
	p, err := Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome})
	if err != nil {
		t.Fatal(err)
	}
	if p.Workspace != filepath.Join(dir, "ws") || p.AuditPath != filepath.Join(dir, "log/audit.jsonl") || p.ConfigPath != path {
		t.Errorf("workspace %q audit %q config %q", p.Workspace, p.AuditPath, p.ConfigPath)
	}
	if p.Secrets["gh"].File != filepath.Join(dir, "gh.token") {
		t.Errorf("secret file %q", p.Secrets["gh"].File)
	}
	for _, mode := range []os.FileMode{0o666, 0o620, 0o602, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadFile(path)
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "chmod go-w "+path) || ce.File != path {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	for _, mode := range []os.FileMode{0o644, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadFile(path); err != nil {
			t.Errorf("mode %04o refused: %v", mode, err)
		}
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.toml")); err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := LoadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("folder: %v", err)
	}
}

func TestDefaultAndSettings(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", "/state")
	cfg, err := LoadDefault(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(cfg, CompileOptions{Home: testHome})
	if err != nil {
		t.Fatal(err)
	}
	if p.Profile != "interactive-dev" || p.Mode != ModeInteractive || p.Workspace != dir || p.ConfigPath != "" {
		t.Errorf("default: %+v", p)
	}
	if p.AuditPath != "/state/onellm-mcp/audit.jsonl" {
		t.Errorf("AuditPath = %q", p.AuditPath)
	}
	l := p.Limits
	if l.ReadDefaultBytes != 16<<10 || l.ReadMaxBytes != 1<<20 || l.OutputMaxBytes != 64<<10 || l.CommandTimeout.Seconds() != 30 ||
		l.CommandMaxTimeout.Seconds() != 600 || l.HTTPTimeout.Seconds() != 30 || l.HTTPMaxBytes != 1<<20 || l.ApprovalTimeout.Seconds() != 120 ||
		p.HTTP.MaxBodyBytes != 4<<20 || p.HTTP.Auth != "token" {
		t.Errorf("defaults: %+v %+v", l, p.HTTP)
	}
	if !p.Sandbox.Required || p.Sandbox.Network != "none" || strings.Join(p.Sandbox.Env, ",") != "PATH,HOME,LANG,TERM" {
		t.Errorf("sandbox defaults: %+v", p.Sandbox)
	}
	t.Setenv("XDG_STATE_HOME", "")
	if got := defaultAuditPath(testHome); got != testHome+"/.local/state/onellm-mcp/audit.jsonl" {
		t.Errorf("defaultAuditPath = %q", got)
	}

	src := fmt.Sprintf(`profile = "permissive-dev"
workspace = %q
[sandbox]
required = false
network = "proxy"
writable = ["~/cache"]
env = ["PATH"]
[limits]
read_max_bytes = 2048
command_timeout_seconds = 5
[approval]
timeout_seconds = 7
`, dir)
	cfg, err = Parse([]byte(src), "c.toml", dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err = Compile(cfg, CompileOptions{Home: testHome})
	if err != nil {
		t.Fatal(err)
	}
	if p.Sandbox.Required || p.Sandbox.Network != "proxy" || len(p.Sandbox.Writable) != 1 || p.Sandbox.Writable[0] != testHome+"/cache" ||
		p.Limits.ReadMaxBytes != 2048 || p.Limits.CommandTimeout.Seconds() != 5 || p.Limits.ApprovalTimeout.Seconds() != 7 {
		t.Errorf("settings: %+v %+v", p.Sandbox, p.Limits)
	}
}

// TestDocumented: every capability and reason code is documented in
// config.example.toml (or the README beside it).
func TestDocumented(t *testing.T) {
	example := filepath.Join("..", "config.example.toml")
	data, err := os.ReadFile(example)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s does not exist yet: nothing to check the names against", example)
	}
	if err != nil {
		t.Fatal(err)
	}
	docs := string(data)
	if readme, err := os.ReadFile(filepath.Join("..", "README.md")); err == nil {
		docs += string(readme)
	}
	for _, c := range Capabilities() {
		if !strings.Contains(docs, string(c)) {
			t.Errorf("capability %s is not documented in config.example.toml or README.md", c)
		}
	}
	for _, r := range Reasons() {
		if !strings.Contains(docs, string(r)) {
			t.Errorf("reason code %s is not documented in config.example.toml or README.md", r)
		}
	}
	for _, n := range ProfileNames() {
		if !strings.Contains(docs, n) {
			t.Errorf("profile %s is not documented", n)
		}
	}
	// The example itself must load.
	cfg, err := Parse(data, example, t.TempDir())
	if err != nil {
		t.Fatalf("config.example.toml does not parse: %v", err)
	}
	_ = cfg
}
