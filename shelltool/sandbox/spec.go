package sandbox

import (
	"context"
	"errors"
	"net"
	"time"
)

// The one description of a command and its result, for every OS: Linux
// runs it (sandbox.go), elsewhere Run reports ErrUnavailable
// (sandbox_other.go).

// Network selects what the command may reach.
type Network string

const (
	// NetworkNone gives the command an empty network namespace with only lo
	// up; landlock (ABI >= 4) additionally denies every TCP bind and connect
	// except Spec.AllowTCPConnect ports.
	NetworkNone Network = "none"
	// NetworkFull leaves the host network namespace; landlock does not handle
	// network rights. Seccomp still denies unix, vsock, MPTCP and SCTP sockets.
	NetworkFull Network = "full"
	// NetworkProxy gives the command the empty network namespace of
	// NetworkNone plus one way out: the helper binds a TCP listener on
	// 127.0.0.1:ProxyPort inside the namespace, hands the listening socket to
	// the server (SCM_RIGHTS over a socketpair) and closes its own copy
	// before the command starts; Spec.Proxy serves it. Landlock (ABI >= 4)
	// allows TCP connect to ProxyPort only and no TCP bind, so the command
	// can neither reach another port nor listen on one; without landlock
	// network rights the namespace is still empty but for that listener.
	// The command's environment gets ProxyEnv (overriding Env).
	NetworkProxy Network = "proxy"
)

// ProxyPort is the port of the egress proxy inside the command's network
// namespace (fixed: the namespace is fresh, so it is always free, and the
// address the command sees never changes).
const ProxyPort = 3128

// ProxyURL is the proxy's address as the command's proxy variables give it.
const ProxyURL = "http://127.0.0.1:3128"

// ProxyEnv is what NetworkProxy adds to the command's environment: every
// common spelling of the proxy variables, for http and https alike (https
// goes through CONNECT), and an empty NO_PROXY so no host is tried directly
// (a direct connection would fail anyway).
func ProxyEnv() []string {
	return []string{
		"HTTP_PROXY=" + ProxyURL, "HTTPS_PROXY=" + ProxyURL, "ALL_PROXY=" + ProxyURL,
		"http_proxy=" + ProxyURL, "https_proxy=" + ProxyURL, "all_proxy=" + ProxyURL,
		"NO_PROXY=", "no_proxy=",
	}
}

// ProxyHandler serves the egress proxy for one command. Run calls it in a
// goroutine of its own, with the listening socket (127.0.0.1:ProxyPort in
// the command's namespace), once the helper has handed it over and before
// the command starts. When the command ends (exit, timeout, cancellation)
// Run cancels ctx and closes ln; the handler must then close every
// connection it holds and return: Run waits for it before returning.
type ProxyHandler func(ctx context.Context, ln net.Listener)

// Defaults applied by Run and RunHost to zero Spec fields.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultOutputMax   = 64 << 10
	DefaultFileSizeMax = 1 << 30
	DefaultTmpSize     = 1 << 30
	DefaultPidsMax     = 512
	DefaultMemoryMax   = 2 << 30
	// RedactedMarker replaces every occurrence of a secret in the output.
	RedactedMarker = "[REDACTED:secret]"
)

// Spec describes one command.
type Spec struct {
	// Shell is an absolute path; default /bin/bash, else /bin/sh.
	Shell string
	// Command is run as `Shell -c Command`.
	Command string
	// Dir is the absolute working directory. It must be inside Writable or
	// Readable (or be "/tmp", the private temporary folder). Default: the
	// first Writable root, else /tmp.
	Dir string
	// Env is the exact environment (KEY=VALUE); nothing is inherited.
	Env []string
	// Stdin is delivered on the command's standard input (then EOF).
	Stdin []byte
	// Writable are absolute roots the command may write beneath (the
	// workspace and extras). A private /tmp and /dev/shm are always added.
	// Roots that do not exist are ignored. "/" is refused.
	Writable []string
	// Readable are extra absolute roots the command may read and execute
	// beneath. Roots that do not exist are ignored.
	Readable []string
	// ReadOnly are absolute paths inside writable roots that stay read-only
	// (.git/hooks, .git/config, protected files): read-only bind mounts.
	// Paths that do not exist are ignored (see the package security model).
	ReadOnly []string
	// Hidden are absolute paths (credential files inside the roots) that
	// become empty, unreadable placeholders, as /etc's secrets do. Paths
	// that do not exist are ignored.
	Hidden []string
	// GitDirs are git directories inside Writable (FindGitDirs, parents
	// first) in which only what records work is kept (see gitdirs.go).
	GitDirs []string
	// Home, when set, is a folder the helper makes, empty and mode 0700,
	// in the private /tmp once that is mounted: a HOME for the command that
	// costs no work on the host's file system and is gone with the sandbox.
	// It must lie directly beneath /tmp, and no Writable or Readable root
	// may hold it or lie beneath it (PrivateHome picks such a folder).
	// Sandboxed runs only.
	Home string
	// Network is "none" (default), "full" or "proxy" (Proxy is then
	// required).
	Network Network
	// AllowTCPConnect lists TCP ports the command may connect to when
	// Network is "none" or "proxy" (inside the empty namespace only lo
	// exists). Needs landlock ABI >= 4. NetworkProxy adds ProxyPort.
	AllowTCPConnect []uint16
	// ExecGate, when set, decides every program the command starts (its
	// shell excepted) before the program's first instruction; a refused one
	// is killed (SIGKILL). Without it programs are not traced. See the
	// package doc, "Exec gate".
	ExecGate ExecGate
	// IdentitySizes are the sizes of the host programs the ExecGate
	// compares written executables with by content (ExecEvent.Written):
	// the tracer computes the SHA-256 of such an executable only when its
	// size is one of these, so other programs the command builds cost no
	// hashing.
	IdentitySizes []int64
	// ExecEnv are the variables of each program's environment the
	// ExecGate is shown (ExecEvent.Env): none when empty.
	ExecEnv EnvWatch
	// Proxy serves the egress proxy when Network is "proxy"; ignored
	// otherwise. The sandbox hands over the listener and nothing else: every
	// decision about where a connection may go is the handler's.
	Proxy ProxyHandler
	// Timeout kills the whole command when reached (default 30 s).
	Timeout time.Duration
	// OutputMax caps stdout and stderr each, in bytes (default 64 KiB); the
	// head and the tail are kept with a marker in between.
	OutputMax int
	// KillAfterOutput kills the command when either stream has produced more
	// than this many bytes (runaway output). Default max(64*OutputMax, 4 MiB).
	KillAfterOutput int64
	// Secrets are values replaced by RedactedMarker in the output. Empty
	// values are ignored.
	Secrets []string
	// FileSizeMax is RLIMIT_FSIZE (default 1 GiB; sandboxed runs only).
	FileSizeMax int64
	// TmpSize is the size of the private /tmp tmpfs (default 1 GiB).
	TmpSize int64
	// PidsMax and MemoryMax apply when a per-command cgroup can be made
	// (defaults 512 and 2 GiB).
	PidsMax   int
	MemoryMax int64

	// simulateNoLandlock makes the helper behave as on a kernel without
	// landlock (tests only).
	simulateNoLandlock bool
	// simulateNoPtrace makes the helper behave as where ptrace is refused
	// (Yama ptrace_scope 3): the exec gate cannot be applied (tests only).
	simulateNoPtrace bool
	// etcDir and etcSecrets replace /etc and etcSecrets (tests only).
	etcDir     string
	etcSecrets []string
}

// Result is what happened.
type Result struct {
	// ExitCode is the shell's exit code; 128+N when it was killed by signal N.
	ExitCode int
	Stdout   string
	Stderr   string
	// TimedOut is set when Timeout killed the command.
	TimedOut bool
	// Truncated is set when either stream exceeded OutputMax.
	Truncated bool
	// OutputExceeded is set when KillAfterOutput killed the command.
	OutputExceeded bool
	Duration       time.Duration
	// Signal names the signal that ended the shell ("SIGKILL"), if any.
	Signal string
	// Cgroup tells whether a per-command cgroup (pids.max, memory.max) was
	// applied.
	Cgroup bool
	// GitDropped lists what the command wrote in a git directory (Spec.GitDirs)
	// that was not kept: anything but the record files.
	GitDropped []string
	// CPU is the user+system time of the command's processes that were
	// reaped (with the sandbox helper's own).
	CPU time.Duration
	// GateCPU is the exec gate's tracer thread's own CPU time, part of
	// CPU (0 without the gate): the reads, waits and round trips of every
	// stop of the command's processes.
	GateCPU time.Duration
	// Stopped, when set, says why the sandbox killed the command before
	// it ended (a hidden file or read-only carve-out was replaced or
	// removed on the host, so its mount was lost, or the server killed a
	// command with hidden files before PID 1 could say): Stdout, Stderr
	// and GitDropped are then empty, whatever the command wrote being
	// dropped, and nothing it staged in .git is merged.
	Stopped string
	// Started is the time from starting the sandbox (handing a warm helper
	// the command) to the command running; 0 on the host or when unknown.
	Started time.Duration
}

// ErrUnavailable means the sandbox could not be applied: nothing ran.
var ErrUnavailable = errors.New("sandbox unavailable")

// EnvWatch says which variables of a program's environment the exec gate
// is shown (ExecEvent.Env, ExecEvent.EnvUnset): those that change what a
// program does without showing in its argv (the index an installer
// fetches from: PIP_INDEX_URL, npm_config_registry, GOPROXY, …), as the
// program's own stack holds them at its exec (the environment it will
// read, read with argv: execstack.go). Pins are settings the command is
// given (NAME=value): each is reported only when a program's environment
// changes or lacks it, so a program that inherits them costs nothing.
type EnvWatch struct {
	// Names are variable names compared without regard to ASCII case
	// (npm reads npm_config_* in any case); a name ending in "*" is a
	// prefix.
	Names []string `json:"names,omitempty"`
	// Pins are NAME=value settings of the command's environment.
	Pins []string `json:"pins,omitempty"`
}
