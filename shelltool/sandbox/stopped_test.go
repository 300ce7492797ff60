//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
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

// TestKilledWithHiddenDropsOutput: a command with hidden files that the
// server kills itself (timeout, runaway output, cancel) never sends PID
// 1's exit line, which is what says whether a hidden file's mount was
// lost: its output is dropped, fail closed. Without hidden files the same
// kills keep their output.
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
				visible := strings.HasPrefix(res.Stdout, "visible\n")
				if hidden && (visible || res.Stdout != "" || res.Stderr != "" || !strings.Contains(res.Stopped, "before the sandbox could confirm that no hidden file was replaced")) {
					t.Errorf("output kept: stopped %q stdout %.40q", res.Stopped, res.Stdout)
				}
				if !hidden && (!visible || res.Stopped != "") {
					t.Errorf("output lost without hidden files: stopped %q stdout %.40q", res.Stopped, res.Stdout)
				}
			})
		}
	}
}
