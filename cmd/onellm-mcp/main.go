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
	"strconv"
	"strings"
	"syscall"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/server"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// Set with -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = ""
)

const usage = `usage:
  onellm-mcp serve   [--config FILE] [--http ADDR]   serve MCP (stdio unless --http)
  onellm-mcp check   [--config FILE]                 validate a config, print the effective rules
  onellm-mcp explain [--config FILE] CAPABILITY TARGET...
                                                     decide one request and say why
  onellm-mcp version                                 version, commit, Go, landlock ABI
`

func main() {
	// The sandbox helper is this binary re-executed: dispatch before anything
	// else runs.
	sandbox.MaybeRunHelper()
	closeInheritedFDsOnExec()
	server.Version = version
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

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
	case "version", "--version", "-v":
		err = printVersion(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "onellm-mcp: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "onellm-mcp: %v\n", err)
		}
		return 1
	}
	return 0
}

// loadPolicy loads --config, or the embedded default for the current folder.
func loadPolicy(configPath string, stderr io.Writer, announce bool) (*grants.Policy, error) {
	var cfg *grants.Config
	var err error
	if configPath == "" {
		wd, werr := os.Getwd()
		if werr != nil {
			return nil, werr
		}
		cfg, err = grants.LoadDefault(wd)
	} else {
		cfg, err = grants.LoadFile(configPath)
	}
	if err != nil {
		return nil, err
	}
	exe, _ := os.Executable()
	p, err := grants.Compile(cfg, grants.CompileOptions{Executable: exe})
	if err != nil {
		return nil, err
	}
	if configPath == "" && announce {
		fmt.Fprintf(stderr, "onellm-mcp: no --config given; using the embedded default: profile %s, workspace %s\n", p.Profile, p.Workspace)
	}
	return p, nil
}

func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := fs.String("config", "", "config file (TOML); the embedded default when empty")
	return fs, cfg
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("serve", stderr)
	httpAddr := fs.String("http", "", "serve streamable HTTP at ADDR (e.g. 127.0.0.1:8080) instead of stdio")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	p, err := loadPolicy(*cfgPath, stderr, true)
	if err != nil {
		return err
	}
	logger := log.New(stderr, "onellm-mcp: ", 0)
	s, err := server.Open(p, logger)
	if err != nil {
		return err
	}
	defer s.Close()
	// The live heap is a few MiB, so the default GC target makes a busy
	// server collect every few hundred calls: a higher target (bounded by a
	// soft memory limit) buys ~25% more calls per second over HTTP. A GOGC
	// or GOMEMLIMIT the host sets wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(512 << 20)
	}
	// Start-up leaves garbage (config parsing, schema generation, package
	// initialisers); hand it back to the OS once, off the serving path, so an
	// idle server stays small.
	go debug.FreeOSMemory()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *cfgPath != "" {
		// A changed config is compiled exactly as at start-up; a bad one is
		// refused and the policy in force stays.
		reload := func() (*grants.Policy, error) { return loadPolicy(*cfgPath, stderr, false) }
		if err := s.WatchConfig(ctx, *cfgPath, reload); err != nil {
			logger.Printf("%v; changes to the config need a restart", err)
		}
	}
	if *httpAddr != "" {
		return serveHTTP(ctx, s, p, *httpAddr, logger)
	}
	err = s.ServeStdio(ctx, stdin, stdout)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// serveHTTP serves streamable HTTP at addr until ctx ends.
func serveHTTP(ctx context.Context, s *server.Server, p *grants.Policy, addr string, logger *log.Logger) error {
	loopback := server.IsLoopbackAddr(addr)
	auth, err := server.ResolveHTTPAuth(p.HTTP, loopback, os.Getenv)
	if err != nil {
		return fmt.Errorf("serve --http %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve --http: %w", err)
	}
	for _, line := range strings.Split(strings.TrimRight(server.HTTPBanner(server.EndpointURL(ln.Addr()), auth), "\n"), "\n") {
		logger.Print(line)
	}
	return s.ServeHTTP(ctx, ln, server.HTTPOptions{Token: auth.Token, NoAuth: auth.NoAuth, Loopback: loopback})
}

func check(args []string, stdout, stderr io.Writer) error {
	fs, cfgPath := newFlags("check", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	p, err := loadPolicy(*cfgPath, stderr, false)
	if err != nil {
		return err
	}
	src := p.ConfigPath
	if src == "" {
		src = "(embedded default)"
	}
	fmt.Fprintf(stdout, "config:    %s: ok\nprofile:   %s\nmode:      %s\nworkspace: %s\naudit:     %s\nsandbox:   required=%t network=%s\n",
		src, p.Profile, p.Mode, p.Workspace, p.AuditPath, p.Sandbox.Required, p.Sandbox.Network)
	fmt.Fprintf(stdout, "built in, above every rule:\n")
	fmt.Fprintf(stdout, "  deny   %-45s never written or deleted: %s\n", grants.RuleProtectedPath, strings.Join(p.Protected(), ", "))
	fmt.Fprintf(stdout, "  deny   %-45s credential files and flows, unless an allow rule names the exact path or host\n", grants.RuleDenyCredentialFlow)
	fmt.Fprintf(stdout, "  deny   %-45s .git/hooks/** and .git/config writes, unless a rule names the exact path\n", grants.RuleGitCodeFiles)
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

func printVersion(stdout io.Writer) error {
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
	if n, err := landlockABI(); err == nil && n > 0 {
		abi = fmt.Sprint(n)
	}
	fmt.Fprintf(stdout, "onellm-mcp %s\ncommit:   %s\ngo:       %s %s/%s\nlandlock: ABI %s\n", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH, abi)
	return nil
}

// closeInheritedFDsOnExec marks every descriptor above stderr close-on-exec:
// a host that started the server with extra open descriptors must not see
// them handed to the commands the server runs.
func closeInheritedFDsOnExec() {
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
