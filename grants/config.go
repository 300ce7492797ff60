package grants

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
)

// Config is the host's config file as written. Compile turns it into a Policy.
type Config struct {
	Profile   string                  `toml:"profile"`
	Mode      string                  `toml:"mode"`
	Workspace string                  `toml:"workspace"`
	Rules     RuleSets                `toml:"rules"`
	Sandbox   SandboxConfig           `toml:"sandbox"`
	Limits    LimitsConfig            `toml:"limits"`
	Approval  ApprovalConfig          `toml:"approval"`
	Audit     AuditConfig             `toml:"audit"`
	HTTP      HTTPConfig              `toml:"http"`
	Telemetry TelemetryConfig         `toml:"telemetry"`
	Secrets   map[string]SecretConfig `toml:"secrets"`
	Tests     []PolicyTestConfig      `toml:"tests"`

	// Path is the config file's absolute path ("" for the embedded default).
	Path string `toml:"-"`
	// Dir is the folder relative paths are resolved against.
	Dir string `toml:"-"`

	// lines holds the line each key was written on, for messages.
	lines keyLines
	// text is the config text this was decoded from.
	text []byte
}

// Text is the config text this was decoded from, byte for byte: what a
// watcher compares the file with to know whether the policy in force is
// still the file's.
func (c *Config) Text() []byte { return c.text }

// errAt builds a ConfigError about key, at the line the key was written on.
func (c *Config) errAt(key, name, msg string) *ConfigError {
	return &ConfigError{File: c.Path, Line: c.lines.line(key), Key: key, Name: name, Msg: msg}
}

// RuleSets holds a config's own rules by effect.
type RuleSets struct {
	Deny  []RuleConfig `toml:"deny"`
	Ask   []RuleConfig `toml:"ask"`
	Allow []RuleConfig `toml:"allow"`
}

// RuleConfig is one rule as written in the config.
type RuleConfig struct {
	RuleID      string            `toml:"rule_id"`
	Capability  string            `toml:"capability"`
	Target      TargetConfig      `toml:"target"`
	Conditions  ConditionsConfig  `toml:"conditions"`
	Constraints ConstraintsConfig `toml:"constraints"`

	// onlyUnconfiguredSecrets limits a built-in rule to secrets the config
	// does not broker; configs cannot set it.
	onlyUnconfiguredSecrets bool
}

// TargetConfig holds a rule's target globs.
type TargetConfig struct {
	ToolName string `toml:"tool_name"`
	Path     string `toml:"path"`
	Host     string `toml:"host"`
	Resource string `toml:"resource"`
	Command  string `toml:"command"`
}

// ConditionsConfig holds a rule's conditions.
type ConditionsConfig struct {
	RiskLevel               []string `toml:"risk_level"`
	ExecutionSurface        string   `toml:"execution_surface"`
	ExcludeExecutionSurface []string `toml:"exclude_execution_surface"`
	ExcludeCapability       []string `toml:"exclude_capability"`
	Method                  []string `toml:"method"`
	DataClasses             []string `toml:"data_classes"`
	AllowPrivate            bool     `toml:"allow_private"`
}

// ConstraintsConfig holds a rule's constraints.
type ConstraintsConfig struct {
	ApprovalExpiresSeconds int  `toml:"approval_expires_seconds"`
	SandboxRequired        bool `toml:"sandbox_required"`
}

// SandboxConfig is the [sandbox] section.
type SandboxConfig struct {
	Required *bool    `toml:"required"`
	Network  string   `toml:"network"`
	Writable []string `toml:"writable"`
	Readable []string `toml:"readable"`
	Env      []string `toml:"env"`
	// Toolchains is "auto", "none" or a list of names (toolchains.go).
	Toolchains any `toml:"toolchains"`
}

// LimitsConfig is the [limits] section; zero means the default.
type LimitsConfig struct {
	ReadDefaultBytes         int64 `toml:"read_default_bytes"`
	ReadMaxBytes             int64 `toml:"read_max_bytes"`
	OutputMaxBytes           int64 `toml:"output_max_bytes"`
	CommandTimeoutSeconds    int   `toml:"command_timeout_seconds"`
	CommandMaxTimeoutSeconds int   `toml:"command_max_timeout_seconds"`
	HTTPTimeoutSeconds       int   `toml:"http_timeout_seconds"`
	HTTPMaxBytes             int64 `toml:"http_max_bytes"`
	StdioMaxMessageBytes     int64 `toml:"stdio_max_message_bytes"`
}

// ApprovalConfig is the [approval] section.
type ApprovalConfig struct {
	TimeoutSeconds int `toml:"timeout_seconds"`
	// ProgressSeconds is how often a call waiting for a person sends
	// notifications/progress (default 10).
	ProgressSeconds int    `toml:"progress_seconds"`
	Console         string `toml:"console"`
}

// AuditConfig is the [audit] section.
type AuditConfig struct {
	Path              string `toml:"path"`
	MaxRecordBytes    int    `toml:"max_record_bytes"`
	CheckpointRecords int    `toml:"checkpoint_records"`
	CheckpointSeconds int    `toml:"checkpoint_seconds"`
}

// HTTPConfig is the [http] section.
type HTTPConfig struct {
	TokenEnv       string   `toml:"token_env"`
	Auth           string   `toml:"auth"`
	AllowedOrigins []string `toml:"allowed_origins"`
	MaxBodyBytes   int64    `toml:"max_body_bytes"`
	Listen         string   `toml:"listen"`
	// Public allows a non-loopback bind; TLSCert and TLSKey serve HTTPS.
	Public             bool     `toml:"public"`
	TLSCert            string   `toml:"tls_cert"`
	TLSKey             string   `toml:"tls_key"`
	AllowedHosts       []string `toml:"allowed_hosts"`
	MaxSessions        int      `toml:"max_sessions"`
	SessionIdleSeconds int      `toml:"session_idle_seconds"`
	// auth = "oauth": an OAuth 2.1 resource server (server/oauth).
	Issuer         string   `toml:"issuer"`
	Audience       string   `toml:"audience"`
	JWKSURL        string   `toml:"jwks_url"`
	JWKSFile       string   `toml:"jwks_file"`
	RequiredScopes []string `toml:"required_scopes"`
	// AllowTypJWT accepts access tokens typed "JWT" (or untyped) beside
	// RFC 9068's "at+jwt"; loud at start-up.
	AllowTypJWT bool `toml:"allow_typ_jwt"`
}

// TelemetryConfig is the [telemetry] section (server/telemetry): traces
// stay off unless an endpoint is named here or in the standard
// OTEL_EXPORTER_OTLP_* variables.
type TelemetryConfig struct {
	// OTLPEndpoint is the collector's OTLP/HTTP base URL
	// ("http://collector:4318"); traces go to its /v1/traces.
	OTLPEndpoint string `toml:"otlp_endpoint"`
	// HashArguments adds a keyed SHA-256 of each call's arguments to its
	// spans (never the arguments themselves).
	HashArguments bool `toml:"hash_arguments"`
}

// SecretConfig is one [secrets.NAME] section.
type SecretConfig struct {
	Env    string   `toml:"env"`
	File   string   `toml:"file"`
	Hosts  []string `toml:"hosts"`
	Header string   `toml:"header"`
	Format string   `toml:"format"`
}

// ConfigError is a config problem, with where it is and how to fix it.
type ConfigError struct {
	File string // "" for the embedded default
	Line int    // 0 when unknown
	// Key is the dotted key path the problem is about ("profile",
	// "approval.timeout_seconds", "rules.allow[0].target.path"); "" when
	// not about one key.
	Key string
	// Name is the rule_id or test name of the entry Key lies in, if any.
	Name string
	Msg  string
}

// Error renders the problem in the config's words:
// `config FILE: [approval] timeout_seconds (line 4): want an integer, got a string "soon"`.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config ")
	if e.File == "" {
		b.WriteString("(embedded default)")
	} else {
		b.WriteString(e.File)
	}
	if e.Key != "" {
		b.WriteString(": ")
		b.WriteString(displayKey(e.Key, e.Name))
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// keyChars are the characters of TOML bare keys, dots and indexes.
const keyChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.[]"

// displayKey writes a dotted key path as the config spells it: "[approval]
// timeout_seconds", "[[rules.allow]] #1 \"x\" target.path", "[secrets.gh] env".
func displayKey(key, name string) string {
	if strings.IndexFunc(key, func(r rune) bool { return !strings.ContainsRune(keyChars, r) }) >= 0 {
		// A name written quoted, such as a secret's: quote it again.
		if first, rest, ok := strings.Cut(key, "."); ok {
			if f, known := fieldByTag(configType, first); known && elem(f.Type).Kind() == reflect.Map {
				return "[" + first + "." + strconv.Quote(rest) + "]"
			}
		}
		return strconv.Quote(key)
	}
	if i := strings.IndexByte(key, '['); i > 0 {
		j := strings.IndexByte(key[i:], ']')
		if j > 0 {
			n, err := strconv.Atoi(key[i+1 : i+j])
			if err == nil {
				s := fmt.Sprintf("[[%s]] #%d", key[:i], n+1)
				if name != "" {
					s += fmt.Sprintf(" %q", name)
				}
				if rest := strings.TrimPrefix(key[i+j+1:], "."); rest != "" {
					s += " " + rest
				}
				return s
			}
		}
	}
	first, rest, dotted := strings.Cut(key, ".")
	f, ok := fieldByTag(configType, first)
	if !ok {
		return key
	}
	switch elem(f.Type).Kind() {
	case reflect.Struct:
		if !dotted {
			return "[" + first + "]"
		}
		return "[" + first + "] " + rest
	case reflect.Map:
		entry, sub, ok := strings.Cut(rest, ".")
		if !dotted {
			return "[" + first + "]"
		}
		if !ok {
			return "[" + first + "." + entry + "]"
		}
		return "[" + first + "." + entry + "] " + sub
	}
	return key
}

// DefaultConfigTOML is the embedded default: the interactive-dev profile with
// the current folder as the workspace.
const DefaultConfigTOML = `profile = "interactive-dev"
`

// LoadFile reads and validates a config file. It refuses a file that others
// than the server's user and root could change (see checkTrust).
func LoadFile(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &ConfigError{File: path, Msg: err.Error()}
	}
	if err := checkTrust(abs, os.Geteuid()); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &ConfigError{File: abs, Msg: "cannot read: " + unwrapPathError(err)}
	}
	return Parse(data, abs, filepath.Dir(abs))
}

// LoadDefault returns the embedded default config with dir as the workspace.
func LoadDefault(dir string) (*Config, error) {
	return Parse([]byte(DefaultConfigTOML), "", dir)
}

func unwrapPathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse decodes config text strictly: a syntax error, an unknown key (keys
// are case-sensitive) or a value of the wrong type is an error naming the
// key and its line. file is the name used in messages; dir is where relative
// paths are resolved.
func Parse(data []byte, file, dir string) (cfg *Config, err error) {
	// go-toml v2.2.4 panics while reporting an unknown key written with
	// escapes ("\u0000" = 1): a config must never crash the server.
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, &ConfigError{File: file, Msg: "cannot be read as TOML; check quoted keys and their escapes"}
		}
	}()
	// viper reads the file first: syntax errors and duplicate keys come
	// from the TOML decoder with their line.
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		// viper's error hides the decoder's position: decode again for it.
		var m map[string]any
		derr := toml.Unmarshal(data, &m)
		var de *toml.DecodeError
		if errors.As(derr, &de) {
			return nil, tomlError(file, derr)
		}
		// A key or table defined twice comes without a position; the
		// schema walk finds it with its line.
		if _, serr := checkSchema(data, file); serr != nil {
			return nil, serr
		}
		if derr != nil {
			err = derr
		}
		return nil, tomlError(file, err)
	}
	// viper and the typed decoder both fold the case of keys; the schema
	// walk holds every key to its exact spelling and every value to its
	// TOML type, and records lines for the checks below.
	lines, err := checkSchema(data, file)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, tomlError(file, err)
	}
	c.Path, c.Dir, c.lines, c.text = file, dir, lines, data
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func tomlError(file string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		first := strict.Errors[0]
		row, _ := first.Position()
		key := strings.Join(first.Key(), ".")
		return &ConfigError{File: file, Line: row, Key: key,
			Msg: "unknown key; remove it or check its spelling against config.example.toml"}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		msg := "not valid TOML: " + strings.TrimPrefix(de.Error(), "toml: ")
		if strings.Contains(msg, "value out of range") {
			msg = "the number is out of range for an integer (at most 9223372036854775807)"
		}
		return &ConfigError{File: file, Line: row, Key: strings.Join(de.Key(), "."), Msg: msg}
	}
	return &ConfigError{File: file, Msg: err.Error()}
}

// isSecretName: 1 to 64 letters, digits, '_' and '-'. (A loop, not a
// regular expression: compiling {1,64} at package init cost every start of
// the binary ~0.1 ms.)
func isSecretName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isASCIIAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// isEnvName: letters, digits and '_', not starting with a digit.
func isEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isASCIIAlnum(c) && c != '_' {
			return false
		}
	}
	return true
}

func isASCIIAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// validate checks values that decode fine but mean nothing. Rule contents
// are checked when compiled.
func (c *Config) validate() error {
	bad := func(key, msg string) error { return c.errAt(key, "", msg) }
	if c.Profile != "" {
		if _, ok := profiles[c.Profile]; !ok {
			return bad("profile", fmt.Sprintf("unknown profile %q; use one of %s", c.Profile, knownList(c.Profile, ProfileNames())))
		}
	}
	if c.Mode != "" {
		if _, ok := parseMode(c.Mode); !ok {
			return bad("mode", fmt.Sprintf("unknown mode %q; use one of %s", c.Mode, knownList(c.Mode, []string{"interactive", "permissive", "strict"})))
		}
	}
	if c.Profile == "" && c.Mode == "" {
		return bad("profile", "set a profile (interactive-dev, permissive-dev, strict-production) or a mode")
	}
	switch c.Sandbox.Network {
	case "", "none", "proxy", "full":
	default:
		return bad("sandbox.network", fmt.Sprintf("unknown value %q; use \"none\", \"proxy\" or \"full\"", c.Sandbox.Network))
	}
	if _, err := toolchainsSetting(c.Sandbox.Toolchains); err != nil {
		return bad("sandbox.toolchains", err.Error())
	}
	for _, e := range c.Sandbox.Env {
		if !isEnvName(e) {
			return bad("sandbox.env", fmt.Sprintf("%q is not an environment variable name (letters, digits and _, not starting with a digit)", e))
		}
	}
	l := c.Limits
	for key, n := range map[string]int64{
		"limits.read_default_bytes": l.ReadDefaultBytes, "limits.read_max_bytes": l.ReadMaxBytes,
		"limits.output_max_bytes": l.OutputMaxBytes, "limits.command_timeout_seconds": int64(l.CommandTimeoutSeconds),
		"limits.command_max_timeout_seconds": int64(l.CommandMaxTimeoutSeconds), "limits.http_timeout_seconds": int64(l.HTTPTimeoutSeconds),
		"limits.http_max_bytes": l.HTTPMaxBytes, "approval.timeout_seconds": int64(c.Approval.TimeoutSeconds),
		"approval.progress_seconds": int64(c.Approval.ProgressSeconds),
		"http.max_body_bytes":       c.HTTP.MaxBodyBytes, "limits.stdio_max_message_bytes": l.StdioMaxMessageBytes,
		"http.max_sessions": int64(c.HTTP.MaxSessions), "http.session_idle_seconds": int64(c.HTTP.SessionIdleSeconds),
		"audit.checkpoint_records": int64(c.Audit.CheckpointRecords),
		"audit.checkpoint_seconds": int64(c.Audit.CheckpointSeconds),
	} {
		if n < 0 {
			return bad(key, "must not be negative")
		}
	}
	if n := c.Audit.MaxRecordBytes; n != 0 && (n < 512 || n > 1<<20) {
		return bad("audit.max_record_bytes", "must be between 512 and 1048576")
	}
	switch c.HTTP.Auth {
	case "", "token", "none":
	case "oauth":
		if c.HTTP.Issuer == "" || c.HTTP.Audience == "" || (c.HTTP.JWKSURL == "") == (c.HTTP.JWKSFile == "") {
			return bad("http.auth", `"oauth" needs issuer, audience (this server's /mcp URL) and exactly one of jwks_url and jwks_file`)
		}
	default:
		return bad("http.auth", fmt.Sprintf("unknown value %q; use \"token\", \"oauth\" or \"none\"", c.HTTP.Auth))
	}
	if c.HTTP.AllowTypJWT && c.HTTP.Auth != "oauth" {
		return bad("http.allow_typ_jwt", `applies to auth = "oauth" only`)
	}
	if e := c.Telemetry.OTLPEndpoint; e != "" {
		u, err := url.Parse(e)
		switch {
		case err == nil && u.User != nil:
			return bad("telemetry.otlp_endpoint", "the collector URL must not carry a user or password; put credentials in OTEL_EXPORTER_OTLP_HEADERS")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return bad("telemetry.otlp_endpoint", fmt.Sprintf("%q is not an http:// or https:// URL naming a host, such as \"http://127.0.0.1:4318\"", e))
		}
	}
	if (c.HTTP.TLSCert == "") != (c.HTTP.TLSKey == "") {
		return bad("http.tls_cert", "set both tls_cert and tls_key (PEM files), or neither")
	}
	if c.HTTP.TokenEnv != "" && !isEnvName(c.HTTP.TokenEnv) {
		return bad("http.token_env", fmt.Sprintf("%q is not an environment variable name (letters, digits and _, not starting with a digit); name the variable, without $", c.HTTP.TokenEnv))
	}
	for name, s := range c.Secrets {
		key := "secrets." + name
		switch {
		case !isSecretName(name):
			return bad(key, "a secret's name uses letters, digits, '_' and '-' only")
		case (s.Env == "") == (s.File == ""):
			return bad(key, "set exactly one of env or file as the value's source")
		case s.Env != "" && !isEnvName(s.Env):
			return bad(key+".env", fmt.Sprintf("%q is not an environment variable name (letters, digits and _, not starting with a digit)", s.Env))
		case s.Format != "" && !strings.Contains(s.Format, "{value}"):
			return bad(key+".format", fmt.Sprintf("%q must contain {value}, where the secret goes (e.g. \"Bearer {value}\")", s.Format))
		case strings.ContainsAny(s.Header, " :\r\n"):
			return bad(key+".header", fmt.Sprintf("%q is not a header name; write the name alone (e.g. \"Authorization\"), the value comes from format", s.Header))
		}
		for _, h := range s.Hosts {
			if err := validateHostGlob(h); err != nil {
				return bad(key+".hosts", err.Error())
			}
		}
	}
	return nil
}
