//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
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

type pipePair struct{ r, w *os.File }

func newPipe() (pipePair, error) {
	r, w, err := os.Pipe()
	return pipePair{r, w}, err
}

// execute starts the helper (sandboxed) or the shell (host), feeds it, waits
// for it under the timeout, ctx and output limits, and collects the result.
func execute(ctx context.Context, s *Spec, sandboxed bool) (res Result, err error) {
	if err := ctx.Err(); err != nil {
		return res, err
	}
	var toClose []*os.File
	defer func() {
		for _, f := range toClose {
			f.Close()
		}
	}()
	pipe := func() (pipePair, error) {
		p, err := newPipe()
		if err == nil {
			toClose = append(toClose, p.r, p.w)
		}
		return p, err
	}
	var stdin, stdout, stderr, spec, status pipePair
	for _, p := range []*pipePair{&stdin, &stdout, &stderr} {
		if *p, err = pipe(); err != nil {
			return res, fmt.Errorf("sandbox: pipe: %w", err)
		}
	}
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	files := []*os.File{stdin.r, stdout.w, stderr.w}
	var name string
	var argv []string
	dir := s.Dir
	var cg *cgroup
	var pr *proxyReceiver
	if sandboxed {
		if spec, err = pipe(); err != nil {
			return res, fmt.Errorf("sandbox: pipe: %w", err)
		}
		if status, err = pipe(); err != nil {
			return res, fmt.Errorf("sandbox: pipe: %w", err)
		}
		files = append(files, spec.r, status.w)
		if s.Network == NetworkProxy {
			child, parent, err := proxySocketpair()
			if err != nil {
				return res, fmt.Errorf("%w: proxy socketpair: %v", ErrUnavailable, err)
			}
			toClose = append(toClose, child)
			files = append(files, child) // fd 5 in the helper
			pr = newProxyReceiver(parent, s.Proxy)
			defer pr.stop()
		}
		name, argv, dir = "/proc/self/exe", []string{helperName, helperGuard, helperArg}, "/"
		sys.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
		if s.Network != NetworkFull {
			sys.Cloneflags |= syscall.CLONE_NEWNET
		}
		if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
			sys.Cloneflags |= syscall.CLONE_NEWUSER
			sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
			sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
			// Same uid inside, so file ownership is unchanged; the helper
			// keeps what it needs for the setup across its exec and drops
			// everything before the shell starts.
			sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
		}
		if c, err := newCgroup(s.PidsMax, s.MemoryMax); err == nil {
			cg = c
			defer cg.remove()
			sys.UseCgroupFD, sys.CgroupFD = true, cg.fd
			res.Cgroup = true
		}
	} else {
		name, argv = s.Shell, []string{s.Shell, "-c", s.Command}
	}
	env := s.Env
	if sandboxed {
		// The helper needs nothing; these only trim its runtime start-up.
		env = []string{"GOMAXPROCS=1", "GOGC=off", "GODEBUG=containermaxprocs=0,updatemaxprocs=0"}
	}
	start := time.Now()
	proc, err := os.StartProcess(name, argv, &os.ProcAttr{Dir: dir, Env: env, Files: files, Sys: sys})
	// The child's ends are the child's now.
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		if sandboxed {
			return Result{}, fmt.Errorf("%w: start helper: %v", ErrUnavailable, err)
		}
		return Result{}, fmt.Errorf("sandbox: start %s: %w", s.Shell, err)
	}
	pid := proc.Pid

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
	go reader(stdout.r, outCap)
	go reader(stderr.r, errCap)
	var inWG sync.WaitGroup
	inWG.Add(1)
	go func() {
		defer inWG.Done()
		if len(s.Stdin) > 0 {
			_, _ = stdin.w.Write(s.Stdin)
		}
		stdin.w.Close()
	}()
	var statusBuf []byte
	statusDone := make(chan struct{})
	if sandboxed {
		go func() {
			defer close(statusDone)
			statusBuf, _ = io.ReadAll(status.r)
		}()
		hs := helperSpec{
			Shell: s.Shell, Command: s.Command, Dir: s.Dir, Env: s.Env,
			Writable: s.Writable, Readable: s.Readable, ReadOnly: s.ReadOnly,
			NewNet: s.Network != NetworkFull, TCPConnect: s.AllowTCPConnect,
			Proxy:       s.Network == NetworkProxy,
			CPUSeconds:  uint64(s.Timeout/time.Second) + 5,
			FileSizeMax: s.FileSizeMax, TmpSize: s.TmpSize,
			NoLandlock: s.simulateNoLandlock,
		}
		b, _ := json.Marshal(hs)
		inWG.Add(1)
		go func() {
			defer inWG.Done()
			_, _ = spec.w.Write(b)
			spec.w.Close()
		}()
	} else {
		close(statusDone)
	}

	// Wait for the leader without reaping it, so its pgid cannot be reused
	// while we kill the group.
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				return
			}
		}
	}()
	killAll := func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = proc.Signal(syscall.SIGKILL) // the helper is PID 1 of the namespace
		if cg != nil {
			cg.kill()
		}
	}
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
	killAll()
	<-exited
	// The command is gone: no connection to the proxy can start any more.
	// Stop it (listener closed, connections closed, handler returned).
	if pr != nil {
		pr.stop()
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
		_ = stdout.r.SetReadDeadline(time.Now())
		_ = stderr.r.SetReadDeadline(time.Now())
		<-readersDone
	}
	deadline.Stop()
	_ = stdin.w.SetWriteDeadline(time.Now())
	if sandboxed {
		_ = spec.w.SetWriteDeadline(time.Now())
	}
	inWG.Wait()
	if sandboxed {
		select {
		case <-statusDone:
		case <-time.After(bound):
			_ = status.r.SetReadDeadline(time.Now())
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
	if sandboxed {
		started, exit, serr := parseStatus(statusBuf)
		if serr != nil {
			return Result{}, serr
		}
		switch {
		case exit != nil:
			res.ExitCode = exit.Code
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
		}
	} else {
		setFromWait(&res, ws)
	}
	return res, ctxErr
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
