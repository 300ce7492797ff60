//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// eofWaitSandbox bounds the wait for the output pipes to close once the
	// namespace is gone (it is immediate in practice: every writer is dead).
	eofWaitSandbox = 2 * time.Second
	// eofWaitHost bounds it on the host, where a setsid'd child may keep a
	// pipe open for ever.
	eofWaitHost = 250 * time.Millisecond
)

// launched is a process execute drives: the helper (sandboxed) or the shell
// (host), and the server's ends of its pipes. It is made either right
// before the command (cold) or in advance by a Runner (warm): driving it is
// the same either way.
type launched struct {
	proc      *os.Process
	start     time.Time
	sandboxed bool
	// network is the mode the helper was cloned for (its clone flags and
	// whether it has the proxy socketpair).
	network Network
	// warm is set for a helper a Runner started in advance.
	warm bool

	stdinW, stdoutR, stderrR *os.File
	specW, statusR           *os.File      // sandboxed only
	proxyConn                *net.UnixConn // NetworkProxy only: the server's end of the socketpair
	gitConn                  *net.UnixConn // the server's end of the git-stage socketpair
	gateConn                 net.Conn      // the server's end of the exec-gate channel
	cg                       *cgroup       // nil without a per-command cgroup
	pidsMax                  int           // limits cg was made with
	memoryMax                int64
}

// release closes the server's ends and removes the cgroup (which kills
// what is left in it). Idempotent.
func (st *launched) release() {
	for _, f := range []**os.File{&st.stdinW, &st.stdoutR, &st.stderrR, &st.specW, &st.statusR} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if st.proxyConn != nil {
		st.proxyConn.Close()
		st.proxyConn = nil
	}
	if st.gateConn != nil {
		st.gateConn.Close()
		st.gateConn = nil
	}
	if st.gitConn != nil {
		st.gitConn.Close()
		st.gitConn = nil
	}
	if st.cg != nil {
		st.cg.remove()
		st.cg = nil
	}
}

// killAll kills the process group and the leader (the helper is PID 1 of
// its namespace: the kernel kills the rest) and everything in the cgroup.
func (st *launched) killAll() {
	_ = syscall.Kill(-st.proc.Pid, syscall.SIGKILL)
	_ = st.proc.Signal(syscall.SIGKILL)
	if st.cg != nil {
		st.cg.kill()
	}
}

// discard kills and reaps a helper that will not be used, and releases
// everything it holds.
func (st *launched) discard() {
	st.killAll()
	_, _ = st.proc.Wait()
	st.release()
}

// exited reports whether the process has already exited (without reaping
// it).
func (st *launched) exited() bool {
	// An error (no such child) counts as exited: it cannot be used.
	return hasExited(unix.P_PID, st.proc.Pid, unix.WNOHANG)
}

// startHelper starts the sandbox helper from prog for a command in network
// mode network, blocked reading its spec (fd 3): pipes, socketpair (NetworkProxy),
// per-command cgroup (when available, with these limits; the helper is
// cloned straight into it) and clone flags. Cold and warm helpers are
// started by this function only.
func startHelper(prog *HelperProgram, network Network, pidsMax int, memoryMax int64) (st *launched, err error) {
	st = &launched{sandboxed: true, network: network}
	var child []*os.File // the helper's ends, closed here once it has them
	defer func() {
		for _, f := range child {
			if f != nil {
				f.Close()
			}
		}
		if err != nil {
			st.release()
			st = nil
		}
	}()
	pipe := func(parent **os.File, parentReads bool) error {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("sandbox: pipe: %w", err)
		}
		if parentReads {
			*parent = r
			child = append(child, w)
		} else {
			*parent = w
			child = append(child, r)
		}
		return nil
	}
	// The order of child is the helper's descriptor numbers: 0 stdin, 1
	// stdout, 2 stderr, 3 spec (fdSpec), 4 status (fdStatus), 5 proxy
	// (fdProxy; closed without NetworkProxy), 6 exec gate (fdGate), 7 git
	// stage (fdGitStage).
	for _, p := range []struct {
		f     **os.File
		reads bool
	}{{&st.stdinW, false}, {&st.stdoutR, true}, {&st.stderrR, true}, {&st.specW, false}, {&st.statusR, true}} {
		if err := pipe(p.f, p.reads); err != nil {
			return nil, err
		}
	}
	if network == NetworkProxy {
		c, parent, err := proxySocketpair()
		if err != nil {
			return nil, fmt.Errorf("%w: proxy socketpair: %v", ErrUnavailable, err)
		}
		child = append(child, c)
		st.proxyConn = parent
	} else {
		child = append(child, nil)
	}
	gc, gp, err := gateSocketpair()
	if err != nil {
		return nil, fmt.Errorf("%w: exec gate socketpair: %v", ErrUnavailable, err)
	}
	child = append(child, gc)
	st.gateConn = gp
	sc, sp, err := socketpair(unix.SOCK_SEQPACKET, "git-stage")
	if err != nil {
		return nil, fmt.Errorf("%w: git stage socketpair: %v", ErrUnavailable, err)
	}
	child = append(child, sc)
	st.gitConn = sp.(*net.UnixConn)
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	sys.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if network != NetworkFull {
		sys.Cloneflags |= syscall.CLONE_NEWNET
	}
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		sys.Cloneflags |= syscall.CLONE_NEWUSER
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		// Same uid inside, so file ownership is unchanged; the helper
		// keeps what it needs for the setup across its exec and drops
		// everything before the shell starts. CAP_DAC_OVERRIDE: an
		// overlay (git directories, gitdirs.go) cannot be mounted in a
		// user namespace without it.
		sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE}
	}
	if c, err := newCgroup(pidsMax, memoryMax); err == nil {
		st.cg, st.pidsMax, st.memoryMax = c, pidsMax, memoryMax
		sys.UseCgroupFD, sys.CgroupFD = true, c.fd
	}
	// The helper needs nothing; these only trim its runtime start-up.
	env := []string{"GOMAXPROCS=1", "GOGC=off", "GODEBUG=containermaxprocs=0,updatemaxprocs=0"}
	if network != NetworkFull {
		// Its own network namespace: it brings lo up before the spec
		// arrives (and checks the spec says so).
		env = append(env, helperNewNetEnv)
	}
	st.start = time.Now()
	st.proc, err = os.StartProcess(prog.path, []string{helperName, helperGuard, helperArg},
		&os.ProcAttr{Dir: "/", Env: env, Files: child, Sys: sys})
	runtime.KeepAlive(prog) // its memfd, which prog.path names, stays open until the exec is done
	if err != nil {
		return nil, fmt.Errorf("%w: start helper: %v", ErrUnavailable, err)
	}
	return st, nil
}

// startHost starts the shell on the host.
func startHost(s *Spec) (*launched, error) {
	st := &launched{}
	var child []*os.File
	defer func() {
		for _, f := range child {
			f.Close()
		}
	}()
	for _, p := range []struct {
		f     **os.File
		reads bool
	}{{&st.stdinW, false}, {&st.stdoutR, true}, {&st.stderrR, true}} {
		r, w, err := os.Pipe()
		if err != nil {
			st.release()
			return nil, fmt.Errorf("sandbox: pipe: %w", err)
		}
		if p.reads {
			*p.f = r
			child = append(child, w)
		} else {
			*p.f = w
			child = append(child, r)
		}
	}
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	st.start = time.Now()
	proc, err := os.StartProcess(s.Shell, []string{s.Shell, "-c", s.Command}, &os.ProcAttr{Dir: s.Dir, Env: s.Env, Files: child, Sys: sys})
	if err != nil {
		st.release()
		return nil, fmt.Errorf("sandbox: start %s: %w", s.Shell, err)
	}
	st.proc = proc
	return st, nil
}

// execute starts the helper from prog (sandboxed) or, with prog nil, the
// shell on the host, and drives it.
func execute(ctx context.Context, s *Spec, prog *HelperProgram) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	var st *launched
	var err error
	if prog != nil {
		st, err = startHelper(prog, s.Network, s.PidsMax, s.MemoryMax)
	} else {
		st, err = startHost(s)
	}
	if err != nil {
		return Result{}, err
	}
	return drive(ctx, s, st)
}

// errWarmDead means a warm helper was found dead before it read its spec:
// nothing ran, and the Runner starts the command cold instead.
var errWarmDead = errors.New("sandbox: warm helper dead before the command")

// drive feeds the started process s, waits for it under the timeout, ctx
// and output limits, collects the result and releases st.
func drive(ctx context.Context, s *Spec, st *launched) (res Result, err error) {
	defer st.release()
	var pr *proxyReceiver
	if st.proxyConn != nil {
		pr = newProxyReceiver(st.proxyConn, s.Proxy) // owns the conn now
		st.proxyConn = nil
		defer pr.stop()
	}
	var gs *gateServer
	if st.sandboxed && s.ExecGate != nil {
		gs = newGateServer(st.gateConn, s.ExecGate) // owns the conn now
		st.gateConn = nil
		defer gs.stop()
	}
	res.Cgroup = st.cg != nil
	proc, pid, start := st.proc, st.proc.Pid, st.start
	begun := start // when this command's sandbox began: a warm helper's when it is handed the command
	if st.warm {
		begun = time.Now()
	}
	stdinW, stdoutR, stderrR := st.stdinW, st.stdoutR, st.stderrR
	sandboxed := st.sandboxed

	var wg sync.WaitGroup
	outCap := newCapture(s.OutputMax, s.Secrets)
	errCap := newCapture(s.OutputMax, s.Secrets)
	runaway := make(chan struct{}, 2)
	reader := func(f *os.File, c *capture) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		signalled := false
		for {
			n, err := f.Read(buf)
			if n > 0 {
				c.Write(buf[:n])
				if c.total > s.KillAfterOutput && !signalled {
					signalled = true
					runaway <- struct{}{}
				}
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go reader(stdoutR, outCap)
	go reader(stderrR, errCap)
	var inWG sync.WaitGroup
	inWG.Add(1)
	go func() {
		defer inWG.Done()
		if len(s.Stdin) > 0 {
			_, _ = stdinW.Write(s.Stdin)
		}
		stdinW.Close()
	}()
	var statusBuf []byte
	var startedAt time.Time // when the helper said the command started
	// The command's mount table, opened at "started" (with Hidden): -1
	// until then, -2 once drive returned.
	var mounts atomic.Int32
	mounts.Store(-1)
	defer func() {
		if fd := mounts.Swap(-2); fd >= 0 {
			unix.Close(int(fd))
		}
	}()
	var specErr error // the spec write failed: the helper never read it whole
	statusDone := make(chan struct{})
	status := &statusReader{f: st.statusR, progress: make(chan struct{}, 1), onStarted: func() {
		if len(s.Hidden) > 0 {
			if fd := openMountTable(pid); !mounts.CompareAndSwap(-1, int32(fd)) && fd >= 0 {
				unix.Close(fd) // drive has returned
			}
		}
	}}
	if sandboxed {
		go func() {
			defer close(statusDone)
			statusBuf, startedAt = status.run()
		}()
		// Written here, not from a goroutine of its own, which could wait
		// behind the others for a processor (a millisecond or more on a
		// loaded machine); after the status reader is started, so that it
		// is under way when "started" comes (the mount table is opened
		// then, see openMountTable).
		inWG.Add(1)
		writeSpec(st.specW, helperSpecFor(s), &specErr, inWG.Done)
		// Runs when drive returns, after the helper and the whole command
		// are gone (every return below follows the wait), before release
		// closes the socketpair. A stopped command may have read a file
		// that replaced a hidden one: nothing it staged in .git is kept
		// (its names would reach the model, its content the repository).
		if len(s.GitDirs) > 0 {
			defer func() {
				stage := receiveGitStage(st.gitConn)
				if res.Stopped != "" {
					if stage != nil {
						stage.Close()
					}
					return
				}
				res.GitDropped = mergeGitStages(s.GitDirs, stage, s.TmpSize)
			}()
		}
	} else {
		close(statusDone)
	}

	// Wait for the leader without reaping it, so its pgid cannot be reused
	// while we kill the group.
	exited := awaitExit(pid)
	timer := time.NewTimer(s.Timeout)
	defer timer.Stop()
	var ctxErr error
	select {
	case <-exited:
	case <-timer.C:
		res.TimedOut = true
	case <-ctx.Done():
		ctxErr = ctx.Err()
	case <-runaway:
		res.OutputExceeded = true
	}
	if sandboxed && len(s.Hidden) > 0 {
		// A kill before the status reader has looked at a "started" the
		// helper already wrote would find no mount table and drop the
		// output of a command nothing happened to (a loaded machine):
		// let the reader catch up first, briefly.
		status.caughtUp(statusCatchUp)
	}
	st.killAll()
	<-exited
	// The command is gone: no connection to the proxy can start any more.
	// Stop it (listener closed, connections closed, handler returned).
	if pr != nil {
		pr.stop()
	}
	if gs != nil {
		gs.stop()
	}
	ps, werr := proc.Wait()
	res.Duration = time.Since(start)

	// Every writer should be gone; bound the wait anyway.
	bound := eofWaitHost
	if sandboxed {
		bound = eofWaitSandbox
	}
	readersDone := make(chan struct{})
	go func() { wg.Wait(); close(readersDone) }()
	deadline := time.NewTimer(bound)
	select {
	case <-readersDone:
	case <-deadline.C:
		_ = stdoutR.SetReadDeadline(time.Now())
		_ = stderrR.SetReadDeadline(time.Now())
		<-readersDone
	}
	deadline.Stop()
	_ = stdinW.SetWriteDeadline(time.Now())
	if sandboxed {
		_ = st.specW.SetWriteDeadline(time.Now())
	}
	inWG.Wait()
	if sandboxed {
		select {
		case <-statusDone:
		case <-time.After(bound):
			_ = st.statusR.SetReadDeadline(time.Now())
			<-statusDone
		}
	}

	res.Stdout, res.Truncated = outCap.result(s.Secrets)
	var tr bool
	res.Stderr, tr = errCap.result(s.Secrets)
	res.Truncated = res.Truncated || tr

	if werr != nil {
		return res, fmt.Errorf("sandbox: wait: %w", werr)
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	res.CPU = ps.UserTime() + ps.SystemTime()
	if sandboxed {
		started, exit, serr := parseStatus(statusBuf)
		if serr != nil {
			return Result{}, serr
		}
		// A warm helper that died before reading its whole spec (the write
		// failed: it never saw end-of-file, so it never decoded it) ran
		// nothing: the command can be started cold.
		if st.warm && specErr != nil && !started && exit == nil && len(statusBuf) == 0 &&
			!res.TimedOut && ctxErr == nil && !res.OutputExceeded {
			return Result{}, errWarmDead
		}
		if started && !startedAt.IsZero() {
			res.Started = startedAt.Sub(begun)
		}
		switch {
		case exit != nil:
			res.ExitCode = exit.Code
			res.GateCPU = time.Duration(exit.TracerNS)
			stoppedResult(&res, exit.Stopped)
			if exit.Signal != 0 {
				res.Signal = unix.SignalName(syscall.Signal(exit.Signal))
			}
		case !started && !res.TimedOut && ctxErr == nil && !res.OutputExceeded:
			msg := res.Stderr
			if len(msg) > 300 {
				msg = msg[:300]
			}
			return Result{}, fmt.Errorf("%w: helper ended before starting the command (%s): %q", ErrUnavailable, ps.String(), msg)
		default:
			setFromWait(&res, ws)
			// The server killed PID 1 (timeout, output, cancel) before its
			// exit line, which says whether a hidden file's mount was
			// lost, arrived: the command may have read a file renamed in
			// over one. Fail closed.
			if len(s.Hidden) > 0 && mountTableChanged(int(mounts.Load())) {
				stoppedResult(&res, unconfirmedStop(&res, ctxErr))
			}
		}
	} else {
		setFromWait(&res, ws)
	}
	return res, ctxErr
}

// helperSpec is what the helper is sent for s.
func helperSpecFor(s *Spec) helperSpec {
	return helperSpec{
		Shell: s.Shell, Command: s.Command, Dir: s.Dir, Env: s.Env,
		Writable: s.Writable, Readable: s.Readable, ReadOnly: s.ReadOnly, Hidden: s.Hidden,
		GitDirs: s.GitDirs, Home: s.Home,
		NewNet: s.Network != NetworkFull, TCPConnect: s.AllowTCPConnect,
		Proxy:       s.Network == NetworkProxy,
		CPUSeconds:  uint64(s.Timeout/time.Second) + 5,
		FileSizeMax: s.FileSizeMax, TmpSize: s.TmpSize,
		NoLandlock: s.simulateNoLandlock,
		NoPtrace:   s.simulateNoPtrace,
		Gate:       s.ExecGate != nil,
		HashSizes:  s.IdentitySizes, ExecEnv: s.ExecEnv,
		EtcDir: s.etcDir, EtcSecrets: s.etcSecrets,
	}
}

// pipeAtomic is PIPE_BUF: a write of at most this many bytes to a pipe
// with that much room is whole and immediate, and a pipe holds at least
// one page (the kernel's minimum capacity, even past the per-user limit).
const pipeAtomic = 4096

// writeSpec writes hs to the helper's spec pipe, one line, and closes it,
// recording a failed write in *errp and calling done once finished. A spec that fits
// the empty pipe at once (the usual case) is written here, so the helper
// has it before any goroutine of drive runs; a longer one, which the
// helper must read while it is written, from a goroutine (drive bounds it
// by the pipe's write deadline when the helper is gone).
func writeSpec(w *os.File, hs helperSpec, errp *error, done func()) {
	b, _ := json.Marshal(hs)
	b = append(b, '\n') // the end of the spec (readSpecLine)
	write := func() {
		defer done()
		_, *errp = w.Write(b)
		w.Close()
	}
	if len(b) <= pipeAtomic {
		write()
		return
	}
	go write()
}

// awaitExit returns a channel closed once pid, this process's child, has
// exited, without reaping it. It waits on a pidfd through the runtime's
// poller, so no thread sits in a blocking waitid holding its processor:
// the goroutines queued behind it there (the status reader's among them)
// would wait for the scheduler to take the processor back, milliseconds
// on a loaded machine. Where no pidfd can be polled it blocks in waitid.
func awaitExit(pid int) <-chan struct{} {
	exited := make(chan struct{})
	// pid names the child: it is not reaped before exited is closed.
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	go func() {
		defer close(exited)
		if err == nil {
			f := os.NewFile(uintptr(fd), "pidfd")
			defer f.Close()
			rc, err := f.SyscallConn()
			if err == nil {
				// Readable once the process has exited.
				err = rc.Read(func(fd uintptr) bool { return hasExited(unix.P_PIDFD, int(fd), unix.WNOHANG) })
			}
			if err == nil {
				return
			}
		}
		hasExited(unix.P_PID, pid, 0)
	}()
	return exited
}

// hasExited waits (flags 0) or looks (WNOHANG) for the exit of the process
// id names, without reaping it; an error (no such child) counts as exited.
func hasExited(idType, id, flags int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(idType, id, &info, unix.WEXITED|unix.WNOWAIT|flags, nil)
		if err != unix.EINTR {
			return err != nil || info.Signo != 0
		}
	}
}

// unconfirmedStop is why the output of a command with hidden files that
// the server killed (so PID 1 never reported on their mounts) is dropped.
func unconfirmedStop(res *Result, ctxErr error) string {
	why := "it ended"
	switch {
	case res.TimedOut:
		why = "it timed out"
	case res.OutputExceeded:
		why = "its output passed the limit"
	case ctxErr != nil:
		why = "the call was cancelled"
	}
	return "the command was killed when " + why + ", before the sandbox could confirm that no hidden file was replaced on the host while it ran"
}

func setFromWait(res *Result, ws syscall.WaitStatus) {
	switch {
	case ws.Exited():
		res.ExitCode = ws.ExitStatus()
	case ws.Signaled():
		res.Signal = unix.SignalName(ws.Signal())
		res.ExitCode = 128 + int(ws.Signal())
	}
}

// openMountTable opens the mount table of the helper's namespace (pid is
// PID 1 there, the server's child, not yet reaped), or gives -1. Opened
// once PID 1 says the command started, after every mount of the set-up:
// from then on only a mount lost to the host changes it, and the open
// descriptor keeps the namespace, so the command's end changes nothing.
func openMountTable(pid int) int {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	// Still this server's unreaped child after the open, so the pid named
	// it (a zombie has no mount table to open): not a process that took
	// the pid over.
	var info unix.Siginfo
	if unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil) != nil {
		unix.Close(fd)
		return -1
	}
	return fd
}

// mountTableChanged tells whether the table opened by openMountTable has
// changed since (POLLPRI); a table never opened or not polled counts as
// changed.
func mountTableChanged(fd int) bool {
	if fd < 0 {
		return true
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n != 0
	}
}

// statusCatchUp bounds how long a kill waits for the status reader to look
// at what the helper already wrote.
const statusCatchUp = 200 * time.Millisecond

// statusReader reads the helper's status lines to their end, noting when
// the "started" line arrived and calling onStarted then. Each read from the
// pipe and what follows from it happen under mu, so caughtUp can tell when
// every byte the helper wrote before it has been looked at.
type statusReader struct {
	f         *os.File
	onStarted func()
	progress  chan struct{} // a token after each read (buffered 1)

	mu      sync.Mutex
	buf     []byte
	started time.Time
}

// run reads until end-of-file, an error or the read deadline; it returns
// every byte read and when "started" came.
func (r *statusReader) run() ([]byte, time.Time) {
	rc, err := r.f.SyscallConn()
	if err != nil {
		return nil, time.Time{}
	}
	chunk := make([]byte, 4<<10)
	for done := false; !done; {
		err := rc.Read(func(fd uintptr) bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			n, rerr := unix.Read(int(fd), chunk)
			switch {
			case rerr == unix.EAGAIN:
				return false // wait in the poller
			case rerr == unix.EINTR:
				return true
			case rerr != nil || n == 0:
				done = true
				return true
			}
			r.buf = append(r.buf, chunk[:n]...)
			if r.started.IsZero() && bytes.Contains(r.buf, []byte(`"t":"started"`)) {
				r.started = time.Now()
				r.onStarted()
			}
			select {
			case r.progress <- struct{}{}:
			default:
			}
			return true
		})
		done = done || err != nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf, r.started
}

// caughtUp waits, at most bound, until the pipe holds nothing the reader
// has not looked at (TIOCINQ, FIONREAD, under mu is 0).
func (r *statusReader) caughtUp(bound time.Duration) {
	rc, err := r.f.SyscallConn()
	if err != nil {
		return
	}
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		pending := 0
		if cerr := rc.Control(func(fd uintptr) {
			r.mu.Lock()
			defer r.mu.Unlock()
			pending, err = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		}); cerr != nil || err != nil || pending == 0 {
			return
		}
		select {
		case <-r.progress:
		case <-timer.C:
			return
		}
	}
}

// parseStatus reads the helper's status lines.
func parseStatus(b []byte) (started bool, exit *statusMsg, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m statusMsg
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch m.T {
		case "err":
			if !started {
				e := fmt.Errorf("%w: %s: %s", ErrUnavailable, m.Step, m.Msg)
				if m.Errno != 0 {
					e = fmt.Errorf("%w: %s: %s (errno %d %s)", ErrUnavailable, m.Step, m.Msg, m.Errno, unix.ErrnoName(syscall.Errno(m.Errno)))
				}
				return false, nil, e
			}
		case "started":
			started = true
		case "exit":
			mm := m
			exit = &mm
		}
	}
	return started, exit, nil
}
