package grants

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onellm/onellm-mcp/internal/statedir"
)

// Limits are the [limits] values with defaults filled in.
type Limits struct {
	ReadDefaultBytes   int64
	ReadMaxBytes       int64
	OutputMaxBytes     int64
	CommandTimeout     time.Duration
	CommandMaxTimeout  time.Duration
	HTTPTimeout        time.Duration
	HTTPMaxTimeout     time.Duration
	HTTPMaxBytes       int64
	ApprovalTimeout    time.Duration
	ApprovalProgress   time.Duration // how often a waiting call sends progress
	HTTPMaxRequestBody int64
	// StdioMaxMessageBytes caps one stdio message (a line).
	StdioMaxMessageBytes int64
}

// Sandbox is the [sandbox] section with defaults filled in and paths resolved.
type Sandbox struct {
	Required bool
	Network  string // none, proxy, full
	Writable []string
	Readable []string
	Env      []string
	// Toolchains are the toolchains commands see ([sandbox] toolchains,
	// "auto" expanded): empty means none.
	Toolchains []string
}

// AuditSettings is the [audit] section beyond its path, with defaults
// filled in.
type AuditSettings struct {
	MaxRecordBytes     int
	CheckpointRecords  int
	CheckpointInterval time.Duration
}

// HTTPSettings is the [http] section with defaults filled in.
type HTTPSettings struct {
	TokenEnv       string
	Auth           string // token or none
	AllowedOrigins []string
	MaxBodyBytes   int64
	Public         bool     // a non-loopback bind is allowed
	TLSCert        string   // absolute; "" serves plain HTTP
	TLSKey         string   // absolute
	AllowedHosts   []string // Host header names accepted beside the bound address
	MaxSessions    int      // legacy MCP sessions kept at once (default 256)
	SessionIdle    time.Duration
	// Auth "oauth": who issues tokens for this server and where its keys are.
	Issuer, Audience, JWKSURL, JWKSFile string
	RequiredScopes                      []string
	AllowTypJWT                         bool // tokens typed JWT or untyped are accepted too
}

// TelemetrySettings is the [telemetry] section as configured; the
// standard OTEL_EXPORTER_OTLP_* variables are read by server/telemetry.
type TelemetrySettings struct {
	OTLPEndpoint  string
	HashArguments bool
}

// Secret is a brokered secret as configured (the value is read when used).
type Secret struct {
	Name   string
	Env    string
	File   string
	Hosts  []string
	Header string
	Format string
}

func orDefault[T int | int64](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

func seconds(n int) time.Duration { return time.Duration(n) * time.Second }

func (c *Config) limits() Limits {
	l := c.Limits
	return Limits{
		ReadDefaultBytes:   orDefault(l.ReadDefaultBytes, 16<<10),
		ReadMaxBytes:       orDefault(l.ReadMaxBytes, 1<<20),
		OutputMaxBytes:     orDefault(l.OutputMaxBytes, 64<<10),
		CommandTimeout:     seconds(orDefault(l.CommandTimeoutSeconds, 30)),
		CommandMaxTimeout:  seconds(orDefault(l.CommandMaxTimeoutSeconds, 600)),
		HTTPTimeout:        seconds(orDefault(l.HTTPTimeoutSeconds, 30)),
		HTTPMaxTimeout:     seconds(max(orDefault(l.HTTPTimeoutSeconds, 30), 300)),
		HTTPMaxBytes:       orDefault(l.HTTPMaxBytes, 1<<20),
		ApprovalTimeout:    seconds(orDefault(c.Approval.TimeoutSeconds, 120)),
		ApprovalProgress:   seconds(orDefault(c.Approval.ProgressSeconds, 10)),
		HTTPMaxRequestBody: orDefault(c.HTTP.MaxBodyBytes, 4<<20),

		StdioMaxMessageBytes: orDefault(l.StdioMaxMessageBytes, 8<<20),
	}
}

// defaultAuditPath is $XDG_STATE_HOME/onellm-mcp/audit.jsonl, else
// ~/.local/state/onellm-mcp/audit.jsonl.
func defaultAuditPath(home string) string {
	return filepath.Join(StateDir(home), "audit.jsonl")
}

// StateDir is the user's state folder for onellm-mcp:
// $XDG_STATE_HOME/onellm-mcp, else ~/.local/state/onellm-mcp (statedir.Path).
func StateDir(home string) string { return statedir.Path(home) }

// ToolRoots are the roots of this policy that tools read without asking:
// the workspace and the sandbox's writable and readable roots (the
// sandbox's system folders are the sandbox package's to list).
func (p *Policy) ToolRoots() []string {
	return slices.Concat([]string{p.Workspace}, p.Sandbox.Writable, p.Sandbox.Readable)
}

// ToolsReach reports whether a path lies where a tool can read it without
// asking: inside the workspace or a sandbox root.
func (p *Policy) ToolsReach(path string) bool {
	for _, root := range p.ToolRoots() {
		if path == root || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/") {
			return true
		}
	}
	return false
}

// InStateDir reports whether the resolved path p is the user's state folder
// or lies beneath it: the server's own secrets live there, so no tool may
// read, write or delete anything in it (reason protected_path).
func (p *Policy) InStateDir(path string) bool {
	return p.StateDir != "" && (path == p.StateDir || strings.HasPrefix(path, p.StateDir+"/"))
}

// Value reads the secret's value from its source, at the moment of use, so
// a rotated secret is picked up without a reload. An empty value is an
// error: a secret that cannot be brokered is never sent as "".
func (s Secret) Value() (string, error) {
	var v string
	switch {
	case s.Env != "":
		v = os.Getenv(s.Env)
	case s.File != "":
		b, err := os.ReadFile(s.File)
		if err != nil {
			return "", fmt.Errorf("secret %s: its file cannot be read: %v", s.Name, unwrapPathError(err))
		}
		v = strings.TrimRight(string(b), "\r\n")
	}
	if v == "" {
		return "", fmt.Errorf("secret %s has no value on the server (%s)", s.Name, s.source())
	}
	return v, nil
}

// Available reports whether the secret has a value to send, without reading
// a file's content: a variable must be set and not empty, a file must be
// statable and, when it is a regular file, not empty. A pipe or a device
// is taken as available (its content can be read only once, when the
// secret is used). A call needing a secret that is not available is
// refused before anyone is asked about it; a file holding only line ends
// still fails only when it is read.
func (s Secret) Available() error {
	switch {
	case s.Env != "":
		if os.Getenv(s.Env) == "" {
			return fmt.Errorf("secret %s has no value on the server (%s)", s.Name, s.source())
		}
	case s.File != "":
		fi, err := os.Stat(s.File)
		if err != nil {
			return fmt.Errorf("secret %s has no value on the server: its file cannot be read: %v", s.Name, unwrapPathError(err))
		}
		if fi.Mode().IsRegular() && fi.Size() == 0 {
			return fmt.Errorf("secret %s has no value on the server (%s)", s.Name, s.source())
		}
	default:
		return fmt.Errorf("secret %s has no value on the server (it names no env or file)", s.Name)
	}
	return nil
}

func (s Secret) source() string {
	if s.Env != "" {
		return "variable " + s.Env + " is empty"
	}
	return "file " + s.File + " is empty"
}
