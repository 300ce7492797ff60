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
	const P = "profile = \"interactive-dev\"\n"
	tests := []struct {
		name string
		src  string
		line int    // expected ConfigError.Line, in src as written (0: none)
		key  string // expected ConfigError.Key
	}{
		{"syntax", P + "mode = \n", 2, ""},
		{"syntax_unclosed_table", P + "[rules\n", 2, ""},
		{"unknown_top_key", P + "\nworkspaces = \".\"\n", 3, "workspaces"},
		{"unknown_nested_key", P + "\n[[rules.allow]]\nrule_id = \"a\"\ncapabilty = \"user.ask\"\n", 5, "rules.allow[0].capabilty"},
		{"unknown_section_key", P + "[sandbox]\nrequire = true\n", 3, "sandbox.require"},
		{"unknown_section", P + "[sandbx]\nrequired = true\n", 2, "sandbx"},
		{"unknown_inline_key", P + "[[rules.deny]]\nrule_id = \"x\"\ncapability = \"*\"\ntarget = { paht = \"a\" }\n", 5, "rules.deny[0].target.paht"},
		{"list_of_tables_as_table", P + "[rules.allow]\nrule_id = \"x\"\n", 2, "rules.allow"},
		{"value_as_table", P + "[mode]\n", 2, "mode"},
		// Keys are case-sensitive: the TOML decoder and viper fold case,
		// so each of these would otherwise be honoured.
		{"case_top_key", "profile = \"strict-production\"\nPROFILE = \"permissive-dev\"\n", 2, "PROFILE"},
		{"case_section", P + "[Sandbox]\nrequired = false\n", 2, "Sandbox"},
		{"case_section_key", P + "[sandbox]\nRequired = false\n", 3, "sandbox.Required"},
		{"case_rule_key", P + "[[rules.allow]]\nrule_id = \"x\"\nCapability = \"*\"\n", 4, "rules.allow[0].Capability"},
		{"case_inline_key", P + "[[rules.deny]]\nrule_id = \"x\"\ncapability = \"*\"\ntarget = { Path = \"a\" }\n", 5, "rules.deny[0].target.Path"},
		{"case_dotted_key", P + "sandbox.Network = \"full\"\n", 2, "sandbox.Network"},
		{"case_secret_key", P + "[secrets.gh]\nENV = \"GH\"\n", 3, "secrets.gh.ENV"},
		// Wrong types are named in TOML's words, never Go's.
		{"wrong_type", P + "[approval]\ntimeout_seconds = \"soon\"\n", 3, "approval.timeout_seconds"},
		{"wrong_type_limit", P + "[limits]\nread_max_bytes = \"1MB\"\n", 3, "limits.read_max_bytes"},
		{"wrong_type_float", P + "[limits]\nread_max_bytes = 1.5\n", 3, "limits.read_max_bytes"},
		{"wrong_type_bool", P + "[sandbox]\nrequired = \"no\"\n", 3, "sandbox.required"},
		{"wrong_type_list", P + "[sandbox]\nenv = \"PATH\"\n", 3, "sandbox.env"},
		{"wrong_type_list_item", P + "[sandbox]\nenv = [\"PATH\", 1]\n", 3, "sandbox.env"},
		{"wrong_type_table", P + "sandbox = true\n", 2, "sandbox"},
		{"wrong_type_in_rule", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { risk_level = \"high\" }\n", 5, "rules.ask[0].conditions.risk_level"},
		{"wrong_type_rules", P + "rules = \"all\"\n", 2, "rules"},
		{"integer_out_of_range", P + "[limits]\nread_max_bytes = 0x7fffffffffffffffff\n", 3, ""},
		{"unknown_profile", "profile = \"interactive\"\n", 1, "profile"},
		{"unknown_mode", P + "mode = \"lenient\"\n", 2, "mode"},
		{"no_profile_no_mode", "workspace = \".\"\n", 0, "profile"},
		{"unknown_capability", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"filesystem.list\"\n", 4, "rules.allow[0].capability"},
		{"missing_capability", P + "[[rules.allow]]\nrule_id = \"x\"\n", 2, "rules.allow[0].capability"},
		{"bad_path_glob", P + "[[rules.deny]]\nrule_id = \"x\"\ncapability = \"*\"\ntarget = { path = \"src/[\" }\n", 5, "rules.deny[0].target.path"},
		{"bad_path_glob_brace", P + "[[rules.deny]]\nrule_id = \"x\"\ncapability = \"*\"\ntarget = { path = \"deploy/{prod,stage/**\" }\n", 5, "rules.deny[0].target.path"},
		{"bad_path_glob_class", P + "[[rules.deny]]\nrule_id = \"x\"\ncapability = \"*\"\ntarget = { path = \"/x/deploy/[prod/**\" }\n", 5, "rules.deny[0].target.path"},
		{"bad_regex", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { command = \"re:(\" }\n", 5, "rules.ask[0].target.command"},
		{"bad_command_glob", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { command = \"git [\" }\n", 5, "rules.ask[0].target.command"},
		{"bad_command_glob_escape", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { command = 'git a\\' }\n", 5, "rules.ask[0].target.command"},
		{"bad_host_glob", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"network.*\"\ntarget = { host = \"https://api.github.com\" }\n", 5, "rules.allow[0].target.host"},
		{"bad_host_label", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"network.*\"\ntarget = { host = \"a..com\" }\n", 5, "rules.allow[0].target.host"},
		{"bad_host_class", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"network.*\"\ntarget = { host = \"api[.github.com\" }\n", 5, "rules.allow[0].target.host"},
		{"bad_resource_glob", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { resource = \"[\" }\n", 5, "rules.allow[0].target.resource"},
		{"bad_resource_empty_class", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"process.exec\"\ntarget = { resource = \"g[]t\" }\n", 5, "rules.allow[0].target.resource"},
		{"duplicate_rule_id", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"user.ask\"\n[[rules.deny]]\nrule_id = \"x\"\ncapability = \"user.ask\"\n", 3, "rules.allow[0].rule_id"},
		{"duplicate_profile_rule_id", P + "[[rules.allow]]\nrule_id = \"interactive-dev/allow-ask-user\"\ncapability = \"user.ask\"\n", 3, "rules.allow[0].rule_id"},
		{"missing_rule_id", P + "[[rules.allow]]\ncapability = \"user.ask\"\n", 2, "rules.allow[0].rule_id"},
		{"allow_private_without_host", P + "[[rules.allow]]\nrule_id = \"x\"\ncapability = \"network.*\"\nconditions = { allow_private = true }\n", 5, "rules.allow[0].conditions.allow_private"},
		{"allow_private_on_deny", P + "[[rules.deny]]\nrule_id = \"x\"\ncapability = \"network.*\"\ntarget = { host = \"a.lan\" }\nconditions = { allow_private = true }\n", 6, "rules.deny[0].conditions.allow_private"},
		{"unknown_risk", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { risk_level = [\"severe\"] }\n", 5, "rules.ask[0].conditions.risk_level"},
		{"unknown_surface", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { execution_surface = \"vm\" }\n", 5, "rules.ask[0].conditions.execution_surface"},
		{"unknown_exclude_capability", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { exclude_capability = [\"network.ftp\"] }\n", 5, "rules.ask[0].conditions.exclude_capability"},
		{"unknown_method", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"network.*\"\nconditions = { method = [\"TRACE\"] }\n", 5, "rules.ask[0].conditions.method"},
		{"unknown_data_class", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconditions = { data_classes = [\"pii\"] }\n", 5, "rules.ask[0].conditions.data_classes"},
		{"negative_expiry", P + "[[rules.ask]]\nrule_id = \"x\"\ncapability = \"*\"\nconstraints = { approval_expires_seconds = -1 }\n", 5, "rules.ask[0].constraints.approval_expires_seconds"},
		{"bad_sandbox_network", P + "[sandbox]\nnetwork = \"some\"\n", 3, "sandbox.network"},
		{"negative_limit", P + "[limits]\nread_max_bytes = -1\n", 3, "limits.read_max_bytes"},
		{"secret_two_sources", P + "[secrets.gh]\nenv = \"GH\"\nfile = \"gh.txt\"\n", 2, "secrets.gh"},
		{"secret_bad_host", P + "[secrets.gh]\nenv = \"GH\"\nhosts = [\"api.github.com/x\"]\n", 4, "secrets.gh.hosts"},
		{"escaped_unknown_key", P + "\"\\u0000\" = 1\n", 2, "\x00"}, // go-toml panicked on this
		{"workspace_missing", P + "workspace = \"does-not-exist\"\n", 2, "workspace"},
		{"workspace_root", P + "workspace = \"/\"\n", 2, "workspace"},
		{"workspace_not_a_folder", P + "workspace = \"/dev/null\"\n", 2, "workspace"},
		{"bad_sandbox_env", P + "[sandbox]\nenv = [\"PATH\", \"MY VAR\"]\n", 3, "sandbox.env"},
		{"bad_http_auth", P + "[http]\nauth = \"basic\"\n", 3, "http.auth"},
		{"bad_telemetry_endpoint", P + "[telemetry]\notlp_endpoint = \"grpc://collector:4317\"\n", 3, "telemetry.otlp_endpoint"},
		{"telemetry_endpoint_with_password", P + "[telemetry]\notlp_endpoint = \"https://u:pw@collector\"\n", 3, "telemetry.otlp_endpoint"},
		{"allow_typ_jwt_without_oauth", P + "[http]\nallow_typ_jwt = true\n", 3, "http.allow_typ_jwt"},
		{"bad_http_token_env", P + "[http]\ntoken_env = \"$TOKEN\"\n", 3, "http.token_env"},
		{"secret_bad_name", P + "[secrets.\"git hub\"]\nenv = \"GH\"\n", 2, "secrets.git hub"},
		{"secret_bad_env", P + "[secrets.gh]\nenv = \"GH-TOKEN\"\n", 3, "secrets.gh.env"},
		{"secret_bad_format", P + "[secrets.gh]\nenv = \"GH\"\nformat = \"Bearer\"\n", 4, "secrets.gh.format"},
		{"secret_bad_header", P + "[secrets.gh]\nenv = \"GH\"\nheader = \"Authorization: x\"\n", 4, "secrets.gh.header"},
		{"duplicate_key", P + "[sandbox]\nnetwork = \"none\"\nnetwork = \"full\"\n", 4, "sandbox.network"},
		{"duplicate_table", P + "[sandbox]\nnetwork = \"none\"\n[sandbox]\nrequired = true\n", 4, "sandbox"},
		{"test_bad_surface", P + "[[tests]]\nname = \"a\"\ncapability = \"process.exec\"\nexpect = \"allow\"\nexecution_surface = \"vm\"\n", 6, "tests[0].execution_surface"},
		{"test_bad_data_class", P + "[[tests]]\nname = \"a\"\ncapability = \"user.ask\"\nexpect = \"allow\"\ndata_classes = [\"pii\"]\n", 6, "tests[0].data_classes"},
		{"test_bad_port", P + "[[tests]]\nname = \"a\"\ncapability = \"network.http.get\"\nexpect = \"ask\"\ntarget = { host = \"a.com\", port = 70000 }\n", 6, "tests[0].target.port"},
		// [[tests]]: checked like rules, and a failing one refuses the config.
		{"test_missing_name", P + "[[tests]]\ncapability = \"user.ask\"\nexpect = \"allow\"\n", 2, "tests[0].name"},
		{"test_duplicate_name", P + "[[tests]]\nname = \"a\"\ncapability = \"user.ask\"\nexpect = \"allow\"\n[[tests]]\nname = \"a\"\ncapability = \"user.ask\"\nexpect = \"allow\"\n", 7, "tests[1].name"},
		{"test_unknown_capability", P + "[[tests]]\nname = \"a\"\ncapability = \"workspace.file.read\"\nexpect = \"allow\"\n", 4, "tests[0].capability"},
		{"test_glob_capability", P + "[[tests]]\nname = \"a\"\ncapability = \"network.*\"\nexpect = \"ask\"\n", 4, "tests[0].capability"},
		{"test_bad_expect", P + "[[tests]]\nname = \"a\"\ncapability = \"user.ask\"\nexpect = \"allowed\"\n", 5, "tests[0].expect"},
		{"test_missing_expect", P + "[[tests]]\nname = \"a\"\ncapability = \"user.ask\"\n", 2, "tests[0].expect"},
		{"test_bad_risk", P + "[[tests]]\nname = \"a\"\ncapability = \"user.ask\"\nexpect = \"allow\"\nrisk_level = \"hgh\"\n", 6, "tests[0].risk_level"},
		{"test_fails", P + "[[rules.deny]]\nrule_id = \"no-prod\"\ncapability = \"workspace.files.*\"\ntarget = { path = \"deploy/prod/**\" }\n\n[[tests]]\nname = \"prod config is closed\"\ncapability = \"workspace.files.write\"\ntarget = { path = \"deploy/production/app.toml\" }\nexpect = \"deny\"\n", 7, "tests[0]"},
		{"test_wrong_rule", P + "[[rules.deny]]\nrule_id = \"no-prod\"\ncapability = \"workspace.files.*\"\ntarget = { path = \"deploy/prod/**\" }\n\n[[tests]]\nname = \"env files\"\ncapability = \"workspace.files.read\"\ntarget = { path = \"deploy/prod/.env\" }\nexpect = \"deny\"\nrule_id = \"no-prod\"\n", 7, "tests[0]"},
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
				err = TestsError(p.RunTests(simpleTestRequests))
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
			if ce.Key != tt.key {
				t.Errorf("Key = %q, want %q", ce.Key, tt.key)
			}
			if strings.Count(err.Error(), "\n") > 0 || strings.Contains(err.Error(), "grants.") || strings.Contains(err.Error(), "int64") {
				t.Errorf("not one line in the config's words: %v", err)
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

// TestConfigTrust: a config is refused, as ssh refuses keys, when someone
// other than the server's user or root could change it or swap it: another
// owner, group/other write on the file, or on any folder above it (unless
// sticky with the entry ours), a folder owned by someone else, or a symlink
// in such a folder. Ownership is set with chown to uids no one uses.
func TestConfigTrust(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to chown files to other uids")
		}
		t.Skip("needs root to chown files to other uids")
	}
	const other, third = 64123, 64124
	me := os.Geteuid()
	tests := []struct {
		name  string
		uid   int // the server's user
		setup func(t *testing.T, dir string) string
		want  string // "" accepts; else a substring of the refusal
	}{
		{"mine", me, func(t *testing.T, d string) string { return writeCfg(t, d, 0o600) }, ""},
		{"read-only for others", me, func(t *testing.T, d string) string { return writeCfg(t, d, 0o644) }, ""},
		{"owned by another user", me, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o600)
			chown(t, f, other)
			return f
		}, fmt.Sprintf("owned by uid %d, not by the server's user (uid %d) or root", other, me)},
		{"group-writable", me, func(t *testing.T, d string) string { return writeCfg(t, d, 0o620) }, "chmod go-w"},
		{"folder writable by others", me, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o600)
			chmod(t, d, 0o777)
			return f
		}, "is writable by group or others (mode 0777)"},
		{"folder writable by group", me, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o600)
			chmod(t, d, 0o770)
			return f
		}, "fix with: chmod go-w " + "$DIR"},
		{"sticky folder, my file", me, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o600)
			chmod(t, d, 0o1777)
			return f
		}, ""},
		{"sticky folder, root's file, another server user", other, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o644)
			chmod(t, d, 0o1777)
			return f
		}, ""},
		{"sticky folder, someone else's file", third, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o644)
			chown(t, f, other)
			chmod(t, d, 0o1777)
			return f
		}, fmt.Sprintf("owned by uid %d", other)},
		{"folder owned by another user", me, func(t *testing.T, d string) string {
			sub := filepath.Join(d, "sub")
			mkdir(t, sub)
			f := writeCfg(t, sub, 0o600)
			chown(t, sub, other)
			return f
		}, fmt.Sprintf("folder $DIR/sub is owned by uid %d", other)},
		{"ancestor writable by others", me, func(t *testing.T, d string) string {
			sub := filepath.Join(d, "a", "b")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			f := writeCfg(t, sub, 0o600)
			chmod(t, filepath.Join(d, "a"), 0o777)
			return f
		}, "folder $DIR/a is writable by group or others"},
		{"symlink in a folder others can write", me, func(t *testing.T, d string) string {
			safe := filepath.Join(d, "safe")
			mkdir(t, safe)
			f := writeCfg(t, safe, 0o600)
			open := filepath.Join(d, "open")
			mkdir(t, open)
			link := filepath.Join(open, "link.toml")
			if err := os.Symlink(f, link); err != nil {
				t.Fatal(err)
			}
			chmod(t, open, 0o777)
			return link
		}, "folder $DIR/open is writable by group or others"},
		{"unprivileged server user, its own file", other, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o600)
			chown(t, f, other)
			return f
		}, ""},
		{"unprivileged server user, another user's file", third, func(t *testing.T, d string) string {
			f := writeCfg(t, d, 0o644)
			chown(t, f, other)
			return f
		}, fmt.Sprintf("fix with: chown %d", third)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			chmod(t, dir, 0o755) // t.TempDir's own folder is 0700 and ours
			path := tt.setup(t, dir)
			err = checkTrust(path, tt.uid)
			want := strings.ReplaceAll(tt.want, "$DIR", dir)
			switch {
			case want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case want != "" && err == nil:
				t.Fatalf("accepted; want a refusal with %q", want)
			case want != "" && !strings.Contains(err.Error(), want):
				t.Fatalf("refusal %q does not say %q", err, want)
			}
			if err != nil && strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("not one line: %q", err)
			}
			if err != nil {
				got := strings.ReplaceAll(err.Error(), dir, "$DIR") + "\n"
				goldenFile(t, "trust_"+strings.Map(func(r rune) rune {
					if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
						return r
					}
					return '_'
				}, tt.name), got)
			}
		})
	}
}

// goldenFile compares got with testdata/errors/NAME.golden (-update rewrites it).
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", "errors", name+".golden")
	if *update {
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
}

func writeCfg(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	f := filepath.Join(dir, "onellm.toml")
	if err := os.WriteFile(f, []byte("profile = \"interactive-dev\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chmod(t, f, mode)
	return f
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	m := mode.Perm()
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	if err := os.Chmod(path, m); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, -1); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
