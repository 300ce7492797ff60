//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	MaybeRunHelper()
	os.Exit(m.Run())
}

// needSandbox skips when the kernel lacks what the sandbox needs; under
// CI=true that fails instead (the kernel tests must run there).
func needSandbox(t testing.TB) int {
	t.Helper()
	abi, err := landlockABI()
	if err != nil || abi < 1 {
		missingDep(t, "landlock not available (ABI %d, %v)", abi, err)
	}
	return abi
}

// missingDep skips a test whose real dependency is missing, or fails it
// under CI=true.
func missingDep(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format, args...)
}

type workspace struct {
	dir string
	ro  []string
}

func newWorkspace(t *testing.T) workspace {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".git/config", ".git/HEAD", "src/main.go"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("orig\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return workspace{dir: dir, ro: []string{filepath.Join(dir, ".git/hooks"), filepath.Join(dir, ".git/config")}}
}

func (w workspace) spec(cmd string) Spec {
	return Spec{
		Command:  cmd,
		Dir:      w.dir,
		Env:      []string{"PATH=/usr/bin:/bin", "HOME=" + w.dir, "LC_ALL=C"},
		Writable: []string{w.dir},
		ReadOnly: w.ro,
		Timeout:  10 * time.Second,
	}
}

// listener is a TCP listener on the host's 127.0.0.1 that counts accepts.
func listener(t *testing.T) (port int, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, accepted
}

func TestSandboxProperties(t *testing.T) {
	abi := needSandbox(t)
	ws := newWorkspace(t)

	hostTmp, err := os.CreateTemp("/tmp", "onellm-host-marker-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	t.Cleanup(func() { os.Remove(hostTmp.Name()) })
	sibling := t.TempDir() // under /tmp, not a root: invisible inside
	varSib, err := os.MkdirTemp("/var/tmp", "onellm-sib-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(varSib) })
	sbxTmpName := fmt.Sprintf("/tmp/onellm-sbx-wrote-%d", time.Now().UnixNano())
	t.Setenv("ONELLM_HOST_MARKER", "server-secret-marker")
	port, accepted := listener(t)
	hostPid := os.Getpid()

	const (
		eperm  = "Operation not permitted"
		eacces = "Permission denied"
		erofs  = "Read-only file system"
		ebusy  = "Device or resource busy"
	)
	perlSys := func(args string) string {
		return `perl -e 'my $r = syscall(` + args + `); print $r == -1 ? "$!\n" : "ok\n"'`
	}
	perlSock := func(dom, typ, proto int) string {
		return fmt.Sprintf(`perl -e 'socket(my $s, %d, %d, %d) ? print "ok\n" : print "$!\n"'`, dom, typ, proto)
	}
	tests := []struct {
		name     string
		cmd      string
		net      Network
		tcp      []uint16 // AllowTCPConnect
		ro       []string // ReadOnly relative to the workspace (default .git/hooks, .git/config)
		minABI   int
		wantExit int    // -1: any non-zero
		want     string // substring of stdout+stderr
		check    func(t *testing.T, r Result)
	}{
		{name: "write in workspace", cmd: "echo hi > src/new.txt && cat src/new.txt", want: "hi"},
		{name: "write /etc denied (EROFS: a read-only overlay)", cmd: "echo x > /etc/onellm-x", wantExit: 1, want: erofs},
		{name: "write /root denied (EACCES)", cmd: "echo x > /root/onellm-x", wantExit: 1, want: eacces},
		{name: "mkdir /usr denied (EACCES)", cmd: "mkdir /usr/onellm-x", wantExit: 1, want: eacces},
		{name: "write sibling /var/tmp dir denied (EACCES)", cmd: "echo x > " + varSib + "/x", wantExit: 1, want: eacces},
		{name: "sibling /tmp dir invisible (ENOENT)", cmd: "ls " + sibling, wantExit: 2, want: "No such file or directory"},
		{name: "read /etc/shadow denied (EACCES)", cmd: "cat /etc/shadow", wantExit: 1, want: eacces},
		{name: "read /etc/shadow via symlink denied (EACCES)", cmd: "ln -sf /etc/shadow l && cat l", wantExit: 1, want: eacces},
		{name: "hard link to /etc/shadow denied", cmd: "ln /etc/shadow h", wantExit: 1, want: "ln:"},
		{name: "read /etc/gshadow denied (EACCES)", cmd: "cat /etc/gshadow", wantExit: 1, want: eacces},
		{name: "list /etc/ssl/private denied (EACCES)", cmd: "test -d /etc/ssl/private || echo 'Permission denied'; ls /etc/ssl/private", wantExit: -1, want: eacces},
		{name: "/etc/ssl/certs readable", cmd: "ls /etc/ssl/certs | head -1 >/dev/null && echo ok", want: "ok"},
		{name: "hidden secret cannot be chmod'ed (EROFS)", cmd: "chmod 644 /etc/shadow", wantExit: 1, want: erofs},
		{name: "no placeholder left in /tmp", cmd: "ls -A /tmp | grep -c onellm-hidden", wantExit: 1, want: "0"},
		{name: "read /root denied (EACCES)", cmd: "ls /root", wantExit: 2, want: eacces},
		{name: "read /etc/passwd works", cmd: "grep ^root: /etc/passwd", want: "root:x:0:0"},
		{name: "run system binaries, same uid", cmd: "ls /usr/bin | head -1 >/dev/null && id -u", want: strconv.Itoa(os.Geteuid()) + "\n"},
		{name: ".git/hooks read-only (EROFS)", cmd: "echo x > .git/hooks/pre-commit", wantExit: 1, want: erofs},
		{name: ".git/config read-only (EROFS)", cmd: "echo x >> .git/config", wantExit: 1, want: erofs},
		{name: ".git cannot be renamed away (EBUSY)", cmd: "mv .git .git2", wantExit: 1, want: ebusy},
		{name: ".git/hooks cannot be removed (EBUSY)", cmd: "rm -rf .git/hooks", wantExit: 1, want: ebusy},
		{name: "nested carve-outs (.git and .git/config)", cmd: "echo x > .git/HEAD", wantExit: 1, want: erofs, ro: []string{".git", ".git/config"}},
		{name: "rest of .git writable", cmd: "echo ref > .git/HEAD && cat .git/HEAD", want: "ref"},
		{name: "/tmp private: host file invisible", cmd: "test -e " + hostTmp.Name(), wantExit: 1},
		{name: "/tmp writable and private", cmd: "echo x > " + sbxTmpName + " && cat " + sbxTmpName, want: "x", check: func(t *testing.T, r Result) {
			if _, err := os.Stat(sbxTmpName); err == nil {
				os.Remove(sbxTmpName)
				t.Errorf("%s leaked to the host /tmp", sbxTmpName)
			}
		}},
		{name: "here-doc works", cmd: "cat <<EOF\nheredoc\nEOF", want: "heredoc"},
		{name: "/dev/null and /dev/stderr usable", cmd: "echo x > /dev/null && echo e > /dev/stderr", want: "e"},
		{name: "network none: host listener unreachable", cmd: fmt.Sprintf("echo > /dev/tcp/127.0.0.1/%d", port), wantExit: 1, check: func(t *testing.T, r Result) {
			if n := accepted.Load(); n != 0 {
				t.Errorf("listener accepted %d connections", n)
			}
		}},
		{name: "network none: loopback inside is up (UDP echo)", cmd: `perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1:9999", Proto => "udp") or die "bind: $!\n"; $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1:9999", Proto => "udp") or die "connect: $!\n"; $c->send("ping"); $s->recv($b, 16); print "got $b\n"'`, want: "got ping"},
		{name: "network none: TCP bind denied by landlock (EACCES)", minABI: 4, cmd: `perl -MSocket -e 'socket(my $s, AF_INET, SOCK_STREAM, 0) or die "socket: $!\n"; bind($s, pack_sockaddr_in(8080, inet_aton("127.0.0.1"))) ? print "ok\n" : print "$!\n"'`, want: eacces},
		{name: "network none: allowed TCP port passes landlock (ECONNREFUSED)", minABI: 4, tcp: []uint16{4321}, cmd: "echo > /dev/tcp/127.0.0.1/4321", wantExit: 1, want: "Connection refused"},
		{name: "network none: host listener unreachable even with landlock allowing its port (ECONNREFUSED)", minABI: 4, tcp: []uint16{uint16(port)}, cmd: fmt.Sprintf("echo > /dev/tcp/127.0.0.1/%d", port), wantExit: 1, want: "Connection refused", check: func(t *testing.T, r Result) {
			if n := accepted.Load(); n != 0 {
				t.Errorf("listener accepted %d connections", n)
			}
		}},
		{name: "network none: other TCP port denied (EACCES)", minABI: 4, tcp: []uint16{4321}, cmd: "echo > /dev/tcp/127.0.0.1/4322", wantExit: 1, want: eacces},
		{name: "network full: host listener reachable", net: NetworkFull, cmd: fmt.Sprintf("echo > /dev/tcp/127.0.0.1/%d && echo connected", port), want: "connected", check: func(t *testing.T, r Result) {
			deadline := time.Now().Add(2 * time.Second)
			for accepted.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if accepted.Load() == 0 {
				t.Errorf("listener saw no connection")
			}
			accepted.Store(0)
		}},
		{name: "only sandbox pids visible", cmd: "ls /proc | grep -cE '^[0-9]+$'", check: func(t *testing.T, r Result) {
			n, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
			if err != nil || n > 5 {
				t.Errorf("saw %q pids in /proc", r.Stdout)
			}
		}},
		{name: "shell is not PID 1", cmd: "echo $$", check: func(t *testing.T, r Result) {
			if strings.TrimSpace(r.Stdout) == "1" {
				t.Errorf("the shell is PID 1")
			}
		}},
		{name: "host process unreachable by kill (ESRCH)", cmd: fmt.Sprintf("kill -0 %d", hostPid), wantExit: 1, want: "No such process"},
		{name: "ptrace denied (EPERM)", cmd: perlSys("101, 16, 1, 0, 0"), want: eperm},
		{name: "process_vm_readv denied (EPERM)", cmd: perlSys("310, 1, 0, 0, 0, 0, 0"), want: eperm},
		{name: "helper environ unreadable (EACCES)", cmd: "cat /proc/1/environ", wantExit: 1, want: eacces},
		{name: "helper status pipe unreachable (EACCES)", cmd: `echo '{"t":"exit","code":0}' > /proc/1/fd/4`, wantExit: 1, want: eacces},
		{name: "helper memory unreachable (EACCES)", cmd: "head -c 1 /proc/1/mem", wantExit: 1, want: eacces},
		{name: "only stdio inherited", cmd: "ls /proc/self/fd | tr '\\n' ' '", want: "0 1 2 3 "},
		{name: "rename inside workspace works", cmd: "mkdir -p a/b && echo x > a/b/f && mv a/b/f g && cat g", want: "x"},
		{name: "kill PID 1 (helper) has no effect", cmd: "kill -9 1; echo alive", want: "alive"},
		{name: "env exact", cmd: "env | sort", check: func(t *testing.T, r Result) {
			if strings.Contains(r.Stdout, "ONELLM_HOST_MARKER") || strings.Contains(r.Stdout, "server-secret-marker") {
				t.Errorf("server environment leaked: %q", r.Stdout)
			}
			if !strings.Contains(r.Stdout, "HOME="+ws.dir) || !strings.Contains(r.Stdout, "LC_ALL=C") {
				t.Errorf("env missing passed variables: %q", r.Stdout)
			}
		}},
		{name: "capabilities zero", cmd: "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status", check: func(t *testing.T, r Result) {
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			if len(lines) != 5 {
				t.Fatalf("got %q", r.Stdout)
			}
			for _, l := range lines {
				if !strings.HasSuffix(l, "0000000000000000") {
					t.Errorf("capability set not empty: %q", l)
				}
			}
		}},
		{name: "no_new_privs set", cmd: "grep NoNewPrivs /proc/self/status", want: "NoNewPrivs:\t1"},
		{name: "seccomp filter on", cmd: "grep ^Seccomp: /proc/self/status", want: "Seccomp:\t2"},
		// The restricted thread gets its seccomp filter and no_new_privs
		// before the spec, while PID 1 idles: its main thread, the exec
		// gate's tracer and the one that made the mounts, has neither.
		{name: "PID 1's main thread unrestricted", cmd: "grep -E '^(NoNewPrivs|Seccomp):' /proc/1/status", want: "NoNewPrivs:\t0\nSeccomp:\t0\n"},
		{name: "chown denied without CAP_CHOWN", cmd: "touch f && chown 1:1 f", wantExit: 1, want: "chown: changing ownership"},
		{name: "unix socket denied (EPERM)", cmd: perlSock(1, 1, 0), want: eperm},
		{name: "vsock socket denied (EPERM)", cmd: perlSock(40, 1, 0), want: eperm},
		{name: "MPTCP socket denied (EPERM)", cmd: perlSock(2, 1, 262), want: eperm},
		{name: "SCTP socket denied (EPERM)", cmd: perlSock(2, 5, 132), want: eperm},
		{name: "TCP socket allowed", cmd: perlSock(2, 1, 0), want: "ok"},
		{name: "io_uring_setup denied (EPERM)", cmd: perlSys("425, 8, 0"), want: eperm},
		{name: "unshare denied (EPERM)", cmd: "unshare -U true", wantExit: -1, want: eperm},
		{name: "mount denied", cmd: "mount -t tmpfs none " + ws.dir + "/src", wantExit: -1},
		{name: "core rlimit zero", cmd: "ulimit -c", want: "0"},
		{name: "nofile rlimit", cmd: "ulimit -n", want: "1024"},
		{name: "exit code", cmd: "exit 3", wantExit: 3},
		{name: "signal reported", cmd: "kill -TERM $$", wantExit: 143, check: func(t *testing.T, r Result) {
			if r.Signal != "SIGTERM" {
				t.Errorf("signal %q, want SIGTERM", r.Signal)
			}
		}},
	}
	eachPath(t, func(t *testing.T, run runFunc) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if abi < tc.minABI {
					t.Skipf("needs landlock ABI %d", tc.minABI)
				}
				s := ws.spec(tc.cmd)
				if tc.net != "" {
					s.Network = tc.net
				}
				s.AllowTCPConnect = tc.tcp
				if tc.ro != nil {
					s.ReadOnly = nil
					for _, p := range tc.ro {
						s.ReadOnly = append(s.ReadOnly, filepath.Join(ws.dir, p))
					}
				}
				r, err := run(context.Background(), s)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				out := r.Stdout + r.Stderr
				if tc.wantExit == -1 && r.ExitCode == 0 || tc.wantExit >= 0 && r.ExitCode != tc.wantExit {
					t.Errorf("exit %d, want %d; output %q", r.ExitCode, tc.wantExit, out)
				}
				if !strings.Contains(out, tc.want) {
					t.Errorf("output %q does not contain %q", out, tc.want)
				}
				if tc.check != nil {
					tc.check(t, r)
				}
			})
		}
	})
	// Nothing changed on the host.
	if b, _ := os.ReadFile(filepath.Join(ws.dir, ".git/config")); string(b) != "orig\n" {
		t.Errorf(".git/config changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws.dir, ".git/hooks/pre-commit")); err == nil {
		t.Errorf(".git/hooks/pre-commit was created")
	}
	for _, p := range []string{"/etc/onellm-x", "/root/onellm-x", varSib + "/x"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was created", p)
		}
	}
}

// hostProcessWith reports whether a host process has marker in its command
// line.
func hostProcessWith(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte(marker)) {
			return true
		}
	}
	return false
}

func TestKillsEverything(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	tests := []struct {
		name     string
		cmd      string
		timeout  time.Duration
		cancelIn time.Duration
		marker   string
		wantTO   bool
		wantErr  error
		maxDur   time.Duration
	}{
		// Durations no one else sleeps for: the markers are looked for among
		// every process of the host. maxDur is far below the 30 s sleeps and
		// the 4,271 s background ones, far above a start on a loaded machine.
		{name: "setsid background child killed at end", cmd: "setsid sleep 4271.7 & sleep 4271.8 & echo started", marker: "4271.", maxDur: 10 * time.Second},
		{name: "timeout kills setsid child", cmd: "setsid sleep 4271.9 & sleep 30", timeout: 500 * time.Millisecond, marker: "4271.9", wantTO: true, maxDur: 10 * time.Second},
		{name: "ctx cancel kills", cmd: "setsid sleep 4272.1 & sleep 30", cancelIn: 300 * time.Millisecond, marker: "4272.1", wantErr: context.Canceled, maxDur: 10 * time.Second},
	}
	eachPath(t, func(t *testing.T, run runFunc) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := ws.spec(tc.cmd)
				if tc.timeout > 0 {
					s.Timeout = tc.timeout
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancelIn > 0 {
					time.AfterFunc(tc.cancelIn, cancel)
				}
				start := time.Now()
				r, err := run(ctx, s)
				el := time.Since(start)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				if r.TimedOut != tc.wantTO {
					t.Errorf("timed_out %v, want %v", r.TimedOut, tc.wantTO)
				}
				if el > tc.maxDur {
					t.Errorf("took %v", el)
				}
				if (tc.wantTO || tc.wantErr != nil) && r.Signal != "SIGKILL" {
					t.Errorf("signal %q, want SIGKILL", r.Signal)
				}
				if hostProcessWith("sleep\x00" + tc.marker) {
					t.Errorf("a sleep %s* survived", tc.marker)
				}
			})
		}
	})
}

func TestOutput(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	tests := []struct {
		name  string
		spec  func(s *Spec)
		check func(t *testing.T, r Result)
	}{
		{name: "cap keeps head and tail", spec: func(s *Spec) {
			s.Command = "echo BEGIN; head -c 200000 /dev/zero | tr '\\0' a; echo; echo END"
			s.OutputMax = 1000
		}, check: func(t *testing.T, r Result) {
			if !r.Truncated || !strings.HasPrefix(r.Stdout, "BEGIN\naaa") || !strings.HasSuffix(r.Stdout, "aaa\nEND\n") ||
				!strings.Contains(r.Stdout, "bytes truncated") || len(r.Stdout) > 1100 {
				t.Errorf("truncated=%v stdout=%q", r.Truncated, r.Stdout)
			}
		}},
		{name: "secret redacted in both streams", spec: func(s *Spec) {
			s.Env = append(s.Env, "TOKEN=hunter2-very-secret")
			s.Secrets = []string{"hunter2-very-secret"}
			s.Command = `echo "token=$TOKEN"; echo "$TOKEN" >&2`
		}, check: func(t *testing.T, r Result) {
			if r.Stdout != "token="+RedactedMarker+"\n" || r.Stderr != RedactedMarker+"\n" {
				t.Errorf("stdout %q stderr %q", r.Stdout, r.Stderr)
			}
		}},
		{name: "secret at the truncation cut redacted", spec: func(s *Spec) {
			s.Secrets = []string{"SECRETSECRET"}
			s.OutputMax = 100
			// The secret straddles the head cut (byte 50) and the tail cut.
			s.Command = `printf '%045d' 0; printf SECRETSECRET; head -c 5000 /dev/zero | tr '\0' b; printf SECRETSECRET; printf '%045d' 0`
		}, check: func(t *testing.T, r Result) {
			if strings.Contains(r.Stdout, "SECRET") || strings.Count(r.Stdout, RedactedMarker) != 2 {
				t.Errorf("stdout %q", r.Stdout)
			}
		}},
		{name: "stdin delivered", spec: func(s *Spec) {
			s.Stdin = []byte("hello from stdin\n")
			s.Command = "cat"
		}, check: func(t *testing.T, r Result) {
			if r.Stdout != "hello from stdin\n" {
				t.Errorf("stdout %q", r.Stdout)
			}
		}},
		{name: "large stdin not read does not hang", spec: func(s *Spec) {
			s.Stdin = bytes.Repeat([]byte("x"), 1<<20)
			s.Command = "echo done"
		}, check: func(t *testing.T, r Result) {
			if r.Stdout != "done\n" {
				t.Errorf("stdout %q", r.Stdout)
			}
		}},
		{name: "runaway output killed", spec: func(s *Spec) {
			s.Command = "yes"
			s.OutputMax = 1000
			s.KillAfterOutput = 1 << 20
		}, check: func(t *testing.T, r Result) {
			if !r.OutputExceeded || !r.Truncated || r.Duration > 5*time.Second {
				t.Errorf("exceeded=%v truncated=%v duration=%v", r.OutputExceeded, r.Truncated, r.Duration)
			}
		}},
	}
	eachPath(t, func(t *testing.T, run runFunc) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := ws.spec("")
				tc.spec(&s)
				r, err := run(context.Background(), s)
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, r)
			})
		}
	})
}

func TestSetupFailureRunsNothing(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	marker := filepath.Join(ws.dir, "ran")
	tests := []struct {
		name string
		spec func(s *Spec)
		want string
	}{
		{name: "missing dir (ENOENT)", spec: func(s *Spec) { s.Dir = filepath.Join(ws.dir, "nope") }, want: "ENOENT"},
		{name: "shell not executable (ENOENT)", spec: func(s *Spec) { s.Shell = "/nonexistent/sh" }, want: "ENOENT"},
		{name: "no landlock: fail closed (EOPNOTSUPP)", spec: func(s *Spec) { s.simulateNoLandlock = true }, want: "landlock ABI 0"},
	}
	eachPath(t, func(t *testing.T, run runFunc) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := ws.spec("touch " + marker)
				tc.spec(&s)
				_, err := run(context.Background(), s)
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want ErrUnavailable with %q", err, tc.want)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("the command ran")
				}
			})
		}
		// Invalid specs are refused before anything starts.
		for _, s := range []Spec{
			{Command: "true", Dir: "/etc"},
			{Command: "true", Writable: []string{"/"}},
			{Command: "true", Writable: []string{"rel"}},
			{Command: "true", Network: "bogus"},
			{Command: "true", Network: NetworkProxy}, // no Proxy handler
			{Command: "true", Home: "/var/home"},
			{Command: "true", Home: "/tmp/a/b"},
			{Command: "true", Home: "/tmp"},
			{Command: "true", Home: "/tmp/h/"},
			{Command: "true", Home: "/tmp/h", Writable: []string{"/tmp"}},
			{Command: "true", Home: "/tmp/h", Writable: []string{"/tmp/h/ws"}},
			{Command: "true", Home: "/tmp/h", Readable: []string{"/tmp/h"}},
		} {
			if _, err := run(context.Background(), s); err == nil {
				t.Errorf("spec %+v accepted", s)
			}
		}
	})
}

// TestHome: Spec.Home is an empty folder of the command's own, mode 0700,
// in the private /tmp: writable, empty again on the next run (whatever the
// last one left), never made on the host; PrivateHome steps around a root
// in its way and gives up when a root holds /tmp.
func TestHome(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	home := PrivateHome([]string{ws.dir, "/tmp/home"})
	if home == "" || home == "/tmp/home" {
		t.Fatalf("PrivateHome = %q", home)
	}
	if got := PrivateHome([]string{"/tmp"}); got != "" {
		t.Errorf("PrivateHome with /tmp a root = %q, want none", got)
	}
	_, hostErr := os.Lstat(home)
	eachPath(t, func(t *testing.T, run runFunc) {
		for i := 0; i < 2; i++ {
			s := ws.spec(`stat -c '%a %u' "$HOME"; ls -A "$HOME" | wc -l; echo x > "$HOME/left" && mkdir "$HOME/.config" && echo written`)
			s.Home = home
			s.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + home, "LC_ALL=C"}
			r, err := run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("700 %d\n0\nwritten\n", os.Geteuid())
			if r.ExitCode != 0 || r.Stdout != want {
				t.Errorf("run %d: exit %d, stdout %q, want %q; stderr %q", i, r.ExitCode, r.Stdout, want, r.Stderr)
			}
		}
	})
	if _, err := os.Lstat(home); hostErr != nil && err == nil {
		t.Errorf("%s was made on the host", home)
	}
}

func TestRunHost(t *testing.T) {
	t.Setenv("ONELLM_HOST_MARKER", "server-secret-marker")
	dir := t.TempDir()
	tests := []struct {
		name     string
		cmd      string
		timeout  time.Duration
		wantExit int
		wantSig  string
		wantTO   bool
		want     string
	}{
		{name: "exit code", cmd: "exit 7", wantExit: 7},
		{name: "env exact", cmd: "env", want: "ONLY=this"},
		{name: "signal", cmd: "kill -TERM $$", wantExit: 143, wantSig: "SIGTERM"},
		{name: "timeout kills group", cmd: "sleep 4273.3 & sleep 30", timeout: 300 * time.Millisecond, wantExit: 137, wantSig: "SIGKILL", wantTO: true},
		{name: "background child killed at end", cmd: "sleep 4273.4 & echo ok", want: "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Spec{Command: tc.cmd, Dir: dir, Env: []string{"ONLY=this", "PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second}
			if tc.timeout > 0 {
				s.Timeout = tc.timeout
			}
			start := time.Now()
			r, err := RunHost(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if r.ExitCode != tc.wantExit || r.Signal != tc.wantSig || r.TimedOut != tc.wantTO {
				t.Errorf("got exit %d signal %q timed_out %v", r.ExitCode, r.Signal, r.TimedOut)
			}
			if !strings.Contains(r.Stdout, tc.want) || strings.Contains(r.Stdout, "ONELLM_HOST_MARKER") {
				t.Errorf("stdout %q", r.Stdout)
			}
			if time.Since(start) > 10*time.Second { // the command sleeps 30 s
				t.Errorf("took %v", time.Since(start))
			}
			if hostProcessWith("sleep\x004273.") {
				t.Errorf("a sleep survived")
			}
		})
	}
}

func TestProbe(t *testing.T) {
	needSandbox(t)
	abi, err := Probe()
	if err != nil || abi < 1 {
		t.Fatalf("Probe() = %d, %v", abi, err)
	}
}

// TestNoLeaks runs many commands and checks that goroutines and open files
// do not grow.
func TestNoLeaks(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	run := func() {
		if _, err := Run(context.Background(), ws.spec("echo x; setsid sleep 5 &")); err != nil {
			t.Fatal(err)
		}
	}
	run()
	fds, gs := countFDs(), numGoroutine()
	for i := 0; i < 30; i++ {
		run()
	}
	if d := grewBy(countFDs, fds); d > 0 {
		t.Errorf("open files grew by %d", d)
	}
	if d := grewBy(numGoroutine, gs); d > 0 {
		t.Errorf("goroutines grew by %d", d)
	}
}

func TestCaptureUnit(t *testing.T) {
	tests := []struct {
		name    string
		chunks  []string
		max     int
		secrets []string
		want    string
		trunc   bool
	}{
		{name: "short", chunks: []string{"hello"}, max: 10, want: "hello"},
		{name: "exact", chunks: []string{"0123456789"}, max: 10, want: "0123456789"},
		{name: "cut", chunks: []string{"0123456789", "abcdef"}, max: 10, want: "01234\n… [6 bytes truncated] …\nbcdef", trunc: true},
		{name: "redact", chunks: []string{"aXYZb"}, max: 10, secrets: []string{"XYZ"}, want: "a" + RedactedMarker + "b"},
		{name: "redact across writes", chunks: []string{"aX", "YZb"}, max: 10, secrets: []string{"XYZ"}, want: "a" + RedactedMarker + "b"},
		{name: "overlapping secrets merged", chunks: []string{"abcde"}, max: 10, secrets: []string{"abc", "cde"}, want: RedactedMarker},
		{name: "secret straddling head cut", chunks: []string{"0123SECRET", strings.Repeat("z", 30), "tail!"}, max: 10, secrets: []string{"SECRET"},
			want: "0123" + RedactedMarker + "\n… [30 bytes truncated] …\ntail!", trunc: true},
		{name: "secret straddling tail cut", chunks: []string{strings.Repeat("z", 30), "SECRET12"}, max: 10, secrets: []string{"SECRET"},
			want: "zzzzz\n… [25 bytes truncated] …\n" + RedactedMarker + "12", trunc: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(tc.max, tc.secrets)
			for _, ch := range tc.chunks {
				c.Write([]byte(ch))
			}
			got, tr := c.result(tc.secrets)
			if got != tc.want || tr != tc.trunc {
				t.Errorf("got %q (truncated %v), want %q (%v)", got, tr, tc.want, tc.trunc)
			}
		})
	}
}

func TestSeccompProgramAssembles(t *testing.T) {
	p, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	if len(p) == 0 || len(p) > 4096 {
		t.Fatalf("program length %d", len(p))
	}
}

// benchMedian runs f b.N times and reports the median as well.
func benchMedian(b *testing.B, f func() error) {
	var d []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(t0))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	if len(d) > 0 {
		b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "median-ns/op")
	}
}

func BenchmarkRunTrue(b *testing.B) {
	needSandbox(b)
	dir := b.TempDir()
	s := Spec{Command: "true", Dir: dir, Writable: []string{dir}, Env: []string{"PATH=/usr/bin:/bin"}}
	benchMedian(b, func() error {
		r, err := Run(context.Background(), s)
		if err == nil && r.ExitCode != 0 {
			err = fmt.Errorf("exit %d", r.ExitCode)
		}
		return err
	})
}

func BenchmarkRunHostTrue(b *testing.B) {
	dir := b.TempDir()
	s := Spec{Command: "true", Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}}
	benchMedian(b, func() error {
		r, err := RunHost(context.Background(), s)
		if err == nil && r.ExitCode != 0 {
			err = fmt.Errorf("exit %d", r.ExitCode)
		}
		return err
	})
}

// BenchmarkExecTrue is the baseline: a bare exec of /bin/true.
func BenchmarkExecTrue(b *testing.B) {
	benchMedian(b, func() error { return exec.Command("/bin/true").Run() })
}

func numGoroutine() int { return runtime.NumGoroutine() }
