package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// auditCLI runs `onellm-mcp audit ...` as the fixture's user (same HOME as
// the server, so the same key).
func auditCLI(t *testing.T, f *fixture, args ...string) (string, int) {
	t.Helper()
	out, errOut, code := runCLIEnv(t, f.Root, []string{"HOME=" + f.Root}, append([]string{"audit"}, args...)...)
	return out + errOut, code
}

// waitShutdownCheckpoint waits until the log ends with a checkpoint (the
// server writes one as it exits).
func waitShutdownCheckpoint(t *testing.T, f *fixture) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls := f.auditLines(t)
		if ls[len(ls)-1]["event"] == "checkpoint" {
			return ls
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint at shutdown; last record %v", ls[len(ls)-1])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replayConfig writes a config next to the fixture's, with the same
// workspace and audit path.
func replayConfig(t *testing.T, f *fixture, name, body string) string {
	t.Helper()
	path := filepath.Join(f.Root, name)
	cfg := fmt.Sprintf("workspace = %q\n%s\n[audit]\npath = %q\n", f.Workspace, body, f.Audit)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAuditVerifyProveReplay: a served session leaves a log that verifies,
// proves a record to someone holding only the public key, and replays
// against a stricter and a looser policy with exactly the expected changes.
func TestAuditVerifyProveReplay(t *testing.T) {
	f := newFixture(t, prodDenyConfig)
	f.write(t, "a.txt", "a\n")
	f.write(t, "deploy/prod/x.txt", "x\n")
	outside := f.write(t, filepath.Join(f.Root, "outside.txt"), "outside\n")
	c := stdioClient(t, f, Legacy, client.WithElicitationHandler(&elicitor{answer: decide("allow_once")}))
	for _, p := range []string{"a.txt", "deploy/prod/x.txt", outside} {
		call(t, c, "read_file", map[string]any{"path": p})
	}
	c.Close()
	ls := waitShutdownCheckpoint(t, f)
	var approvedSeq float64 = -1
	for _, l := range ls {
		if l["reason_code"] == "approved" {
			approvedSeq = l["seq"].(float64)
		}
	}
	if approvedSeq < 0 {
		t.Fatalf("no approved decision in the log")
	}

	out, code := auditCLI(t, f, "verify", "--config", f.Config)
	if code != 0 || !strings.Contains(out, ": ok:") {
		t.Fatalf("verify exit %d: %s", code, out)
	}
	vkey, code := auditCLI(t, f, "key", "--config", f.Config)
	if code != 0 || !strings.HasPrefix(vkey, "onellm-mcp-audit+") {
		t.Fatalf("key exit %d: %s", code, vkey)
	}
	proof, code := auditCLI(t, f, "prove", "--config", f.Config, "--seq", fmt.Sprint(approvedSeq))
	if code != 0 {
		t.Fatalf("prove exit %d: %s", code, proof)
	}
	// A third party: only the proof file and the public key.
	proofFile := filepath.Join(t.TempDir(), "proof.json")
	os.WriteFile(proofFile, []byte(proof), 0o600)
	out, code = auditCLI(t, f, "verify", "--proof", proofFile, "--key", strings.TrimSpace(vkey))
	if code != 0 || !strings.Contains(out, "ok: record") || !strings.Contains(out, outside) {
		t.Fatalf("verify --proof exit %d: %s", code, out)
	}

	same, code := auditCLI(t, f, "replay", "--config", f.Config)
	if code != 0 || !strings.Contains(same, "0 change") {
		t.Fatalf("replay under the same config: exit %d: %s", code, same)
	}
	stricter := replayConfig(t, f, "stricter.toml", prodDenyConfig+`
[[rules.deny]]
rule_id    = "no-txt"
capability = "workspace.files.read"
target     = { path = "a.txt" }

[[rules.deny]]
rule_id    = "no-outside"
capability = "filesystem.read"
`)
	out, code = auditCLI(t, f, "replay", "--config", stricter, "--json")
	if code != 1 {
		t.Fatalf("replay stricter: exit %d: %s", code, out)
	}
	var rep struct {
		Replayed int
		Changes  []struct {
			Tool     string
			Target   struct{ Path string }
			Old, New struct {
				Effect string
				RuleID string `json:"rule_id"`
			}
			ApprovalNowDenied bool `json:"approval_now_denied"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := []string{}
	for _, ch := range rep.Changes {
		got = append(got, fmt.Sprintf("%s %s→%s %s %v", filepath.Base(ch.Target.Path), ch.Old.Effect, ch.New.Effect, ch.New.RuleID, ch.ApprovalNowDenied))
	}
	want := []string{"a.txt allow→deny no-txt false", "outside.txt ask→deny no-outside true"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") || rep.Replayed != 3 {
		t.Fatalf("stricter changes (of %d): %v, want %v", rep.Replayed, got, want)
	}
	// No rules at all, and the mode allows: the prod folder and the
	// outside file become allowed; a.txt stays allowed.
	looser := replayConfig(t, f, "looser.toml", `mode = "permissive"`)
	out, code = auditCLI(t, f, "replay", "--config", looser)
	if code != 1 || strings.Count(out, " → ") != 2 ||
		!strings.Contains(out, "deny (matched_deny, rule no-prod-config) → allow (") ||
		!strings.Contains(out, "ask (matched_ask, rule interactive-dev/ask-outside-workspace) → allow (") {
		t.Fatalf("replay looser: exit %d:\n%s", code, out)
	}

	// One byte changed: verify names the record.
	data, _ := os.ReadFile(f.Audit)
	i := strings.Index(string(data), `"tool":"read_file"`)
	data[i+9] = 'R'
	os.WriteFile(f.Audit, data, 0o600)
	out, code = auditCLI(t, f, "verify", "--config", f.Config)
	if code != 1 || !strings.Contains(out, "TAMPERED: record") {
		t.Fatalf("verify of a changed log: exit %d: %s", code, out)
	}
	if _, code := auditCLI(t, f, "verify", "--bogus"); code != 2 {
		t.Fatalf("verify with a bad flag: exit %d", code)
	}
}

// rawServer is the binary on raw stdio, for tests that signal it.
type rawServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *strings.Builder
	id     int
}

func startRaw(t *testing.T, f *fixture) *rawServer {
	t.Helper()
	s := &rawServer{cmd: exec.Command(binary, "serve", "--config", f.Config), stderr: &strings.Builder{}}
	s.cmd.Env = append(os.Environ(), "HOME="+f.Root)
	s.cmd.Stderr = s.stderr
	s.in, _ = s.cmd.StdinPipe()
	stdout, _ := s.cmd.StdoutPipe()
	s.out = bufio.NewReader(stdout)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.in.Close(); s.cmd.Wait() })
	s.request(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	fmt.Fprintln(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawServer) request(t *testing.T, method, params string) map[string]any {
	t.Helper()
	s.id++
	fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", s.id, method, params)
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v (stderr %s)", method, err, s.stderr)
		}
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		if m["id"] == float64(s.id) {
			res, _ := m["result"].(map[string]any)
			return res
		}
	}
}

// create asks apply_patch to create name; it returns the result's text and
// whether it is an error.
func (s *rawServer) create(t *testing.T, name string) (string, bool) {
	t.Helper()
	res := s.request(t, "tools/call", fmt.Sprintf(`{"name":"apply_patch","arguments":{"edits":[{"path":%q,"old_text":"","new_text":"made\n"}]}}`, name))
	b, _ := json.Marshal(res["content"])
	return string(b), res["isError"] == true
}

// TestAuditLogFaultsServed: with a directory where the audit log should be,
// apply_patch changes nothing and says why (stderr says it once); when the
// path is free again it works; a log renamed away and a SIGHUP give a new
// file that continues the chain; both verify.
func TestAuditLogFaultsServed(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	s := startRaw(t, f)
	if txt, isErr := s.create(t, "first.txt"); isErr {
		t.Fatalf("first create: %s", txt)
	}
	os.Remove(f.Audit)
	os.Mkdir(f.Audit, 0o700)
	for _, name := range []string{"a.txt", "b.txt"} {
		txt, isErr := s.create(t, name)
		if !isErr || !strings.Contains(txt, "audit log") {
			t.Fatalf("create with no audit log: %s", txt)
		}
		if _, err := os.Stat(filepath.Join(f.Workspace, name)); err == nil {
			t.Fatalf("%s was created while the audit log could not be written", name)
		}
	}
	os.Remove(f.Audit)
	if txt, isErr := s.create(t, "c.txt"); isErr {
		t.Fatalf("create after the log came back: %s", txt)
	}
	if n := strings.Count(s.stderr.String(), "cannot be written"); n != 1 {
		t.Fatalf("stderr said it %d times:\n%s", n, s.stderr)
	}

	os.Rename(f.Audit, f.Audit+".1")
	s.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for _, err := os.Stat(f.Audit); err != nil; _, err = os.Stat(f.Audit) {
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not reopen the log")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if txt, isErr := s.create(t, "d.txt"); isErr {
		t.Fatalf("create after SIGHUP: %s", txt)
	}
	s.in.Close()
	s.cmd.Wait()
	for _, p := range []string{f.Audit + ".1", f.Audit} {
		out, code := auditCLI(t, f, "verify", "--config", f.Config, "--audit", p)
		if code != 0 {
			t.Fatalf("verify %s: exit %d: %s", p, code, out)
		}
	}
	if ls := f.auditLines(t); ls[0]["event"] != "checkpoint" || ls[0]["seq"].(float64) == 0 {
		t.Fatalf("the new file does not continue the chain: %v", ls[0])
	}
}

// TestAuditLogFullDiskServed: with the audit log on a tiny filesystem that
// fills, apply_patch creates nothing and says why, the log keeps no torn
// record, and calls work again once space returns.
func TestAuditLogFullDiskServed(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	mnt := filepath.Join(f.Root, "tiny")
	os.Mkdir(mnt, 0o700)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=64k"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and a tmpfs cannot be mounted: %v", err)
		}
		t.Skipf("cannot mount a tmpfs here (%v); run as root to test a filling disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	f.Audit = filepath.Join(mnt, "audit.jsonl")
	cfg := fmt.Sprintf("workspace = %q\nprofile = \"interactive-dev\"\n[audit]\npath = %q\n", f.Workspace, f.Audit)
	os.WriteFile(f.Config, []byte(cfg), 0o600)
	s := startRaw(t, f)
	// The log is opened after the first answer: a first call has it open
	// before the disk fills.
	if txt, isErr := s.create(t, "first.txt"); isErr {
		t.Fatalf("first create: %s", txt)
	}
	filler, _ := os.Create(filepath.Join(mnt, "filler"))
	for _, err := filler.Write(make([]byte, 512)); err == nil; _, err = filler.Write(make([]byte, 512)) {
	}
	filler.Close()
	refused := 0
	for i := 0; i < 50 && refused < 3; i++ {
		name := fmt.Sprintf("f%d.txt", i)
		txt, isErr := s.create(t, name)
		_, statErr := os.Stat(filepath.Join(f.Workspace, name))
		if isErr {
			refused++
			if !strings.Contains(txt, "no space left") || statErr == nil {
				t.Fatalf("refused %s: %s (created: %v)", name, txt, statErr == nil)
			}
		} else if statErr != nil {
			t.Fatalf("%s: allowed but not created: %s", name, txt)
		}
	}
	if refused == 0 {
		t.Fatalf("the filesystem never filled")
	}
	data, _ := os.ReadFile(f.Audit)
	if data[len(data)-1] != '\n' {
		t.Fatalf("torn record at the end of the log")
	}
	os.Remove(filepath.Join(mnt, "filler"))
	if txt, isErr := s.create(t, "after.txt"); isErr {
		t.Fatalf("after space returned: %s", txt)
	}
	s.in.Close()
	s.cmd.Wait()
	if out, code := auditCLI(t, f, "verify", "--config", f.Config); code != 0 {
		t.Fatalf("verify: exit %d: %s", code, out)
	}
}

// TestAuditSharedLogProcesses: servers in separate processes appending to
// one audit log at once (as servers on the default path do) keep one chain
// that verifies, with every call's decision and outcome in it.
func TestAuditSharedLogProcesses(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	small := f.write(t, "small.txt", "hello\n")
	srv := sbsServer{name: "onellm-mcp", bin: binary, args: []string{"serve", "--config", f.Config}, env: append(os.Environ(), "HOME="+f.Root)}
	// A first start alone makes the signing key.
	first, _, err := spawnRPC(srv)
	if err != nil {
		t.Fatal(err)
	}
	first.close()
	const procs, calls = 3, 150
	errs := make(chan error, procs)
	for range procs {
		go func() {
			s, _, err := spawnRPC(srv)
			if err != nil {
				errs <- err
				return
			}
			for range calls {
				if _, err = s.readFile(small, 0); err != nil {
					break
				}
			}
			s.close() // waits for the process, so its last checkpoint is written
			errs <- err
		}()
	}
	for range procs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string]int{}
	for _, l := range f.auditLines(t) {
		if l["tool"] == "read_file" {
			counts[l["event"].(string)]++
		}
	}
	if counts["decision"] != procs*calls || counts["outcome"] != procs*calls {
		t.Fatalf("read_file records %v, want %d decisions and %d outcomes", counts, procs*calls, procs*calls)
	}
	if out, code := auditCLI(t, f, "verify", "--config", f.Config); code != 0 || !strings.Contains(out, ": ok:") {
		t.Fatalf("verify exit %d: %s", code, out)
	}
}
