//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"runtime"
)

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

// HelperProgram is the program helpers start from (Linux only).
type HelperProgram struct{}

// DefaultHelper is a placeholder outside Linux: no helper ever starts.
func DefaultHelper() *HelperProgram { return &HelperProgram{} }

// Sealed is false outside Linux.
func (*HelperProgram) Sealed() bool { return false }

// Fallback says the sandbox is unavailable outside Linux.
func (*HelperProgram) Fallback() error { return errOS() }

// String says there is no helper outside Linux.
func (*HelperProgram) String() string { return "none (" + errOS().Error() + ")" }

// ProbeHelper is unavailable outside Linux.
func ProbeHelper(h *HelperProgram) (int, *HelperProgram, error) { return 0, h, errOS() }

// NewRunnerWith returns a Runner whose Run is unavailable outside Linux.
func NewRunnerWith(*HelperProgram, ...Network) *Runner { return &Runner{} }

// Close does nothing outside Linux.
func (*Runner) Close() {}

// CgroupLimits reports that commands get no cgroup on this system.
func CgroupLimits() (pids, memory bool, err error) { return false, false, errOS() }

// SystemRoots are the folders a sandboxed command could read beyond its own
// roots; on this platform no command is sandboxed, so "/" stands for all.
func SystemRoots() []string { return []string{"/"} }

// PrivateHome finds no private home outside Linux: no command is sandboxed.
func PrivateHome(roots []string) string { return "" }

// GitLayout is what FindGitDirs found (see the Linux documentation).
type GitLayout struct{ Dirs, Links []string }

// FindGitDirs finds nothing outside Linux: no command is sandboxed.
func FindGitDirs(roots []string, skip func(name string) bool) GitLayout { return GitLayout{} }

// ProgramFile is a host program's identity (Linux only).
type ProgramFile struct {
	Path     string
	Dev, Ino uint64
	Size     int64
	Exec     bool
	ELF      ELFIdent
}

// ReadProgramFile is unavailable outside Linux.
func ReadProgramFile(string) (ProgramFile, error) { return ProgramFile{}, errOS() }

// SHA256 is unavailable outside Linux.
func (ProgramFile) SHA256() (string, error) { return "", errOS() }
