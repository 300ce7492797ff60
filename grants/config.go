package grants

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	Secrets   map[string]SecretConfig `toml:"secrets"`

	// Path is the config file's absolute path ("" for the embedded default).
	Path string `toml:"-"`
	// Dir is the folder relative paths are resolved against.
	Dir string `toml:"-"`
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
	Path string `toml:"path"`
}

// HTTPConfig is the [http] section.
type HTTPConfig struct {
	TokenEnv       string   `toml:"token_env"`
	Auth           string   `toml:"auth"`
	AllowedOrigins []string `toml:"allowed_origins"`
	MaxBodyBytes   int64    `toml:"max_body_bytes"`
	Listen         string   `toml:"listen"`
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
	Key  string // dotted key, "" when not about one key
	Msg  string
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config ")
	if e.File == "" {
		b.WriteString("(embedded default)")
	} else {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// DefaultConfigTOML is the embedded default: the interactive-dev profile with
// the current folder as the workspace.
const DefaultConfigTOML = `profile = "interactive-dev"
`

// LoadFile reads and validates a config file. It refuses a file that group
// or others can write, as ssh refuses such keys.
func LoadFile(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &ConfigError{File: path, Msg: err.Error()}
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, &ConfigError{File: abs, Msg: "cannot read: " + unwrapPathError(err)}
	}
	if !fi.Mode().IsRegular() {
		return nil, &ConfigError{File: abs, Msg: "not a regular file"}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return nil, &ConfigError{File: abs, Msg: fmt.Sprintf(
			"refused: writable by group or others (mode %04o), so someone else could change the policy; fix with: chmod go-w %s", perm, abs)}
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

// Parse decodes config text strictly: a syntax error, an unknown key or a
// value of the wrong type is an error naming the line and the key. file is
// the name used in messages; dir is where relative paths are resolved.
func Parse(data []byte, file, dir string) (cfg *Config, err error) {
	// go-toml v2.2.4 panics while reporting an unknown key written with
	// escapes ("\u0000" = 1): a config must never crash the server.
	defer func() {
		if r := recover(); r != nil {
			cfg, err = nil, &ConfigError{File: file, Msg: "cannot be read as TOML; check quoted keys and their escapes"}
		}
	}()
	// viper reads the file the same way the live reload does later, so a
	// config that loads at start-up also loads on change.
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, tomlError(file, err)
	}
	// viper forgets positions and accepts unknown keys; a strict typed
	// decode gives both line numbers and unknown-key errors.
	var c Config
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, tomlError(file, err)
	}
	c.Path, c.Dir = file, dir
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
		return &ConfigError{File: file, Line: row, Key: strings.Join(de.Key(), "."), Msg: de.Error()}
	}
	return &ConfigError{File: file, Msg: err.Error()}
}

var (
	secretNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	envNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// validate checks values that decode fine but mean nothing. Rule contents
// are checked when compiled.
func (c *Config) validate() error {
	bad := func(key, msg string) error { return &ConfigError{File: c.Path, Key: key, Msg: msg} }
	if c.Profile != "" {
		if _, ok := profiles[c.Profile]; !ok {
			return bad("profile", fmt.Sprintf("unknown profile %q; use one of %s", c.Profile, strings.Join(ProfileNames(), ", ")))
		}
	}
	if c.Mode != "" {
		if _, ok := parseMode(c.Mode); !ok {
			return bad("mode", fmt.Sprintf("unknown mode %q; use permissive, interactive or strict", c.Mode))
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
		if !envNamePattern.MatchString(e) {
			return bad("sandbox.env", fmt.Sprintf("%q is not an environment variable name", e))
		}
	}
	l := c.Limits
	for key, n := range map[string]int64{
		"limits.read_default_bytes": l.ReadDefaultBytes, "limits.read_max_bytes": l.ReadMaxBytes,
		"limits.output_max_bytes": l.OutputMaxBytes, "limits.command_timeout_seconds": int64(l.CommandTimeoutSeconds),
		"limits.command_max_timeout_seconds": int64(l.CommandMaxTimeoutSeconds), "limits.http_timeout_seconds": int64(l.HTTPTimeoutSeconds),
		"limits.http_max_bytes": l.HTTPMaxBytes, "approval.timeout_seconds": int64(c.Approval.TimeoutSeconds),
		"approval.progress_seconds": int64(c.Approval.ProgressSeconds),
		"http.max_body_bytes":       c.HTTP.MaxBodyBytes,
	} {
		if n < 0 {
			return bad(key, "must not be negative")
		}
	}
	switch c.HTTP.Auth {
	case "", "token", "none":
	default:
		return bad("http.auth", fmt.Sprintf("unknown value %q; use \"token\" or \"none\"", c.HTTP.Auth))
	}
	if c.HTTP.TokenEnv != "" && !envNamePattern.MatchString(c.HTTP.TokenEnv) {
		return bad("http.token_env", "not an environment variable name")
	}
	for name, s := range c.Secrets {
		key := "secrets." + name
		switch {
		case !secretNamePattern.MatchString(name):
			return bad(key, "a secret's name uses letters, digits, '_' and '-' only")
		case (s.Env == "") == (s.File == ""):
			return bad(key, "set exactly one of env or file as the value's source")
		case s.Env != "" && !envNamePattern.MatchString(s.Env):
			return bad(key+".env", "not an environment variable name")
		case s.Format != "" && !strings.Contains(s.Format, "{value}"):
			return bad(key+".format", "must contain {value}")
		case strings.ContainsAny(s.Header, " :\r\n"):
			return bad(key+".header", "not a header name")
		}
		for _, h := range s.Hosts {
			if err := validateHostGlob(h); err != nil {
				return bad(key+".hosts", err.Error())
			}
		}
	}
	return nil
}
