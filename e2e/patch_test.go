package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// TestApplyPatchMoreOverStdio: a dry run changes nothing; a patch through a
// symlink out of the workspace is an outside write, which needs a person.
func TestApplyPatchMoreOverStdio(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	f.write(t, "a.txt", "one\n")
	outside := filepath.Join(f.Root, "outside")
	f.write(t, filepath.Join(outside, "o.txt"), "outside\n")
	if err := os.Symlink(outside, filepath.Join(f.Workspace, "link")); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, f, Legacy)

	res := call(t, c, "apply_patch", map[string]any{"dry_run": true, "edits": []map[string]any{{"path": "a.txt", "old_text": "one", "new_text": "ONE"}}})
	if res.IsError || !strings.Contains(text(res), "dry run") {
		t.Fatalf("dry run: %s", text(res))
	}
	if b, _ := os.ReadFile(filepath.Join(f.Workspace, "a.txt")); string(b) != "one\n" {
		t.Fatalf("a dry run wrote: %q", b)
	}
	res = call(t, c, "apply_patch", map[string]any{"patch": "--- a/link/o.txt\n+++ b/link/o.txt\n@@ -1 +1 @@\n-outside\n+PWNED\n"})
	if !res.IsError || !strings.Contains(text(res), "filesystem.write "+filepath.Join(outside, "o.txt")) || !strings.Contains(text(res), "approval_unavailable") {
		t.Fatalf("a write through a symlink out of the workspace: %s", text(res))
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "o.txt")); string(b) != "outside\n" {
		t.Fatalf("the outside file changed: %q", b)
	}
}

// TestApplyPatchSurvivesSIGKILL kills the server while it applies large
// multi-file patches, many times, and starts it again (which settles the
// interrupted patch from its journal): the tree must then be wholly old or
// wholly new, never a mix or a truncation, with no temporary file left.
//
// Half the rounds kill at a random moment of the call; the other half kill
// inside the commit window: the server is stopped (SIGSTOP) the moment its
// journal is named in the state folder (inotify, no polling). Every kill is
// made once every thread of the server has stopped, so the test knows
// whether a journal was there when it landed, and the restart must then say
// it settled one (and must not otherwise). At least one round must have
// landed mid-commit, or the test has not tested the journal at all.
func TestApplyPatchSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the server many times")
	}
	f := newFixture(t, `profile = "interactive-dev"`)
	const files = 12
	// Large files, small edits: the time goes into writing and syncing.
	filler := strings.Repeat("a line that stays the same in every version\n", 40000)
	oldBody := func(i int) string { return filler + fmt.Sprintf("marker of file %d: old\n", i) + filler }
	newBody := func(i int) string { return filler + fmt.Sprintf("marker of file %d: NEW\n", i) + filler }
	var edits []map[string]any
	for i := range files {
		edits = append(edits, map[string]any{"path": fmt.Sprintf("f%02d.txt", i),
			"old_text": fmt.Sprintf("marker of file %d: old", i), "new_text": fmt.Sprintf("marker of file %d: NEW", i)})
	}
	args, _ := json.Marshal(map[string]any{"edits": edits})
	request := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"apply_patch","arguments":%s}}`, args)
	// One uninterrupted run tells how long the call takes (random kills
	// then land anywhere in that window) and makes the journal folder.
	c := stdioClient(t, f, Legacy)
	for i := range files {
		f.write(t, fmt.Sprintf("f%02d.txt", i), oldBody(i))
	}
	start := time.Now()
	if res := call(t, c, "apply_patch", map[string]any{"edits": edits}); res.IsError {
		t.Fatal(text(res))
	}
	window := time.Since(start)
	c.Close()
	t.Logf("an uninterrupted call takes %s", window)
	journals := filepath.Join(f.Root, ".local", "state", "onellm-mcp", "patches")
	if _, err := os.Stat(journals); err != nil {
		t.Fatalf("no journal folder after a multi-file patch: %v", err)
	}
	watch := testkit.WatchDir(t, journals)
	journalThere := func() bool {
		ents, err := os.ReadDir(journals)
		if err != nil {
			t.Fatal(err)
		}
		return len(ents) > 0
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var sawOld, sawNew, sawMixedSet, midCommit int
	const rounds = 24
	for round := range rounds {
		for i := range files {
			f.write(t, fmt.Sprintf("f%02d.txt", i), oldBody(i))
		}
		if journalThere() {
			t.Fatalf("round %d: a journal is left from the round before", round)
		}
		cmd, stdin := startInitialized(t, f)
		watch.Wait(0) // forget names from earlier rounds
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		fmt.Fprintln(stdin, request)
		if round%2 == 0 {
			time.Sleep(time.Duration(rng.Int64N(int64(window) * 3 / 2))) // start-up comes first
		} else if !watch.Wait(time.Minute) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: no journal named within a minute of the call", round)
		}
		testkit.Stop(t, cmd.Process.Pid) // frozen: what is on disk now is what the kill finds
		inCommit := journalThere()
		cmd.Process.Kill()
		cmd.Wait()
		if inCommit {
			midCommit++
		}
		said := restart(t, f) // the next start settles the interrupted patch
		if settled := strings.Contains(said, "interrupted patch"); settled != inCommit {
			t.Errorf("round %d: journal there at the kill %v, but the restart said %q", round, inCommit, said)
		}
		old, fresh := 0, 0
		for i := range files {
			b, err := os.ReadFile(filepath.Join(f.Workspace, fmt.Sprintf("f%02d.txt", i)))
			switch {
			case err != nil:
				t.Fatalf("round %d: f%02d.txt: %v", round, i, err)
			case string(b) == oldBody(i):
				old++
			case string(b) == newBody(i):
				fresh++
			default:
				t.Fatalf("round %d: f%02d.txt is neither old nor new (%d bytes)", round, i, len(b))
			}
		}
		switch {
		case fresh == 0:
			sawOld++
		case old == 0:
			sawNew++
		default:
			sawMixedSet++
			t.Errorf("round %d: %d files old and %d new after the restart", round, old, fresh)
		}
		entries, _ := os.ReadDir(f.Workspace)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".onellm-") {
				t.Errorf("round %d: temporary file left after the restart: %s", round, e.Name())
				os.Remove(filepath.Join(f.Workspace, e.Name()))
			}
		}
		if journalThere() {
			t.Errorf("round %d: the restart left the journal", round)
		}
	}
	t.Logf("rounds: %d all old, %d all new, %d mixed; %d of %d kills landed mid-commit (journal named)", sawOld, sawNew, sawMixedSet, midCommit, rounds)
	if midCommit == 0 {
		t.Errorf("no kill landed inside the commit window in %d rounds: the journal was never tested", rounds)
	}
}

// restart starts the server once and stops it after its first answer (by
// then it has settled any interrupted patch), and returns what it said on
// stderr.
func restart(t *testing.T, f *fixture) string {
	t.Helper()
	var stderr strings.Builder
	cmd, stdin := startInitializedTo(t, f, &stderr)
	stdin.Close()
	cmd.Wait()
	return stderr.String()
}

// startInitialized starts the server and waits for its answer to initialize.
func startInitialized(t *testing.T, f *fixture) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	return startInitializedTo(t, f, nil)
}

// startInitializedTo is startInitialized with the server's stderr going to
// stderr (nil: nowhere).
func startInitializedTo(t *testing.T, f *fixture, stderr io.Writer) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--config", f.Config)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+f.Root)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"k","version":"1"}}}`)
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin
}

// BenchmarkApplyEditRoundTrip is one exact edit of a 2,000-line file through
// the binary over stdio, synced to disk, undone by the next edit.
func BenchmarkApplyEditRoundTrip(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	var lines []string
	for i := range 2000 {
		lines = append(lines, fmt.Sprintf("line %d: %s", i, strings.Repeat("x", 30)))
	}
	f.write(b, "big.txt", strings.Join(lines, "\n")+"\n")
	c := stdioClient(b, f, Legacy)
	pairs := [2][2]string{{"line 1000: ", "LINE 1000: "}, {"LINE 1000: ", "line 1000: "}}
	i := 0
	var took []time.Duration // the target is a median: fsync times have a long tail
	for b.Loop() {
		p := pairs[i%2]
		i++
		start := time.Now()
		if res := call(b, c, "apply_patch", map[string]any{"edits": []map[string]any{{"path": "big.txt", "old_text": p[0], "new_text": p[1]}}}); res.IsError {
			b.Fatal(text(res))
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "µs-median")
}
