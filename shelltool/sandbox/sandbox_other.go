//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"time"
)

// Network selects what the command may reach.
type Network string

const (
	NetworkNone  Network = "none"
	NetworkFull  Network = "full"
	NetworkProxy Network = "proxy"
)

// Spec describes one command (see the Linux documentation).
type Spec struct {
	Shell, Command, Dir                  string
	Env                                  []string
	Stdin                                []byte
	Writable, Readable, ReadOnly, Hidden []string
	GitDirs                              []string
	Network                              Network
	AllowTCPConnect                      []uint16
	Timeout                              time.Duration
	OutputMax                            int
	KillAfterOutput                      int64
	Secrets                              []string
	FileSizeMax, TmpSize                 int64
	PidsMax                              int
	MemoryMax                            int64
	Proxy                                ProxyHandler
	ExecGate                             ExecGate
}

// ProxyHandler serves the egress proxy (see the Linux documentation).
type ProxyHandler func(ctx context.Context, ln net.Listener)

// ProxyPort and ProxyURL are the egress proxy's address inside the sandbox.
const (
	ProxyPort = 3128
	ProxyURL  = "http://127.0.0.1:3128"
)

// Result is what happened.
type Result struct {
	ExitCode                            int
	Stdout, Stderr                      string
	TimedOut, Truncated, OutputExceeded bool
	Duration                            time.Duration
	Signal                              string
	Cgroup                              bool
	GitDropped                          []string
	CPU                                 time.Duration
}

// ErrUnavailable means the sandbox could not be applied: nothing ran.
var ErrUnavailable = errors.New("sandbox unavailable")

func errOS() error { return fmt.Errorf("%w: not supported on %s", ErrUnavailable, runtime.GOOS) }

// Run is unavailable outside Linux.
func Run(ctx context.Context, s Spec) (Result, error) { return Result{}, errOS() }

// RunHost is unavailable outside Linux.
func RunHost(ctx context.Context, s Spec) (Result, error) { return Result{}, errOS() }

// Probe is unavailable outside Linux.
func Probe() (int, error) { return 0, errOS() }

// LandlockABI is 0: there is no landlock here.
func LandlockABI() (int, error) { return 0, errOS() }

// MaybeRunHelper does nothing outside Linux.
func MaybeRunHelper() {}

// Runner is unavailable outside Linux (see the Linux documentation).
type Runner struct{}

// NewRunner returns a Runner whose Run is unavailable outside Linux.
func NewRunner(prewarm ...Network) *Runner { return &Runner{} }

// Run is unavailable outside Linux.
func (*Runner) Run(ctx context.Context, s Spec) (Result, error) { return Result{}, errOS() }

// Close does nothing outside Linux.
func (*Runner) Close() {}

// CgroupLimits reports that commands get no cgroup on this system.
func CgroupLimits() (pids, memory bool, err error) { return false, false, errOS() }

// SystemRoots are the folders a sandboxed command could read beyond its own
// roots; on this platform no command is sandboxed, so "/" stands for all.
func SystemRoots() []string { return []string{"/"} }

// GitLayout is what FindGitDirs found (see the Linux documentation).
type GitLayout struct{ Dirs, Links []string }

// FindGitDirs finds nothing outside Linux: no command is sandboxed.
func FindGitDirs(roots []string, skip func(name string) bool) GitLayout { return GitLayout{} }
