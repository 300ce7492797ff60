//go:build linux

package sandbox

import (
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// started is the shell's process as PID 1 sees it.
type started struct{ pid int }

// restrictedThread is a new OS thread of PID 1 that the shell is started
// from. newRestrictedThread makes it and applies what depends on no spec,
// so a warm helper has it done before its command arrives: it empties the
// thread's capability sets, sets no_new_privs and installs the seccomp
// filter (whose program depends on nothing either; building and installing
// it, the kernel's translation and JIT included, is ~0.3 ms). start
// applies the rest (landlock, which needs the spec's roots, and the
// canary; rlimits are per process and already set) and starts the shell
// from it, so the shell inherits exactly those restrictions: the same set,
// in the same thread, as when all were applied after the spec. The Go
// runtime never clones a thread from a locked one (it asks its template
// thread), so no restriction reaches another thread of PID 1. With the
// exec gate the shell is started traced by that thread (PTRACE_TRACEME: it
// stops at its exec, before its first instruction) and detached with
// SIGSTOP, so it stays stopped, untraced, until PID 1's main thread (the
// tracer, which keeps none of the restrictions) has seized it and sends
// SIGCONT. The thread ends after start, or after close when nothing is
// started (its goroutine stays locked, so no other goroutine ever runs on
// it).
type restrictedThread struct {
	jobs chan restrictJob
	pre  chan error // the spec-less restrictions' outcome, sent once
}

type restrictJob struct {
	hs   *helperSpec
	rs   *ruleset
	done chan restrictResult
}

type restrictResult struct {
	st  *started
	err error
}

func newRestrictedThread() *restrictedThread {
	t := &restrictedThread{jobs: make(chan restrictJob), pre: make(chan error, 1)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		t.pre <- restrictBeforeSpec()
		job, ok := <-t.jobs // none after a failure (start closes jobs)
		if !ok {
			return
		}
		st, err := restrictThreadAndStart(job.hs, job.rs)
		job.done <- restrictResult{st, err}
	}()
	return t
}

// restrictBeforeSpec applies, on the restricted thread, what depends on no
// spec: capabilities, no_new_privs (landlock_restrict_self and an
// unprivileged seccomp filter need it), the seccomp filter.
func restrictBeforeSpec() error {
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := step("no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)); err != nil {
		return err
	}
	prog, err := seccompProgram()
	if err != nil {
		return step("seccomp program", err)
	}
	return step("seccomp", installSeccomp(prog))
}

// start starts the shell from the thread (once).
func (t *restrictedThread) start(hs *helperSpec, rs *ruleset) (*started, error) {
	if err := <-t.pre; err != nil {
		close(t.jobs)
		return nil, err
	}
	done := make(chan restrictResult, 1)
	t.jobs <- restrictJob{hs: hs, rs: rs, done: done}
	r := <-done
	return r.st, r.err
}

// close ends the thread when the set-up failed before start.
func (t *restrictedThread) close() { close(t.jobs) }

// restrictThreadAndStart runs on the restricted thread, its spec-less
// restrictions applied (restrictBeforeSpec).
func restrictThreadAndStart(hs *helperSpec, rs *ruleset) (*started, error) {
	if err := step("landlock_restrict_self", rs.restrictSelf()); err != nil {
		return nil, err
	}
	if err := canary(hs); err != nil {
		return nil, err
	}
	argv := []string{filepath.Base(hs.Shell), "-c", hs.Command}
	pid, err := syscall.ForkExec(hs.Shell, argv, &syscall.ProcAttr{
		Dir: hs.Dir, Env: hs.Env, Files: []uintptr{0, 1, 2},
		Sys: &syscall.SysProcAttr{Ptrace: hs.Gate},
	})
	if err != nil {
		return nil, step("exec shell", err)
	}
	if hs.Gate {
		if err := stopForSeize(pid); err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			return nil, step("exec gate", err)
		}
	}
	return &started{pid: pid}, nil
}

// stopForSeize waits for the traced shell's exec stop (SIGTRAP, before its
// first instruction) and detaches it with SIGSTOP, which stops it at once,
// still before its first instruction: nothing else in the namespace can
// continue it, so it waits for PID 1's seize and SIGCONT.
func stopForSeize(pid int) error {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, unix.WALL, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait for the shell's exec: %w", err)
		}
		break
	}
	if !ws.Stopped() || ws.StopSignal() != syscall.SIGTRAP {
		return fmt.Errorf("the shell did not stop at its exec (status %#x)", uint32(ws))
	}
	if _, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(unix.SIGSTOP), 0, 0); e != 0 {
		return fmt.Errorf("ptrace detach: %w", e)
	}
	return nil
}
