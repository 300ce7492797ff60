//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
	"golang.org/x/sys/unix"
)

// TestStoppedKeepsNoGitStage: a command stopped because a hidden file was
// replaced on the host may have read the new file; what it staged in .git
// (a record file whose content it chose, a file whose name it chose) is neither merged into the
// repository nor named in the result.
func TestStoppedKeepsNoGitStage(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	env := filepath.Join(ws.dir, ".env")
	writeFile(t, env, "OLD-SECRET\n", 0o600)
	gitDir := filepath.Join(ws.dir, ".git")
	w := testkit.WatchDir(t, ws.dir)
	s := ws.spec(`echo stolen > .git/FETCH_HEAD && echo x > .git/junk-name && touch started; while :; do read -r l < .env 2>/dev/null && echo "$l"; done`)
	s.Hidden = []string{env}
	s.GitDirs = []string{gitDir}
	s.Timeout = 60 * time.Second
	done := runAsync(s)
	awaitName(t, w, ws.dir, "started", done)
	replaceByRename(t, env, "NEW-SECRET\n")
	r := <-done
	if r.err != nil || r.res.Stopped == "" {
		t.Fatalf("not stopped: %v %+v", r.err, r.res)
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "FETCH_HEAD")); !os.IsNotExist(err) {
		t.Errorf("the stopped command's FETCH_HEAD was merged into .git: %v", err)
	}
	if len(r.res.GitDropped) != 0 {
		t.Errorf("the result names what the stopped command made in .git: %q", r.res.GitDropped)
	}
}

// TestKilledWithHiddenDropsOutput: a command that the server kills itself
// (timeout, runaway output, cancel) never sends PID 1's exit line, which
// is what says whether a hidden file's mount was lost; the server's own
// look at the command's mount table (opened at "started") says it then:
// unchanged, the output is kept, with or without hidden files. (The
// changed case: TestMountTableChanged.)
func TestKilledWithHiddenDropsOutput(t *testing.T) {
	needSandbox(t)
	tests := []struct {
		name, cmd string
		timeout   time.Duration
		cancel    bool
		want      func(Result) bool
	}{
		{"timeout", "echo visible; sleep 60", 2 * time.Second, false, func(r Result) bool { return r.TimedOut }},
		{"runaway output", "echo visible; head -c 4194304 /dev/zero; sleep 60", 60 * time.Second, false, func(r Result) bool { return r.OutputExceeded }},
		{"cancel", "echo visible; touch started; sleep 60", 60 * time.Second, true, func(Result) bool { return true }},
	}
	for _, tc := range tests {
		for _, hidden := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: " hidden", false: " none hidden"}[hidden], func(t *testing.T) {
				ws := newWorkspace(t)
				env := filepath.Join(ws.dir, ".env")
				writeFile(t, env, "SECRET\n", 0o600)
				s := ws.spec(tc.cmd)
				// Gated, as every sandboxed command of the tool is: the
				// shell is held until PID 1 has said "started" (without
				// the gate a command may run before that line, and a kill
				// then drops its output: the safe way, not this test's).
				s.ExecGate = (&gateRecorder{}).gate
				if hidden {
					s.Hidden = []string{env}
				}
				s.Timeout = tc.timeout
				s.KillAfterOutput = 1 << 20
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancel {
					w := testkit.WatchDir(t, ws.dir)
					go func() {
						for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); w.Wait(100 * time.Millisecond) {
							if _, err := os.Lstat(filepath.Join(ws.dir, "started")); err == nil {
								break
							}
						}
						cancel()
					}()
				}
				res, err := Run(ctx, s)
				if tc.cancel != (err != nil) || !tc.want(res) {
					t.Fatalf("err %v result %+v", err, res)
				}
				if !strings.HasPrefix(res.Stdout, "visible\n") || res.Stopped != "" {
					t.Errorf("output lost though no mount changed: stopped %q stdout %.40q", res.Stopped, res.Stdout)
				}
			})
		}
	}
}

// TestMountTableChanged: the server's check of a killed command's mount
// table, on a real namespace: unchanged while nothing happens to it; a
// mount of it detached by the host (its mount point removed) is a change;
// a table it could not open counts as changed.
func TestMountTableChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		missingDep(t, "not root: cannot mount on the host")
	}
	if mountTableChanged(-1) != true {
		t.Fatal("a table never opened must count as changed")
	}
	point := filepath.Join(t.TempDir(), "m")
	if err := os.Mkdir(point, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", point, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(point, unix.MNT_DETACH) })
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sleep", "60")
	if err := cmd.Start(); err != nil {
		missingDep(t, "no unshare (util-linux): %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// unshare made its namespace once /proc/PID/ns/mnt differs from ours.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		a, _ := os.Readlink("/proc/self/ns/mnt")
		b, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid))
		if b != "" && a != b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("unshare made no mount namespace")
		}
	}
	fd := openMountTable(cmd.Process.Pid)
	if fd < 0 {
		t.Fatal("could not open the child's mount table")
	}
	defer unix.Close(fd)
	if mountTableChanged(fd) {
		t.Fatal("changed before anything happened")
	}
	if err := unix.Unmount(point, 0); err != nil {
		t.Fatal(err)
	}
	if mountTableChanged(fd) {
		t.Fatal("a host unmount reached a private namespace")
	}
	if err := os.Remove(point); err != nil {
		t.Fatal(err)
	}
	if !mountTableChanged(fd) {
		t.Fatal("the host removed a mount point of the namespace: no change seen")
	}
	if openMountTable(os.Getpid()) >= 0 {
		t.Fatal("opened the table of a process that is not our child")
	}
}
