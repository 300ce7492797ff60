package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// TestExecutePolicyOverStdio: under strict-production with sandboxed exec
// allowed, a dynamic command and a compound line with one refused part run
// nothing; a redirect outside the workspace is refused; a brokered secret is
// in the command's environment and redacted from its output; a cwd outside
// the workspace is decided like a path.
func TestExecutePolicyOverStdio(t *testing.T) {
	f := newFixture(t, `profile = "strict-production"

[[rules.allow]]
rule_id    = "sandboxed-exec"
capability = "process.exec"
conditions = { execution_surface = "sandbox", risk_level = ["low", "medium"] }

[[rules.allow]]
rule_id    = "ws-files"
capability = "workspace.files.*"

[[rules.allow]]
rule_id    = "use-token"
capability = "secret.use"
target     = { resource = "token" }

[secrets.token]
env   = "E2E_EXEC_TOKEN"
hosts = ["api.example.com"]
`)
	os.Setenv("E2E_EXEC_TOKEN", "tok-9f8e7d6c5b4a")
	defer os.Unsetenv("E2E_EXEC_TOKEN")
	c := stdioClient(t, f, Legacy)
	marker := filepath.Join(f.Workspace, "ran.txt")
	for _, tt := range []struct{ name, line, want string }{
		{"dynamic", `cmd=touch; $cmd ran.txt`, "<dynamic>"},
		{"eval", `eval "touch ran.txt"`, "eval"},
		{"one refused part", `touch ran.txt && sudo ls`, "sudo"},
		{"redirect outside", `echo x > ../outside.txt; touch ran.txt`, "filesystem.write"},
	} {
		res := call(t, c, "execute_terminal_command", map[string]any{"command": tt.line})
		if !res.IsError || !strings.Contains(text(res), tt.want) || !strings.Contains(text(res), "refused") {
			t.Errorf("%s: want a refusal naming %q, got %s", tt.name, tt.want, text(res))
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: part of a refused line ran", tt.name)
		}
	}
	res := call(t, c, "execute_terminal_command", map[string]any{"command": `echo "token is $E2E_EXEC_TOKEN"`, "secrets": []string{"token"}})
	if res.IsError || strings.Contains(text(res), "tok-9f8e7d6c5b4a") || !strings.Contains(text(res), "token is [REDACTED") {
		t.Fatalf("secret: %s", text(res))
	}
	res = call(t, c, "execute_terminal_command", map[string]any{"command": "pwd", "cwd": f.Root})
	if !res.IsError || !strings.Contains(text(res), "filesystem.read "+f.Root) {
		t.Fatalf("a cwd outside the workspace must be decided: %s", text(res))
	}
}

// TestExecuteManyCommandsNoLeak runs many commands in a row: the server's
// open files, threads and memory must not grow with them.
func TestExecuteManyCommandsNoLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hundreds of sandboxed commands")
	}
	f := newFixture(t, `profile = "interactive-dev"`)
	// The default GC target, so resident memory follows the live heap
	// rather than the server's roomier production target.
	f.Env = []string{"GOGC=100"}
	c := stdioClient(t, f, Legacy)
	pid := serverPID(t, f)
	run := func(n int) {
		for range n {
			if res := call(t, c, "execute_terminal_command", map[string]any{"command": "echo hi"}); res.IsError {
				t.Fatal(text(res))
			}
		}
	}
	run(50) // warm up pools and caches
	fds0, threads0, children0 := procStats(t, pid)
	rss0 := residentKiB(t, pid)
	run(400)
	fds1, threads1, children1 := procStats(t, pid)
	rss1 := residentKiB(t, pid)
	t.Logf("after 400 more commands: fds %d → %d, threads %d → %d, children %d → %d, RSS %d → %d KiB",
		fds0, fds1, threads0, threads1, children0, children1, rss0, rss1)
	// Threads: the runtime keeps every thread a burst of blocking system
	// calls started, so the count moves with load; the bound is far above
	// what one command at a time can make it start and far below a thread
	// kept per command (400).
	if fds1 > fds0+2 || threads1 > threads0+16 || children1 > children0 || rss1 > rss0+8<<10 {
		t.Fatalf("the server grows with commands")
	}
}

// serverPID finds the server process started for this fixture.
func serverPID(t testing.TB, f *fixture) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), f.Config) && strings.Contains(string(cmdline), "serve") {
			return pid
		}
	}
	t.Fatal("server process not found")
	return 0
}

// residentKiB is a process's resident memory.
func residentKiB(t *testing.T, pid int) int {
	t.Helper()
	return procStatusKiB(t, pid, "VmRSS:")
}

// BenchmarkExecuteEchoRoundTrip is `echo hi` through the tool over stdio,
// full sandbox included. It also reports the median wall time and
// cpu-ms/op, the processor time of the server and its sandbox helpers per
// call, which a loaded machine changes far less than the wall time.
func BenchmarkExecuteEchoRoundTrip(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	benchEcho(b, f)
}

// BenchmarkExecuteEchoRoundTripGit is BenchmarkExecuteEchoRoundTrip in a
// workspace that is a git repository: the command's start adds the git
// directory's overlay and the merge of its record files after.
func BenchmarkExecuteEchoRoundTripGit(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	if out, err := exec.Command("git", "init", "-q", f.Workspace).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	benchEcho(b, f)
}

func benchEcho(b *testing.B, f *fixture) {
	c := stdioClient(b, f, Legacy)
	server := serverPID(b, f)
	cpu := processCPU(b, server)
	var wall []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if res := call(b, c, "execute_terminal_command", map[string]any{"command": "echo hi"}); res.IsError {
			b.Fatal(text(res))
		}
		wall = append(wall, time.Since(t0))
	}
	b.ReportMetric(float64((processCPU(b, server)-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	slices.Sort(wall)
	b.ReportMetric(float64(wall[len(wall)/2].Microseconds())/1000, "median-ms")
}

// TestExecuteDeniedFolderIsReadOnly: a folder a deny rule closes to writes
// cannot be written by a command either, whatever program writes it.
func TestExecuteDeniedFolderIsReadOnly(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-prod"
capability = "workspace.files.*"
target     = { path = "deploy/prod/**" }
`)
	f.write(t, "deploy/prod/app.toml", "x = 1\n")
	f.write(t, "deploy/dev/app.toml", "x = 1\n")
	c := stdioClient(t, f, Legacy)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": "cp /etc/hostname deploy/prod/new; sed 's/1/2/' deploy/prod/app.toml | tee deploy/prod/app.toml.new >/dev/null; cp /etc/hostname deploy/dev/new; exit 0"})
	if res.IsError {
		t.Fatalf("run: %s", text(res))
	}
	for _, p := range []string{"deploy/prod/new", "deploy/prod/app.toml.new"} {
		if _, err := os.Stat(filepath.Join(f.Workspace, p)); err == nil {
			t.Errorf("%s was written inside a folder a deny rule closes", p)
		}
	}
	if _, err := os.Stat(filepath.Join(f.Workspace, "deploy/dev/new")); err != nil {
		t.Errorf("a folder no rule closes must stay writable: %v", err)
	}
}

// TestExecuteDeniedFolderUnderWritableRoot: a filesystem.* deny folder
// inside a [sandbox] writable root is read-only to commands too.
func TestExecuteDeniedFolderUnderWritableRoot(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	f := newFixture(t, fmt.Sprintf(`profile = "interactive-dev"

[sandbox]
writable = [%q]

[[rules.deny]]
rule_id    = "locked-data"
capability = "filesystem.*"
target     = { path = %q }
`, data, data+"/locked/**"))
	f.write(t, filepath.Join(data, "locked", "keep.txt"), "keep\n")
	f.write(t, filepath.Join(data, "open", "x.txt"), "x\n")
	c := stdioClient(t, f, Legacy)
	cmd := fmt.Sprintf("cp /etc/hostname %[1]s/locked/new; echo x | tee %[1]s/locked/t; echo y | tee -a %[1]s/locked/keep.txt; cp /etc/hostname %[1]s/open/new; exit 0", data)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": cmd})
	if res.IsError {
		t.Fatalf("run: %s", text(res))
	}
	for _, p := range []string{"locked/new", "locked/t"} {
		if _, err := os.Stat(filepath.Join(data, p)); err == nil {
			t.Errorf("%s was written inside a folder a deny rule closes", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(data, "locked", "keep.txt")); string(b) != "keep\n" {
		t.Errorf("locked/keep.txt changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(data, "open", "new")); err != nil {
		t.Errorf("a folder no rule closes must stay writable: %v", err)
	}
}

// TestExecuteCannotReadCredentials: what read_file refuses as credential
// data, a command cannot read either — unless a rule names that exact path.
func TestExecuteCannotReadCredentials(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"

[[rules.allow]]
rule_id    = "this-env-is-fine"
capability = "workspace.files.read"
target     = { path = "public/.env" }
`)
	f.write(t, ".env", "TOKEN=top-secret-1\n")
	f.write(t, "config/prod.pem", "-----BEGIN KEY----- top-secret-2\n")
	f.write(t, ".ssh/id_ed25519", "top-secret-3\n")
	f.write(t, "public/.env", "NOT_SECRET=shown\n")
	f.write(t, "readme.txt", "hello\n")
	c := stdioClient(t, f, Legacy)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": "cat .env config/prod.pem .ssh/id_ed25519 public/.env readme.txt; grep -r top-secret . ; exit 0"})
	if strings.Contains(text(res), "top-secret") {
		t.Fatalf("a command read credential data: %s", text(res))
	}
	if !strings.Contains(text(res), "NOT_SECRET=shown") || !strings.Contains(text(res), "hello") {
		t.Fatalf("files the policy lets through must stay readable: %s", text(res))
	}
	// The files themselves are untouched on the host.
	if b, _ := os.ReadFile(filepath.Join(f.Workspace, ".env")); string(b) != "TOKEN=top-secret-1\n" {
		t.Fatalf(".env changed: %q", b)
	}
}

// TestExecuteWithNetworkSeeingLiftedCredential: a rule that lifts one
// credential file for reading leaves it visible in the sandbox, so a command
// that also has a network carries the credential class and is refused by
// the built-in credential-flow rule; without the file it runs.
func TestExecuteWithNetworkSeeingLiftedCredential(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"

[sandbox]
network = "proxy"

[[rules.allow]]
rule_id    = "read-this-env"
capability = "workspace.files.read"
target     = { path = ".env" }
`)
	c := stdioClient(t, f, Legacy)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": "echo ran"})
	if res.IsError || !strings.Contains(text(res), "ran") {
		t.Fatalf("without the credential file the command must run: %s", text(res))
	}
	f.write(t, ".env", "TOKEN=x\n")
	res = call(t, c, "execute_terminal_command", map[string]any{"command": "echo ran"})
	if !res.IsError || !strings.Contains(text(res), "deny_credential_flow") {
		t.Fatalf("a networked command that can read a lifted credential file ran: %s", text(res))
	}
}

// TestExecuteKeepsGitMetadata: through the binary, a command's commit is
// kept and its attempts on the git directory are not, and said so.
func TestExecuteKeepsGitMetadata(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testkit.Missing(t, "git not installed: %v", err)
	}
	f := newFixture(t, `profile = "interactive-dev"`)
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + f.Root}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = f.Workspace, append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	c := stdioClient(t, f, Legacy)
	// What the policy sees it refuses (a redirection into .git/commondir is
	// protected_path); tee and git config are what only the sandbox holds.
	line := `export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t; ` +
		`echo x > f && git add f && git commit -qm "from the sandbox"; ` +
		`echo "$PWD/evil" | tee .git/commondir; printf '[core]\n\tfsmonitor = touch PWNED\n' | tee -a .git/config; ` +
		`git init -q newrepo; exit 0`
	res := call(t, c, "execute_terminal_command", map[string]any{"command": line})
	if !strings.Contains(text(res), "not kept") || !strings.Contains(text(res), ".git/commondir") {
		t.Fatalf("the result does not say what was not kept: %s", text(res))
	}
	if !strings.Contains(text(res), "new git repositories") || !strings.Contains(text(res), "newrepo/.git") {
		t.Fatalf("the result does not name the repository the command made: %s", text(res))
	}
	cmd := exec.Command("git", "log", "-1", "--format=%s")
	cmd.Dir, cmd.Env = f.Workspace, append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "from the sandbox" {
		t.Fatalf("the commit was not kept: %q %v\n%s", out, err, text(res))
	}
	if _, err := os.Stat(filepath.Join(f.Workspace, ".git", "commondir")); err == nil {
		t.Fatal(".git/commondir was kept")
	}
	if b, _ := os.ReadFile(filepath.Join(f.Workspace, ".git", "config")); strings.Contains(string(b), "fsmonitor") {
		t.Fatalf(".git/config changed: %s", b)
	}
}
