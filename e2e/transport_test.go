package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawStdio is the binary on stdio, driven line by line.
type rawStdio struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  chan map[string]any
	done chan struct{}
}

func startRawStdio(t *testing.T, f *fixture) *rawStdio {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--config", f.Config)
	cmd.Env = []string{"HOME=" + f.Root, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = testWriter{t}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawStdio{t: t, cmd: cmd, in: in, out: make(chan map[string]any, 64), done: make(chan struct{})}
	go func() {
		defer close(r.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				t.Errorf("stdout carried a line that is not JSON: %.200q", sc.Text())
				continue
			}
			r.out <- m
		}
	}()
	go func() { cmd.Wait(); close(r.done) }()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); <-r.done })
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.expect("init")
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("writing to the server: %v", err)
	}
}

func (r *rawStdio) expect(id any) map[string]any {
	r.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-r.out:
			if !ok {
				r.t.Fatalf("stdout closed before id %v", id)
			}
			if fmt.Sprint(m["id"]) == fmt.Sprint(id) {
				return m
			}
		case <-timeout:
			r.t.Fatalf("no response with id %v", id)
		}
	}
}

// drain closes stdin and returns what the server still wrote until it exited.
func (r *rawStdio) drain() []map[string]any {
	r.in.Close()
	var all []map[string]any
	for m := range r.out {
		all = append(all, m)
	}
	<-r.done
	return all
}

func toolCall(id int, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
}

// ingressAttacks are tool calls that mcp-go alone would read one way and a
// person (or the audit log) another; each would create ran-N in the
// workspace if it ran.
var ingressAttacks = []struct {
	name, params string
	toolError    bool // refused as invalid_arguments (else a JSON-RPC error)
}{
	{"tool name case variant", `{"name":"read_file","Name":"execute_terminal_command","arguments":{"command":"touch ran-1"}}`, false},
	{"tool name twice", `{"name":"read_file","name":"execute_terminal_command","arguments":{"command":"touch ran-2"}}`, false},
	{"argument twice", `{"name":"execute_terminal_command","arguments":{"command":"true","command":"touch ran-3"}}`, true},
	{"argument case variant", `{"name":"execute_terminal_command","arguments":{"COMMAND":"touch ran-4"}}`, true},
	{"arguments twice", `{"name":"execute_terminal_command","arguments":{"command":"true"},"arguments":{"command":"touch ran-5"}}`, false},
	{"number out of range", `{"name":"read_file","arguments":{"path":"a.txt","offset":1e400}}`, true},
}

func checkNothingRan(t *testing.T, f *fixture) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(f.Workspace, "ran-*"))
	if len(matches) > 0 {
		t.Errorf("refused calls ran: %v", matches)
	}
	for _, l := range f.auditLines(t) {
		if l["capability"] == "process.exec" {
			t.Errorf("a refused call was decided as a command: %v", l)
		}
	}
}

// TestIngressStdio: over stdio each ambiguous call is refused — a tool error
// for arguments, a JSON-RPC error otherwise — and nothing runs.
func TestIngressStdio(t *testing.T) {
	f := newFixture(t, prodDenyConfig)
	f.write(t, "a.txt", "hello\n")
	r := startRawStdio(t, f)
	for i, a := range ingressAttacks {
		r.send(toolCall(100+i, a.params))
		m := r.expect(100 + i)
		checkRefusal(t, a.name, a.toolError, m)
	}
	r.send(toolCall(99, `{"name":"read_file","arguments":{"path":"a.txt"}}`))
	if m := r.expect(99); !strings.Contains(fmt.Sprint(m["result"]), "hello") {
		t.Errorf("a plain call after the refusals: %v", m)
	}
	r.drain()
	checkNothingRan(t, f)
}

func checkRefusal(t *testing.T, name string, toolError bool, m map[string]any) {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	if toolError {
		if res == nil || res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "invalid_arguments") {
			t.Errorf("%s: answered %v, want an invalid_arguments tool error", name, m)
		}
		return
	}
	if e, _ := m["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "refused") {
		t.Errorf("%s: answered %v, want a JSON-RPC error", name, m)
	}
}

// TestIngressHTTP: the same refusals over streamable HTTP.
func TestIngressHTTP(t *testing.T) {
	f := newFixture(t, prodDenyConfig+httpConfig)
	f.write(t, "a.txt", "hello\n")
	srv := startHTTP(t, f)
	hdr := map[string]string{"Authorization": "Bearer " + srv.Token, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "read_file"}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for i, a := range ingressAttacks {
		params := strings.TrimSuffix(a.params, "}") + "," + meta + "}"
		var named struct{ Name string }
		json.Unmarshal([]byte(a.params), &named) // what mcp-go will route by, for the header it checks
		hdr["Mcp-Name"] = named.Name
		_, body := rawPost(t, srv.URL, toolCall(100+i, params), hdr)
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatalf("%s: body %q", a.name, body)
		}
		checkRefusal(t, a.name, a.toolError, m)
	}
	hdr["Mcp-Name"] = "read_file"
	_, body := rawPost(t, srv.URL, modernCall("a.txt"), hdr)
	if !strings.Contains(body, "hello") {
		t.Errorf("a plain call after the refusals: %s", body)
	}
	checkNothingRan(t, f)
}

// procStatusKiB is a memory figure of /proc/PID/status ("VmRSS:", "VmHWM:").
func procStatusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && fields[0] == field {
			n, _ := strconv.Atoi(fields[1])
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestStdioHugeLine: a 64 MiB line is refused with a JSON-RPC error and
// skipped without being held: the server's peak resident memory stays under
// 64 MiB, and the next message is served.
func TestStdioHugeLine(t *testing.T) {
	f := newFixture(t, prodDenyConfig)
	r := startRawStdio(t, f)
	chunk := strings.Repeat("a", 1<<20)
	go func() {
		io.WriteString(r.in, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"`)
		for range 64 {
			if _, err := io.WriteString(r.in, chunk); err != nil {
				return
			}
		}
		io.WriteString(r.in, "\"}}}\n")
		io.WriteString(r.in, `{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n")
	}()
	m := r.expect(7)
	if e, _ := m["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "stdio_max_message_bytes") {
		t.Errorf("the 64 MiB line was answered %v", m)
	}
	r.expect(8)
	hwm := procStatusKiB(t, r.cmd.Process.Pid, "VmHWM:")
	t.Logf("peak resident memory after a 64 MiB line: %d KiB", hwm)
	if hwm >= 64<<10 {
		t.Errorf("peak resident memory %d KiB, want under 64 MiB", hwm)
	}
	r.drain()
}

// waitAudit waits until the audit log has a decision matching want.
func waitAudit(t *testing.T, f *fixture, want func(map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(f.Audit); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(line), &m) == nil && want(m) {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the decision never reached the audit log")
}

func isExec(cmd string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		return m["capability"] == "process.exec" && m["effect"] == "allow" && strings.Contains(fmt.Sprint(m["target"]), cmd)
	}
}

// commandInFlight starts a server and a command call with the id, and
// returns once the command was allowed (so it is running or about to).
func commandInFlight(t *testing.T, id int, command string) (*rawStdio, *fixture) {
	t.Helper()
	f := newFixture(t, prodDenyConfig)
	r := startRawStdio(t, f)
	r.send(toolCall(id, fmt.Sprintf(`{"name":"execute_terminal_command","arguments":{"command":%q}}`, command)))
	waitAudit(t, f, isExec("sleep"))
	return r, f
}

// TestStdioSIGTERMGrace: SIGTERM lets a 2 s command in flight finish and
// answers it before the server exits.
func TestStdioSIGTERMGrace(t *testing.T) {
	r, _ := commandInFlight(t, 3, "sleep 2; echo finished")
	begin := time.Now()
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	m := r.expect(3)
	res, _ := m["result"].(map[string]any)
	if res == nil || res["isError"] == true || !strings.Contains(fmt.Sprint(res["content"]), "finished") {
		t.Errorf("the call in flight at SIGTERM: %v", m)
	}
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit after the call finished")
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
	t.Logf("answered and exited %s after SIGTERM", time.Since(begin).Round(time.Millisecond))
}

// TestStdioCancelledNoResponse: a request the client cancelled gets no
// response, and its command is killed.
func TestStdioCancelledNoResponse(t *testing.T) {
	r, f := commandInFlight(t, 5, "sleep 30")
	begin := time.Now()
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"the user pressed stop"}}`)
	// The command is killed and its outcome audited.
	waitAudit(t, f, func(m map[string]any) bool { return m["event"] == "outcome" && m["tool"] == "execute_terminal_command" })
	r.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	r.expect(6)
	if el := time.Since(begin); el > 20*time.Second {
		t.Errorf("the cancelled command ran %s", el)
	}
	for _, m := range r.drain() {
		if fmt.Sprint(m["id"]) == "5" {
			t.Errorf("the cancelled request got a response: %v", m)
		}
	}
}

// TestHTTPPublicBindRefused: a non-loopback bind without [http] public =
// true is refused before anything listens.
func TestHTTPPublicBindRefused(t *testing.T) {
	f := newFixture(t, prodDenyConfig+httpConfig)
	_, stderr, code := runCLI(t, f.Root, "serve", "--config", f.Config, "--http", "0.0.0.0:0")
	if code == 0 || !strings.Contains(stderr, "public = true") {
		t.Errorf("exit %d, stderr %q; want a refusal naming [http] public = true", code, stderr)
	}
}

// TestHTTPHostVariants: the Host header must name the bound address and
// port (or localhost on this loopback bind).
func TestHTTPHostVariants(t *testing.T) {
	f := newFixture(t, prodDenyConfig+httpConfig)
	f.write(t, "a.txt", "hello\n")
	srv := startHTTP(t, f)
	hostport := strings.TrimPrefix(srv.Base, "http://")
	_, port, _ := strings.Cut(hostport, ":")
	for _, tc := range []struct {
		host string
		want int
	}{
		{hostport, 200},
		{"localhost:" + port, 200},
		{"127.0.0.1:1", 403},
		{"127.0.0.2:" + port, 403},
		{"evil.example.com:" + port, 403},
		{"localhost", 403},
	} {
		hdr := map[string]string{"Authorization": "Bearer " + srv.Token, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "read_file", "Host": tc.host}
		resp, body := rawPost(t, srv.URL, modernCall("a.txt"), hdr)
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q: status %d (%s), want %d", tc.host, resp.StatusCode, strings.TrimSpace(body), tc.want)
		}
	}
}

// TestStdioIdleImagePages: once its start-up is over, an idle stdio
// server has handed back most of the executable's code it mapped (start-up
// runs code in most packages; fault-around maps 64 KiB around each page
// run), and still serves calls from the pages it maps again.
func TestStdioIdleImagePages(t *testing.T) {
	f := newFixture(t, prodDenyConfig)
	f.write(t, "a.txt", "hello\n")
	r := startRawStdio(t, f)
	pid := r.cmd.Process.Pid
	var mapped, size int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mapped, size = codePages(t, pid)
		if 2*mapped < size || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("idle: %d of the %d pages of the server's code mapped", mapped, size)
	if 2*mapped >= size {
		t.Errorf("idle: %d of the %d pages of the server's code still mapped, want under half", mapped, size)
	}
	r.send(toolCall(2, fmt.Sprintf(`{"name":"read_file","arguments":{"path":%q}}`, filepath.Join(f.Workspace, "a.txt"))))
	if m := r.expect(2); !strings.Contains(fmt.Sprint(m["result"]), "hello") {
		t.Errorf("a read after the release: %v", m)
	}
}

// codePages counts the pages of the server binary's code mapping (r-xp)
// that process pid has mapped, and the mapping's size in pages, from
// /proc/PID/maps and /proc/PID/pagemap.
func codePages(t *testing.T, pid int) (mapped, size int) {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	pagemap, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer pagemap.Close()
	page := uint64(os.Getpagesize())
	for line := range strings.Lines(string(maps)) {
		fields := strings.Fields(line)
		if len(fields) < 6 || fields[1] != "r-xp" || fields[5] != binary {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		l, _ := strconv.ParseUint(lo, 16, 64)
		h, _ := strconv.ParseUint(hi, 16, 64)
		buf := make([]byte, 8*((h-l)/page))
		if _, err := pagemap.ReadAt(buf, int64(l/page*8)); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(buf); i += 8 {
			if buf[i+7]&0x80 != 0 { // bit 63: present
				mapped++
			}
		}
		return mapped, len(buf) / 8
	}
	t.Fatalf("no code mapping of %s in /proc/%d/maps", binary, pid)
	return 0, 0
}
