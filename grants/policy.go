package grants

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Rule is one compiled rule: from a profile or from the config.
type Rule struct {
	ID         string
	Effect     Effect
	Source     string // "profile NAME" or "config"
	Capability string
	Config     RuleConfig

	caps        uint32 // bit i set when capabilities[i] matches Capability
	tool        *wordGlob
	path        *pathGlob
	host        *hostGlob
	resource    *wordGlob
	command     *commandPattern
	risks       []Risk
	surface     Surface
	exclSurface []Surface
	exclCaps    []string
	methods     []string
	classes     []DataClass

	allowPrivate            bool
	expires                 time.Duration
	sandboxRequired         bool
	unconfiguredSecretsOnly bool
}

// Covers reports whether the rule's capability pattern names c.
func (rule *Rule) Covers(c Capability) bool { return rule.caps&capBit(c) != 0 }

// MayApplyTo reports whether the rule's tool_name pattern, if it has one,
// matches toolName.
func (rule *Rule) MayApplyTo(toolName string) bool {
	return rule.tool == nil || rule.tool.match(toolName)
}

// Policy is a compiled config: everything that decides, and the settings the
// tools act under. It is immutable once built, so it can be shared by calls
// in flight while a reload builds the next one.
type Policy struct {
	Profile    string
	Mode       Mode
	Workspace  string // real path, no trailing slash
	ConfigPath string // "" for the embedded default
	AuditPath  string
	Audit      AuditSettings
	Executable string
	Home       string
	// StateDir is the real path of the user's state folder (statedir.Path):
	// out of bounds for every tool.
	StateDir string
	Limits   Limits
	Sandbox  Sandbox
	HTTP     HTTPSettings
	Console  string
	// Telemetry is read once at start-up (server/telemetry).
	Telemetry TelemetrySettings
	Secrets   map[string]Secret

	deny, ask, allow []*Rule
	// outer is the policy this one narrowed (to a client's root), whose
	// workspace rules still bind the paths that narrowing put outside.
	outer     *Policy
	byCap     [][3]ruleList // per capability index: its deny, ask and allow rules
	protected []string
	tests     []PolicyTest
	// secretFiles are the real paths of `[secrets.NAME] file` sources: no
	// tool reads, writes or deletes them, whatever the rules say.
	secretFiles []string
}

// CompileOptions carries what compiling needs from the environment, so tests
// can pin it.
type CompileOptions struct {
	Executable string // the server's own binary; protected from writes
	// Helper is the sandbox helper binary beside it (it may not exist yet);
	// protected from writes too, so no tool or command can plant the file
	// a later start would check and run.
	Helper string
	Home   string // "~" in patterns; defaults to the user's home
}

// Compile resolves and checks every rule of cfg (profile rules first) and
// returns the policy. Any bad rule fails the whole config.
func Compile(cfg *Config, opts CompileOptions) (*Policy, error) {
	bad := func(key, msg string) error { return cfg.errAt(key, "", msg) }
	home := opts.Home
	if home == "" {
		home = homeDir()
	}
	ws, err := resolveWorkspace(cfg, home)
	if err != nil {
		return nil, bad("workspace", err.Error())
	}
	p := &Policy{
		Profile: cfg.Profile, Workspace: ws, ConfigPath: cfg.Path, Home: home,
		Limits: cfg.limits(), Console: cfg.Approval.Console, Secrets: map[string]Secret{},
	}
	prof := profiles[cfg.Profile]
	p.Mode = prof.mode
	if cfg.Mode != "" {
		p.Mode, _ = parseMode(cfg.Mode)
	}
	for name, s := range cfg.Secrets {
		p.Secrets[name] = Secret{Name: name, Env: s.Env, File: p.absPath(s.File, cfg.Dir),
			Hosts: s.Hosts, Header: orString(s.Header, "Authorization"), Format: orString(s.Format, "{value}")}
	}
	p.Sandbox = Sandbox{Required: true, Network: orString(cfg.Sandbox.Network, "none"),
		Env: cfg.Sandbox.Env}
	if cfg.Sandbox.Required != nil {
		p.Sandbox.Required = *cfg.Sandbox.Required
	}
	if p.Sandbox.Env == nil {
		p.Sandbox.Env = []string{"PATH", "HOME", "LANG", "TERM"}
	}
	p.Sandbox.Toolchains, _ = toolchainsSetting(cfg.Sandbox.Toolchains) // validated
	for _, w := range cfg.Sandbox.Writable {
		p.Sandbox.Writable = append(p.Sandbox.Writable, p.realPath(p.absPath(w, cfg.Dir)))
	}
	for _, r := range cfg.Sandbox.Readable {
		p.Sandbox.Readable = append(p.Sandbox.Readable, p.realPath(p.absPath(r, cfg.Dir)))
	}
	p.HTTP = HTTPSettings{TokenEnv: cfg.HTTP.TokenEnv, Auth: orString(cfg.HTTP.Auth, "token"),
		AllowedOrigins: cfg.HTTP.AllowedOrigins, MaxBodyBytes: p.Limits.HTTPMaxRequestBody,
		Public: cfg.HTTP.Public, AllowedHosts: cfg.HTTP.AllowedHosts,
		MaxSessions: orDefault(cfg.HTTP.MaxSessions, 256), SessionIdle: seconds(orDefault(cfg.HTTP.SessionIdleSeconds, 1800))}
	if cfg.HTTP.TLSCert != "" {
		p.HTTP.TLSCert, p.HTTP.TLSKey = p.absPath(cfg.HTTP.TLSCert, cfg.Dir), p.absPath(cfg.HTTP.TLSKey, cfg.Dir)
	}
	p.HTTP.Issuer, p.HTTP.Audience, p.HTTP.JWKSURL = cfg.HTTP.Issuer, cfg.HTTP.Audience, cfg.HTTP.JWKSURL
	p.HTTP.RequiredScopes, p.HTTP.AllowTypJWT = cfg.HTTP.RequiredScopes, cfg.HTTP.AllowTypJWT
	if cfg.HTTP.JWKSFile != "" {
		p.HTTP.JWKSFile = p.absPath(cfg.HTTP.JWKSFile, cfg.Dir)
	}

	p.Telemetry = TelemetrySettings{OTLPEndpoint: cfg.Telemetry.OTLPEndpoint, HashArguments: cfg.Telemetry.HashArguments}
	p.AuditPath = cfg.Audit.Path
	if p.AuditPath == "" {
		p.AuditPath = defaultAuditPath(home)
	} else {
		p.AuditPath = p.absPath(p.AuditPath, cfg.Dir)
	}
	p.Audit = AuditSettings{MaxRecordBytes: orDefault(cfg.Audit.MaxRecordBytes, 4<<10),
		CheckpointRecords:  orDefault(cfg.Audit.CheckpointRecords, 1000),
		CheckpointInterval: seconds(orDefault(cfg.Audit.CheckpointSeconds, 60))}
	p.Executable = opts.Executable
	p.StateDir = p.realPath(StateDir(home))
	for _, f := range []string{p.ConfigPath, p.AuditPath, p.Executable, opts.Helper} {
		if f != "" {
			p.protected = append(p.protected, p.realPath(f))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Secrets)) {
		if f := p.Secrets[name].File; f != "" {
			p.secretFiles = append(p.secretFiles, p.realPath(f))
		}
	}

	profDeny, profAsk, profAllow := prof.rules()
	groups := []struct {
		effect Effect
		key    string
		src    string
		rules  []RuleConfig
		into   *[]*Rule
	}{
		{Deny, "rules.deny", "profile " + cfg.Profile, profDeny, &p.deny},
		{Ask, "rules.ask", "profile " + cfg.Profile, profAsk, &p.ask},
		{Allow, "rules.allow", "profile " + cfg.Profile, profAllow, &p.allow},
		{Deny, "rules.deny", "config", cfg.Rules.Deny, &p.deny},
		{Ask, "rules.ask", "config", cfg.Rules.Ask, &p.ask},
		{Allow, "rules.allow", "config", cfg.Rules.Allow, &p.allow},
	}
	seen := map[string]bool{}
	for _, g := range groups {
		for i, rc := range g.rules {
			// A rule's error names the key inside it ("target.path: …"
			// becomes rules.deny[0].target.path), so the message can give
			// the line it was written on.
			ruleErr := func(msg string) error {
				if g.src != "config" {
					return bad("profile", fmt.Sprintf("built-in rule %s: %s", rc.RuleID, msg))
				}
				key := fmt.Sprintf("%s[%d]", g.key, i)
				if sub, rest, ok := splitSubKey(msg); ok {
					key, msg = key+"."+sub, rest
				}
				return cfg.errAt(key, rc.RuleID, msg)
			}
			r, err := p.compileRule(rc, g.effect, g.src)
			if err != nil {
				return nil, ruleErr(err.Error())
			}
			if seen[r.ID] {
				return nil, ruleErr(fmt.Sprintf("rule_id %q is used twice; rule ids must be unique", r.ID))
			}
			seen[r.ID] = true
			*g.into = append(*g.into, r)
		}
	}
	p.indexRules()
	if p.tests, err = compileTests(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// splitSubKey splits a rule error "target.path: bad glob …" or "rule_id is
// missing" into the key inside the rule and the rest of the message.
func splitSubKey(msg string) (sub, rest string, ok bool) {
	end := strings.IndexAny(msg, ": ")
	if end <= 0 {
		return "", msg, false
	}
	sub = msg[:end]
	if _, t, err := resolveKey("", reflect.TypeFor[RuleConfig](), strings.Split(sub, "."), keyLines{}, 0); err != nil || t == nil {
		return "", msg, false
	}
	return sub, strings.TrimLeft(msg[end:], ": "), true
}

func orString(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// absPath makes a config path absolute: "~" expanded, relative to dir.
func (p *Policy) absPath(f, dir string) string {
	switch {
	case f == "":
		return ""
	case f == "~":
		return p.Home
	case strings.HasPrefix(f, "~/"):
		return filepath.Join(p.Home, f[2:])
	case filepath.IsAbs(f):
		return filepath.Clean(f)
	}
	return filepath.Join(dir, f)
}

// realPath resolves symlinks in the longest existing prefix of f.
func (p *Policy) realPath(f string) string { return resolveExisting(f) }

// resolveExisting resolves symlinks in the longest existing prefix of f and
// keeps the rest as written (cleaned).
func resolveExisting(f string) string {
	f = filepath.Clean(f)
	var rest []string
	for cur := f; ; cur = filepath.Dir(cur) {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if cur == "/" || cur == "." {
			return f
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
	}
}

func resolveWorkspace(cfg *Config, home string) (string, error) {
	ws := cfg.Workspace
	if ws == "" {
		ws = "."
	}
	switch {
	case ws == "~":
		ws = home
	case strings.HasPrefix(ws, "~/"):
		ws = filepath.Join(home, ws[2:])
	case !filepath.IsAbs(ws):
		ws = filepath.Join(cfg.Dir, ws)
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", fmt.Errorf("cannot use %s as the workspace: %v; create the folder or fix workspace (a relative path starts from the config's folder)", ws, unwrapPathError(err))
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a folder", real)
	}
	if real == "/" {
		return "", fmt.Errorf("the workspace cannot be / (every file would be inside it)")
	}
	return real, nil
}

func (p *Policy) compileRule(rc RuleConfig, effect Effect, source string) (*Rule, error) {
	r := &Rule{ID: rc.RuleID, Effect: effect, Source: source, Capability: rc.Capability, Config: rc,
		unconfiguredSecretsOnly: rc.onlyUnconfiguredSecrets}
	if r.ID == "" {
		return nil, fmt.Errorf("rule_id is missing; every rule needs one, for the audit log and refusals")
	}
	if rc.Capability == "" {
		return nil, fmt.Errorf("capability is missing; name one (e.g. %q) or a glob (%q)", CapWorkspaceRead, "network.http.*")
	}
	for i, c := range capabilities {
		if matchCapability(rc.Capability, c) {
			r.caps |= 1 << i
		}
	}
	if r.caps == 0 {
		return nil, fmt.Errorf("capability %q matches no known capability; known, closest first: %s", rc.Capability, knownList(rc.Capability, capabilityNames()))
	}
	t := rc.Target
	var err error
	if t.ToolName != "" {
		g, err := compileWordGlob(t.ToolName)
		if err != nil {
			return nil, fmt.Errorf("target.tool_name: %v", err)
		}
		r.tool = &g
	}
	if t.Path != "" {
		g, err := compilePathGlob(t.Path, p.Workspace, p.Home)
		if err != nil {
			return nil, fmt.Errorf("target.path: %v", err)
		}
		r.path = &g
	}
	if t.Host != "" {
		g, err := compileHostGlob(t.Host)
		if err != nil {
			return nil, fmt.Errorf("target.host: %v", err)
		}
		r.host = &g
	}
	if t.Resource != "" {
		g, err := compileWordGlob(t.Resource)
		if err != nil {
			return nil, fmt.Errorf("target.resource: %v", err)
		}
		r.resource = &g
	}
	if t.Command != "" {
		c, err := compileCommandPattern(t.Command)
		if err != nil {
			return nil, fmt.Errorf("target.command: %v", err)
		}
		r.command = &c
	}
	c := rc.Conditions
	for _, s := range c.RiskLevel {
		risk, ok := ParseRisk(s)
		if !ok {
			return nil, fmt.Errorf("conditions.risk_level: unknown risk %q; use low, medium, high or critical", s)
		}
		r.risks = append(r.risks, risk)
	}
	if r.surface, err = parseSurface(c.ExecutionSurface); err != nil {
		return nil, fmt.Errorf("conditions.execution_surface: %v", err)
	}
	for _, s := range c.ExcludeExecutionSurface {
		sf, err := parseSurface(s)
		if err != nil || sf == SurfaceNone {
			return nil, fmt.Errorf("conditions.exclude_execution_surface: unknown surface %q; use sandbox or host", s)
		}
		r.exclSurface = append(r.exclSurface, sf)
	}
	for _, g := range c.ExcludeCapability {
		if !slices.ContainsFunc(capabilities, func(k Capability) bool { return matchCapability(g, k) }) {
			return nil, fmt.Errorf("conditions.exclude_capability: %q matches no known capability; known, closest first: %s", g, knownList(g, capabilityNames()))
		}
		r.exclCaps = append(r.exclCaps, g)
	}
	for _, m := range c.Method {
		up := strings.ToUpper(m)
		if _, ok := HTTPCapability(up); !ok {
			return nil, fmt.Errorf("conditions.method: unknown HTTP method %q; use GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS", m)
		}
		r.methods = append(r.methods, up)
	}
	for _, d := range c.DataClasses {
		if DataClass(d) != DataCredential {
			return nil, fmt.Errorf("conditions.data_classes: unknown data class %q; known: credential", d)
		}
		r.classes = append(r.classes, DataClass(d))
	}
	r.allowPrivate = c.AllowPrivate
	if r.allowPrivate && r.host == nil {
		return nil, fmt.Errorf("conditions.allow_private needs target.host: name the private hosts it opens")
	}
	if r.allowPrivate && effect == Deny {
		return nil, fmt.Errorf("conditions.allow_private means nothing on a deny rule")
	}
	if n := rc.Constraints.ApprovalExpiresSeconds; n < 0 {
		return nil, fmt.Errorf("constraints.approval_expires_seconds must not be negative")
	} else {
		r.expires = seconds(n)
	}
	r.sandboxRequired = rc.Constraints.SandboxRequired
	return r, nil
}

func parseSurface(s string) (Surface, error) {
	switch Surface(s) {
	case SurfaceNone, SurfaceSandbox, SurfaceHost:
		return Surface(s), nil
	}
	return "", fmt.Errorf("unknown surface %q; use sandbox or host", s)
}

func capabilityNames() []string {
	names := make([]string, len(capabilities))
	for i, c := range capabilities {
		names[i] = string(c)
	}
	return names
}

// SuggestCapabilities lists the known capabilities, closest to word first.
func SuggestCapabilities(word string) []string { return closestFirst(word, capabilityNames()) }

// Rules returns the compiled rules in evaluation order: deny, ask, allow;
// within each, profile rules first.
func (p *Policy) Rules() []*Rule {
	return slices.Concat(p.deny, p.ask, p.allow)
}

// Protected returns the paths no tool may write or delete.
func (p *Policy) Protected() []string { return slices.Clone(p.protected) }

// SecretFiles returns the real paths of the configured secrets' files, which
// no tool may read either (the sandbox hides them from commands).
func (p *Policy) SecretFiles() []string { return slices.Clone(p.secretFiles) }

// InWorkspace reports whether the resolved path p is the workspace or lies
// beneath it (a sibling such as /x/ws_evil is not beneath /x/ws).
func (p *Policy) InWorkspace(path string) bool {
	return path == p.Workspace || strings.HasPrefix(path, p.Workspace+"/")
}

// WithWorkspace returns the policy with a narrower workspace: ws must be the
// workspace or a folder beneath it (a client's root), else p is returned
// unchanged — roots can narrow the workspace, never widen it. Rules keep
// the absolute patterns they were compiled to.
func (p *Policy) WithWorkspace(ws string) *Policy {
	if ws == p.Workspace || !p.InWorkspace(ws) {
		return p
	}
	narrowed := *p
	narrowed.Workspace = ws
	narrowed.outer = p
	return &narrowed
}
