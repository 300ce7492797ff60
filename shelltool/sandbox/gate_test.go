//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gateRecorder is an ExecGate that refuses programs whose executable's or
// argv[0]'s base name is in deny (and every event with a Problem), and
// records every event.
type gateRecorder struct {
	deny   []string
	mu     sync.Mutex
	events []ExecEvent
}

func (g *gateRecorder) gate(ev ExecEvent) bool {
	g.mu.Lock()
	g.events = append(g.events, ev)
	g.mu.Unlock()
	if ev.Problem != "" {
		return false
	}
	names := []string{filepath.Base(ev.Exe)}
	if len(ev.Argv) > 0 {
		names = append(names, filepath.Base(ev.Argv[0]))
	}
	for _, n := range names {
		if slices.Contains(g.deny, n) {
			return false
		}
	}
	return true
}

func (g *gateRecorder) seen() []ExecEvent {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.events)
}

// buildProbe compiles testdata/gate/NAME.c into dir (gcc is part of the
// test environment: under CI=true a missing gcc fails).
func buildProbe(t *testing.T, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	src, err := filepath.Abs(filepath.Join("testdata", "gate", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("gcc not found: %v", err)
		}
		t.Skipf("gcc not found: %v", err)
	}
	if b, err := exec.Command(gcc, "-O1", "-pthread", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", name, err, b)
	}
	return out
}

func writeExec(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found: %v", name, err)
		}
		t.Skipf("%s not found", name)
	}
}

// TestExecGateKillsDenied: a program the gate refuses is killed however it
// is started, before it runs (the file it would remove stays, the marker
// it would write is absent), and its parent sees SIGKILL (137).
func TestExecGateKillsDenied(t *testing.T) {
	needSandbox(t)
	needTool(t, "make")
	needTool(t, "python3")
	ws := newWorkspace(t)
	evil := buildProbe(t, ws.dir, "evil")
	vfork := buildProbe(t, ws.dir, "vfork")
	attack := buildProbe(t, ws.dir, "attack")
	victim := filepath.Join(ws.dir, "victim")
	marker := filepath.Join(ws.dir, "marker")
	writeExec(t, filepath.Join(ws.dir, "script.sh"), "#!/bin/sh\nrm "+victim+"\necho rc=$?\n")
	if err := os.WriteFile(filepath.Join(ws.dir, "Makefile"), []byte("all:\n\trm "+victim+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cmd, want string
		deny            []string
	}{
		{"absolute path", "/usr/bin/rm " + victim + "; echo rc=$?", "rc=137", []string{"rm"}},
		{"through PATH", "rm " + victim + "; echo rc=$?", "rc=137", []string{"rm"}},
		{"script", "./script.sh", "rc=137", []string{"rm"}},
		{"make recipe", "make -s; echo rc=$?", "rc=2", []string{"rm"}},
		{"python os.execv", `python3 -c 'import os; os.execv("/usr/bin/rm", ["rm", "` + victim + `"])'; echo rc=$?`, "rc=137", []string{"rm"}},
		{"BASH_CMDS hash", "BASH_CMDS[cat]=/bin/rm; cat " + victim + "; echo rc=$?", "rc=137", []string{"rm"}},
		{"exec -a", "(exec -a cat /bin/rm " + victim + "); echo rc=$?", "rc=137", []string{"rm"}},
		{"argv0 names the denied one", "(exec -a rm /bin/true); echo rc=$?", "rc=137", []string{"rm"}},
		{"vfork+exec", vfork + " /usr/bin/rm rm " + victim + "; echo rc=$?", "rc=137", []string{"rm"}},
		{"exec builtin replaces the shell", "exec /usr/bin/rm " + victim, "", []string{"rm"}},
		{"marker never written", evil + " " + marker + "; echo rc=$?", "rc=137", []string{"evil"}},
		{"memfd", `python3 -c 'import os; f=os.memfd_create("x"); os.write(f, open("/usr/bin/true","rb").read()); os.execv("/proc/self/fd/%d" % f, ["true"])'; echo rc=$?`, "rc=137", nil},
		{"dynamic loader run directly", "/lib64/ld-linux-x86-64.so.2 /usr/bin/true; echo rc=$?", "rc=137", nil},
		// The exec of a thread that is not the leader is reported (and
		// killed) as the process; so is the vfork child of one.
		{"non-leader thread execs", attack + " thread /usr/bin/rm rm " + victim + "; echo rc=$?", "rc=137", []string{"rm"}},
		{"vfork from a non-leader thread", attack + " threadvfork /usr/bin/rm rm " + victim, "child status 9", []string{"rm"}},
		{"argc 0", attack + " argc0 /usr/bin/rm; echo rc=$?", "rc=137", []string{"rm"}},
		{"execveat of a descriptor", attack + " emptypath /usr/bin/rm x " + victim + "; echo rc=$?", "rc=137", []string{"rm"}},
		{"execveat of a deleted file", attack + " deleted /usr/bin/true /tmp/cp true; echo rc=$?", "rc=137", nil},
		// The kernel reads clone's flags as 32 bits: CLONE_UNTRACED above
		// them is no flag, and the child is traced like any other.
		{"CLONE_UNTRACED in clone's high word", `perl -e 'my $r = syscall(56, (0x00800000 << 32) | 17, 0, 0, 0, 0); exec("/usr/bin/rm", "` + victim + `") if $r == 0; waitpid($r, 0); print "status $?\n"'`, "status 9", []string{"rm"}},
		{"exec through /proc/self/fd", "(exec 3</usr/bin/rm; /proc/self/fd/3 " + victim + "); echo rc=$?", "rc=137", []string{"rm"}},
	}
	eachPath(t, func(t *testing.T, run runFunc) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				writeExec(t, victim, "x")
				os.Remove(marker)
				g := &gateRecorder{deny: tc.deny}
				s := ws.spec(tc.cmd)
				s.ExecGate = g.gate
				r, err := run(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(r.Stdout, tc.want) {
					t.Errorf("stdout %q, want %q (stderr %q, exit %d)", r.Stdout, tc.want, r.Stderr, r.ExitCode)
				}
				if _, err := os.Stat(victim); err != nil {
					t.Errorf("the denied rm ran: %v", err)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Errorf("the denied program ran: marker written")
				}
				if len(g.seen()) == 0 {
					t.Errorf("the gate saw no exec")
				}
			})
		}
	})
}

// TestExecGateEvents: the gate sees what the kernel loaded: the real
// executable (symlinks resolved) and the argv the program gets, for
// scripts with a shebang too, and a program it allows runs normally.
func TestExecGateEvents(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	writeExec(t, filepath.Join(ws.dir, "s.sh"), "#!/bin/sh\necho in-script\n")
	if err := os.Symlink("/usr/bin/true", filepath.Join(ws.dir, "fakebox")); err != nil {
		t.Fatal(err)
	}
	g := &gateRecorder{}
	s := ws.spec("./s.sh a b; ./fakebox x; /bin/echo done")
	s.ExecGate = g.gate
	r, err := Run(context.Background(), s)
	if err != nil || r.ExitCode != 0 || r.Stdout != "in-script\ndone\n" {
		t.Fatalf("run: %v %+v", err, r)
	}
	if r.GateCPU <= 0 || r.GateCPU > r.CPU {
		t.Errorf("the tracer's CPU %v, of %v in all", r.GateCPU, r.CPU)
	}
	ev := g.seen()
	realSh, _ := filepath.EvalSymlinks("/bin/sh")
	realEcho, _ := filepath.EvalSymlinks("/bin/echo")
	want := []struct {
		exe, execPath string
		argv          []string
	}{
		{realSh, "./s.sh", []string{"/bin/sh", "./s.sh", "a", "b"}},
		{"/usr/bin/true", "./fakebox", []string{"./fakebox", "x"}},
		{realEcho, "/bin/echo", []string{"/bin/echo", "done"}},
	}
	if len(ev) != len(want) {
		t.Fatalf("events %+v, want %d", ev, len(want))
	}
	for i, w := range want {
		if ev[i].Exe != w.exe || ev[i].ExecPath != w.execPath || !slices.Equal(ev[i].Argv, w.argv) || ev[i].Cwd != ws.dir || ev[i].Problem != "" || ev[i].Ino == 0 {
			t.Errorf("event %d = %+v, want exe %s argv %q cwd %s", i, ev[i], w.exe, w.argv, ws.dir)
		}
	}
}

// TestExecGateRace: another thread rewriting the path and argv while the
// main thread execs never gets the denied program to run (the decision is
// on what the kernel loaded, after the other threads are gone).
func TestExecGateRace(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	race := buildProbe(t, ws.dir, "race")
	evil := buildProbe(t, ws.dir, "evil")
	marker := filepath.Join(ws.dir, "marker")
	g := &gateRecorder{deny: []string{"evil"}}
	// One command runs the race many times (bounded to a few seconds).
	s := ws.spec("for i in $(seq 300); do " + race + " /usr/bin/true " + evil + " " + marker + "; done; echo finished")
	s.ExecGate = g.gate
	s.Timeout = 60 * time.Second
	r, err := Run(context.Background(), s)
	if err != nil || !strings.Contains(r.Stdout, "finished") {
		t.Fatalf("run: %v %+v", err, r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the denied program ran during the race")
	}
	killed := 0
	for _, ev := range g.seen() {
		if filepath.Base(ev.Exe) == "evil" {
			killed++
		}
	}
	t.Logf("%d events, %d execs of the denied program refused", len(g.seen()), killed)
}

// TestExecGateCoverage: no process of the command escapes the tracer
// (clone with CLONE_UNTRACED is refused), and traced commands behave as
// untraced ones for job control, signals and exit statuses.
func TestExecGateCoverage(t *testing.T) {
	abi := needSandbox(t)
	needTool(t, "timeout")
	ws := newWorkspace(t)
	untraced := buildProbe(t, ws.dir, "untraced")
	tests := []struct{ cmd, want string }{
		{untraced, "EPERM\n"},
		{"yes | head -n 1; echo ${PIPESTATUS[@]}", "y\n141 0\n"},
		{"timeout 0.3 sleep 5; echo $?", "124\n"},
		{"sleep 5 & p=$!; kill -STOP $p; kill -CONT $p; kill $p; wait $p; echo $?", "143\n"},
		{"sh -c 'kill -SEGV $$'; echo $?", "139\n"},
		{"(/bin/true & /bin/true & wait); echo ok", "ok\n"},
	}
	// ptrace: TRACEME is refused by the kernel (every process is traced
	// already), SEIZE and ATTACH by seccomp, DETACH has nothing to detach,
	// a request with high bits set is refused by seccomp.
	ptrace := func(req string) string {
		return `perl -e 'my $r = syscall(101, ` + req + `, 1, 0, 0); print $r == -1 ? "$!\n" : "ok\n"'`
	}
	tests = append(tests,
		struct{ cmd, want string }{ptrace("0"), "Operation not permitted\n"},
		struct{ cmd, want string }{ptrace("0x4206"), "Operation not permitted\n"},
		struct{ cmd, want string }{ptrace("16"), "Operation not permitted\n"},
		struct{ cmd, want string }{ptrace("17"), "No such process\n"},
		struct{ cmd, want string }{ptrace("0x100000000"), "Operation not permitted\n"},
		// clone(CLONE_FS|SIGCHLD): a process sharing the cwd could move it
		// while the gate reads it; refused. A plain fork still works.
		struct{ cmd, want string }{`perl -e 'my $r = syscall(56, 0x211, 0, 0, 0, 0); exit 0 if $r == 0; waitpid($r, 0) if $r > 0; print $r == -1 ? "$!\n" : "ok\n"'`, "Operation not permitted\n"},
		struct{ cmd, want string }{`perl -e 'my $r = syscall(56, 17, 0, 0, 0, 0); exit 0 if $r == 0; waitpid($r, 0) if $r > 0; print $r == -1 ? "$!\n" : "ok\n"'`, "ok\n"},
		// clone3 (its flags in memory, out of seccomp's sight) is ENOSYS,
		// so libc falls back to clone; an x32 system call is refused.
		struct{ cmd, want string }{`perl -e 'my $r = syscall(435, 0, 0); print $r == -1 ? "$!\n" : "ok\n"'`, "Function not implemented\n"},
		struct{ cmd, want string }{`perl -e 'my $r = syscall(0x40000027); print $r == -1 ? "$!\n" : "ok\n"'`, "Operation not permitted\n"},
	)
	if abi >= 6 { // landlock signal scoping
		// The tracer (PID 1) is out of reach: no signal, no memory.
		tests = append(tests, struct{ cmd, want string }{"kill -TERM 1 2>/dev/null; echo $?; kill -STOP 1 2>/dev/null; echo $?; head -c1 /proc/1/mem 2>/dev/null; echo $?", "1\n1\n1\n"})
	}
	eachPath(t, func(t *testing.T, run runFunc) {
		for _, tc := range tests {
			g := &gateRecorder{}
			s := ws.spec(tc.cmd)
			s.ExecGate = g.gate
			r, err := run(context.Background(), s)
			if err != nil || r.Stdout != tc.want {
				t.Errorf("%s: %v stdout %q stderr %q, want %q", tc.cmd, err, r.Stdout, r.Stderr, tc.want)
			}
		}
	})
}

// TestExecGateUnavailable: when the gate cannot be applied (ptrace
// refused), nothing of the command runs and Run says the sandbox is
// unavailable.
func TestExecGateUnavailable(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	marker := filepath.Join(ws.dir, "ran")
	eachPath(t, func(t *testing.T, run runFunc) {
		s := ws.spec("echo > " + marker + "; /usr/bin/touch " + marker)
		s.ExecGate = func(ExecEvent) bool { return true }
		s.simulateNoPtrace = true
		_, err := run(context.Background(), s)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "exec gate") {
			t.Fatalf("err %v, want ErrUnavailable from the exec gate", err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("the command ran")
		}
	})
}

// TestExecGateRefuseAll: with a gate that refuses everything nothing the
// shell starts runs, and the shell itself (the line, decided before the
// call) still reports.
func TestExecGateRefuseAll(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	victim := filepath.Join(ws.dir, "victim")
	writeExec(t, victim, "x")
	s := ws.spec("/usr/bin/rm " + victim + "; echo rc=$?")
	s.ExecGate = func(ExecEvent) bool { return false }
	r, err := Run(context.Background(), s)
	if err != nil || r.Stdout != "rc=137\n" {
		t.Fatalf("run: %v %+v", err, r)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("rm ran")
	}
}

// BenchmarkExecGate200: a command that starts 200 short programs, with
// and without the gate, alternating so both see the same machine load.
// gate-us/exec is the difference of the medians divided by 200,
// gate-paired-us/exec the median of each round's difference (with its
// quartiles);
// gate-cpu-us/exec the same of the command's CPU (helper included), and
// gate-server-cpu-us/exec of the server's (this process);
// gate-tracer-cpu-us/exec is the median of the tracer thread's own CPU
// (Result.GateCPU) per exec.
func BenchmarkExecGate200(b *testing.B) {
	needSandbox(b)
	dir := b.TempDir()
	plain := Spec{Command: "for i in $(seq 200); do /bin/true; done", Dir: dir, Writable: []string{dir}, Env: []string{"PATH=/usr/bin:/bin"}}
	gated := plain
	gated.ExecGate = func(ExecEvent) bool { return true }
	var without, with, cpuWithout, cpuWith, srvWithout, srvWith, tracer []time.Duration
	self := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var paired []time.Duration // gated minus ungated, round by round
	for b.Loop() {
		for _, s := range []Spec{plain, gated} {
			t0, c0 := time.Now(), self()
			r, err := Run(context.Background(), s)
			if err != nil {
				b.Fatal(err)
			}
			wall, srv := time.Since(t0), self()-c0
			if s.ExecGate == nil {
				without, cpuWithout, srvWithout = append(without, wall), append(cpuWithout, r.CPU), append(srvWithout, srv)
			} else {
				with, cpuWith, srvWith, tracer = append(with, wall), append(cpuWith, r.CPU), append(srvWith, srv), append(tracer, r.GateCPU)
				paired = append(paired, wall-without[len(without)-1])
			}
		}
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	perExec := func(d time.Duration) float64 { return float64(d.Microseconds()) / 200 }
	w, g := med(without), med(with)
	b.ReportMetric(perExec(w), "ungated-us/exec")
	b.ReportMetric(perExec(g), "gated-us/exec")
	b.ReportMetric(perExec(g-w), "gate-us/exec")
	// The same from each round's pair, which a load that drifts over the
	// run disturbs less: the median and the middle half's bounds.
	slices.Sort(paired)
	b.ReportMetric(perExec(paired[len(paired)/2]), "gate-paired-us/exec")
	b.ReportMetric(perExec(paired[len(paired)/4]), "gate-paired-q1-us/exec")
	b.ReportMetric(perExec(paired[len(paired)*3/4]), "gate-paired-q3-us/exec")
	b.ReportMetric(perExec(med(cpuWith)-med(cpuWithout)), "gate-cpu-us/exec")
	// The server's own CPU (this process: the gate's end of the channel).
	b.ReportMetric(perExec(med(srvWith)-med(srvWithout)), "gate-server-cpu-us/exec")
	// The tracer thread's own CPU (thread time, which the load barely
	// disturbs): the helper's whole share of the gate.
	b.ReportMetric(perExec(med(tracer)), "gate-tracer-cpu-us/exec")
}

// TestExecGateUnprivileged runs the gate's kernel tests again as an
// unprivileged user (the sandbox then adds a user namespace), when the
// tests run as root.
func TestExecGateUnprivileged(t *testing.T) {
	needSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: the other tests cover it")
	}
	if os.Getenv("ONELLM_GATE_UNPRIVILEGED") != "" {
		return // the copy itself
	}
	dir, err := os.MkdirTemp("", "gate-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "tmp")
	for _, d := range []string{dir, filepath.Join(dir, "testdata", "gate"), tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gate.test")
	copyFile(t, self, bin, 0o755)
	srcs, _ := filepath.Glob(filepath.Join("testdata", "gate", "*.c"))
	for _, src := range srcs {
		copyFile(t, src, filepath.Join(dir, "testdata", "gate", filepath.Base(src)), 0o644)
	}
	cmd := exec.Command(bin, "-test.v", "-test.run", "^(TestExecGateKillsDenied|TestExecGateEvents|TestExecGateCoverage|TestExecGateWritten|TestExecGateWrittenByDescriptor|TestExecGateArgv|TestExecStackKernel|TestProbe)$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "HOME=" + tmp, "ONELLM_GATE_UNPRIVILEGED=1", "CI=" + os.Getenv("CI")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "--- SKIP") || !strings.Contains(string(out), "--- PASS: TestExecGateKillsDenied") ||
		!strings.Contains(string(out), "--- PASS: TestExecGateWritten ") || !strings.Contains(string(out), "--- PASS: TestExecGateArgv ") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRunnerEchoGate: `echo hi` on a warm helper with and without the
// gate (alternating), wall and CPU medians: what the gate adds to a command
// that starts no program (the hand-over to the tracer and the attach).
func BenchmarkRunnerEchoGate(b *testing.B) {
	needSandbox(b)
	dir := b.TempDir()
	r := NewRunner(NetworkNone)
	defer r.Close()
	plain := Spec{Command: "echo hi", Dir: dir, Writable: []string{dir}, Env: []string{"PATH=/usr/bin:/bin"}}
	gated := plain
	gated.ExecGate = func(ExecEvent) bool { return true }
	var wall, cpu [2][]time.Duration
	for b.Loop() {
		for i, s := range []Spec{plain, gated} {
			waitWarm(b, r, NetworkNone)
			t0 := time.Now()
			res, err := r.Run(context.Background(), s)
			if err != nil || res.Stdout != "hi\n" {
				b.Fatal(err, res)
			}
			wall[i], cpu[i] = append(wall[i], time.Since(t0)), append(cpu[i], res.CPU)
		}
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(wall[0]), "ungated-ms")
	b.ReportMetric(med(wall[1]), "gated-ms")
	b.ReportMetric(med(cpu[0]), "ungated-cpu-ms")
	b.ReportMetric(med(cpu[1]), "gated-cpu-ms")
}
