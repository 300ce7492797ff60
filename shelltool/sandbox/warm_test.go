//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

type runFunc func(context.Context, Spec) (Result, error)

// eachPath runs f with the cold path (Run) and with a warm Runner whose
// every command is checked to have run on a warm helper.
func eachPath(t *testing.T, f func(t *testing.T, run runFunc)) {
	t.Run("cold", func(t *testing.T) { f(t, Run) })
	t.Run("warm", func(t *testing.T) {
		r := NewRunner(NetworkNone)
		defer r.Close()
		f(t, warmRun(t, r))
	})
}

// warmRun runs each command on a warm helper: it waits for the helper of
// the command's mode to be idle first, and fails the test if the command
// ran cold.
func warmRun(t testing.TB, r *Runner) runFunc {
	return func(ctx context.Context, s Spec) (Result, error) {
		n, nerr := normalize(s, true)
		if nerr == nil {
			waitWarm(t, r, n.Network)
		}
		before := r.warmRuns.Load()
		res, err := r.Run(ctx, s)
		if nerr == nil && r.warmRuns.Load() == before {
			t.Errorf("the command ran cold")
		}
		return res, err
	}
}

// idlePid returns the pid of the idle helper of mode m, or 0.
func idlePid(r *Runner, m Network) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.slots[m].idle; st != nil {
		return st.proc.Pid
	}
	return 0
}

// waitWarm waits until a helper of mode m is idle (asking for one if none
// is on its way).
func waitWarm(t testing.TB, r *Runner, m Network) int {
	t.Helper()
	r.mu.Lock()
	r.requestLocked(m, r.slots[m])
	r.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pid := idlePid(r, m); pid != 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warm %s helper after 10s", m)
		}
		time.Sleep(time.Millisecond)
	}
}

// children lists the pids whose parent is this process.
func children() []int {
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == self {
				out = append(out, pid)
			}
		}
	}
	return out
}

func countFDs() int {
	e, _ := os.ReadDir("/proc/self/fd")
	return len(e)
}

// grewBy is how far count stays above base: what a finished command leaves
// winds down by itself (goroutines returning, descriptors closed after the
// wait), so it waits up to 10 s for count to come back, not a fixed pause
// a loaded machine can outlast; a leak stays above.
func grewBy(count func() int, base int) int {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if d := count() - base; d <= 0 || time.Now().After(deadline) {
			return d
		}
	}
}

func countChildren() int { return len(children()) }

// TestRunnerNoLeaks: commands on warm helpers (none and proxy) leave no
// goroutine, descriptor or process behind, and Close releases the idle
// helpers and the Runner's goroutine.
func TestRunnerNoLeaks(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	if c := children(); len(c) != 0 {
		t.Fatalf("children before the test: %v", c)
	}
	fds0, gs0 := countFDs(), numGoroutine()
	r := NewRunner(NetworkNone, NetworkProxy)
	run := warmRun(t, r)
	cmd := func(network Network) {
		g := &greeter{}
		s := ws.spec("echo x; setsid sleep 5 &")
		if network == NetworkProxy {
			s = ws.spec(fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d; echo hi >&3; head -1 <&3; setsid sleep 5 &", ProxyPort))
			s.Network, s.Proxy = NetworkProxy, g.serve
		}
		res, err := run(context.Background(), s)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%v %+v", err, res)
		}
	}
	settle := func() {
		waitWarm(t, r, NetworkNone)
		waitWarm(t, r, NetworkProxy)
	}
	cmd(NetworkNone)
	cmd(NetworkProxy)
	settle()
	fds, gs, kids := countFDs(), numGoroutine(), len(children())
	if kids != 2 {
		t.Errorf("%d children with two idle helpers", kids)
	}
	for i := 0; i < 15; i++ {
		cmd(NetworkNone)
		cmd(NetworkProxy)
	}
	settle()
	if d := grewBy(countFDs, fds); d > 0 {
		t.Errorf("open files grew by %d", d)
	}
	if d := grewBy(numGoroutine, gs); d > 0 {
		t.Errorf("goroutines grew by %d", d)
	}
	if d := grewBy(countChildren, kids); d > 0 {
		t.Errorf("children grew by %d", d)
	}
	r.Close()
	r.Close() // idempotent
	if d := grewBy(countFDs, fds0); d > 0 {
		t.Errorf("after Close: open files grew by %d", d)
	}
	if d := grewBy(numGoroutine, gs0); d > 0 {
		t.Errorf("after Close: goroutines grew by %d", d)
	}
	if c := children(); len(c) != 0 {
		t.Errorf("after Close: children left: %v", c)
	}
	// Run after Close still works, cold, and leaves nothing.
	before := r.warmRuns.Load()
	res, err := r.Run(context.Background(), ws.spec("cat /etc/shadow"))
	if err != nil || res.ExitCode != 1 || !strings.Contains(res.Stderr, "Permission denied") {
		t.Fatalf("after Close: %v %+v", err, res)
	}
	if r.warmRuns.Load() != before {
		t.Errorf("a warm helper was used after Close")
	}
	if c := children(); len(c) != 0 {
		t.Errorf("after Close and Run: children left: %v", c)
	}
}

// A warm helper killed while idle is replaced; the command runs cold, in the
// sandbox, and the next one runs on a new warm helper.
func TestRunnerReplacesDeadHelper(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	r := NewRunner(NetworkNone)
	defer r.Close()
	canary := func(run runFunc) {
		t.Helper()
		res, err := run(context.Background(), ws.spec("cat /etc/shadow; echo ran"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Stderr, "Permission denied") || res.Stdout != "ran\n" {
			t.Fatalf("canary: %+v", res)
		}
	}
	// Twice: the replacement is replaceable too. (SIGKILL: as PID 1 of its
	// namespace the helper ignores signals it has no handler for yet.)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGKILL} {
		pid := waitWarm(t, r, NetworkNone)
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		st := r.slots[NetworkNone].idle
		r.mu.Unlock()
		for deadline := time.Now().Add(5 * time.Second); !st.exited(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("helper %d did not die of %v", pid, sig)
			}
		}
		before := r.warmRuns.Load()
		canary(r.Run)
		if r.warmRuns.Load() != before {
			t.Errorf("the dead helper was used")
		}
		if pid2 := waitWarm(t, r, NetworkNone); pid2 == pid {
			t.Fatalf("the dead helper %d is still idle", pid)
		}
		canary(warmRun(t, r))
	}
}

// A warm helper that dies after it was handed out but before it read its
// spec: drive reports errWarmDead (nothing ran) and never fails open; the
// Runner then runs the command cold.
func TestWarmDeadBeforeSpec(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	marker := ws.dir + "/ran"
	for _, network := range []Network{NetworkNone, NetworkProxy} {
		t.Run(string(network), func(t *testing.T) {
			var called atomic.Bool
			s := ws.spec("touch " + marker)
			s.Network = network
			if network == NetworkProxy {
				s.Proxy = func(context.Context, net.Listener) { called.Store(true) }
			}
			n, err := normalize(s, true)
			if err != nil {
				t.Fatal(err)
			}
			st, err := startHelper(SelfHelper(), network, n.PidsMax, n.MemoryMax)
			if err != nil {
				t.Fatal(err)
			}
			st.warm = true
			_ = st.proc.Signal(syscall.SIGKILL)
			for !st.exited() {
				time.Sleep(time.Millisecond)
			}
			res, err := drive(context.Background(), &n, st)
			if !errors.Is(err, errWarmDead) {
				t.Fatalf("drive on a dead warm helper: %v %+v", err, res)
			}
			if _, err := os.Stat(marker); err == nil || called.Load() {
				t.Fatalf("the command ran (handler called %v)", called.Load())
			}
			// The same on a cold helper is a plain failure (never retried).
			st, err = startHelper(SelfHelper(), network, n.PidsMax, n.MemoryMax)
			if err != nil {
				t.Fatal(err)
			}
			_ = st.proc.Signal(syscall.SIGKILL)
			if _, err := drive(context.Background(), &n, st); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("drive on a dead cold helper: %v", err)
			}
		})
	}
	if c := children(); len(c) != 0 {
		t.Errorf("children left: %v", c)
	}
}

// Concurrent commands: one takes the warm helper, the others run cold; all
// are sandboxed.
func TestRunnerConcurrent(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	r := NewRunner(NetworkNone, NetworkFull)
	defer r.Close()
	waitWarm(t, r, NetworkNone)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ws.spec(fmt.Sprintf("cat /etc/shadow 2>/dev/null || echo denied %d", i))
			if i%2 == 1 {
				s.Network = NetworkFull
			}
			res, err := r.Run(context.Background(), s)
			if err != nil || res.Stdout != fmt.Sprintf("denied %d\n", i) {
				t.Errorf("%d: %v %+v", i, err, res)
			}
		}()
	}
	wg.Wait()
	if r.warmRuns.Load() == 0 {
		t.Errorf("no command ran warm")
	}
}

func BenchmarkRunnerTrue(b *testing.B) {
	needSandbox(b)
	benchRunnerTrue(b, NewRunner(NetworkNone), 0)
}

// BenchmarkRunnerTrueHelperBinary is BenchmarkRunnerTrue with helpers
// started from the helper binary's sealed copy (as make build's server
// does), back to back and with a pause between commands (the next
// command's helper has then long been waiting).
func BenchmarkRunnerTrueHelperBinary(b *testing.B) {
	needSandbox(b)
	h, _ := builtHelper(b)
	for _, pause := range []time.Duration{0, 20 * time.Millisecond} {
		b.Run("pause="+pause.String(), func(b *testing.B) { benchRunnerTrue(b, NewRunnerWith(h, NetworkNone), pause) })
	}
}

// benchRunnerTrue runs `true` on r (closing it after), pausing between
// commands. Besides the median it reports warm/op, the share of commands
// that ran warm, and helper-cpu-us/op, the median processor time of a
// command's helper (its start included) and the shell.
func benchRunnerTrue(b *testing.B, r *Runner, pause time.Duration) {
	defer r.Close()
	dir := b.TempDir()
	s := Spec{Command: "true", Dir: dir, Writable: []string{dir}, Env: []string{"PATH=/usr/bin:/bin"}}
	waitWarm(b, r, NetworkNone)
	before := r.warmRuns.Load()
	var wall, cpu []time.Duration
	for b.Loop() {
		if pause > 0 {
			b.StopTimer()
			time.Sleep(pause)
			b.StartTimer()
		}
		t0 := time.Now()
		res, err := r.Run(context.Background(), s)
		wall = append(wall, time.Since(t0))
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit %d", res.ExitCode)
		}
		if err != nil {
			b.Fatal(err)
		}
		cpu = append(cpu, res.CPU)
	}
	slices.Sort(wall)
	b.ReportMetric(float64(wall[len(wall)/2].Nanoseconds()), "median-ns/op")
	b.ReportMetric(float64(r.warmRuns.Load()-before)/float64(b.N), "warm/op")
	slices.Sort(cpu)
	b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds()), "helper-cpu-us/op")
}

// slotState is whether mode m has an idle helper and one on its way.
func slotState(r *Runner, m Network) (idle, spawning bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.slots[m].idle != nil, r.slots[m].spawning
}

// TestRunnerReplaces: a command's replacement helper is asked for when its
// helper is handed out, so while the command runs it is idle or on its
// way; so it is after a command whose set-up failed (it never started).
func TestRunnerReplaces(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	fifo := filepath.Join(ws.dir, "go")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewRunner(NetworkNone)
	defer r.Close()
	waitWarm(t, r, NetworkNone)
	// The command says it runs (a file), then waits for the test to open
	// the FIFO.
	started := filepath.Join(ws.dir, "started")
	done := make(chan error, 1)
	go func() {
		res, err := r.Run(context.Background(), ws.spec("echo > started; read x < go; echo $x"))
		if err == nil && res.Stdout != "on\n" {
			err = fmt.Errorf("result %+v", res)
		}
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if idle, spawning := slotState(r, NetworkNone); !idle && !spawning {
		t.Error("while the command runs: no replacement idle or on its way")
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.WriteString("on\n")
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r.warmRuns.Load() != 1 {
		t.Errorf("warm runs %d, want 1", r.warmRuns.Load())
	}
	// A set-up that fails: the shell cannot be executed.
	waitWarm(t, r, NetworkNone)
	s := ws.spec("true")
	s.Shell = filepath.Join(ws.dir, "no-such-shell")
	if _, err := r.Run(context.Background(), s); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a missing shell: %v, want ErrUnavailable", err)
	}
	if idle, spawning := slotState(r, NetworkNone); !idle && !spawning {
		t.Error("after a failed set-up: no replacement idle or on its way")
	}
}

// TestRunnerWaitsForHelperOnItsWay: a command that finds its mode's helper
// requested but not yet started waits for it instead of starting cold.
func TestRunnerWaitsForHelperOnItsWay(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	r := NewRunner()
	defer r.Close()
	for i := range 3 {
		r.mu.Lock()
		r.requestLocked(NetworkNone, r.slots[NetworkNone])
		r.mu.Unlock()
		if res, err := r.Run(context.Background(), ws.spec("echo ok")); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("%d: %v %+v", i, err, res)
		}
		if got := r.warmRuns.Load(); got != int64(i+1) {
			t.Fatalf("%d: warm runs %d, want %d: the command did not wait for the helper on its way", i, got, i+1)
		}
	}
}

// TestRunnerCloseWakesWaiters: a command waiting for a helper on its way
// when the Runner closes goes on and runs cold. (The helper here is "on
// its way" with no start requested, so only Close can end the wait.)
func TestRunnerCloseWakesWaiters(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	r := NewRunner()
	r.mu.Lock()
	sl := r.slots[NetworkNone]
	sl.spawning, sl.ready = true, make(chan struct{})
	r.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		res, err := r.Run(context.Background(), ws.spec("echo cold"))
		if err == nil && res.Stdout != "cold\n" {
			err = fmt.Errorf("result %+v", res)
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // most likely waiting by now; either way it must end
	r.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a command waiting for a helper on its way was not released by Close")
	}
	if r.warmRuns.Load() != 0 {
		t.Errorf("warm runs %d after Close, want 0", r.warmRuns.Load())
	}
}
