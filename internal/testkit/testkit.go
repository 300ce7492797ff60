// Package testkit holds the helpers that tests of several packages (and
// e2e) share: the CI rule for a missing dependency, an unprivileged user
// made with useradd, a private D-Bus session bus, reading one line with a
// bound, and watching a folder for a new name (to stop a process the moment
// it names a file). Only _test.go files import it (internal/archtest checks
// that), so the processes it starts (useradd, userdel, dbus-daemon) run in
// tests only; no server code can reach it.
package testkit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Missing ends a test whose real dependency is not there: under CI=true it
// fails (CI must run it), elsewhere it skips.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format, args...)
}

// User is an unprivileged user made for one test.
type User struct {
	Name     string
	UID, GID uint32
}

// NewUser makes an unprivileged user named prefix-PID (no home, no login
// shell) and removes it after the test. It needs root and useradd (Missing
// otherwise). A user of that name left by a killed earlier run is removed
// first, and useradd is tried again while another process holds the
// password file's lock (the machine's other tests may be adding users too).
func NewUser(t testing.TB, prefix string) User {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "not root: cannot make a user for the test")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		Missing(t, "useradd is not installed: %v", err)
	}
	name := fmt.Sprintf("%s-%d", prefix, os.Getpid())
	if _, err := user.Lookup(name); err == nil {
		exec.Command("userdel", name).Run()
	}
	for try := 0; ; try++ {
		out, err := exec.Command("useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err == nil {
			break
		}
		if try < 50 && strings.Contains(string(out), "lock") {
			time.Sleep(100 * time.Millisecond) // another useradd holds /etc/passwd's lock
			continue
		}
		t.Fatalf("useradd %s: %v %s", name, err, out)
	}
	t.Cleanup(func() { exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	return User{Name: name, UID: uint32(uid), GID: uint32(gid)}
}

// SessionBus starts a private dbus-daemon --session for the test (Missing
// when dbus-daemon is not installed) and returns its address once it
// listens; the daemon is killed after the test.
func SessionBus(t testing.TB) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		Missing(t, "no dbus-daemon (Debian package dbus, installed by .ci/run)")
	}
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--print-address=1",
		"--address=unix:path="+filepath.Join(t.TempDir(), "bus"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	return strings.TrimSpace(line)
}

// ReadLine reads one line from r or gives up after d: a peer that never
// answers must fail the test, not hang it. On a timeout the read goes on in
// the background; r must not be used again.
func ReadLine(r *bufio.Reader, d time.Duration) (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := r.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		return res.line, res.err
	case <-time.After(d):
		return "", fmt.Errorf("no line within %s", d)
	}
}

// DirWatch tells when a name appears in a folder (inotify: created, linked
// or moved in), without polling: a test can stop a process the moment it
// names a file there.
type DirWatch struct {
	fd int
}

// WatchDir watches dir, which must exist, until the test ends.
func WatchDir(t testing.TB, dir string) *DirWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return &DirWatch{fd: fd}
}

// Wait returns true as soon as a name has appeared since the last Wait (or
// since WatchDir), false when none did within d; Wait(0) only forgets the
// names seen so far.
func (w *DirWatch) Wait(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(max(0, time.Until(deadline).Milliseconds())))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return false
		}
		seen := false
		for buf := make([]byte, 64<<10); ; {
			n, err := unix.Read(w.fd, buf)
			if n <= 0 || err != nil {
				return seen
			}
			seen = true
		}
	}
}

// Stop stops the child process pid (SIGSTOP) and returns once the kernel
// reports it stopped, which is when every thread of it has: kill returns
// with the signal only queued, and a thread in a system call (a rename, an
// fsync) finishes it first. After Stop, what the process has done on disk
// is what a SIGKILL would find. The test fails if the process ends instead,
// or does not stop within 30 s. pid must be a child of the test (waitid).
func Stop(t testing.TB, pid int) {
	t.Helper()
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", pid, err)
	}
	type result struct {
		code int32
		err  error
	}
	done := make(chan result, 1)
	go func() {
		for {
			var info unix.Siginfo
			// WNOWAIT: the state stays for the test's own Wait.
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				done <- result{info.Code, err}
				return
			}
		}
	}()
	const cldStopped = 5 // siginfo si_code for a child stopped by a signal
	select {
	case r := <-done:
		if r.err != nil || r.code != cldStopped {
			t.Fatalf("process %d did not stop (si_code %d): %v", pid, r.code, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("process %d did not stop within 30 s", pid)
	}
}
