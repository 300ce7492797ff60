// Package shelltool owns execute_terminal_command: the command line parsed
// into requests (cmdline), the kernel sandbox it runs in (sandbox), and the
// tool that ties them to the policy.
//
// Security model: the policy decides what the person wants asked or refused,
// from a best-effort reading of the line; the sandbox's exec gate then
// decides every program the command really executes, from what the kernel
// loaded (execgate.go); the sandbox is the boundary that holds whatever the
// allowed programs do.
package shelltool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/statedir"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
	"github.com/onellm/onellm-mcp/webtools"
)

// Name is the tool's public name.
const Name = "execute_terminal_command"

// Args are the tool's arguments.
type Args struct {
	Command        string   `json:"command" jsonschema:"The command line (bash syntax)"`
	Cwd            string   `json:"cwd,omitempty" jsonschema:"Working folder: absolute, ~/…, or relative to the workspace (default: the workspace)"`
	TimeoutSeconds int      `json:"timeout_seconds,omitempty" jsonschema:"Kill the command after this many seconds"`
	Stdin          string   `json:"stdin,omitempty" jsonschema:"Text given to the command on standard input"`
	Secrets        []string `json:"secrets,omitempty" jsonschema:"Names of configured secrets to put into the environment (their values never reach you)"`
}

// Output is the tool's structured result.
type Output struct {
	ExitCode   int    `json:"exit_code"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	TimedOut   bool   `json:"timed_out"`
	Truncated  bool   `json:"truncated"`
	DurationMS int64  `json:"duration_ms"`
	// Egress lists what the egress proxy decided ([sandbox] network =
	// "proxy"): one line per destination, allowed or refused.
	Egress []string `json:"egress,omitempty"`
	// RefusedPrograms lists the programs the sandbox's exec gate killed
	// before they ran (each with its rule and reason): their parent saw
	// them die by SIGKILL.
	RefusedPrograms []string `json:"refused_programs,omitempty"`
	// Stopped says why the sandbox killed the command (a hidden file or a
	// read-only path was replaced on the host while it ran); its output
	// is then dropped.
	Stopped string `json:"stopped,omitempty"`
}

// Tool is execute_terminal_command. The server starts it (Start) before
// its first call: planning a call probes nothing and starts nothing.
type Tool struct {
	mu       sync.Mutex
	started  bool
	probeErr error
	// runner keeps a sandbox helper started in advance for the next
	// command, and starts the next one after each.
	runner *sandbox.Runner
	// proxy dials for the egress proxy (system resolver; it holds no
	// connection between calls).
	proxy *webtools.Client

	// toolchains found on the host, per [sandbox] toolchains selection.
	toolchains toolchainCache
	// programs are the host programs the exec gate knows by identity.
	programs programCache
}

// Name implements toolkit.Tool.
func (*Tool) Name() string { return Name }

// Capabilities implements toolkit.Tool.
func (*Tool) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapProcessExec, grants.CapPackageInstall}
}

// Start implements toolkit.Starter: it probes the kernel sandbox, once, and
// starts a helper for the policy's network mode ahead of the first command
// (a mode a later policy names gets its first helper on its first command).
func (t *Tool) Start(p *grants.Policy) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return
	}
	t.started = true
	t.proxy = webtools.NewClient(webtools.Options{})
	// The helper binary is read, checked and sealed here, once per server
	// (sandbox.DefaultHelper), and proven by the probe.
	var helper *sandbox.HelperProgram
	if _, helper, t.probeErr = sandbox.ProbeHelper(sandbox.DefaultHelper()); t.probeErr == nil {
		t.runner = sandbox.NewRunnerWith(helper, sandbox.Network(p.Sandbox.Network))
	}
}

// errNotStarted refuses calls to a tool the server did not start.
var errNotStarted = errors.New("the tool was not started, so whether the sandbox can be applied is unknown")

// state is what Start found: the runner, the proxy client, and why the
// sandbox cannot be applied (errNotStarted before Start).
func (t *Tool) state() (*sandbox.Runner, *webtools.Client, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return nil, nil, errNotStarted
	}
	return t.runner, t.proxy, t.probeErr
}

// Definition implements toolkit.Tool.
func (t *Tool) Definition(p *grants.Policy) mcp.Tool {
	where := "inside a kernel sandbox (landlock, namespaces, seccomp): it may write only beneath the workspace " + p.Workspace +
		", a private /tmp" + list(", and ", p.Sandbox.Writable) + "; read system folders and the workspace" + list(" and ", p.Sandbox.Readable) +
		"; in every git directory only objects, refs, logs, index, HEAD and the other record files are kept (config, hooks and the rest stay as they were)" +
		list("; read-only: ", p.DeniedWriteFolders()) + "; "
	switch p.Sandbox.Network {
	case "full":
		where += "it has the host's network."
	case "proxy":
		where += "its only network is an HTTP proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set to " + sandbox.ProxyURL +
			"; tools that ignore them cannot connect anywhere). Each destination is decided by the policy like http_request " +
			"(an https tunnel needs every method allowed for its host; a host that needs approval is refused, use http_request for it); " +
			"a refused one gets 403 and is listed under egress in the result. "
		if hosts := webtools.ReachableHosts(p, Name); len(hosts) > 0 {
			where += "Hosts rules allow: " + strings.Join(hosts, "; ") + ". "
		} else {
			where += "No rule allows a host. "
		}
		switch p.Mode {
		case grants.ModePermissive:
			where += "Other hosts are allowed unless a rule denies them."
		default:
			where += "Other hosts are refused."
		}
	default:
		where += "it has no network."
	}
	if !p.Sandbox.Required {
		where += " If the sandbox cannot be applied here the command runs on the host (decided again for the host)."
	}
	desc := "Run a shell command line (bash syntax) " + where +
		" Only the environment variables " + strings.Join(p.Sandbox.Env, ", ") + " are passed, plus requested secrets. " +
		fmt.Sprintf("Default timeout %s, at most %s; stdout and stderr are each capped at %d bytes (head and tail kept). ",
			p.Limits.CommandTimeout, p.Limits.CommandMaxTimeout, p.Limits.OutputMaxBytes) +
		"Every command in the line (pipelines, lists, substitutions, wrappers such as sudo or xargs) is decided by the policy before anything runs; " +
		"a command name that cannot be known before running is decided as <dynamic> at high risk; a package install (npm install, pip install, go get, ...) is also one package.install request per package and index. " +
		"In the sandbox every program the command starts (scripts, make recipes, interpreters' children) is decided again as it executes; " +
		"one that a deny rule, an ask rule naming it or critical risk refuses is killed before it runs (exit status 137) and listed under refused_programs.\n\n" + p.Summary(t.Capabilities()...)
	return mcp.NewTool(Name,
		mcp.WithDescription(desc),
		toolkit.WithSchemas(toolkit.EmbeddedSchema(schemaFiles, "execute_terminal_command.input.json"), toolkit.EmbeddedSchema(schemaFiles, "execute_terminal_command.output.json")),
		mcp.WithToolAnnotation(toolkit.Annotations("Run command", false, true, false, p.Sandbox.Network != "none")),
	)
}

func list(prefix string, items []string) string {
	if len(items) == 0 {
		return ""
	}
	return prefix + strings.Join(items, ", ")
}

// Plan implements toolkit.Tool: it parses the line into requests; nothing runs.
func (t *Tool) Plan(_ context.Context, env *toolkit.Env, raw json.RawMessage) (*toolkit.Plan, error) {
	p := env.Policy
	var args Args
	if err := toolkit.Decode(raw, &args); err != nil {
		return nil, err
	}
	if strings.TrimSpace(args.Command) == "" {
		return nil, toolkit.Argf("argument \"command\" is required")
	}
	timeout := p.Limits.CommandTimeout
	if args.TimeoutSeconds < 0 {
		return nil, toolkit.Argf("timeout_seconds must be positive")
	}
	if args.TimeoutSeconds > 0 {
		timeout = time.Duration(args.TimeoutSeconds) * time.Second
		if timeout > p.Limits.CommandMaxTimeout {
			return nil, toolkit.Argf("timeout_seconds %d is over the limit of %d", args.TimeoutSeconds, int(p.Limits.CommandMaxTimeout.Seconds()))
		}
	}
	cwd := p.Workspace
	var cwdReq *grants.Request
	if args.Cwd != "" {
		res, err := fstools.Resolve(p, args.Cwd)
		if err != nil {
			return nil, toolkit.Argf("cwd %q: %v", args.Cwd, err)
		}
		if !res.Exists {
			return nil, toolkit.Argf("cwd %q does not exist", args.Cwd)
		}
		cwd = res.Real
		if cwd != p.Workspace {
			// A working folder is decided like a path the command reads.
			r := res.Request(Name, res.ReadCapability())
			cwdReq = &r
		}
	}
	secrets, err := secretRefs(p, args.Secrets)
	if err != nil {
		return nil, err
	}
	analysis, err := cmdline.AnalyzeIn(args.Command, passedEnv(p, cwd, grants.SurfaceSandbox))
	if err != nil {
		return nil, toolkit.Argf("command: %v", err)
	}

	runner, proxy, sandboxErr := t.state()
	surface := grants.SurfaceSandbox
	if sandboxErr != nil {
		switch {
		case errors.Is(sandboxErr, errNotStarted):
			return nil, &toolkit.Refusal{Reason: grants.ReasonSandboxUnavailable, Msg: sandboxErr.Error() + "; nothing runs"}
		case p.Sandbox.Required:
			return nil, &toolkit.Refusal{Reason: grants.ReasonSandboxUnavailable,
				Msg: fmt.Sprintf("the kernel sandbox cannot be applied here (%v) and [sandbox] required is true, so nothing runs", sandboxErr)}
		}
		surface = grants.SurfaceHost
		if analysis, err = cmdline.AnalyzeIn(args.Command, passedEnv(p, cwd, surface)); err != nil {
			return nil, toolkit.Argf("command: %v", err)
		}
	}
	reqs, hiddenByDecision, err := requests(p, analysis, cwd, surface)
	if err != nil {
		return nil, err
	}
	if outbound := surface == grants.SurfaceHost || p.Sandbox.Network != "none"; outbound && seesLiftedCredential(p, surface) {
		// It can read a credential file a rule lifted and send it out.
		for i := range reqs {
			if reqs[i].Capability == grants.CapProcessExec && !reqs[i].HasClass(grants.DataCredential) {
				reqs[i].DataClasses = append(reqs[i].DataClasses, grants.DataCredential)
			}
		}
	}
	if cwdReq != nil {
		reqs = append([]grants.Request{*cwdReq}, reqs...)
	}
	for _, s := range secrets {
		reqs = append(reqs, s.request())
	}
	spec := sandbox.Spec{
		Command: args.Command, Dir: cwd, Stdin: []byte(args.Stdin),
		Writable: append([]string{p.Workspace}, p.Sandbox.Writable...), Readable: p.Sandbox.Readable,
		ReadOnly: readOnly(p), Network: sandbox.Network(p.Sandbox.Network), Timeout: timeout,
		OutputMax: int(p.Limits.OutputMaxBytes),
	}
	return &toolkit.Plan{Requests: reqs, Run: func(ctx context.Context, g toolkit.Grant) toolkit.Result {
		if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
			return toolkit.Failed("%s: cwd %s is not an existing folder; nothing ran", Name, cwd)
		}
		values, err := readSecrets(p, secrets, g)
		if err != nil {
			return toolkit.Failed("%s: %v; nothing ran", Name, err)
		}
		spec.Env = environment(p, values)
		var brokered []webtools.Secret
		for _, s := range values {
			spec.Secrets = append(spec.Secrets, s.value)
			brokered = append(brokered, webtools.Secret{Name: s.name, Value: s.value})
		}
		// Found when the command is about to run, after the decision, so
		// the files hidden are those present then. A fresh slice: the
		// policy's own lists are shared by concurrent calls.
		spec.Hidden = credentialFiles(ctx, env.MidAction, p, slices.Concat([]string{p.Workspace}, p.Sandbox.Writable, p.Sandbox.Readable))
		spec.Hidden = append(spec.Hidden, p.SecretFiles()...) // wherever they lie
		// What the package.install decision took as hidden (and did not
		// read) is hidden, whatever the scan's bound or skipped folders.
		spec.Hidden = append(spec.Hidden, hiddenByDecision...)
		// Before the toolchains add their cache roots: no repository lives there.
		git := sandbox.FindGitDirs(spec.Writable, gitScanSkipped)
		gitRoots := slices.Clone(spec.Writable)
		spec.GitDirs = git.Dirs
		spec.ReadOnly = slices.Concat(spec.ReadOnly, git.Links, includedConfigs(git.Dirs, spec.Writable))
		if toolchainsApply(p, surface) {
			done, err := t.withToolchains(ctx, env.MidAction, p, &spec)
			if err != nil {
				return toolkit.Failed("the command did not run: %v", err)
			}
			defer done()
		}
		// The state folder is proven out of reach at start-up when the server
		// keeps a secret there; should a root (a toolchain's, a workspace
		// holding the home folder) reach it all the same, it is hidden.
		if p.StateDir != "" && statedir.Reachable(p.StateDir, slices.Concat(spec.Writable, spec.Readable)) != nil {
			spec.Hidden = append(spec.Hidden, p.StateDir)
		}
		var programs *programTable
		if surface == grants.SurfaceSandbox {
			programs = t.programs.table(p, envValue(spec.Env, "PATH"))
		}
		res := run(ctx, env, spec, surface, runner, proxy, brokered, programs, pipedCodeAllowed(g.Decisions))
		if surface == grants.SurfaceSandbox && res.Tool != nil {
			noteNewRepositories(res.Tool, newGitDirs(gitRoots, git))
		}
		return res
	}}, nil
}

// seesLiftedCredential reports whether a command can read a credential file
// that an exact-path rule lifted: one inside its roots that exists (on the
// host, any that exists).
func seesLiftedCredential(p *grants.Policy, surface grants.Surface) bool {
	roots := slices.Concat([]string{p.Workspace}, p.Sandbox.Writable, p.Sandbox.Readable)
	for _, f := range p.LiftedCredentialPaths() {
		if _, err := os.Lstat(f); err == nil && (inRoots(f, roots) || surface == grants.SurfaceHost) {
			return true
		}
	}
	return false
}

// LineRequests parses a command line and returns the requests the tool
// would make for it (for explain).
func LineRequests(p *grants.Policy, line, cwd string, surface grants.Surface) ([]grants.Request, error) {
	a, err := cmdline.AnalyzeIn(line, passedEnv(p, cwd, surface))
	if err != nil {
		return nil, fmt.Errorf("command: %w", err)
	}
	reqs, _, err := requests(p, a, cwd, surface)
	return reqs, err
}

// requests turns the analysis into the requests the policy decides; hidden
// are the project files the package.install decision took as hidden from
// the command (projectIndexes), which the run must hide.
func requests(p *grants.Policy, a cmdline.Analysis, cwd string, surface grants.Surface) (_ []grants.Request, hidden []string, _ error) {
	var reqs []grants.Request
	for _, c := range a.Commands {
		// As the exec gate classifies the program, in the folder it runs
		// in (after the line's cd), which its request names.
		dir, _ := raiseByFolder(&c, cwd, p.Workspace, true)
		if c.Dir == cmdline.Dynamic {
			dir = unknownDir // an approval of it holds wherever it runs in the call
		}
		risk := max(c.Risk, grants.BaseRisk(grants.CapProcessExec, surface))
		reqs = append(reqs, grants.Request{
			Capability: grants.CapProcessExec,
			Target:     grants.Target{ToolName: Name, Resource: c.Name, Command: c.Line, Option: c.Option},
			Risk:       risk, Surface: surface, Argv: slices.Clone(c.Words), Cwd: dir,
		})
		// A program named by a path is also decided by its base name, as
		// the exec gate decides it, when a deny or ask rule names that
		// program: `deny curl` holds for `/usr/bin/curl` and `./curl`
		// before the line runs too (and on the host, where no gate runs).
		// The stricter of the two decisions wins. (Only then: any other
		// rule decides both names alike, and the prompt would list the
		// same command twice.)
		// So is a versioned or triplet-named program by its family
		// (cmdline.ProgramFamilies: `deny perl` holds for
		// perl5.36-x86_64-linux-gnu), as the gate decides it.
		// And a program whose script is known only when run (echo … | perl:
		// Name is Dynamic) by its own name: `deny perl` holds for it.
		written := c.Name
		if c.Program != "" {
			written = c.Program
		}
		base, own := programName(written), reqs[len(reqs)-1]
		for _, name := range append([]string{base}, cmdline.ProgramFamilies(base)...) {
			if name == c.Name || !p.NamesProgram(name) {
				continue
			}
			r := own
			r.Target.Resource = name
			r.Target.Command = name + strings.TrimPrefix(c.Line, written)
			// The exec gate's request names the program by that name in
			// argv too; the same words here make an approval given for
			// this request hold for the program when it runs.
			r.Argv = append([]string{name}, c.Words[1:]...)
			// A program the command may have written is decided at exec
			// with its path (Target.Exe): the line's request names the
			// same one, so an approval of `ask resource="deploy.sh"`
			// given for the line holds for ./deploy.sh when it runs
			// (review rev20d M3), and for nothing else.
			if surface == grants.SurfaceSandbox {
				r.Target.Exe = writtenExe(p, written, dir)
			}
			reqs = append(reqs, r)
		}
		if sc, ok := scriptCommand(c); ok && p.NamesProgram(programName(sc.Name)) {
			// As the exec gate decides it: sh deploy.sh is deploy.sh too.
			r := own
			r.Target.Resource = programName(sc.Name)
			r.Argv = append([]string{r.Target.Resource}, sc.Words[1:]...)
			r.Target.Command = joinWords(r.Argv)
			reqs = append(reqs, r)
		}
		reqs = append(reqs, gitLineRequests(p, c, dir, surface)...)
	}
	for _, r := range a.Redirects {
		if r.Path == cmdline.Dynamic {
			reqs = append(reqs, grants.Request{
				Capability: grants.CapProcessExec,
				Target:     grants.Target{ToolName: Name, Resource: cmdline.Dynamic, Command: "redirection to a path known only when run", Option: r.Option},
				Risk:       grants.RiskHigh, Surface: surface,
			})
			continue
		}
		path := r.Path
		if strings.HasPrefix(path, "/dev/tcp/") || strings.HasPrefix(path, "/dev/udp/") {
			// bash opens a network connection for these names: no file.
			reqs = append(reqs, grants.Request{
				Capability: grants.CapProcessExec,
				Target:     grants.Target{ToolName: Name, Resource: "bash", Command: "network redirection " + path, Option: "bash " + path[:9]},
				Risk:       grants.RiskHigh, Surface: surface,
			})
			continue
		}
		if !filepath.IsAbs(path) && path != "~" && !strings.HasPrefix(path, "~/") {
			path = filepath.Join(cwd, path)
		}
		res, err := fstools.Resolve(p, path)
		if err != nil {
			return nil, nil, toolkit.Argf("redirection %q: %v", r.Path, err)
		}
		if r.Read {
			reqs = append(reqs, res.Request(Name, res.ReadCapability()))
		}
		if r.Write {
			req := res.Request(Name, res.WriteCapability())
			req.Risk = max(req.Risk, r.Risk)
			reqs = append(reqs, req)
		}
	}
	installs, hidden, err := installRequests(p, lineShims(p, a, cwd), cwd, surface, installsAt{})
	if err != nil {
		return nil, nil, err
	}
	return append(reqs, installs...), hidden, nil
}

// installsAt says when installRequests makes its requests: before the run
// (the zero value: the line's decision) or at exec, in the exec gate, with
// the files the run hides from the command (sandbox.Spec.Hidden).
type installsAt struct {
	exec   bool
	hidden []string
}

// installRequests are the package.install requests of an analysis (a
// line's, or a program's at exec: one function, so what the line asked
// and what the gate decides cannot differ): one per package and index,
// besides the installing command's process.exec; the project's
// configuration in cwd may add indexes (projectIndexes), with the
// sandbox's pinned indexes where they hold.
//
// A project file the sandbox hides from the command (a credential file:
// .npmrc) is not what the tool reads, so it adds no index, before the run
// (hidden lists those files: the run must hide them) and at exec alike,
// where the run hides it (the gate reads files on the host, not as the
// command sees them). At exec a file taken as hidden that the run does not
// hide (written since the run began) is read: every file is then read, so
// the answer only gains hosts (fail closed).
//
// Before the run an npm tarball URL npm could not fetch where it is held
// to its registry (heldToRegistry) is refused, saying what to do instead;
// at exec it is decided like any install (audited), so nothing is refused
// undecided.
func installRequests(p *grants.Policy, a cmdline.Analysis, cwd string, surface grants.Surface, at installsAt) (reqs []grants.Request, hidden []string, _ error) {
	if surface == grants.SurfaceSandbox {
		// Where the exec gate decides npx again when it runs: a line that
		// removes the bin first is asked then (on the host, nothing would).
		a.Packages = slices.DeleteFunc(slices.Clone(a.Packages), func(pk cmdline.Package) bool { return projectBin(pk, cwd) })
	}
	if len(a.Packages) == 0 {
		return nil, nil, nil
	}
	pkgs, hidden := projectIndexes(p, cwd, surface, a.Packages, a.Commands, true)
	if at.exec && slices.ContainsFunc(hidden, func(f string) bool { return !slices.Contains(at.hidden, f) }) {
		pkgs, _ = projectIndexes(p, cwd, surface, a.Packages, a.Commands, false)
	}
	for _, pk := range pkgs {
		if !at.exec {
			if err := heldToRegistry(p, pk, surface); err != nil {
				return nil, nil, err
			}
		}
		reqs = append(reqs, grants.Request{
			Capability: grants.CapPackageInstall,
			Target:     grants.Target{ToolName: Name, Resource: pk.Name, Host: pk.Host},
			Risk:       grants.BaseRisk(grants.CapPackageInstall, surface), Surface: surface,
		})
	}
	return reqs, hidden, nil
}

// secretRef is a configured secret a call asked for: its name and the
// variable it goes in. Its value is read only in Run.
type secretRef struct{ name, env string }

type secretValue struct {
	secretRef
	value string
}

func (s secretRef) request() grants.Request {
	return grants.Request{Capability: grants.CapSecretUse,
		Target: grants.Target{ToolName: Name, Resource: s.name}, Risk: grants.BaseRisk(grants.CapSecretUse, "")}
}

// secretRefs checks that the named secrets are configured and have a value
// on the server (a call needing one that has none is refused before anyone
// is asked about it: secret_unavailable); it reads no value.
func secretRefs(p *grants.Policy, names []string) ([]secretRef, error) {
	var out []secretRef
	for _, n := range names {
		s, ok := p.Secrets[n]
		if !ok {
			return nil, toolkit.Argf("secret %q is not configured", n)
		}
		if err := s.Available(); err != nil {
			return nil, &toolkit.Refusal{Reason: grants.ReasonSecretUnavailable,
				Msg: err.Error() + "; nothing ran and nobody was asked: give it a value on the server, or run the command without it"}
		}
		envName := s.Env
		if envName == "" {
			envName = strings.ToUpper(strings.ReplaceAll(n, "-", "_"))
		}
		out = append(out, secretRef{name: n, env: envName})
	}
	return out, nil
}

// readSecrets reads the values of the secrets whose secret.use the call was
// granted; a secret not granted is an error (nothing runs).
func readSecrets(p *grants.Policy, refs []secretRef, g toolkit.Grant) ([]secretValue, error) {
	var out []secretValue
	for _, r := range refs {
		if !g.Allows(r.request()) {
			return nil, fmt.Errorf("secret %s was not granted", r.name)
		}
		v, err := p.Secrets[r.name].Value()
		if err != nil {
			return nil, err
		}
		out = append(out, secretValue{secretRef: r, value: v})
	}
	return out, nil
}

// environment is the command's whole environment: the configured names, with
// the server's values, and the requested secrets.
// passedEnv is what the variables [sandbox] env passes from the server's
// environment tell an installer (its index: PIP_INDEX_URL=…), for the
// line's analysis; on the sandbox surface, without those the toolchains
// set in their place (toolchains.Sets: the analysis assumes those); and
// the cargo aliases of a command run in cwd (aliasReader).
func passedEnv(p *grants.Policy, cwd string, surface grants.Surface) cmdline.ProgramEnv {
	env := cmdline.ProgramEnv{Aliases: aliasReader(p, cwd, surface)}
	for _, k := range p.Sandbox.Env {
		v, ok := os.LookupEnv(k)
		if !ok || !cmdline.InstallEnvWatched(k) || toolchainsApply(p, surface) && toolchains.Sets(k) {
			continue
		}
		env.Set = append(env.Set, k+"="+v)
	}
	return env
}

func environment(p *grants.Policy, secrets []secretValue) []string {
	var env []string
	for _, k := range p.Sandbox.Env {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, s := range secrets {
		env = append(env, s.env+"="+s.value)
	}
	return env
}

// readOnly lists what must stay read-only inside writable roots (the
// workspace and [sandbox] writable): folders deny rules close to writes, and
// the protected files. (Git directories are found when the command runs:
// Spec.GitDirs.)
func readOnly(p *grants.Policy) []string {
	roots := slices.Concat([]string{p.Workspace}, p.Sandbox.Writable)
	var out []string
	// Folders a deny rule closes to writes are closed to commands too, not
	// only to the redirections the policy can see.
	for _, f := range slices.Concat(p.DeniedWriteFolders(), p.Protected()) {
		if inRoots(f, roots) {
			out = append(out, f)
		}
	}
	return out
}

// inRoots reports whether the real path f is one of roots or lies beneath one.
func inRoots(f string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool {
		r = filepath.Clean(r)
		return f == r || strings.HasPrefix(f, r+"/") || r == "/"
	})
}

// newGitDirs lists the git directories (and .git files) in roots after the
// command that were not in before, found when it started: a repository the
// command made is entirely its own (the sandbox protects only those that
// existed), so the result says so.
func newGitDirs(roots []string, before sandbox.GitLayout) []string {
	after := sandbox.FindGitDirs(roots, gitScanSkipped)
	var out []string
	for _, d := range after.Dirs {
		if !slices.Contains(before.Dirs, d) {
			out = append(out, d)
		}
	}
	for _, l := range after.Links {
		if !slices.Contains(before.Links, l) {
			out = append(out, l)
		}
	}
	return out
}

// noteNewRepositories adds the repositories a command made to its result's
// text, unless the command was stopped (their names are the command's).
func noteNewRepositories(r *mcp.CallToolResult, repos []string) {
	if len(repos) == 0 || len(r.Content) == 0 {
		return
	}
	if out, ok := r.StructuredContent.(Output); !ok || out.Stopped != "" {
		return
	}
	tc, ok := r.Content[0].(mcp.TextContent)
	if !ok {
		return
	}
	tc.Text += "\nnew git repositories (made by the command: their config and hooks are the command's, and run code when git is used in them):\n" +
		strings.Join(repos[:min(len(repos), maxResultLines)], "\n")
	r.Content[0] = tc
}

// gitScanSkipped names folders the search for git directories does not
// enter: dependency caches, large and not where repositories live.
func gitScanSkipped(name string) bool {
	switch name {
	case "node_modules", ".venv", "venv", "__pycache__", ".cache", ".gradle", ".m2":
		return true
	}
	return false
}

// maxResultLines bounds the egress lines, the refused programs and the git
// entries not kept that a result lists.
const maxResultLines = 20

// lineLog collects lines for the result (egress decisions, refused
// programs), at most maxResultLines of them and a count of the rest.
type lineLog struct {
	mu    sync.Mutex
	lines []string
	more  int
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) < maxResultLines {
		l.lines = append(l.lines, line)
	} else {
		l.more++
	}
}

// count is how many lines were added.
func (l *lineLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines) + l.more
}

// stoppedCounts says how many egress decisions and refused programs a
// stopped command's result leaves out (their text is the command's).
func stoppedCounts(egress, refused *lineLog) string {
	e, r := egress.count(), refused.count()
	if e == 0 && r == 0 {
		return ""
	}
	return fmt.Sprintf("; not listed, being the command's text: %d egress proxy decisions, %d programs refused by the policy", e, r)
}

func (l *lineLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]string(nil), l.lines...)
	if l.more > 0 {
		out = append(out, fmt.Sprintf("(%d more)", l.more))
	}
	return out
}

// withProxy sets the egress proxy of a sandboxed command: each destination
// is decided (and audited) through the server's mid-action gate as
// network.http.* for this tool; anything but Allow is refused, since no
// person can be asked while the command runs. The brokered secrets the
// command holds are redacted from what the proxy decides and reports.
func withProxy(spec *sandbox.Spec, env *toolkit.Env, client *webtools.Client, log *lineLog, secrets []webtools.Secret) {
	px := &webtools.Proxy{
		Client:  client,
		Decide:  webtools.ProxyPolicy(env.MidAction, Name, webtools.TunnelPaths(env.Policy, Name)),
		OnEvent: func(e webtools.ProxyEvent) { log.add(e.String()) },
		Secrets: secrets,
	}
	spec.Proxy = px.Serve
}

// decideExec decides (and audits, with the call) one program a running
// command is about to execute: the only place the exec gate reaches the
// policy, through the server's mid-action gate at the exec stage
// (grants.(*Policy).DecideExec). Only Allow lets the program run; no person
// can be asked mid-command.
func decideExec(ctx context.Context, env *toolkit.Env, r grants.Request) grants.Decision {
	d, err := env.MidAction.Decide(ctx, r, grants.StageExec)
	if err != nil && d.Effect == grants.Allow {
		d.Effect = grants.Deny
	}
	return d
}

func run(ctx context.Context, env *toolkit.Env, spec sandbox.Spec, surface grants.Surface, runner *sandbox.Runner, proxy *webtools.Client, brokered []webtools.Secret, programs *programTable, pipedCode bool) toolkit.Result {
	stop := progress(ctx, env)
	defer stop()
	egress, refused := &lineLog{}, &lineLog{}
	if surface == grants.SurfaceSandbox {
		repos := pushRepos{protected: spec.GitDirs, writable: slices.Concat(spec.Writable, privatePlaces()), readOnly: spec.ReadOnly, roots: slices.Concat(spec.Writable, spec.Readable)}
		spec.ExecGate = execGate(ctx, env, refused, brokered, programs, spec.Hidden, callFacts{repos: repos, pipedCode: pipedCode})
		spec.IdentitySizes = programs.sizes()
		spec.ExecEnv.Names = cmdline.ExecEnvNames()
		spec.ExecEnv.Pins = hostGitPins(spec.Env, spec.ExecEnv.Pins)
		if spec.Network == sandbox.NetworkProxy {
			withProxy(&spec, env, proxy, egress, brokered)
		}
	}
	var (
		res sandbox.Result
		err error
	)
	if surface == grants.SurfaceHost {
		res, err = sandbox.RunHost(ctx, spec)
	} else {
		res, err = runner.Run(ctx, spec)
	}
	if errors.Is(err, sandbox.ErrUnavailable) {
		return toolkit.Failed("%s refused (reason %s): %v; nothing ran", Name, grants.ReasonSandboxUnavailable, err)
	}
	if err != nil && res.Duration == 0 {
		return toolkit.Failed("%s: %v", Name, err)
	}
	out := Output{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, TimedOut: res.TimedOut,
		Truncated: res.Truncated, DurationMS: res.Duration.Milliseconds(), Egress: egress.list(), RefusedPrograms: refused.list(), Stopped: res.Stopped}
	text := fmt.Sprintf("exit code %d", out.ExitCode)
	switch {
	case out.Stopped != "":
		text = "stopped: " + out.Stopped + " (its output was dropped)" + stoppedCounts(egress, refused)
		// The command may have read a file renamed in over a hidden one:
		// nothing it chose (the argv of its refused programs, the URLs it
		// asked for, the names it made in .git) reaches the model.
		out.Stdout, out.Stderr, out.Egress, out.RefusedPrograms, out.Truncated = "", "", nil, nil, false
		res.GitDropped = nil
	case out.TimedOut:
		text = fmt.Sprintf("timed out after %s and was killed", spec.Timeout)
	case err != nil:
		text = fmt.Sprintf("cancelled (%v)", err)
	}
	if out.Stdout != "" {
		text += "\nstdout:\n" + out.Stdout
	}
	if out.Stderr != "" {
		text += "\nstderr:\n" + out.Stderr
	}
	if len(out.Egress) > 0 {
		text += "\negress proxy:\n" + strings.Join(out.Egress, "\n")
	}
	if n := len(res.GitDropped); n > 0 {
		dropped := res.GitDropped[:min(n, maxResultLines)]
		text += "\nnot kept (a git directory keeps only what records work: objects, refs, logs, index, HEAD, *_HEAD, packed-refs, COMMIT_EDITMSG):\n" +
			strings.Join(dropped, "\n")
		if n > len(dropped) {
			text += fmt.Sprintf("\n(%d more)", n-len(dropped))
		}
	}
	if len(out.RefusedPrograms) > 0 {
		text += "\nprograms refused by the policy (killed before they ran, exit status 137 to their parent):\n- " +
			strings.Join(out.RefusedPrograms, "\n- ")
	}
	r := mcp.NewToolResultStructured(out, text)
	r.IsError = out.ExitCode != 0 || out.TimedOut || out.Stopped != "" || err != nil
	code := out.ExitCode
	return toolkit.Result{Tool: r, Outcome: toolkit.Outcome{ExitCode: &code, Bytes: int64(len(out.Stdout) + len(out.Stderr)), SandboxStart: res.Started}}
}

// progress sends a progress notification every few seconds while a command
// runs, when the client asked for them with a progress token.
func progress(ctx context.Context, env *toolkit.Env) func() {
	meta := env.Request.Params.Meta
	srv := mcpserver.ServerFromContext(ctx)
	if meta == nil || meta.ProgressToken == nil || srv == nil {
		return func() {}
	}
	token := meta.ProgressToken
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
					"progressToken": token, "progress": n * 5, "message": fmt.Sprintf("running for %ds", n*5),
				})
			}
		}
	}()
	return func() { close(done) }
}

// writtenExe is the path the exec gate will give (as
// sandbox.ExecEvent.Written) the program a line names by the path name,
// run from the folder cwd, when that path lies where the command can
// write: the workspace, a writable root, /tmp or /dev/shm ("" elsewhere,
// and for a name found on PATH, which the line cannot place). As the
// tracer takes it: a path with ".." as written (the kernel resolves
// symlinks before it; unknown, so written wherever it leads), else
// cleaned (a path in /dev is unknown too; one outside that is not there
// yet cannot appear where nothing is written); an ELF executable by its real path
// (a script, or a symlink to a program outside, by the path itself). A
// file that is not there yet is taken as a script. Where this differs from
// what runs, the approval does not hold: the gate refuses (fail closed).
func writtenExe(p *grants.Policy, name, cwd string) string {
	if !strings.Contains(name, "/") || !filepath.IsAbs(cwd) && !filepath.IsAbs(name) {
		return ""
	}
	path := name
	if !filepath.IsAbs(path) {
		path = cwd + "/" + path
	}
	if slices.Contains(strings.Split(path, "/"), "..") {
		return path // unknown to the tracer: written
	}
	path = filepath.Clean(path)
	places := slices.Concat([]string{p.Workspace, "/tmp", "/dev"}, p.Sandbox.Writable)
	if !inRoots(path, places) {
		return "" // (a file not there yet cannot appear where nothing is written)
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && isELF(real) && inRoots(real, places) {
		return real
	}
	return path
}

// isELF reports whether the file at the real path starts as an ELF
// executable does.
func isELF(real string) bool {
	f, err := fstools.OpenRegular(real)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "\x7fELF"
}

// hostGitPins adds to pins the git variables (cmdline.GitEnvNames) that
// env, the environment every command starts with, sets and pins lacks: a
// GIT_SSH_COMMAND the host's [sandbox] env passes is the person's, so the
// exec gate is shown it only where a program changed or dropped it (a push
// with one the command set is critical). An install variable is not added:
// the gate decides an install with the index a passed variable names,
// which it must then be shown.
func hostGitPins(env, pins []string) []string {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(cmdline.GitEnvNames(), name) && !slices.ContainsFunc(pins, func(p string) bool { return strings.HasPrefix(p, name+"=") }) {
			pins = append(slices.Clip(pins), kv)
		}
	}
	return pins
}
