//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// stackImage lays out an initial stack as the kernel does: argc, argv
// pointers, NULL, envp pointers, NULL, auxv pairs up to AT_NULL, then the
// strings; sp is its address. fix may change the words before the strings
// are appended (to break the layout).
func stackImage(sp uint64, argv, env []string, execFn string, fix func(words []uint64)) []byte {
	nWords := 1 + len(argv) + 1 + len(env) + 1 + 2*2 + 2 // argc, …, AT_PAGESZ, AT_EXECFN, AT_NULL
	str := []byte{}
	addr := func(s string) uint64 {
		a := sp + uint64(8*nWords) + uint64(len(str))
		str = append(append(str, s...), 0)
		return a
	}
	words := []uint64{uint64(len(argv))}
	for _, a := range argv {
		words = append(words, addr(a))
	}
	words = append(words, 0)
	for _, e := range env {
		words = append(words, addr(e))
	}
	words = append(words, 0, 6, 4096)
	if execFn != "\xff" {
		words = append(words, atExecFn, addr(execFn))
	} else {
		words = append(words, 7, 0) // AT_BASE instead: no AT_EXECFN
	}
	words = append(words, atNull, 0)
	if fix != nil {
		fix(words)
	}
	b := make([]byte, 0, 8*len(words)+len(str))
	for _, w := range words {
		b = binary.NativeEndian.AppendUint64(b, w)
	}
	return append(b, str...)
}

// argvOfBytes returns start followed by strings of 'a' (131071 at most,
// the kernel's MAX_ARG_STRLEN with the NUL) to make total bytes with their
// NULs, as /proc/PID/cmdline counts them (and the execargs probe makes).
func argvOfBytes(start []string, total int) []string {
	a := slices.Clone(start)
	for _, s := range start {
		total -= len(s) + 1
	}
	for total > 0 {
		n := min(total, 131072)
		a = append(a, strings.Repeat("a", n-1))
		total -= n
	}
	return a
}

// TestParseExecStack: argv and AT_EXECFN come out of the kernel's layout
// exactly (empty arguments, argc 0, the cap counted as /proc/PID/cmdline
// counts it), and any other layout is an error, never another argv.
func TestParseExecStack(t *testing.T) {
	const sp = 0x7ffc00001000
	tests := []struct {
		name   string
		argv   []string
		execFn string
		fix    func([]uint64)
		keep   func(n int) int // how much of the n bytes of the image was read
		err    string          // "" for success, "short" for errShort
	}{
		{name: "plain", argv: []string{"/bin/true", "a", "b"}, execFn: "/bin/true"},
		{name: "empty arguments", argv: []string{"", "x", "", ""}, execFn: "./x"},
		{name: "only an empty argv[0]", argv: []string{""}, execFn: "/bin/true"},
		{name: "argc 0", argv: nil, execFn: "/bin/true"},
		{name: "argv at the cap", argv: argvOfBytes(nil, maxArgvBytes), execFn: "/bin/true"},
		{name: "argv one byte over the cap", argv: argvOfBytes(nil, maxArgvBytes+1), execFn: "/bin/true", err: "over the size limit"},
		{name: "no AT_EXECFN", argv: []string{"x"}, execFn: "\xff", err: "no AT_EXECFN"},
		{name: "exec path without its NUL", argv: []string{"x"}, execFn: strings.Repeat("p", unix.PathMax), err: "not terminated"},
		{name: "exec path just under PATH_MAX", argv: []string{"x"}, execFn: strings.Repeat("p", unix.PathMax-1)},
		{name: "argv not contiguous", argv: []string{"ab", "c"}, execFn: "/x", fix: func(w []uint64) { w[2]++ }, err: "not contiguous"},
		{name: "pointer below the strings", argv: []string{"ab"}, execFn: "/x", fix: func(w []uint64) { w[1] = sp }, err: "outside the stack's strings"},
		{name: "pointer below the stack", argv: []string{"ab"}, execFn: "/x", fix: func(w []uint64) { w[1] = 8 }, err: "outside the stack's strings"},
		{name: "argv without its NULL", argv: []string{"ab"}, execFn: "/x", fix: func(w []uint64) { w[2] = 1 }, err: "not NULL-terminated"},
		{name: "argc absurd", argv: []string{"ab"}, execFn: "/x", fix: func(w []uint64) { w[0] = 1 << 40 }, err: "argc"},
		{name: "32-bit words read as 64", argv: []string{"ab"}, execFn: "/x", fix: func(w []uint64) { w[0] |= w[1] << 32 }, err: "argc"},
		// The exec path's string is the last, argv's before it (no env).
		{name: "cut inside the exec path", argv: []string{"ab"}, execFn: "/xyz", keep: func(n int) int { return n - 2 }, err: "short"},
		{name: "cut inside argv", argv: []string{"ab", "cdef"}, execFn: "", keep: func(n int) int { return n - 1 - 3 }, err: "short"},
		{name: "cut inside the tables", argv: []string{"ab"}, execFn: "/x", keep: func(int) int { return 8 * 3 }, err: "short"},
		{name: "nothing read", argv: []string{"ab"}, execFn: "/x", keep: func(int) int { return 4 }, err: "short"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"PATH=/usr/bin", "", "A=b"}
			if tc.keep != nil {
				env = nil
			}
			mem := stackImage(sp, tc.argv, env, tc.execFn, tc.fix)
			if tc.keep != nil {
				mem = mem[:tc.keep(len(mem))]
			}
			argv, fn, err := parseExecStack(mem, sp, nil)
			switch {
			case tc.err == "short":
				if !errors.Is(err, errShort) {
					t.Fatalf("err %v, want errShort", err)
				}
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, errShort) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
			case err != nil:
				t.Fatalf("err %v", err)
			case !slices.Equal(argv, tc.argv) || (tc.argv == nil) != (argv == nil) || fn != tc.execFn:
				t.Fatalf("argv %d words, exec path %q; want %d words, %q", len(argv), fn, len(tc.argv), tc.execFn)
			}
		})
	}
}

// stoppedAtExec starts path with argv and env traced (PTRACE_TRACEME), so
// it stops at its exec before its first instruction, in the same state as
// at PTRACE_EVENT_EXEC. The calling goroutine must be locked to its
// thread (the tracer). The process is killed and reaped at the end.
func stoppedAtExec(tb testing.TB, path string, argv, env []string) int {
	tb.Helper()
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Sys: &syscall.SysProcAttr{Ptrace: true}})
	if err != nil {
		tb.Fatalf("start %s (%d arguments): %v", path, len(argv), err)
	}
	tb.Cleanup(func() { killReap(pid) })
	var ws syscall.WaitStatus
	for {
		_, err = syscall.Wait4(pid, &ws, syscall.WALL, nil)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil || !ws.Stopped() || ws.StopSignal() != syscall.SIGTRAP {
		tb.Fatalf("%s did not stop at its exec: %v, status %#x", path, err, ws)
	}
	return pid
}

func killReap(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != syscall.EINTR {
			return
		}
	}
}

// procArgv is how the tracer read argv and AT_EXECFN before it read the
// stack: /proc/PID/cmdline, and AT_EXECFN from /proc/PID/auxv and mem.
func procArgv(t *testing.T, pid int) ([]string, string, error) {
	proc := "/proc/" + strconv.Itoa(pid)
	cmdline, err := os.ReadFile(proc + "/cmdline")
	if err != nil {
		return nil, "", err
	}
	if len(cmdline) > maxArgvBytes {
		return nil, "", errTooBig
	}
	var argv []string
	if len(cmdline) > 0 {
		argv = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	}
	auxv, err := os.ReadFile(proc + "/auxv")
	if err != nil {
		t.Fatal(err)
	}
	var addr uint64
	for i := 0; i+16 <= len(auxv); i += 16 {
		if binary.NativeEndian.Uint64(auxv[i:]) == atExecFn {
			addr = binary.NativeEndian.Uint64(auxv[i+8:])
		}
	}
	mem, err := os.Open(proc + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	b := make([]byte, unix.PathMax)
	n, _ := mem.ReadAt(b, int64(addr))
	i := bytes.IndexByte(b[:n], 0)
	if i < 0 {
		t.Fatalf("AT_EXECFN at %#x: %d bytes, no NUL", addr, n)
	}
	return argv, string(b[:i]), nil
}

// TestExecStackKernel: at a real exec stop the stack gives exactly the argv
// and exec path /proc gave (argc 0 as the kernel makes it, empty
// arguments, long and many arguments, a large environment, argv at and
// just over the cap), and a process killed meanwhile is an error.
func TestExecStackKernel(t *testing.T) {
	// Argv over 2 MiB needs a stack limit over 8 MiB (the kernel gives
	// argv and envp a quarter of it, at most 6 MiB).
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &old); err != nil {
		t.Fatal(err)
	}
	bigStack := old.Max == unix.RLIM_INFINITY || old.Max >= 64<<20
	if bigStack {
		if err := syscall.Setrlimit(syscall.RLIMIT_STACK, &syscall.Rlimit{Cur: 64 << 20, Max: old.Max}); err != nil {
			t.Fatal(err)
		}
		defer syscall.Setrlimit(syscall.RLIMIT_STACK, &old)
	}
	const prog = "/bin/true"
	big := strings.Repeat("a", 131071) // MAX_ARG_STRLEN with its NUL
	many := []string{prog}
	for i := range 20000 {
		many = append(many, strconv.Itoa(i))
	}
	largeEnv := []string{}
	for i := range 5000 {
		largeEnv = append(largeEnv, "V"+strconv.Itoa(i)+"=x")
	}
	tests := []struct {
		name    string
		argv    []string
		env     []string
		bigArgs bool
		want    []string // nil: what was given
	}{
		{name: "argc 0", argv: []string{}, want: []string{""}},
		{name: "one empty argument", argv: []string{""}},
		{name: "empty arguments", argv: []string{prog, "", "x", "", ""}},
		{name: "plain", argv: []string{"true", "--a", "b c"}, env: []string{"PATH=/usr/bin", "HOME=/"}},
		{name: "long arguments", argv: []string{prog, big, big, "", big}},
		{name: "20000 arguments", argv: many},
		{name: "large environment", argv: []string{prog, "x"}, env: largeEnv},
		{name: "argv at the cap", argv: argvOfBytes([]string{prog}, maxArgvBytes), bigArgs: true},
		{name: "argv one byte over the cap", argv: argvOfBytes([]string{prog}, maxArgvBytes+1), bigArgs: true},
	}
	var rb readBuf
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtime.LockOSThread() // the tracer: each subtest is its own goroutine
			defer runtime.UnlockOSThread()
			if tc.bigArgs && !bigStack {
				if os.Getenv("CI") == "true" {
					t.Fatalf("stack hard limit %d: cannot exec 4 MiB of arguments", old.Max)
				}
				t.Skipf("stack hard limit %d: cannot exec 4 MiB of arguments", old.Max)
			}
			pid := stoppedAtExec(t, prog, tc.argv, tc.env)
			wantArgv, wantFn, wantErr := procArgv(t, pid)
			argv, fn, err := rb.execStack(pid, nil)
			if wantErr != nil {
				if !errors.Is(err, wantErr) {
					t.Fatalf("stack: %v; /proc: %v", err, wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("stack: %v", err)
			}
			if !slices.Equal(argv, wantArgv) || fn != wantFn {
				t.Fatalf("stack gave %d words, exec path %q; /proc %d words, %q", len(argv), fn, len(wantArgv), wantFn)
			}
			want := tc.want
			if want == nil {
				want = tc.argv
			}
			if !slices.Equal(argv, want) || fn != prog {
				t.Fatalf("argv %d words, exec path %q; want %d words, %q", len(argv), fn, len(want), prog)
			}
			// The whole event agrees (a stop's reads share one buffer).
			ev := readExecEvent(pid, &execFacts{sizes: map[int64]bool{}}, &rb)
			if ev.Problem != "" || !slices.Equal(ev.Argv, want) || ev.ExecPath != prog {
				t.Fatalf("event: problem %q, %d words, exec path %q", ev.Problem, len(ev.Argv), ev.ExecPath)
			}
		})
	}
	t.Run("killed meanwhile", func(t *testing.T) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pid := stoppedAtExec(t, prog, []string{prog, "x"}, nil)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Dead but not reaped (a zombie), then reaped: no argv either way.
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WALL, nil); err != nil {
			t.Fatal(err)
		}
		if argv, _, err := rb.execStack(pid, nil); err == nil {
			t.Fatalf("a dead process gave argv %q", argv)
		}
		if ev := readExecEvent(pid, &execFacts{sizes: map[int64]bool{}}, &rb); ev.Problem == "" {
			t.Fatalf("a dead process gave no problem: %+v", ev)
		}
		killReap(pid)
		if argv, _, err := rb.execStack(pid, nil); err == nil {
			t.Fatalf("a reaped process gave argv %q", argv)
		}
	})
}

// TestExecGateArgv: through the sandbox, the gate's argv is the one the
// program gets, for what no shell can pass (argc 0, empty arguments) and
// for long ones: 20000 arguments, argv at the 4 MiB cap; one byte over it
// is a Problem, and the program is killed.
func TestExecGateArgv(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	execargs := buildProbe(t, ws.dir, "execargs")
	const prog = "/usr/bin/true"
	seq := []string{prog}
	for i := 1; i <= 20000; i++ {
		seq = append(seq, strconv.Itoa(i))
	}
	tests := []struct {
		name, cmd string
		want      []string // nil: refused
		problem   string
	}{
		{"argc 0", execargs + " " + prog + " none", []string{""}, ""},
		{"empty arguments", execargs + " " + prog + " empty", []string{"", "x", "", ""}, ""},
		{"20000 arguments", prog + " $(seq 20000)", seq, ""},
		{"argv at the cap", execargs + " " + prog + " bytes " + strconv.Itoa(maxArgvBytes), argvOfBytes([]string{prog}, maxArgvBytes), ""},
		{"argv one byte over the cap", execargs + " " + prog + " bytes " + strconv.Itoa(maxArgvBytes+1), nil, "over the size limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &gateRecorder{}
			s := ws.spec(tc.cmd + "; echo rc=$?")
			s.ExecGate = g.gate
			r, err := Run(context.Background(), s)
			want := "rc=0\n"
			if tc.want == nil {
				want = "rc=137\n"
			}
			if err != nil || r.Stdout != want {
				t.Fatalf("run: %v %+v, want %q", err, r, want)
			}
			var ev *ExecEvent
			for _, e := range g.seen() {
				if e.Exe == prog || strings.Contains(e.Problem, "argv") {
					ev = &e
				}
			}
			switch {
			case ev == nil:
				t.Fatalf("no event for %s in %d", prog, len(g.seen()))
			case tc.want == nil:
				if !strings.Contains(ev.Problem, tc.problem) {
					t.Fatalf("problem %q, want %q", ev.Problem, tc.problem)
				}
			case ev.Problem != "" || ev.ExecPath != prog || !slices.Equal(ev.Argv, tc.want):
				t.Fatalf("event: problem %q, exec path %q, %d words (want %d)", ev.Problem, ev.ExecPath, len(ev.Argv), len(tc.want))
			}
		})
	}
}

// FuzzParseExecStack: whatever the stack holds, parsing never panics, and
// what it returns lies inside what was read: argv's strings with their
// NULs within the memory and the cap, the exec path under PATH_MAX.
// Stacks laid out as the kernel does parse back exactly.
func FuzzParseExecStack(f *testing.F) {
	const sp = 0x7ffc00001000
	f.Add(stackImage(sp, []string{"/bin/true", "a"}, []string{"A=b"}, "/bin/true", nil), false)
	f.Add(stackImage(sp, nil, nil, "/x", nil), false)
	f.Add(stackImage(sp, []string{"", ""}, nil, "", nil), true)
	f.Fuzz(func(t *testing.T, mem []byte, asArgv bool) {
		if asArgv { // the bytes as NUL-separated argv, laid out by the kernel's rules
			argv := strings.Split(string(mem), "\x00")
			img := stackImage(sp, argv, []string{"E=1"}, "/p", nil)
			got, fn, err := parseExecStack(img, sp, nil)
			if err != nil || !slices.Equal(got, argv) || fn != "/p" {
				if len(mem) < maxArgvBytes {
					t.Fatalf("kernel layout of %q: %q %q %v", argv, got, fn, err)
				}
			}
			return
		}
		argv, fn, err := parseExecStack(mem, sp, nil)
		if err != nil {
			if argv != nil || fn != "" {
				t.Fatalf("error %v with argv %q, exec path %q", err, argv, fn)
			}
			return
		}
		n := 0
		for _, a := range argv {
			n += len(a) + 1
		}
		if n > len(mem) || n > maxArgvBytes || len(fn) >= unix.PathMax {
			t.Fatalf("argv of %d bytes, exec path of %d, from %d bytes", n, len(fn), len(mem))
		}
	})
}
