// Command onellm-mcp serves the built-in tools over MCP under the host's
// policy, and checks and explains that policy.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/imagepages"
	"github.com/onellm/onellm-mcp/server"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// Set with -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = ""
)

// usage is `onellm-mcp help`. A new subcommand gets a line here and a case
// in run.
const usage = `onellm-mcp serves read_file, apply_patch, execute_terminal_command,
http_request and ask_user over MCP, under a policy from your config.

usage: onellm-mcp COMMAND [flags]

commands:
  init      write onellm-mcp.toml in this folder and print what to paste into your MCP host
  serve     serve MCP (stdio unless --http)
  check     validate a config, run its [[tests]], print the effective rules
  explain   decide one request and say why (exit 0 allow, 1 deny, 3 ask, 2 usage or config error)
  doctor    what this machine gives the sandbox, which toolchains commands see, what will not work
  version   version, commit, Go, landlock ABI, exec gate
  audit     verify, prove, key, replay: check and use the audit log (onellm-mcp audit help)
  help      this text; "onellm-mcp help COMMAND" or "onellm-mcp COMMAND --help" for a command's flags

Start here: onellm-mcp init --host claude-code   (or claude-desktop, cursor, vscode, http)
`

func main() {
	// The sandbox helper is this binary re-executed when the helper binary
	// (cmd/onellm-sandbox) is not used: dispatch before anything else runs.
	sandbox.MaybeRunHelper()
	closeInheritedFDsOnExec()
	server.Version = version
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and turns its error into the exit code:
// 0 done (or help shown), 2 a usage mistake (the command's usage is
// printed), an exitError's own code, 1 any other failure.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(args[1:], stdin, stdout, stderr)
	case "check":
		err = check(args[1:], stdout, stderr)
	case "explain":
		err = explain(args[1:], stdout, stderr)
	case "init":
		err = initConfig(args[1:], stdout, stderr)
	case "doctor":
		err = doctor(args[1:], stdout, stderr)
	case "audit":
		return runAudit(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		err = printVersion(args[1:], stdout)
	case "help", "-h", "--help", "-help":
		err = help(args[1:], stdin, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "onellm-mcp: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return exitCode(err, stderr)
}

// help prints the overview, or a command's usage.
func help(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, usage)
		return nil
	case len(args) > 1:
		return usageErr(usage, "help takes one command name")
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	if code := run([]string{args[0], "--help"}, stdin, stdout, stderr); code != 0 {
		return exitError{code: code}
	}
	return nil
}

// errHelpShown: a command's --help printed its usage; exit 0.
var errHelpShown = errors.New("help shown")

// usageError is a mistake in how a command was called; its usage follows
// the message on stderr and the exit code is 2.
type usageError struct {
	usage string
	err   error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErr(usage, format string, args ...any) error {
	return &usageError{usage: usage, err: fmt.Errorf(format, args...)}
}

// exitError ends the command with code, after printing err (when set).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e exitError) Unwrap() error { return e.err }

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var ee exitError
	switch {
	case err == nil, errors.Is(err, errHelpShown), errors.Is(err, flag.ErrHelp):
		return 0 // flag.ErrHelp: a plain flag set printed its usage itself
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "onellm-mcp: %v\n\n%s", ue.err, ue.usage)
		return 2
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "onellm-mcp: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "onellm-mcp: %v\n", err)
	return 1
}

// command is a subcommand's flags and usage text.
type command struct {
	*flag.FlagSet
	synopsis, about string
}

// newCommand makes a subcommand's flag set. synopsis is its one-line form,
// about what it does (and any examples).
func newCommand(name, synopsis, about string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{FlagSet: fs, synopsis: synopsis, about: about}
}

// newFlags is the plain flag set with --config that subcommands used before
// newCommand (kept so a subcommand written against it still builds; new
// ones use newCommand, which gives --help and exit code 2 for mistakes).
func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := fs.String("config", "", "config file (TOML); the embedded default when empty")
	return fs, cfg
}

// configFlag adds --config.
func (c *command) configFlag() *string {
	return c.String("config", "", "the config `FILE` (TOML); without it, the embedded default (profile interactive-dev, this folder)")
}

// usage renders the command's usage with every flag, as --name.
func (c *command) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: onellm-mcp %s\n", c.synopsis)
	if c.about != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(c.about, "\n"))
	}
	first := true
	c.VisitAll(func(f *flag.Flag) {
		if first {
			b.WriteString("\nflags:\n")
			first = false
		}
		name, text := flag.UnquoteUsage(f)
		left := "  --" + f.Name
		if name != "" {
			left += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" {
			text += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(&b, "%-24s %s\n", left, text)
	})
	fmt.Fprintf(&b, "%-24s %s\n", "  -h, --help", "print this help")
	return b.String()
}

// parse parses args: --help or -h anywhere prints the usage to stdout
// (errHelpShown); an unknown flag is a usageError. maxArgs < 0 allows any
// number of arguments.
func (c *command) parse(args []string, stdout io.Writer, maxArgs int) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprint(stdout, c.usage())
			return errHelpShown
		}
	}
	if err := c.Parse(args); err != nil {
		return &usageError{usage: c.usage(), err: fmt.Errorf("%s: %v", c.Name(), err)}
	}
	if maxArgs >= 0 && c.NArg() > maxArgs {
		return &usageError{usage: c.usage(), err: fmt.Errorf("%s: unexpected argument %q", c.Name(), c.Arg(maxArgs))}
	}
	return nil
}

// loadPolicy loads --config, or the embedded default for the current
// folder, compiles it and runs its [[tests]]: a config whose tests fail is
// refused like one with a bad key.
func loadPolicy(configPath string, stderr io.Writer, announce bool) (*grants.Policy, error) {
	p, _, err := loadPolicyText(configPath, stderr, announce)
	return p, err
}

// loadPolicyText is loadPolicy that also returns the config text the
// policy was compiled from.
func loadPolicyText(configPath string, stderr io.Writer, announce bool) (*grants.Policy, []byte, error) {
	p, _, text, err := loadPolicyTests(configPath)
	if err != nil {
		return nil, nil, err
	}
	if configPath == "" && announce {
		fmt.Fprintf(stderr, "onellm-mcp: no --config given; using the embedded default: profile %s, workspace %s\n", p.Profile, p.Workspace)
	}
	return p, text, nil
}

// loadPolicyTests is loadPolicy that also returns every test's result and
// the config text.
func loadPolicyTests(configPath string) (*grants.Policy, []grants.TestResult, []byte, error) {
	var cfg *grants.Config
	var err error
	if configPath == "" {
		wd, werr := os.Getwd()
		if werr != nil {
			return nil, nil, nil, werr
		}
		cfg, err = grants.LoadDefault(wd)
	} else {
		cfg, err = grants.LoadFile(configPath)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	exe, _ := os.Executable()
	p, err := grants.Compile(cfg, grants.CompileOptions{Executable: exe, Helper: sandbox.HelperBinaryPath(exe)})
	if err != nil {
		return nil, nil, nil, err
	}
	results := p.RunTests(testRequests)
	if err := grants.TestsError(results); err != nil {
		return nil, results, nil, err
	}
	return p, results, cfg.Text(), nil
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := newCommand("serve", "serve [--config FILE] [--http ADDR]",
		"Serve the tools over MCP: stdio (what a host that starts the server uses) unless --http.\n"+
			"The config is reloaded when it changes on disk (write it atomically: a temp file renamed over it).")
	cfgPath := cmd.configFlag()
	httpAddr := cmd.String("http", "", "serve streamable HTTP at `ADDR` (e.g. 127.0.0.1:8080, path /mcp) instead of stdio")
	if err := cmd.parse(args, stdout, 0); err != nil {
		return err
	}
	p, text, err := loadPolicyText(*cfgPath, stderr, true)
	if err != nil {
		return err
	}
	logger := log.New(stderr, "onellm-mcp: ", 0)
	s, err := server.Open(p, logger)
	if err != nil {
		return err
	}
	defer s.Close()
	setGCTarget(*httpAddr != "", os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s.AfterAuditOpen(func() {
		if *cfgPath != "" {
			// A changed config is compiled exactly as at start-up; a bad
			// one is refused and the policy in force stays. The watch
			// starts after the first answer, once the audit log is open,
			// whether or not the tools have started; WatchConfig compares
			// the file with the text loaded above, so a change made before
			// it started is applied all the same.
			reload := func() (*grants.Policy, error) { return loadPolicy(*cfgPath, stderr, false) }
			if err := s.WatchConfig(ctx, *cfgPath, text, reload); err != nil {
				logger.Printf("%v; changes to the config need a restart", err)
			}
		}
	})
	s.AfterStart(func() {
		// Start-up leaves garbage (config parsing, schema generation,
		// package initialisers, the sandbox probe) and most of the
		// executable mapped (the code and tables it ran); hand both back
		// to the OS once, after the first answer and the tools' start, so
		// an idle server stays small and the first answer does not wait
		// for a collection.
		release := func() {
			debug.FreeOSMemory()
			releaseImagePages(logger)
		}
		release()
		setProcs(*httpAddr != "", os.Getenv)
		ticker := time.NewTicker(idleRelease)
		go func() {
			defer ticker.Stop()
			releaseWhenIdle(ctx.Done(), ticker.C, s.Calls, release)
		}()
	})
	if *httpAddr != "" {
		return serveHTTP(ctx, s, p, *httpAddr, logger)
	}
	err = s.ServeStdio(ctx, stdin, stdout)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// releaseImagePages unmaps the executable's pages start-up left mapped
// (imagepages.Release: ~13 MiB of the ~18 MiB resident after start-up; the
// calls that follow map back what they run). A failure costs memory only:
// it is logged.
func releaseImagePages(logger *log.Logger) {
	if _, err := imagepages.Release(); err != nil {
		logger.Printf("%v; the executable's start-up pages stay mapped", err)
	}
}

// idleRelease is how long calls must have stopped before releaseWhenIdle
// hands memory back again.
const idleRelease = 30 * time.Second

// releaseWhenIdle calls release once each time the tool calls stop: at the
// first tick that finds calls() where the previous tick left it, after a
// tick that found it moved; until done ends. Calls map code and tables back
// in (after 2,000 small reads ~9 MiB of the executable's pages and ~6 MiB
// of heap garbage are resident again); a server left idle hands them back,
// and one that keeps being called is never interrupted by it. A call still
// running (a long command) is not disturbed: what it needs is mapped again.
func releaseWhenIdle(done <-chan struct{}, tick <-chan time.Time, calls func() uint64, release func()) {
	w := idleWatch{seen: calls(), released: true} // start-up released already
	for {
		select {
		case <-done:
			return
		case <-tick:
			if w.tick(calls()) {
				release()
			}
		}
	}
}

// idleWatch tells, tick by tick, when the calls have stopped.
type idleWatch struct {
	seen     uint64 // the call count the last tick found
	released bool   // released since the count last moved
}

// tick takes the call count a tick found and reports whether to release
// now: the count stayed where the previous tick found it, and it had moved
// since the last release.
func (w *idleWatch) tick(n uint64) bool {
	switch {
	case n != w.seen:
		w.seen, w.released = n, false
	case !w.released:
		w.released = true
		return true
	}
	return false
}

// setGCTarget sets the garbage collector's target for the transport; a
// GOGC or GOMEMLIMIT the host sets wins.
//
// The live heap is a few MiB, so the default GOGC makes a busy server
// collect every few hundred calls: GOGC=400 buys ~25% more calls per
// second over HTTP and ~8% less CPU per small stdio call. Over stdio one
// client is served, and a large result (a 1 MiB read is ~5 MiB of garbage,
// most of it mcp-go's encoding) would let that target grow the process to
// ~70 MiB resident: a soft limit of 14 MiB keeps it under 30 MiB. A fixed
// limit that close to the live heap makes the collector run without pause
// once many calls are in flight (100 pending approvals: 1.3–11 ms per small
// read instead of 0.3 ms), so over stdio the limit follows the live heap
// (heapFollower): never under 14 MiB, never under what is in use plus 2 MiB. Over
// HTTP many sessions share the heap: the limit is 512 MiB.
func setGCTarget(http bool, getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	if http {
		debug.SetMemoryLimit(512 << 20)
		return
	}
	// The floor now, the follower from the first collection on: at start
	// the heap is a few MiB, so the follower's limit is the floor, and
	// reading the runtime's metrics the first time (~0.1 ms: the runtime
	// builds its metric tables) stays off the path to the first answer.
	f := &heapFollower{floor: stdioMemoryFloor}
	debug.SetMemoryLimit(f.floor)
	f.arm()
}

// setProcs runs the stdio server on one processor from the tools' start
// on; a GOMAXPROCS the host sets wins, and HTTP keeps the default.
//
// Over stdio one client's calls come one message at a time, and each one
// the reader hands to a worker goroutine: with an idle processor beside
// it, the runtime wakes an OS thread to look for work, which finds none
// and goes back to sleep (a futex wake and wait, a spin, a poll per call).
// On one processor the hand-off is a goroutine switch: ~10% less CPU per
// small call on a 2-core machine, more throughput with four servers
// sharing it. A call blocked in a system call or a child process still
// lets the others run (the runtime hands the processor on). It is set
// after the start-up work (the sandbox probe, the helper's hash), which
// otherwise competes with the first call on the one processor.
func setProcs(http bool, getenv func(string) string) {
	if n := stdioProcs(http, getenv); n > 0 {
		runtime.GOMAXPROCS(n)
	}
}

// stdioProcs is the GOMAXPROCS setProcs sets; 0 leaves it.
func stdioProcs(http bool, getenv func(string) string) int {
	if http || getenv("GOMAXPROCS") != "" {
		return 0
	}
	return 1
}

// stdioMemoryFloor is the smallest soft memory limit over stdio.
const stdioMemoryFloor = 14 << 20

// heapFollower keeps the soft memory limit at max(floor, what the runtime
// holds outside the heap's objects + the live heap + headroom), re-read
// after every collection: the limit bounds garbage without making the
// collector chase memory that is in use (goroutine stacks and buffers of
// calls in flight, the live heap). The headroom is fixed, not a multiple
// of the live heap: a 1 MiB read is ~4.5 MiB live for a moment, and a
// limit that doubled it would let the garbage of the next reads grow the
// process past 30 MiB.
type heapFollower struct {
	floor int64
	// collected, when set, is called after each adjustment that a
	// collection triggered (tests).
	collected func(limit int64)
	// stopped ends the following (tests: a follower left armed would set
	// the limit after every later collection).
	stopped atomic.Bool
}

// gcSentinel is garbage as soon as it is made: its finalizer runs after
// the next collection and arms the next one.
type gcSentinel struct{ f *heapFollower }

func (f *heapFollower) arm() {
	runtime.SetFinalizer(&gcSentinel{f}, func(s *gcSentinel) {
		if s.f.stopped.Load() {
			return
		}
		limit := s.f.adjust()
		if s.f.collected != nil {
			s.f.collected(limit)
		}
		s.f.arm()
	})
}

// followedMetrics are the runtime figures followLimit reads, in its order.
var followedMetrics = [...]string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
}

// adjust sets the limit from the runtime's current figures and returns it.
func (f *heapFollower) adjust() int64 {
	var samples [len(followedMetrics)]metrics.Sample
	for i, name := range followedMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples[:])
	var v [len(followedMetrics)]int64
	for i, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = int64(min(s.Value.Uint64(), 1<<40))
		}
	}
	limit := followLimit(f.floor, v[0], v[1]-v[2]-v[3]-v[4])
	debug.SetMemoryLimit(limit)
	return limit
}

// followLimit is max(floor, other + live + headroom): other is what the
// runtime holds besides heap objects and free pages (stacks, fragmentation,
// its own structures).
func followLimit(floor, live, other int64) int64 {
	return max(floor, max(other, 0)+max(live, 0)+followHeadroom)
}

// followHeadroom is the garbage the stdio limit allows beyond what is in
// use.
const followHeadroom = 2 << 20

// serveHTTP serves streamable HTTP at addr until ctx ends.
func serveHTTP(ctx context.Context, s *server.Server, p *grants.Policy, addr string, logger *log.Logger) error {
	loopback := server.IsLoopbackAddr(addr)
	warning, err := server.CheckHTTPBind(addr, p.HTTP)
	if err != nil {
		return err
	}
	auth, err := server.ResolveHTTPAuth(p.HTTP, loopback, os.Getenv)
	if err != nil {
		return fmt.Errorf("serve --http %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve --http: %w", err)
	}
	if warning != "" {
		logger.Print(warning)
	}
	endpoint := server.EndpointURL(ln.Addr())
	if p.HTTP.TLSCert != "" {
		endpoint = "https://" + strings.TrimPrefix(endpoint, "http://")
	}
	for _, line := range strings.Split(strings.TrimRight(server.HTTPBanner(endpoint, auth), "\n"), "\n") {
		logger.Print(line)
	}
	return s.ServeHTTP(ctx, ln, server.HTTPOptions{Token: auth.Token, NoAuth: auth.NoAuth, OAuth: auth.OAuth, Loopback: loopback,
		TLSCert: p.HTTP.TLSCert, TLSKey: p.HTTP.TLSKey})
}

func check(args []string, stdout, stderr io.Writer) error {
	cmd := newCommand("check", "check [--config FILE]",
		"Validate a config exactly as serve loads it, run its [[tests]] (pass/fail each), and print\n"+
			"the built-in protections and the effective rules, profile first, with their ids.\n"+
			"Exit 0 when the config would be accepted, 1 when it would be refused.")
	cfgPath := cmd.configFlag()
	if err := cmd.parse(args, stdout, 0); err != nil {
		return err
	}
	p, results, _, err := loadPolicyTests(*cfgPath)
	printTests := func() {
		if len(results) > 0 {
			fmt.Fprintf(stdout, "tests ([[tests]] in the config):\n")
			for _, r := range results {
				fmt.Fprintf(stdout, "  %s\n", r.Summary())
			}
		}
	}
	if err != nil {
		printTests()
		return err
	}
	defer printTests()
	src := p.ConfigPath
	if src == "" {
		src = "(embedded default)"
	}
	fmt.Fprintf(stdout, "config:    %s: ok\nprofile:   %s\nmode:      %s\nworkspace: %s\naudit:     %s\nsandbox:   required=%t network=%s\n",
		src, p.Profile, p.Mode, p.Workspace, p.AuditPath, p.Sandbox.Required, p.Sandbox.Network)
	fmt.Fprintf(stdout, "built in, above every rule:\n")
	fmt.Fprintf(stdout, "  deny   %-45s never written or deleted: %s\n", grants.RuleProtectedPath, strings.Join(p.Protected(), ", "))
	fmt.Fprintf(stdout, "  deny   %-45s credential files and flows, unless an allow rule names the exact path or host\n", grants.RuleDenyCredentialFlow)
	fmt.Fprintf(stdout, "  deny   %-45s writes to a git directory's config, hooks/, info/, commondir, gitdir or any new top-level file (objects, refs, logs, index, HEAD, *_HEAD, packed-refs, COMMIT_EDITMSG stay writable), unless a rule names the exact path\n", grants.RuleGitCodeFiles)
	fmt.Fprintf(stdout, "  deny   %-45s hosts resolving to private addresses, unless a rule naming the host sets allow_private\n", grants.RuleDenyPrivateAddress)
	fmt.Fprintf(stdout, "rules (deny, then ask, then allow; profile rules first):\n")
	for _, r := range p.Rules() {
		fmt.Fprintf(stdout, "  %s\n", r)
	}
	if shadowed := p.Shadowed(); len(shadowed) > 0 {
		fmt.Fprintf(stdout, "warnings:\n")
		for _, w := range shadowed {
			fmt.Fprintf(stdout, "  %s\n", w)
		}
	}
	return nil
}

func printVersion(args []string, stdout io.Writer) error {
	cmd := newCommand("version", "version", "Print the version, the commit, the Go version and the landlock ABI this kernel offers.")
	if err := cmd.parse(args, stdout, 0); err != nil {
		return err
	}
	c := commit
	if c == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	if c == "" {
		c = "unknown"
	}
	abi := "unavailable"
	if n, err := sandbox.LandlockABI(); err == nil && n > 0 {
		abi = fmt.Sprint(n)
	}
	// The sandbox with its exec gate, proven by running a command in it.
	gate := "available"
	_, helper, err := sandbox.ProbeHelper(sandbox.DefaultHelper())
	if err != nil {
		gate = "unavailable (" + err.Error() + ")"
	}
	fmt.Fprintf(stdout, "onellm-mcp %s\ncommit:   %s\ngo:       %s %s/%s\nlandlock: ABI %s\nexec gate: %s\nhelper:   %s\n", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH, abi, gate, helper)
	return nil
}

// closeInheritedFDsOnExec marks every descriptor above stderr close-on-exec:
// a host that started the server with extra open descriptors must not see
// them handed to the commands the server runs. One close_range(2) call
// does it (Linux 5.11); older kernels get the listing of /proc/self/fd.
func closeInheritedFDsOnExec() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
