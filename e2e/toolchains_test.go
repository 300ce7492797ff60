package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

// TestToolchainsInTheSandbox: a new user's first commands — git, go, node,
// python and make — work in the sandbox on the interactive-dev profile
// without editing the config, while the home folder stays closed: the
// real ~/.gitconfig's other keys (a token) never reach a command, and no
// host cache is written.
func TestToolchainsInTheSandbox(t *testing.T) {
	for _, tool := range []string{"git", "go", "node", "npm", "python3", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			testkit.Missing(t, "%s is not installed: %v", tool, err)
		}
	}
	t.Run("root", func(t *testing.T) { toolchainsInTheSandbox(t, nil) })
	t.Run("unprivileged", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("creating a user needs root; this run is unprivileged already")
		}
		toolchainsInTheSandbox(t, testUser(t))
	})
}

// unprivileged is a user made for the test.
type unprivileged struct{ uid, gid uint32 }

// testUser creates a user for the test (removed after it) or fails: every
// CI run is root and useradd works there.
func testUser(t *testing.T) *unprivileged {
	t.Helper()
	u := testkit.NewUser(t, "onellm-e2e")
	return &unprivileged{u.UID, u.GID}
}

func toolchainsInTheSandbox(t *testing.T, as *unprivileged) {
	f := newFixture(t, `profile = "interactive-dev"`)
	home := f.Root // the server's HOME
	const token = "ghp_e2eTOKENnotForCommands"
	gitconfig := "[user]\n\tname = Sandbox Tester\n\temail = tester@example.com\n" +
		"[url \"https://" + token + "@github.com/\"]\n\tinsteadOf = https://github.com/\n[credential]\n\thelper = store\n"
	f.write(t, "../.gitconfig", gitconfig)
	// An nvm installation whose global npmrc holds a registry token, deep
	// inside a folder commands may read.
	const npmToken = "npm_e2eTOKENnotForCommands"
	nvmrc := f.write(t, "../.nvm/versions/node/v20.0.0/etc/npmrc", "//registry.npmjs.org/:_authToken="+npmToken+"\n")
	goBin, _ := exec.LookPath("go")
	f.Env = append(f.Env, "PATH="+filepath.Dir(goBin)+":/usr/local/bin:/usr/bin:/bin", "XDG_CACHE_HOME=", "GOCACHE=", "GOMODCACHE=", "GOPATH=")

	f.write(t, "go.mod", "module example.com/hello\n\ngo 1.22\n")
	f.write(t, "main.go", "package main\n\nfunc main() { println(greet()) }\n\nfunc greet() string { return \"hi\" }\n")
	f.write(t, "main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif greet() != \"hi\" {\n\t\tt.Fatal(greet())\n\t}\n}\n")
	f.write(t, "package.json", `{"name":"hello","version":"1.0.0","scripts":{"test":"node test.js"}}`)
	f.write(t, "test.js", "const assert = require('assert'); assert.strictEqual(1 + 1, 2); console.log('node ok');\n")
	f.write(t, "calc.py", "def add(a, b):\n    return a + b\n")
	f.write(t, "test_calc.py", "import unittest\nimport calc\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n")
	f.write(t, "Makefile", "all:\n\techo made > made.txt\n")
	f.write(t, ".gitignore", "hello\nnode_modules/\n__pycache__/\n")
	git := exec.Command("git", "init", "-q", "-b", "main")
	git.Dir = f.Workspace
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}

	bin := binary
	var trOpts []transport.StdioOption
	if as != nil {
		// The user owns the fixture (workspace, config, home); the binary is
		// root's, readable and executable by everyone.
		bin = filepath.Join(f.Root, "bin", "onellm-mcp")
		copyFile(t, binary, bin, 0o755)
		filepath.Walk(f.Root, func(p string, _ os.FileInfo, err error) error {
			if err == nil && !strings.HasPrefix(p, filepath.Dir(bin)) {
				os.Lchown(p, int(as.uid), int(as.gid))
			}
			return nil
		})
		os.Chmod(filepath.Dir(f.Root), 0o755) // the test's temp folder, so the user can reach its own
		trOpts = append(trOpts, transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = append(os.Environ(), env...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: as.uid, Gid: as.gid}}
			return cmd, nil
		}))
	}
	c := stdioClientWith(t, f, Modern, bin, trOpts)
	run := func(command string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "execute_terminal_command"
		req.Params.Arguments = map[string]any{"command": command, "timeout_seconds": 280}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		var out struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
			Stderr   string `json:"stderr"`
		}
		structured(t, res, &out)
		if res.IsError || out.ExitCode != 0 {
			t.Fatalf("%s: exit %d\n%s", command, out.ExitCode, text(res))
		}
		if strings.Contains(out.Stdout+out.Stderr, token) {
			t.Fatalf("%s: the token from the real ~/.gitconfig reached the command", command)
		}
		return out.Stdout, out.Stderr
	}

	if out, _ := run("git status --short"); !strings.Contains(out, "main.go") {
		t.Fatalf("git status: %q", out)
	}
	if out, _ := run("git add -A && git commit -qm 'from the sandbox' && git log -1 --format='%an <%ae>'"); strings.TrimSpace(out) != "Sandbox Tester <tester@example.com>" {
		t.Fatalf("git commit author: %q", out)
	}
	if out, _ := run("git config --global --list; echo HOME=$HOME"); strings.Contains(out, "insteadof") || strings.Contains(out, "credential") || strings.Contains(out, "HOME="+home+"\n") {
		t.Fatalf("the generated git config or HOME carries the real one's keys:\n%s", out)
	}
	run("go build -o hello . && ./hello && go test ./...")
	if out, _ := run("go env GOTELEMETRY"); out != "off\n" {
		t.Fatalf("go telemetry in the sandbox: %q", out)
	}
	if out, _ := run("npm test"); !strings.Contains(out, "node ok") {
		t.Fatalf("npm test: %q", out)
	}
	run("python3 -m unittest -q")
	run("make && test -s made.txt")
	// The real home stays closed: its git config cannot be read by path.
	if out, _ := run("cat " + filepath.Join(home, ".gitconfig") + " 2>&1; ls " + home + " 2>&1; exit 0"); strings.Contains(out, "insteadOf") {
		t.Fatalf("the real ~/.gitconfig was readable:\n%s", out)
	}

	if out, _ := run("cat " + nvmrc + " 2>&1; exit 0"); strings.Contains(out, npmToken) {
		t.Fatalf("the token in an installation's global npmrc was readable:\n%s", out)
	}

	if b, err := os.ReadFile(filepath.Join(home, ".gitconfig")); err != nil || string(b) != gitconfig {
		t.Fatalf("the real ~/.gitconfig changed: %q %v", b, err)
	}
	entries, _ := os.ReadDir(filepath.Join(home, ".cache"))
	for _, e := range entries {
		if e.Name() != "onellm-mcp" {
			t.Errorf("a command wrote the host cache %s", filepath.Join(home, ".cache", e.Name()))
		}
	}
	for _, host := range []string{"go", ".npm", ".config"} {
		if _, err := os.Stat(filepath.Join(home, host)); err == nil {
			t.Errorf("a command wrote %s in the real home", host)
		}
	}
}

// TestDoctor: doctor reports the sandbox, the toolchains and how commands
// see them, and each thing that will not work with the config line that
// changes it; a config without toolchains is told how to get them.
func TestDoctor(t *testing.T) {
	f := newFixture(t, "profile = \"interactive-dev\"\n[sandbox]\ntoolchains = \"none\"\n")
	out, errOut, code := runCLI(t, f.Root, "doctor", "--config", f.Config)
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"landlock       ABI", "sandbox        ok", "toolchains ([sandbox] toolchains = \"none\")",
		"what will not work:", "`[sandbox] toolchains = \"auto\"`", "npm and pip are NOT held to the decided index"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	f2 := newFixture(t, "profile = \"interactive-dev\"\n")
	out, _, code = runCLI(t, f2.Root, "doctor", "--config", f2.Config)
	if code != 0 || !strings.Contains(out, "git: git at") || !strings.Contains(out, "HOME = a fresh empty folder per call") {
		t.Errorf("doctor with toolchains: exit %d\n%s", code, out)
	}
	// What holds installers to the decided index, as every command gets
	// it, and the installation configs commands see hidden, from a home
	// folder with an nvm installation whose global npmrc could hold a
	// token.
	nvmrc := f2.write(t, "../.nvm/versions/node/v20.0.0/etc/npmrc", "//registry.npmjs.org/:_authToken=x\n")
	out, errOut, code = runCLIEnv(t, f2.Root, []string{"HOME=" + f2.Root}, "doctor", "--config", f2.Config)
	if code != 0 {
		t.Fatalf("doctor with an nvm home: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"npm_config_registry=https://registry.npmjs.org/", "npm_config_replace_registry_host=always",
		"PIP_CONFIG_FILE=/dev/null", "installation configs hidden from commands", "\n                   " + nvmrc + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	if _, _, code := runCLI(t, f2.Root, "doctor", "--bogus"); code != 2 {
		t.Errorf("doctor --bogus: exit %d, want 2", code)
	}
}

// BenchmarkToolchainVersions: `go version` and `git --version` through the
// tool over stdio beside `echo hi`, with the toolchains given to commands
// (private HOME and caches made per call); the target is within 2 ms of
// echo. The host/ rows start the same `bash -c` on the host with the
// environment a sandboxed command gets (read from the sandbox, with a
// fresh HOME per run as the sandbox makes it), so the go command's own
// start-up, the floor under the sandbox's figure, is measured beside it.
// Each row also reports cpu-ms/op, the processor time a call costs (the
// server and its sandbox helpers; the host's bash and what it runs), which
// a loaded machine changes far less than the wall time.
func BenchmarkToolchainVersions(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go")
	}
	f := newFixture(b, `profile = "interactive-dev"`)
	f.Env = append(f.Env, "PATH="+filepath.Dir(goBin)+":/usr/local/bin:/usr/bin:/bin")
	c := stdioClient(b, f, Legacy)
	server := serverPID(b, f)
	commands := []string{"echo hi", "go version", "git --version"}
	for _, command := range commands {
		b.Run(strings.Fields(command)[0], func(b *testing.B) {
			cpu := processCPU(b, server)
			for b.Loop() {
				if res := call(b, c, "execute_terminal_command", map[string]any{"command": command}); res.IsError {
					b.Fatal(text(res))
				}
			}
			b.ReportMetric(float64((processCPU(b, server)-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
	env := sandboxEnv(b, c)
	for _, command := range commands {
		b.Run("host/"+strings.Fields(command)[0], func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				home := freshHome(b)
				cmd := exec.Command("/bin/bash", "-c", command)
				cmd.Env = append(slices.Clone(env), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
				cmd.Dir = f.Workspace
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%s on the host: %v %s", command, err, out)
				}
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				os.RemoveAll(home)
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// processCPU is the processor time pid and its reaped descendants used
// (user and system), from /proc/PID/stat (clock ticks of 10 ms).
func processCPU(b *testing.B, pid int) time.Duration {
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		b.Fatal(err)
	}
	fields := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+2:]))
	var ticks int64
	for _, f := range fields[11:15] { // utime stime cutime cstime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// sandboxEnv is the environment a sandboxed command sees, without its HOME
// and XDG folders (removed with the call).
func sandboxEnv(b *testing.B, c *client.Client) []string {
	res := call(b, c, "execute_terminal_command", map[string]any{"command": "env"})
	var out cmdOut
	structured(b, res, &out)
	if res.IsError || out.ExitCode != 0 {
		b.Fatal(text(res))
	}
	var env []string
	for _, kv := range strings.Split(strings.TrimSpace(out.Stdout), "\n") {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && !strings.HasPrefix(k, "XDG_") && k != "_" && k != "SHLVL" && k != "PWD" {
			env = append(env, kv)
		}
	}
	return env
}

// freshHome is an empty HOME, as the sandbox makes one per call.
func freshHome(b *testing.B) string {
	home, err := os.MkdirTemp("", "home-")
	if err != nil {
		b.Fatal(err)
	}
	return home
}
