//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	// fdGate is the helper's end of the exec-gate channel (a stream
	// socketpair; events out, verdicts back).
	fdGate = 6
	// maxArgvBytes caps what the tracer reads of a program's argv; a longer
	// one is refused (the kernel's own limit is 2 MiB with the default stack
	// limit).
	maxArgvBytes = 4 << 20

	// atExecFn is AT_EXECFN, the auxiliary vector's exec path entry.
	atExecFn = 31

	seizeOptions = unix.PTRACE_O_TRACEEXEC | unix.PTRACE_O_TRACEFORK | unix.PTRACE_O_TRACEVFORK |
		unix.PTRACE_O_TRACECLONE | unix.PTRACE_O_EXITKILL
)

// seize makes the calling thread the tracer of pid (PTRACE_SEIZE with
// seizeOptions: every fork, vfork, clone and exec of it and of its
// descendants stops for the tracer; EXITKILL kills them all should the
// tracer die). Every later ptrace request must come from the same thread.
func seize(pid int) error {
	for {
		_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, seizeOptions, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return fmt.Errorf("ptrace seize: %w", e)
		}
		return nil
	}
}

// supervisor is PID 1 of the namespace once the command started: it reaps
// every process, reports the shell's exit status and, when traced, decides
// every exec through the gate channel.
type supervisor struct {
	shell  int  // the shell's pid
	traced bool // the shell was seized: exec events arrive
	send   func(statusMsg)
	gate   int // fdGate when traced
	facts  execFacts
	buf    readBuf     // the exec stops' reads, one at a time
	out    []byte      // the event's frame, reused
	watch  *guardWatch // the mount table's watch (hidden.go)
	lin    lineage     // who made each process, and its image (lineage.go)
	// held: the shell is stopped (seized, not yet continued); run
	// continues it once "started" is sent.
	held bool
}

// run supervises until the shell exits and returns the helper's exit code.
func (s *supervisor) run() int {
	s.send(statusMsg{T: "started"})
	if err := quietChildSignals(); err != nil {
		s.send(statusMsg{T: "err", Step: "sigaction SIGCHLD", Msg: err.Error()})
		return exitSetup
	}
	if s.held {
		if err := unix.Kill(s.shell, unix.SIGCONT); err != nil {
			s.send(statusMsg{T: "err", Step: "continue the shell", Msg: err.Error()})
			return exitSetup
		}
	}
	for {
		wpid, ws, err := rawWait4()
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			s.send(statusMsg{T: "err", Step: "wait", Msg: err.Error()})
			return exitSetup
		}
		if ws.Stopped() {
			s.stopped(wpid, ws)
			continue
		}
		if ws.Exited() || ws.Signaled() {
			s.lin.exited(wpid)
		}
		if wpid != s.shell || !(ws.Exited() || ws.Signaled()) {
			continue
		}
		m := statusMsg{T: "exit"}
		switch {
		case ws.Exited():
			m.Code = ws.ExitStatus()
		case ws.Signaled():
			m.Signal = int(ws.Signal())
			m.Code = 128 + m.Signal
		}
		m.Stopped = s.watch.stopped()
		if s.traced {
			m.TracerNS = threadCPU()
		}
		s.send(m)
		// Exiting kills whatever is left in the namespace.
		return 0
	}
}

// stopped handles one ptrace stop (SEIZE semantics): an exec is decided;
// a group-stop is listened to (the process stays stopped, as untraced);
// a signal is delivered; a fork, vfork or clone is recorded (lineage) and
// continues, as does the new process, whose first stop waits for it; every
// other event stop just continues.
func (s *supervisor) stopped(pid int, ws syscall.WaitStatus) {
	sig := ws.StopSignal()
	event := int(ws>>16) & 0xff
	switch {
	case event == unix.PTRACE_EVENT_EXEC:
		if s.allowExec(pid) {
			ptraceCont(pid, 0)
		} else {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	case event == unix.PTRACE_EVENT_STOP:
		switch sig {
		case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
			ptraceRequest(unix.PTRACE_LISTEN, pid, 0)
		default:
			// SIGTRAP: a new process's first stop (no PTRACE_INTERRUPT
			// is ever sent), held until its maker's event is seen.
			if !s.lin.firstStop(pid) {
				ptraceCont(pid, 0)
			}
		}
	case event == unix.PTRACE_EVENT_FORK || event == unix.PTRACE_EVENT_VFORK || event == unix.PTRACE_EVENT_CLONE:
		if child, ok := ptraceEventMsg(pid); ok && s.lin.madeBy(pid, child, event == unix.PTRACE_EVENT_CLONE) {
			ptraceCont(child, 0)
		}
		ptraceCont(pid, 0)
	case event != 0:
		ptraceCont(pid, 0)
	default:
		ptraceCont(pid, int(sig)) // signal-delivery stop: deliver it
	}
}

// allowExec decides the exec that pid stopped at: every program the command
// executes goes to the server (the shell itself was exec'd before the seize).
func (s *supervisor) allowExec(pid int) bool {
	ev := readExecEvent(pid, &s.facts, &s.buf)
	s.lin.exec(pid, &ev)
	s.out = appendEvent(s.out[:0], &ev)
	if err := rawWriteAll(s.gate, s.out); err != nil {
		return false // no gate, no program
	}
	var reply [2]byte
	return rawReadFull(s.gate, reply[:]) == nil && string(reply[:]) == "y\n"
}

// saNoCldStop is SA_NOCLDSTOP: no SIGCHLD for a child's (or tracee's) stop.
const saNoCldStop = 1

// quietChildSignals sets SIGCHLD to its default action (ignored, without
// reaping children automatically, as SIG_IGN would) with SA_NOCLDSTOP, so
// the kernel sends PID 1 no signal for a stop or an exit of the command's
// processes: wait4 learns of each anyway, and the Go runtime's handler
// would otherwise run for every ptrace stop (about four per fork+exec,
// each a signal frame and a return from it on the tracer's thread). The
// helper uses no os/signal, so nothing of its own waits for SIGCHLD; the
// programs it starts begin with the default action whatever PID 1 has.
func quietChildSignals() error {
	// The kernel's struct sigaction (amd64, arm64): handler, flags,
	// restorer, mask.
	act := struct {
		handler, flags, restorer, mask uint64
	}{handler: 0 /* SIG_DFL */, flags: saNoCldStop}
	_, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(unix.SIGCHLD), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// threadCPU is the calling thread's CPU time in nanoseconds (the
// scheduler's own count, as /proc/thread-self/schedstat gives it).
func threadCPU() int64 {
	var t unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t) != nil {
		return 0
	}
	return t.Nano()
}

// The tracer's waits and its round trips to the server are raw system
// calls: PID 1 has nothing else to run, and a blocking syscall the runtime
// knows of would hand its processor to another thread and back (the
// goroutine is locked to this thread) on every stop.

func rawWait4() (int, syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	r, _, e := unix.RawSyscall6(unix.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)), unix.WALL, 0, 0, 0)
	if e != 0 {
		return 0, 0, e
	}
	return int(r), ws, nil
}

func rawWriteAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		b = b[n:]
	}
	return nil
}

func rawReadFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}

// readExecEvent gathers what the kernel loaded for pid, stopped at its exec.
// At that stop the new image has one thread and has run nothing, so argv
// (copied into the new memory at exec, read from its stack) is exactly
// what the program will see: no other thread or process can change it
// (ptrace and process_vm_writev are denied by seccomp, /proc is read-only
// to the command). The executable's path can still be renamed by the command, so
// it is checked against the running file's device and inode. An executable
// in a writable place is also identified by content (facts.identify).
func readExecEvent(pid int, facts *execFacts, buf *readBuf) ExecEvent {
	ev := readExec(pid, facts, buf)
	// Every text as valid UTF-8 (invalid bytes as \xNN), a Problem's too:
	// the gate channel carries only that.
	for _, p := range []*string{&ev.Exe, &ev.Cwd, &ev.ExecPath, &ev.Written, &ev.Problem, &ev.ExecTarget, &ev.StdinFile} {
		*p = validText(*p)
	}
	for _, list := range [][]string{ev.Argv, ev.Env, ev.EnvUnset} {
		for i, a := range list {
			list[i] = validText(a)
		}
	}
	return ev
}

func readExec(pid int, facts *execFacts, buf *readBuf) ExecEvent {
	ev := ExecEvent{PID: pid}
	fail := func(f string, a ...any) ExecEvent {
		if ev.Problem == "" {
			ev.Problem = fmt.Sprintf(f, a...)
		}
		return ev
	}
	// /proc/PID's entries by their full paths, with raw calls: every
	// exec is a new process, so each entry is a lookup the kernel makes
	// anyway; a descriptor of the folder would add an open and a close.
	proc := procEntries(pid)
	exe, err := buf.readlink(proc.path("exe"))
	if err != nil {
		return fail("executable unreadable: %v", err)
	}
	ev.Exe = exe
	// argv and the exec path from the new stack (execstack.go), which
	// is what the program will read.
	var env *envReport
	if facts.env != nil {
		env = &envReport{w: facts.env}
	}
	if ev.Argv, ev.ExecPath, err = buf.execStack(pid, env); err != nil {
		return fail("%v", err)
	}
	if env != nil {
		ev.Env, ev.EnvUnset = env.set, env.unset()
	}
	if ev.Cwd, err = buf.readlink(proc.path("cwd")); err != nil {
		return fail("working folder unreadable: %v", err)
	}
	readPipes(proc, buf, &ev)
	ev.ExecTarget = execTarget(ev.ExecPath, ev.Cwd)
	var running unix.Stat_t
	if err := statPath(proc.path("exe"), &running); err != nil {
		return fail("executable unreadable: %v", err)
	}
	ev.Dev, ev.Ino, ev.Size = running.Dev, running.Ino, running.Size
	switch {
	case strings.HasPrefix(exe, "/memfd:"):
		return fail("executable is a memfd (no file on disk)")
	case strings.HasSuffix(exe, " (deleted)"):
		return fail("executable was deleted")
	case !filepath.IsAbs(exe):
		return fail("executable has no path (%q)", exe)
	case isDynamicLoader(filepath.Base(exe)):
		return fail("the dynamic loader run as a program")
	}
	var named unix.Stat_t
	if err := statPath(buf.cpath(exe), &named); err != nil || named.Dev != running.Dev || named.Ino != running.Ino {
		return fail("executable path no longer names the running file")
	}
	// identify reads through the process's folder only for an executable
	// in a writable place (its content and maps); for any other, a
	// descriptor it would use is -1, which fails (closed).
	dir := -1
	if facts.places.holds(ev.Exe, ev.Dev) {
		if dir, err = unix.Open(string(proc.dir()), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return fail("process unreadable: %v", err)
		}
		defer unix.Close(dir)
	}
	if p := facts.identify(dir, buf, &ev); p != "" {
		return fail("%s", p)
	}
	if mayPush(&ev) {
		ev.GitChanged = facts.gitChanged()
	}
	return ev
}

// readPipes sets ev's StdinPipe, StdoutPipe and ArgPipes (and StdinFile,
// the path of a regular file on descriptor 0): the pipes (or
// FIFOs) of descriptors 0 and 1, and of those its argv names by
// /dev/fd/N or /proc/self/fd/N anywhere in a word (bash <(curl …), sh -c
// '. /dev/fd/3'), by stat through /proc/PID/fd (the process's own table
// at its exec stop). A descriptor that is closed or no pipe gives none. Each is (device, inode) folded into one number
// (pipeID).
func readPipes(proc *procEntry, buf *readBuf, ev *ExecEvent) {
	var st unix.Stat_t
	if statPath(proc.path("fd/0"), &st) == nil {
		ev.StdinPipe = pipeID(&st)
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			ev.StdinFile, _ = buf.readlink(proc.path("fd/0"))
		}
	}
	ev.StdoutPipe = fdPipe(proc, "1")
	add := func(p uint64) {
		if p != 0 && !slices.Contains(ev.ArgPipes, p) && len(ev.ArgPipes) < maxArgPipes {
			ev.ArgPipes = append(ev.ArgPipes, p)
		}
	}
	// From a descriptor folder (cd /dev/fd, which is /proc/PID/fd), a
	// word N or ./N names descriptor N (review rev20g F6).
	inFDs := ev.Cwd == "/dev/fd" || strings.HasPrefix(ev.Cwd, "/proc/") && strings.HasSuffix(ev.Cwd, "/fd")
	for _, a := range ev.Argv[min(1, len(ev.Argv)):] {
		for _, n := range fdsNamed(a) {
			add(fdPipe(proc, n))
		}
		if n := strings.TrimPrefix(a, "./"); inFDs && n != "" && len(n) < 7 && strings.Trim(n, "0123456789") == "" {
			add(fdPipe(proc, n))
		}
	}
}

// maxArgPipes bounds the descriptors an event names.
const maxArgPipes = 16

// mayPush reports whether ev may be a git push or what one runs to
// reach its remote (the exec gate checks its repository then): git by
// its executable or a dashed program, ssh, a shell (git's use_shell), or
// a program the command may have written (a copy of any of them). Only
// those pay for the look at the git directories (ExecEvent.GitChanged).
func mayPush(ev *ExecEvent) bool {
	if ev.Written != "" {
		return true
	}
	base := filepath.Base(ev.Exe)
	switch base {
	case "git", "ssh", "sh", "dash", "bash":
		return true
	}
	return strings.HasPrefix(base, "git-")
}

// execTarget is where the path p (from the folder cwd) a program was
// exec'd by leads when it is a symlink ("" otherwise, or when it cannot
// be resolved).
func execTarget(p, cwd string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = cwd + "/" + p
	}
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return real
}

// fdsNamed are the descriptor numbers the word w names: /dev/stdin,
// /dev/stdout, /dev/stderr, /dev/fd/N and /proc/X/fd/N (X self,
// thread-self or a process: a child holds what it was given at the same
// number), anywhere in the word.
func fdsNamed(w string) []string {
	var out []string
	for i, std := range []string{"/dev/stdin", "/dev/stdout", "/dev/stderr"} {
		if strings.Contains(w, std) {
			out = append(out, strconv.Itoa(i))
		}
	}
	for _, marker := range []string{"/dev/fd/", "/fd/"} {
		for rest := w; ; {
			before, after, ok := strings.Cut(rest, marker)
			if !ok {
				break
			}
			rest = after
			if marker == "/fd/" && !strings.Contains(before, "/proc/") {
				continue
			}
			n := 0
			for n < len(after) && n < 7 && after[n] >= '0' && after[n] <= '9' {
				n++
			}
			if n > 0 && n < 7 {
				out = append(out, after[:n])
			}
		}
	}
	return out
}

// fdPipe is the pipe the descriptor fd (decimal) of the process is, or 0.
func fdPipe(proc *procEntry, fd string) uint64 {
	var st unix.Stat_t
	if statPath(proc.path("fd/"+fd), &st) != nil {
		return 0
	}
	return pipeID(&st)
}

// pipeID is the pipe or FIFO st describes as one number (its device
// folded above its inode: a pipe's and a FIFO file's inodes live on
// different file systems), or 0 for anything else.
func pipeID(st *unix.Stat_t) uint64 {
	if st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return 0
	}
	return st.Ino ^ uint64(st.Dev)<<40
}

// procEntry builds the NUL-terminated paths of one process's /proc
// entries without allocating.
type procEntry struct {
	b [48]byte
	n int // length of "/proc/PID/"
}

func procEntries(pid int) *procEntry {
	p := &procEntry{}
	n := copy(p.b[:], "/proc/")
	n += len(strconv.AppendInt(p.b[n:n], int64(pid), 10))
	p.b[n] = '/'
	p.n = n + 1
	return p
}

// path returns "/proc/PID/name" and a NUL (valid until the next call).
func (p *procEntry) path(name string) []byte {
	n := p.n + copy(p.b[p.n:len(p.b)-1], name)
	p.b[n] = 0
	return p.b[:n+1]
}

// dir returns "/proc/PID" (without a NUL).
func (p *procEntry) dir() []byte { return p.b[:p.n-1] }

// atFDCWD is AT_FDCWD as a system call argument.
const atFDCWD = ^uintptr(99) // -100

// statPath is stat(2) of the NUL-terminated path (raw).
func statPath(path []byte, st *unix.Stat_t) error {
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])), uintptr(unsafe.Pointer(st)), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// validText keeps s as is when it is valid UTF-8 and otherwise writes each
// invalid byte as \xNN, so nothing is lost or merged in the JSON that
// carries it (which would turn such bytes into U+FFFD).
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			fmt.Fprintf(&b, "\\x%02x", s[i])
		} else {
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

// isDynamicLoader reports whether name is an ELF interpreter (ld.so run as
// a program runs whatever file it is given, unseen by the gate).
func isDynamicLoader(name string) bool {
	return name == "ld.so" || strings.HasPrefix(name, "ld-linux") ||
		strings.HasPrefix(name, "ld-musl") || (strings.HasPrefix(name, "ld-") && strings.Contains(name, ".so"))
}

var errTooBig = errors.New("over the size limit")

// readBuf is the one buffer an exec stop's reads go through, one after
// the other (each result is copied out or parsed before the next read), so
// a stop allocates only what it keeps.
type readBuf struct {
	b []byte
	p []byte // cpath's
}

// get returns the buffer at length n, grown when needed.
func (rb *readBuf) get(n int) []byte {
	if cap(rb.b) < n {
		rb.b = make([]byte, n)
	}
	return rb.b[:n]
}

// readlink reads the symbolic link at the NUL-terminated path.
func (rb *readBuf) readlink(path []byte) (string, error) {
	buf := rb.get(max(unix.PathMax, cap(rb.b)))
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_READLINKAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return "", e
		}
		if int(n) < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= 1<<20 {
			return "", errTooBig
		}
		buf = rb.get(2 * len(buf))
	}
}

// cpath returns s and a NUL in the buffer's path space (valid until the
// next cpath).
func (rb *readBuf) cpath(s string) []byte {
	rb.p = append(append(rb.p[:0], s...), 0)
	return rb.p
}

// readCappedAt reads the file name in the folder dir, at most limit bytes
// (more is errTooBig). The result is the buffer's: valid until its next
// read.
func (rb *readBuf) readCappedAt(dir int, name string, limit int) ([]byte, error) {
	fd, err := openAt(dir, name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := rb.get(max(4096, cap(rb.b)))
	n := 0
	for {
		if n > limit {
			return nil, errTooBig
		}
		if n == len(buf) { // grow, keeping what was read
			buf = append(buf, make([]byte, len(buf))...)
			rb.b = buf
		}
		m, err := unix.Read(fd, buf[n:min(len(buf), limit+1)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
}

func openAt(dir int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func ptraceCont(pid, sig int) { ptraceRequest(unix.PTRACE_CONT, pid, sig) }

// ptraceEventMsg is PTRACE_GETEVENTMSG of pid (stopped at a fork, vfork or
// clone event: the new process's or thread's PID), raw like the loop's
// other calls.
func ptraceEventMsg(pid int) (int, bool) {
	var msg uint64
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETEVENTMSG, uintptr(pid), 0, uintptr(unsafe.Pointer(&msg)), 0, 0)
		if e == unix.EINTR {
			continue
		}
		return int(msg), e == 0
	}
}

// ptraceRequest issues a ptrace request that takes a signal as its data;
// ESRCH (the tracee died meanwhile) is expected and ignored. (Raw, like
// every call of the tracer's loop: it never blocks.)
func ptraceRequest(req, pid, sig int) {
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, uintptr(req), uintptr(pid), 0, uintptr(sig), 0, 0)
		if e != unix.EINTR {
			return
		}
	}
}
