// Package grants owns the request model, config loading, the built-in
// profiles, the compiled policy and its decision.
//
// Every tool call becomes one or more Requests; a compiled Policy decides each
// one (deny > ask > allow > mode) and a call as a whole. Deciding does no I/O:
// paths arrive already resolved by the tools, and the policy only matches.
//
// Security model: the zero Decision denies, a rule that cannot be evaluated
// denies, and the built-in protections (protected paths, credential data,
// git's code-running files) sit above every rule and mode.
package grants

import (
	"slices"
	"strconv"
	"strings"

	"github.com/onellm/onellm-mcp/internal/display"
)

// Capability names what a request wants to do. The names are public.
type Capability string

// The capabilities SPEC.md defines.
const (
	CapWorkspaceRead    Capability = "workspace.files.read"
	CapWorkspaceWrite   Capability = "workspace.files.write"
	CapWorkspaceDelete  Capability = "workspace.files.delete"
	CapFilesystemRead   Capability = "filesystem.read"
	CapFilesystemWrite  Capability = "filesystem.write"
	CapFilesystemDelete Capability = "filesystem.delete"
	CapProcessExec      Capability = "process.exec"
	CapHTTPGet          Capability = "network.http.get"
	CapHTTPHead         Capability = "network.http.head"
	CapHTTPPost         Capability = "network.http.post"
	CapHTTPPut          Capability = "network.http.put"
	CapHTTPPatch        Capability = "network.http.patch"
	CapHTTPDelete       Capability = "network.http.delete"
	CapHTTPOptions      Capability = "network.http.options"
	CapSecretUse        Capability = "secret.use"
	CapUserAsk          Capability = "user.ask"
	// CapPackageInstall is one package a command installs: Target.Resource
	// is the package as written, version included ("left-pad@1.3.0", or the
	// manifest in parentheses, "(package.json)"), Target.Host the index it
	// comes from (empty when the system's configuration names it).
	CapPackageInstall Capability = "package.install"
)

// Capabilities lists every known capability, in documentation order.
var capabilities = []Capability{
	CapWorkspaceRead, CapWorkspaceWrite, CapWorkspaceDelete,
	CapFilesystemRead, CapFilesystemWrite, CapFilesystemDelete,
	CapProcessExec,
	CapHTTPGet, CapHTTPHead, CapHTTPPost, CapHTTPPut, CapHTTPPatch, CapHTTPDelete, CapHTTPOptions,
	CapSecretUse, CapUserAsk, CapPackageInstall,
}

// Capabilities returns every known capability.
func Capabilities() []Capability { return slices.Clone(capabilities) }

// Known reports whether c is a capability SPEC.md defines.
func (c Capability) Known() bool { return slices.Contains(capabilities, c) }

// HTTPCapability returns the network capability for an HTTP method
// ("GET" → network.http.get); ok is false for methods the tool does not make.
func HTTPCapability(method string) (Capability, bool) {
	c := Capability("network.http." + strings.ToLower(method))
	if !strings.HasPrefix(string(c), "network.http.") || !c.Known() {
		return "", false
	}
	return c, true
}

// IsFile reports whether the capability's target is a file path.
func (c Capability) IsFile() bool {
	return strings.HasPrefix(string(c), "workspace.files.") || strings.HasPrefix(string(c), "filesystem.")
}

// IsNetwork reports whether the capability sends data off the machine.
func (c Capability) IsNetwork() bool { return strings.HasPrefix(string(c), "network.") }

// Mutates reports whether the capability writes or deletes a file.
func (c Capability) Mutates() bool {
	return c == CapWorkspaceWrite || c == CapWorkspaceDelete || c == CapFilesystemWrite || c == CapFilesystemDelete
}

// Risk is a request's risk level; higher is riskier.
type Risk int

// Risk levels, in increasing order.
const (
	RiskLow Risk = iota + 1
	RiskMedium
	RiskHigh
	RiskCritical
)

var riskNames = map[Risk]string{RiskLow: "low", RiskMedium: "medium", RiskHigh: "high", RiskCritical: "critical"}

func (r Risk) String() string {
	if s, ok := riskNames[r]; ok {
		return s
	}
	return "unknown"
}

// ParseRisk parses a risk level name.
func ParseRisk(s string) (Risk, bool) {
	for r, n := range riskNames {
		if n == s {
			return r, true
		}
	}
	return 0, false
}

// MarshalText writes the risk's name.
func (r Risk) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Surface says where a command runs.
type Surface string

// Execution surfaces.
const (
	SurfaceNone    Surface = ""
	SurfaceSandbox Surface = "sandbox"
	SurfaceHost    Surface = "host"
)

// DataClass labels sensitive data a request touches or carries.
type DataClass string

// Data classes.
const (
	DataCredential DataClass = "credential"
)

// Effect is what a decision says. The zero value denies.
type Effect int

// Effects. Deny is the zero value on purpose: an unset decision refuses.
const (
	Deny Effect = iota
	Ask
	Allow
)

func (e Effect) String() string {
	switch e {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	default:
		return "deny"
	}
}

// MarshalText writes the effect's name.
func (e Effect) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Reason is the code recorded with every decision. The names are public.
type Reason string

// Reason codes.
const (
	ReasonMatchedAllow        Reason = "matched_allow"
	ReasonMatchedAsk          Reason = "matched_ask"
	ReasonMatchedDeny         Reason = "matched_deny"
	ReasonUnknownCapability   Reason = "unknown_capability"
	ReasonApproved            Reason = "approved"
	ReasonApprovedForSession  Reason = "approved_for_session"
	ReasonDeclined            Reason = "declined"
	ReasonCancelled           Reason = "cancelled"
	ReasonApprovalTimeout     Reason = "approval_timeout"
	ReasonApprovalUnavailable Reason = "approval_unavailable"
	ReasonProtectedPath       Reason = "protected_path"
	ReasonInvalidArguments    Reason = "invalid_arguments"
	ReasonSandboxUnavailable  Reason = "sandbox_unavailable"
	// ReasonSecretUnavailable: a call needs a configured secret that has no
	// value on the server; it is refused before anyone is asked.
	ReasonSecretUnavailable Reason = "secret_unavailable"
)

// Reasons lists every reason code.
func Reasons() []Reason {
	return []Reason{
		ReasonMatchedAllow, ReasonMatchedAsk, ReasonMatchedDeny, ReasonUnknownCapability,
		ReasonApproved, ReasonApprovedForSession, ReasonDeclined, ReasonCancelled,
		ReasonApprovalTimeout, ReasonApprovalUnavailable, ReasonProtectedPath,
		ReasonInvalidArguments, ReasonSandboxUnavailable, ReasonSecretUnavailable,
	}
}

// Built-in rule ids, recorded when a protection rather than a config rule decided.
const (
	RuleDenyCredentialFlow = "deny_credential_flow"
	RuleProtectedPath      = "protected_path"
	RuleGitCodeFiles       = "protect_git_code_files"
	RuleMode               = "mode"
	RuleSandboxRequired    = "sandbox_required"
)

// Target is what a request acts on. Fields unused by a capability stay empty.
type Target struct {
	ToolName string `json:"tool_name,omitempty"`
	Path     string `json:"path,omitempty"`     // fully resolved real path
	Host     string `json:"host,omitempty"`     // lower-case host name or IP literal (a package's index)
	Port     int    `json:"port,omitempty"`     // network port
	Resource string `json:"resource,omitempty"` // command name, secret name, package as written
	Command  string `json:"command,omitempty"`  // a command's words joined by spaces
	Method   string `json:"method,omitempty"`   // HTTP method, upper case
	Option   string `json:"option,omitempty"`   // the option that raised a command's risk
	// Exe is the real path of the executable of an exec-time request for a
	// program the command may have made or copied (it lies where the
	// command can write). Rules do not match it; it is part of the
	// request's identity, so an approval given for the program a line
	// names never holds for a look-alike of the command's own.
	Exe string `json:"exe,omitempty"`
}

// Request is one capability on one target, with what the tool knows about it.
type Request struct {
	Capability  Capability  `json:"capability"`
	Target      Target      `json:"target"`
	Risk        Risk        `json:"risk_level"`
	Surface     Surface     `json:"execution_surface,omitempty"`
	DataClasses []DataClass `json:"data_classes,omitempty"`
	// Private is set on network requests whose host resolved to a loopback,
	// private or otherwise non-public address.
	Private bool `json:"private,omitempty"`
	// Argv is a process.exec request's exact words (Command joins them with
	// spaces for rule matching, which loses where a word with a space
	// ends); Cwd is the folder it runs in. Rules do not match them; they
	// make the request's identity exact for remembered approvals and are
	// shown to the person.
	Argv []string `json:"argv,omitempty"`
	Cwd  string   `json:"cwd,omitempty"`
	// Under, on an exec-time request, is the approved request whose
	// program started this one as its own plumbing (the transport of an
	// approved git push: the sandbox's exec gate says so, narrowly). The
	// server's mid-action gate settles an ask of this request by Under's
	// approval, in this call or remembered for the session, when Under is
	// asked about itself; a deny is never settled. It is no part of the
	// request's identity (Key) and is not recorded.
	Under *Request `json:"-"`
}

// HasClass reports whether the request carries data class d.
func (r Request) HasClass(d DataClass) bool { return slices.Contains(r.DataClasses, d) }

// CwdKnownWhenRun is a process.exec request's Cwd when the folder it runs
// in is known only when the command runs (after cd "$d"): an approval of
// it given in a call holds for that program in whatever folder it runs in
// that call (the person saw the cd), never in a later one.
const CwdKnownWhenRun = "/<dynamic>"

// Key identifies the request exactly (capability and every target field), for
// remembered approvals: never a prefix, never a glob.
func (r Request) Key() string {
	return r.KeyInCall() + "\x00" + r.Cwd
}

// KeyInCall is Key without the working folder (an approval in a call
// compares the folders itself: server's sameApproval).
func (r Request) KeyInCall() string {
	t := r.Target
	return strings.Join([]string{
		string(r.Capability), t.ToolName, t.Path, t.Host, strconv.Itoa(t.Port),
		t.Resource, t.Command, t.Method, t.Option, string(r.Surface), quoteArgv(r.Argv),
	}, "\x00") + exeKey(t.Exe)
}

// exeKey is the part of a key Target.Exe adds (nothing when empty, so the
// keys of every other request are unchanged).
func exeKey(exe string) string {
	if exe == "" {
		return ""
	}
	return "\x00exe\x00" + exe
}

// quoteArgv renders argv so that words are told apart: shell quoting where a
// word needs it (`touch 'm1 m2'` is not `touch m1 m2`).
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, w := range argv {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%^", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// Describe renders the request for people and models: "process.exec `git push`".
func (r Request) Describe() string {
	t := r.Target
	var what string
	switch {
	case r.Capability == CapProcessExec:
		line := t.Command
		if len(r.Argv) > 0 {
			line = quoteArgv(r.Argv) // exactly the words that run
		}
		what = "`" + line + "`"
		if t.Resource != "" && !strings.HasPrefix(t.Command, t.Resource) {
			what = t.Resource + " " + what // <dynamic>, or a wrapper's target
		}
		if t.Option != "" {
			what += " (option " + t.Option + ")"
		}
		if t.Exe != "" {
			what += " (written in the sandbox: " + t.Exe + ")"
		}
	case r.Capability == CapPackageInstall:
		what = t.Resource
		if t.Host != "" {
			what += " from " + t.Host
		}
	case r.Capability.IsFile():
		what = t.Path
	case r.Capability.IsNetwork():
		what = t.Host
		if t.Port != 0 {
			what += ":" + strconv.Itoa(t.Port)
		}
		what += t.Path
	case t.Resource != "":
		what = t.Resource
	}
	if what == "" {
		return string(r.Capability)
	}
	// Shown to a person (prompts, console, stderr, explain): model-chosen
	// control, bidi and invisible characters are escaped.
	return string(r.Capability) + " " + display.Escape(what)
}
