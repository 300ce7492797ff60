//go:build linux

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	helperArg = "__onellm_sandbox_helper"
	// helperGuard comes first on the helper's command line: should the binary
	// not call MaybeRunHelper, a Go test binary runs no test and another
	// program most likely stops on an unknown flag, instead of starting a
	// nested copy of itself. Run then reports ErrUnavailable.
	helperGuard = "-test.run=^$"
	helperName  = "onellm-sandbox"
	fdSpec      = 3
	fdStatus    = 4
	// fdProxy is the helper's end of the socketpair the proxy listener is
	// handed over on (NetworkProxy only).
	fdProxy = 5
	// fdGitStage is the helper's end of the socketpair the git stage is
	// handed over on (makeGitStage); fd 6 is fdGate.
	fdGitStage = 7
	exitSetup  = 125
	// helperNewNetEnv is in the helper's environment when it was cloned
	// into a network namespace of its own.
	helperNewNetEnv = "ONELLM_SANDBOX_NEWNET=1"
)

// helperSpec is what the server sends the helper (JSON on fd 3).
type helperSpec struct {
	Shell       string   `json:"shell"`
	Command     string   `json:"command"`
	Dir         string   `json:"dir"`
	Env         []string `json:"env"`
	Writable    []string `json:"writable"`
	Readable    []string `json:"readable"`
	ReadOnly    []string `json:"read_only"`
	Hidden      []string `json:"hidden,omitempty"`
	GitDirs     []string `json:"git_dirs,omitempty"` // overlaid (gitdirs.go)
	Home        string   `json:"home,omitempty"`     // made in the private /tmp
	NewNet      bool     `json:"new_net"`
	TCPConnect  []uint16 `json:"tcp_connect"`
	Proxy       bool     `json:"proxy,omitempty"` // bind ProxyPort, send it on fdProxy
	CPUSeconds  uint64   `json:"cpu_seconds"`
	FileSizeMax int64    `json:"file_size_max"`
	TmpSize     int64    `json:"tmp_size"`
	NoLandlock  bool     `json:"no_landlock,omitempty"` // tests: simulate ABI 0
	// Gate turns the exec gate on: PID 1 traces the stage and sends every
	// exec on fdGate.
	Gate     bool `json:"gate,omitempty"`
	NoPtrace bool `json:"no_ptrace,omitempty"` // tests: ptrace refused
	// HashSizes are Spec.IdentitySizes: a written executable of one of
	// these sizes is hashed (ExecEvent.SHA256).
	HashSizes []int64 `json:"hash_sizes,omitempty"`
	// ExecEnv is Spec.ExecEnv.
	ExecEnv EnvWatch `json:"exec_env,omitempty"`
	// EtcDir and EtcSecrets (tests only) replace /etc and etcSecrets.
	EtcDir     string   `json:"etc_dir,omitempty"`
	EtcSecrets []string `json:"etc_secrets,omitempty"`
}

// statusMsg is one line the helper writes on fd 4.
type statusMsg struct {
	T      string `json:"t"` // "err", "started", "exit"
	Step   string `json:"step,omitempty"`
	Errno  int    `json:"errno,omitempty"`
	Msg    string `json:"msg,omitempty"`
	Code   int    `json:"code,omitempty"`
	Signal int    `json:"signal,omitempty"`
	// TracerNS is the exec gate tracer thread's own CPU time (exit only).
	TracerNS int64 `json:"tracer_ns,omitempty"`
	// Stopped says why PID 1 killed the command (exit only): a mount of
	// the set-up was lost (guardWatch).
	Stopped string `json:"stopped,omitempty"`
}

// MaybeRunHelper must be called first thing in main (and in TestMain of any
// test binary that calls Run or Probe). When the process was started as the
// sandbox helper (argv: "onellm-sandbox -test.run=^$ __onellm_sandbox_helper")
// it sets up the sandbox, runs the command and exits; otherwise it returns at
// once.
func MaybeRunHelper() {
	if len(os.Args) != 3 || os.Args[1] != helperGuard || os.Args[2] != helperArg {
		return
	}
	// Never unlocked: this thread is the exec gate's tracer, and every
	// ptrace request must come from it.
	runtime.LockOSThread()
	// syscall.Exit, not os.Exit: nothing to flush, and under the race
	// detector os.Exit sleeps a second at exit.
	syscall.Exit(helperMain())
}

type setupError struct {
	step string
	err  error
}

func (e *setupError) Error() string { return e.step + ": " + e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// errStatus is the status line reporting a setup failure.
func errStatus(err error) statusMsg {
	m := statusMsg{T: "err", Step: "setup", Msg: err.Error()}
	var se *setupError
	if errors.As(err, &se) {
		m.Step, m.Msg = se.step, se.err.Error()
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		m.Errno = int(en)
	}
	return m
}

func step(name string, err error) error {
	if err == nil {
		return nil
	}
	return &setupError{step: name, err: err}
}

func helperMain() int {
	// Nothing inherited beyond stdio reaches the shell (the server may
	// itself have inherited descriptors without close-on-exec).
	cloexecErr := unix.CloseRange(fdStatus, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	// Not dumpable: the command runs with the same uid, so without this it
	// could open /proc/1/mem or /proc/1/fd/* and take over the helper,
	// which is not restricted (it is the exec gate's tracer).
	dumpErr := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	status := os.NewFile(fdStatus, "status")
	send := func(m statusMsg) {
		b, _ := json.Marshal(m)
		_, _ = status.Write(append(b, '\n'))
	}
	var sup *supervisor
	var err error
	switch {
	case cloexecErr != nil:
		err = step("close_range", cloexecErr)
	case dumpErr != nil:
		err = step("set non-dumpable", dumpErr)
	default:
		sup, err = helperSetupAndStart()
	}
	if err != nil {
		send(errStatus(err))
		return exitSetup
	}
	sup.send = send
	return sup.run()
}

// helperSetupAndStart reads the spec, makes the mounts and the network,
// builds the restrictions and starts the command from a restricted thread;
// with the exec gate it seizes the shell, stopped before its first
// instruction, and lets it run.
func helperSetupAndStart() (*supervisor, error) {
	// Before the spec arrives (a warm helper waits for it here): what
	// depends on no spec.
	rt := newRestrictedThread()
	started := false
	defer func() {
		if !started {
			rt.close()
		}
	}()
	primeCodecs()
	etc := prepareMask("/etc", etcSecrets())
	defer func() { etc.close() }()
	// Its own, empty network namespace (the spec must agree): lo comes up
	// now, before the spec.
	newNet := slices.Contains(os.Environ(), helperNewNetEnv)
	if newNet {
		if err := step("loopback up", loopbackUp()); err != nil {
			return nil, err
		}
	}
	// The landlock rules on what the set-up mounts nothing over.
	abi, abiErr := landlockABI()
	var rs *ruleset
	if abiErr == nil && abi >= 1 {
		var err error
		if rs, err = systemRuleset(abi, newNet); err != nil {
			return nil, err
		}
		defer rs.close()
	}
	specFile := os.NewFile(fdSpec, "spec")
	data, err := readSpecLine(specFile)
	specFile.Close()
	if err != nil {
		return nil, step("read spec", err)
	}
	var hs helperSpec
	if err := json.Unmarshal(data, &hs); err != nil {
		return nil, step("decode spec", err)
	}
	if hs.NoLandlock {
		abi, abiErr = 0, unix.EOPNOTSUPP
	}
	if abiErr != nil || abi < 1 {
		return nil, step("landlock abi", fmt.Errorf("landlock ABI %d: %v", abi, abiErr))
	}
	if hs.EtcDir != "" { // tests
		etc.close()
		etc = prepareMask(hs.EtcDir, hs.EtcSecrets)
	}
	guards, inherited, err := setupMounts(&hs, etc)
	if err != nil {
		return nil, err
	}
	// Opened before the command starts: a mount lost from now on is seen.
	watch, err := openWatch(guards, inherited)
	if err != nil {
		return nil, err
	}
	defer func() {
		if !started {
			watch.close()
		}
	}()
	if hs.NewNet != newNet {
		return nil, step("network namespace", fmt.Errorf("the spec's new_net is %v, the helper was cloned with %v", hs.NewNet, newNet))
	}
	if hs.Proxy {
		if err := step("proxy listener", handOverListener()); err != nil {
			return nil, err
		}
	}
	if err := buildRuleset(rs, &hs); err != nil {
		return nil, err
	}
	if err := setRlimits(&hs); err != nil {
		return nil, err
	}
	started = true
	st, err := rt.start(&hs, rs)
	if err != nil {
		return nil, err
	}
	sup := &supervisor{shell: st.pid, watch: watch, lin: newLineage(st.pid)}
	watch.start()
	if hs.Gate {
		seizeErr := seize(st.pid)
		if hs.NoPtrace {
			seizeErr = fmt.Errorf("ptrace seize: %w", unix.EPERM)
		}
		if err := step("exec gate", seizeErr); err != nil {
			_ = unix.Kill(st.pid, unix.SIGKILL)
			return nil, err
		}
		// The shell stays stopped until run has said "started": the
		// server opens the command's mount table at that line, so no
		// command output can come before it.
		sup.traced, sup.gate, sup.held = true, fdGate, true
		sup.facts = execFacts{places: findWritablePlaces(hs.Writable, hs.Readable), sizes: map[int64]bool{}, env: compileEnvWatch(hs.ExecEnv), git: watchGitDirs(hs.GitDirs)}
		for _, n := range hs.HashSizes {
			sup.facts.sizes[n] = true
		}
	}
	return sup, nil
}

// readSpecLine reads the spec: one line of JSON (json.Marshal escapes
// every control byte, so its output holds no newline), which the server
// ends with one. The line, not the end of the pipe, ends it: the helper
// goes on as soon as the last byte arrived, without waiting to be woken
// again by the server's close. End-of-file before the newline is an
// error (the server stopped part-way: nothing is decoded).
func readSpecLine(r io.Reader) ([]byte, error) {
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if i := bytes.IndexByte(buf[len(buf):len(buf)+n], '\n'); i >= 0 {
			return buf[:len(buf)+i], nil
		}
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
	}
}

// primeCodecs builds encoding/json's per-type caches for the spec and the
// status lines before the spec arrives (a warm helper waits for it right
// after), so a command does not wait for them: they are most of the
// spec's decoding time in a fresh process.
func primeCodecs() {
	var hs helperSpec
	_ = json.Unmarshal([]byte("{}"), &hs)
	_, _ = json.Marshal(statusMsg{})
}

// setupMounts makes the sandbox's mounts and returns the guards to watch
// while the command runs (hidden.go).
func setupMounts(hs *helperSpec, etc *maskPrep) (guards []guard, inherited map[uint64]bool, err error) {
	if err := step("mount private", unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")); err != nil {
		return nil, nil, err
	}
	if err := step("mount proc", unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")); err != nil {
		return nil, nil, err
	}
	// What the namespace holds before the set-up mounts anything (nothing
	// propagates in any more): only the loss of a mount made after this
	// stops the command (guardWatch).
	if inherited, err = mountIDs(); err != nil {
		return nil, nil, step("read the mount table", err)
	}
	gitMounts := openGitMounts(hs)
	defer closeGitMounts(gitMounts)
	// Roots under /tmp are opened before the private tmpfs hides them, then
	// bound back (parents first; a root beneath a bound one comes along).
	type keep struct {
		path string
		fd   int
		dir  bool
	}
	var under []keep
	roots := append(append([]string{}, hs.Writable...), hs.Readable...)
	sort.Slice(roots, func(i, j int) bool { return len(roots[i]) < len(roots[j]) })
	for _, r := range roots {
		if !isBeneath(r, "/tmp") {
			continue
		}
		covered := false
		for _, k := range under {
			if isBeneath(r, k.path) {
				covered = true
			}
		}
		if covered {
			continue
		}
		fd, err := unix.Open(r, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // a missing root grants nothing
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, nil, step("stat "+r, err)
		}
		under = append(under, keep{path: r, fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	defer func() {
		for _, k := range under {
			unix.Close(k.fd)
		}
	}()
	opts := "mode=1777,size=" + strconv.FormatInt(hs.TmpSize, 10)
	if err := step("mount tmpfs /tmp", unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts)); err != nil {
		return nil, nil, err
	}
	for _, k := range under {
		if k.path != "/tmp" {
			if k.dir {
				if err := os.MkdirAll(k.path, 0o755); err != nil {
					return nil, nil, step("mkdir "+k.path, err)
				}
			} else {
				if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
					return nil, nil, step("mkdir "+k.path, err)
				}
				f, err := os.OpenFile(k.path, os.O_CREATE|os.O_WRONLY, 0o600)
				if err != nil {
					return nil, nil, step("create "+k.path, err)
				}
				f.Close()
			}
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := step("bind "+k.path, unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, "")); err != nil {
			return nil, nil, err
		}
	}
	if hs.Home != "" {
		// Validated by normalize: no root holds it, so this is the
		// private tmpfs, and it cannot exist yet.
		if err := step("mkdir home "+hs.Home, os.Mkdir(hs.Home, 0o700)); err != nil {
			return nil, nil, err
		}
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if err := step("mount tmpfs /dev/shm", unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts)); err != nil {
			return nil, nil, err
		}
	}
	if err := nosuidRoots(hs.Writable); err != nil {
		return nil, nil, err
	}
	pinned := map[string]bool{} // folders bound onto themselves: never again
	if len(gitMounts) > 0 {
		stage, err := makeGitStage(gitMounts, hs.TmpSize)
		if err != nil {
			return nil, nil, err
		}
		err = mountGitOverlays(gitMounts, stage, hs.Writable, pinned)
		unix.Close(stage) // the overlays and the server hold it now
		if err != nil {
			return nil, nil, err
		}
	} else {
		unix.Close(fdGitStage) // nothing to hand over
	}
	guards, err = hideSecrets(hs, etc)
	if err != nil {
		return nil, nil, err
	}
	ro, err := readOnlyBinds(hs, pinned)
	return append(guards, ro...), inherited, err
}

// hideSecrets masks the secrets of /etc (applyMask: an overlay, its top
// layer prepared before the spec arrived) and binds an
// empty, mode 000, read-only placeholder over every other path that exists
// (absolute: credential files the caller found in the writable roots, and
// targets outside /etc of symlinks among /etc's secrets). Without
// capabilities not even uid 0 can open one (EACCES), and the read-only
// mount stops chmod. It returns the guards of what it mounted (guardWatch).
func hideSecrets(hs *helperSpec, etc *maskPrep) ([]guard, error) {
	guards, outside, err := applyMask(etc, 0)
	if err != nil {
		return nil, err
	}
	paths := append(append([]string(nil), hs.Hidden...), outside...)
	if len(paths) == 0 {
		return guards, nil
	}
	ph, err := os.MkdirTemp("/tmp", ".onellm-hidden-")
	if err != nil {
		return nil, step("hide secrets", err)
	}
	phFile, phDir := filepath.Join(ph, "f"), filepath.Join(ph, "d")
	if err := os.WriteFile(phFile, nil, 0); err != nil {
		return nil, step("hide secrets", err)
	}
	if err := os.Mkdir(phDir, 0); err != nil {
		return nil, step("hide secrets", err)
	}
	if err := os.Chmod(phFile, 0); err != nil {
		return nil, step("hide secrets", err)
	}
	if err := os.Chmod(phDir, 0); err != nil {
		return nil, step("hide secrets", err)
	}
	for _, p := range paths {
		hidden, err := hideOne(p, phFile, phDir)
		if err != nil {
			return nil, step("hide "+p, err)
		}
		if !hidden {
			continue
		}
		ro := uint64(unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC)
		if err := step("hide "+p, addMountAttrs(p, ro)); err != nil {
			return nil, err
		}
		guards = append(guards, guard{path: resolved(p), verb: "read"})
	}
	// The placeholders stay referenced by their mounts only.
	_ = os.Remove(phFile)
	_ = os.Remove(phDir)
	_ = os.Remove(ph)
	return guards, nil
}

// hideOne binds the placeholder file or folder over p, if p exists. The
// host may replace p while this runs (useradd and passwd rename a new
// /etc/shadow into place): a mount on the name's old, now unlinked entry
// fails with ENOENT, so it looks p up again, a few times, before failing.
func hideOne(p, phFile, phDir string) (hidden bool, err error) {
	for range 5 {
		fi, err := os.Stat(p) // follows a symlink: its target is hidden
		if err != nil {
			return false, nil
		}
		src := phFile
		if fi.IsDir() {
			src = phDir
		}
		err = unix.Mount(src, p, "", unix.MS_BIND, "")
		if !errors.Is(err, unix.ENOENT) {
			return err == nil, err
		}
	}
	return false, fmt.Errorf("%s was replaced while it was being hidden, again and again: %w", p, unix.ENOENT)
}

// readOnlyBinds bind-mounts each existing ReadOnly path read-only, with
// every mount beneath it (a git directory's overlay and record folders
// inside a folder closed to writes are closed too). Its ancestors inside
// the writable root are bound onto themselves first: a mount point cannot
// be renamed or removed, so `mv .git x` cannot move the carve-out away.
func readOnlyBinds(hs *helperSpec, pinned map[string]bool) ([]guard, error) {
	var guards []guard
	ro := append([]string{}, hs.ReadOnly...)
	sort.Strings(ro)
	for _, p := range ro {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := pinAncestors(p, hs.Writable, pinned); err != nil {
			return nil, err
		}
		if err := step("bind "+p, unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, "")); err != nil {
			return nil, err
		}
		if err := step("read-only "+p, addMountAttrs(p, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID)); err != nil {
			return nil, err
		}
		pinned[p] = true // a mount point already: never bind over it again
		guards = append(guards, guard{path: resolved(p), verb: "write"})
	}
	return guards, nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// handOverListener binds 127.0.0.1:ProxyPort in the new network namespace,
// sends the listening socket to the server over fdProxy (SCM_RIGHTS) and
// closes both: the helper keeps no copy, and the shell never gets one (both
// were close-on-exec anyway).
func handOverListener() error {
	defer unix.Close(fdProxy)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("bind 127.0.0.1:%d: %w", ProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := unix.Sendmsg(fdProxy, []byte{'L'}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("send to the server: %w", err)
	}
	return nil
}

// systemRuleset makes the ruleset (pinned to abi; TCP handled when the
// helper has a network namespace of its own, which the spec must agree
// with) and grants what lies where the set-up mounts nothing: the system
// folders, /sys's few, /dev's devices and its listing. Made before the
// spec arrives (a warm helper, while it waits), so the rules hold the
// inodes those paths named then, as the /etc mask's top layer holds
// the state of /etc then.
func systemRuleset(abi int, newNet bool) (*ruleset, error) {
	rs, err := newRuleset(abi, newNet)
	if err != nil {
		return nil, step("landlock ruleset", err)
	}
	for _, r := range []struct {
		paths  []string
		access uint64
	}{
		{systemReadExec(), llReadExe},
		{systemRead(), llRead},
		{devRW(), llDevRW},
		{[]string{"/dev"}, unix.LANDLOCK_ACCESS_FS_READ_DIR},
	} {
		if err := rs.addPaths(r.paths, r.access); err != nil {
			rs.close()
			return nil, err
		}
	}
	return rs, nil
}

// buildRuleset adds to rs (systemRuleset) the rules on what the set-up
// mounted (/proc, /tmp, /dev/shm, the /etc overlay) and the spec's roots
// and ports.
func buildRuleset(rs *ruleset, hs *helperSpec) error {
	all := rs.fsAll
	for _, r := range []struct {
		paths  []string
		access uint64
	}{
		{[]string{"/proc"}, llRead},
		{[]string{"/tmp", "/dev/shm"}, all},
		// /etc as a whole: its secrets are masked by an overlay (hidden.go).
		{[]string{"/etc"}, llRead},
		{hs.Readable, llReadExe},
		{hs.Writable, all},
	} {
		if err := rs.addPaths(r.paths, r.access); err != nil {
			return err
		}
	}
	for _, port := range hs.TCPConnect {
		if err := step("landlock tcp rule", rs.addTCPConnect(port)); err != nil {
			return err
		}
	}
	return nil
}

func setRlimits(hs *helperSpec) error {
	set := func(name string, res int, cur, max uint64) error {
		var old syscall.Rlimit
		if err := syscall.Getrlimit(res, &old); err == nil && old.Max < max {
			max = old.Max
			cur = min(cur, max)
		}
		return step("rlimit "+name, syscall.Setrlimit(res, &syscall.Rlimit{Cur: cur, Max: max}))
	}
	if err := set("core", unix.RLIMIT_CORE, 0, 0); err != nil {
		return err
	}
	fs := uint64(hs.FileSizeMax)
	if err := set("fsize", unix.RLIMIT_FSIZE, fs, fs); err != nil {
		return err
	}
	if err := set("nofile", unix.RLIMIT_NOFILE, 1024, 1024); err != nil {
		return err
	}
	if hs.CPUSeconds > 0 {
		if err := set("cpu", unix.RLIMIT_CPU, hs.CPUSeconds, hs.CPUSeconds+5); err != nil {
			return err
		}
	}
	return nil
}

// dropCapabilities empties every capability set of this thread, for good.
func dropCapabilities() error {
	// Lock securebits first (needs CAP_SETPCAP): uid 0 gets no capabilities
	// back on execve, set*uid never restores them.
	const secbits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5 // NOROOT(+LOCKED), NO_SETUID_FIXUP(+LOCKED), KEEP_CAPS_LOCKED
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbits, 0, 0, 0); err != nil {
		return step("securebits", err)
	}
	// Every capability the kernel knows: EINVAL marks the end.
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL {
			if c <= unix.CAP_LAST_CAP {
				return step("capbset drop "+strconv.Itoa(c), err)
			}
			break
		}
		if err != nil {
			return step("capbset drop "+strconv.Itoa(c), err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return step("ambient clear", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return step("capset", err)
	}
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return step("capget", err)
	}
	for _, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			return step("capset", errors.New("capabilities still set"))
		}
	}
	return nil
}

// canary checks that landlock now enforces: "/" is never granted, so opening
// it must fail with EACCES (when "/" is a Readable root, writing
// /proc/self/comm must fail instead).
func canary(hs *helperSpec) error {
	path, flags := "/", unix.O_RDONLY|unix.O_DIRECTORY
	for _, r := range hs.Readable {
		if r == "/" {
			path, flags = "/proc/self/comm", unix.O_WRONLY
		}
	}
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
		return step("canary", fmt.Errorf("open %s succeeded under landlock", path))
	}
	if err != unix.EACCES {
		return step("canary", fmt.Errorf("open %s: %w (want EACCES)", path, err))
	}
	return nil
}
