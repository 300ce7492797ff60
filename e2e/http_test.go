package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const e2eToken = "e2e-token-0123456789abcdef0123456789"

// httpConfig is the [http] section the HTTP tests use: the token comes from
// ONELLM_E2E_TOKEN.
const httpConfig = `
[http]
token_env = "ONELLM_E2E_TOKEN"
allowed_origins = ["https://ok.example.com"]
`

// httpServer is the binary serving streamable HTTP.
type httpServer struct {
	cmd    *exec.Cmd
	URL    string // …/mcp
	Base   string // http://host:port
	Token  string
	stderr *lockedBuffer
	done   chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var urlLine = regexp.MustCompile(`streamable HTTP at (http://\S+/mcp)`)

// readyLine is the banner's last line.
var readyLine = regexp.MustCompile(`MCP Inspector: `)

// startHTTP starts `serve --http 127.0.0.1:0` with the fixture's config and
// waits for the URL it prints.
func startHTTP(t testing.TB, f *fixture, env ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--config", f.Config, "--http", "127.0.0.1:0")
	cmd.Env = append([]string{"HOME=" + f.Root, "PATH=" + os.Getenv("PATH"), "ONELLM_E2E_TOKEN=" + e2eToken}, env...)
	// A test binary killed by a timeout must not leave servers behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &httpServer{cmd: cmd, Token: e2eToken, stderr: &lockedBuffer{}, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		url := ""
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(s.stderr, line)
			if m := urlLine.FindStringSubmatch(line); m != nil {
				url = m[1]
			}
			if readyLine.MatchString(line) {
				select {
				case found <- url:
				default:
				}
			}
		}
	}()
	go func() { cmd.Wait(); pw.Close(); close(s.done) }()
	select {
	case s.URL = <-found:
	case <-s.done:
		t.Fatalf("server exited: %s", s.stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("no URL printed: %s", s.stderr)
	}
	s.Base = strings.TrimSuffix(s.URL, "/mcp")
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.stderr)
		}
	})
	return s
}

// stop sends SIGTERM and waits for a clean exit.
func (s *httpServer) stop(t testing.TB) {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		if code := s.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("server exit code %d after SIGTERM", code)
		}
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		t.Errorf("server did not stop within 15 s of SIGTERM")
	}
}

// httpClient connects an mcp-go client of the given era with the token.
func httpClient(t testing.TB, url, token string, era Era, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c, err := tryHTTPClient(url, token, era, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func tryHTTPClient(url, token string, era Era, topts []transport.StreamableHTTPCOption, opts ...client.ClientOption) (*client.Client, error) {
	topts = append(topts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		return nil, err
	}
	if era == Legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(context.Background()); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "onellm-e2e-http", Version: "1"}
	init.Params.ProtocolVersion = string(era)
	res, err := c.Initialize(ctx, init)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if res.ProtocolVersion != string(era) {
		c.Close()
		return nil, fmt.Errorf("negotiated %s, want %s", res.ProtocolVersion, era)
	}
	return c, nil
}

func TestHTTPReadFile(t *testing.T) {
	f := newFixture(t, prodDenyConfig+httpConfig)
	f.write(t, "src/main.go", "package main\n")
	f.write(t, "deploy/prod/app.toml", "secret = 1\n")
	srv := startHTTP(t, f)
	for _, era := range eras {
		t.Run(string(era), func(t *testing.T) {
			c := httpClient(t, srv.URL, srv.Token, era)
			if _, ok := toolNames(t, c)["read_file"]; !ok {
				t.Fatal("read_file not listed")
			}
			res := call(t, c, "read_file", map[string]any{"path": "src/main.go"})
			if res.IsError || text(res) != "package main\n" {
				t.Fatalf("read: isError=%v %q", res.IsError, text(res))
			}
			res = call(t, c, "read_file", map[string]any{"path": "deploy/prod/app.toml"})
			if !res.IsError || !strings.Contains(text(res), "no-prod-config") || strings.Contains(text(res), "secret = 1") {
				t.Fatalf("denied read: isError=%v %q", res.IsError, text(res))
			}
		})
	}
	// The audit log names the token's principal (a hash), never the token;
	// legacy calls add their session.
	var legacy, modern int
	for _, l := range f.auditLines(t) {
		sess, _ := l["session"].(string)
		if strings.Contains(sess, e2eToken[:12]) {
			t.Fatalf("the token leaked into the audit log: %v", l)
		}
		if l["event"] == "decision" {
			switch {
			case strings.HasPrefix(sess, "http:") && strings.Contains(sess, "/mcp-session-"):
				legacy++
			case strings.HasPrefix(sess, "http:"):
				modern++
			default:
				t.Errorf("decision without an HTTP principal: %v", l)
			}
		}
	}
	if legacy != 2 || modern != 2 {
		t.Errorf("decisions: %d legacy, %d modern; want 2 and 2", legacy, modern)
	}
}

// rawPost sends one JSON-RPC body to the server and returns the response.
func rawPost(t testing.TB, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := expectContinueClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// expectContinueClient waits for the server's answer before sending a body
// marked `Expect: 100-continue`, as curl does for large bodies: a server
// that refuses a body by its Content-Length answers before the body is
// sent, so the client reads the refusal instead of failing its write.
var expectContinueClient = &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second}}

// modernCall is a tools/call in the 2026-07-28 era: no session, the version
// in the header and in _meta.
func modernCall(path string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":%q},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, path)
}

func TestHTTPGuards(t *testing.T) {
	f := newFixture(t, "profile = \"interactive-dev\"\n"+httpConfig+"max_body_bytes = 65536\n")
	f.write(t, "a.txt", "hello\n")
	srv := startHTTP(t, f)
	auth := "Bearer " + srv.Token
	modernHdr := func(extra ...string) map[string]string {
		h := map[string]string{"Authorization": auth, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "read_file"}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}
	decisions := func() int {
		n := 0
		if _, err := os.Stat(f.Audit); err != nil {
			return 0
		}
		for _, l := range f.auditLines(t) {
			if l["event"] == "decision" {
				n++
			}
		}
		return n
	}

	// The raw modern call works with the token (so the refusals below are
	// about what they test).
	resp, body := rawPost(t, srv.URL, modernCall("a.txt"), modernHdr())
	if resp.StatusCode != 200 || !strings.Contains(body, `hello\n`) {
		t.Fatalf("raw modern call: %d %s", resp.StatusCode, body)
	}
	base := decisions()
	if base != 1 {
		t.Fatalf("audit has %d decisions after one call", base)
	}

	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", modernHdr("Authorization", ""), 401},
		{"wrong token", modernHdr("Authorization", "Bearer "+strings.Repeat("x", 40)), 401},
		{"foreign Origin", modernHdr("Origin", "https://evil.example.com"), 403},
		{"rebound Host", modernHdr("Host", "evil.example.com:80"), 403},
	} {
		resp, body := rawPost(t, srv.URL, modernCall("a.txt"), tc.hdr)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.want, body)
		}
		if tc.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, resp.Header.Get("WWW-Authenticate"))
		}
		if strings.Contains(body, "hello") {
			t.Errorf("%s: the file came back", tc.name)
		}
	}
	if n := decisions(); n != base {
		t.Errorf("refused requests reached the policy: audit decisions %d → %d", base, n)
	}
	// An allowed Origin passes.
	if resp, body := rawPost(t, srv.URL, modernCall("a.txt"), modernHdr("Origin", "https://ok.example.com")); resp.StatusCode != 200 {
		t.Errorf("allowed Origin: %d %s", resp.StatusCode, body)
	}

	// Oversized body: 413, nothing decided.
	before := decisions()
	big := modernCall(strings.Repeat("a", 70000))
	if resp, _ := rawPost(t, srv.URL, big, modernHdr("Expect", "100-continue")); resp.StatusCode != 413 {
		t.Errorf("oversized body: status %d, want 413", resp.StatusCode)
	}
	if n := decisions(); n != before {
		t.Errorf("an oversized request was decided")
	}

	// Legacy era: an unknown session id is 404; a real one works.
	legacyHdr := map[string]string{"Authorization": auth, "MCP-Protocol-Version": "2025-11-25"}
	resp, _ = rawPost(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, legacyHdr)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d session %q", resp.StatusCode, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, tc := range []struct {
		sid  string
		want int
	}{
		{"mcp-session-00000000000000000000000000000000000000000000000000", 404},
		{"mcp-session-" + strings.Repeat("0", 36), 404},
		{sid, 200},
	} {
		h := map[string]string{"Authorization": auth, "MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": tc.sid}
		if resp, body := rawPost(t, srv.URL, list, h); resp.StatusCode != tc.want {
			t.Errorf("session %q: status %d, want %d (%s)", tc.sid, resp.StatusCode, tc.want, body)
		}
	}

	// /healthz needs no token.
	hr, err := http.Get(srv.Base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	if hr.StatusCode != 200 || !strings.Contains(string(hb), `"status":"ok"`) || !strings.Contains(string(hb), `"version"`) {
		t.Errorf("/healthz: %d %s", hr.StatusCode, hb)
	}
	// The token was not printed (it came from the environment).
	if strings.Contains(srv.stderr.String(), e2eToken) {
		t.Error("the token from the environment was printed")
	}
}

// The generated token is printed once and works; auth "none" is refused off
// loopback.
func TestHTTPGeneratedTokenAndNoAuth(t *testing.T) {
	f := newFixture(t, "profile = \"interactive-dev\"\n")
	f.write(t, "a.txt", "hi\n")
	srv := startHTTP(t, f)
	m := regexp.MustCompile(`shown once\): ([0-9a-f]{64})`).FindStringSubmatch(srv.stderr.String())
	if m == nil {
		t.Fatalf("no generated token printed: %s", srv.stderr)
	}
	if strings.Count(srv.stderr.String(), m[1]) != 2 { // the token line and the Inspector command
		t.Errorf("token printed %d times", strings.Count(srv.stderr.String(), m[1]))
	}
	c := httpClient(t, srv.URL, m[1], Modern)
	if res := call(t, c, "read_file", map[string]any{"path": "a.txt"}); res.IsError {
		t.Fatalf("with the generated token: %q", text(res))
	}

	g := newFixture(t, "profile = \"interactive-dev\"\n[http]\nauth = \"none\"\n")
	_, stderr, code := runCLI(t, g.Root, "serve", "--config", g.Config, "--http", "0.0.0.0:0")
	if code == 0 || !strings.Contains(stderr, "loopback") {
		t.Errorf("auth none on 0.0.0.0: exit %d, %q", code, stderr)
	}
}

// procStats reads a process's open descriptors, threads and children.
func procStats(t testing.TB, pid int) (fds, threads, children int) {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	fds = len(ents)
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	threads = len(tasks)
	for _, task := range tasks {
		b, _ := os.ReadFile(filepath.Join(fmt.Sprintf("/proc/%d/task", pid), task.Name(), "children"))
		children += len(strings.Fields(string(b)))
	}
	return
}

// loadRound has clients clients (both eras, alternating) make calls
// read_file calls each at once over HTTP, and reports every failure.
func loadRound(t *testing.T, srv *httpServer, clients, calls int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			era := eras[i%2]
			c, err := tryHTTPClient(srv.URL, srv.Token, era, nil)
			if err != nil {
				errs <- fmt.Errorf("client %d: %v", i, err)
				return
			}
			defer c.Close()
			for j := 0; j < calls; j++ {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				req := mcp.CallToolRequest{}
				req.Params.Name = "read_file"
				req.Params.Arguments = map[string]any{"path": "a.txt"}
				res, err := c.CallTool(ctx, req)
				cancel()
				if err != nil || res.IsError {
					errs <- fmt.Errorf("client %d (%s) call %d: %v %v", i, era, j, err, res)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// 50 clients (both eras) making 200 calls each all succeed, and afterwards
// the server holds no more descriptors or children than before and no
// thread per client.
//
// The Go runtime never ends an idle OS thread: it keeps every thread a
// burst of blocking system calls made it start, so the pool grows to the
// peak number of goroutines blocked in system calls at once, which under
// load is anything up to one per call in flight (one per client here)
// and differs from round to round. So threads are not compared with a
// baseline taken under load: the bound is the idle server's count plus one
// per client plus slack, which the pool cannot pass, while a thread kept
// per client would pass it (100 clients connect over the two rounds).
func TestHTTPConcurrentClients(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	f := newFixture(t, "profile = \"interactive-dev\"\n"+httpConfig)
	f.write(t, "a.txt", strings.Repeat("0123456789abcdef\n", 240))
	srv := startHTTP(t, f)
	pid := srv.cmd.Process.Pid
	warm := httpClient(t, srv.URL, srv.Token, Modern)
	call(t, warm, "read_file", map[string]any{"path": "a.txt"})
	_, thIdle, _ := procStats(t, pid)

	const clients, calls = 50, 200
	const threadSlack = 16 // the runtime's own threads, the audit writer, the transports' readers
	loadRound(t, srv, clients, 10)
	http.DefaultClient.CloseIdleConnections()
	time.Sleep(200 * time.Millisecond)
	fd0, th0, ch0 := procStats(t, pid)

	start := time.Now()
	loadRound(t, srv, clients, calls)
	el := time.Since(start)
	t.Logf("%d calls by %d clients in %s: %.0f calls/s", clients*calls, clients, el.Round(time.Millisecond), float64(clients*calls)/el.Seconds())

	// Idle connections close on the client side; give the server a moment.
	http.DefaultClient.CloseIdleConnections()
	var fd, th, ch int
	deadline := time.Now().Add(10 * time.Second)
	for {
		fd, th, ch = procStats(t, pid)
		if (fd <= fd0+4 && th <= thIdle+clients+threadSlack && ch == ch0) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("server: fds %d → %d, threads %d idle, %d after the warm-up, %d after the load, children %d → %d", fd0, fd, thIdle, th0, th, ch0, ch)
	if fd > fd0+4 {
		t.Errorf("descriptors left open: %d before, %d after", fd0, fd)
	}
	if th > thIdle+clients+threadSlack {
		t.Errorf("threads left: %d idle, %d after %d clients, more than one per client", thIdle, th, 2*clients)
	}
	if ch != ch0 {
		t.Errorf("child processes left: %d before, %d after", ch0, ch)
	}
	// Still healthy and serving.
	if res := call(t, warm, "read_file", map[string]any{"path": "a.txt"}); res.IsError {
		t.Errorf("after the load: %q", text(res))
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "VmRSS:") {
				t.Logf("server %s", strings.Join(strings.Fields(line), " "))
			}
		}
	}

	// Memory with 100 idle legacy sessions open.
	rss0 := vmRSS(pid)
	var idle []*client.Client
	for i := 0; i < 100; i++ {
		c, err := tryHTTPClient(srv.URL, srv.Token, Legacy, nil)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	time.Sleep(300 * time.Millisecond)
	t.Logf("100 idle legacy sessions: VmRSS %d kB → %d kB", rss0, vmRSS(pid))
	for _, c := range idle {
		c.Close()
	}
}

func vmRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return -1
}

// BenchmarkHTTPReadFile is read_file of a 4 KiB file through the built
// binary over streamable HTTP (modern era, each client its own connection),
// with 1 and with 32 concurrent clients; it reports calls/s and the median
// latency.
func BenchmarkHTTPReadFile(b *testing.B) {
	for _, clients := range []int{1, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			f := newFixture(b, "profile = \"interactive-dev\"\n"+httpConfig)
			f.write(b, "four.txt", strings.Repeat(strings.Repeat("x", 63)+"\n", 64))
			srv := startHTTP(b, f)
			cs := make([]*client.Client, clients)
			for i := range cs {
				cs[i] = httpClient(b, srv.URL, srv.Token, Modern)
			}
			lat := make([][]time.Duration, clients)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			per := (b.N + clients - 1) / clients
			for i, c := range cs {
				wg.Add(1)
				go func(i int, c *client.Client) {
					defer wg.Done()
					req := mcp.CallToolRequest{}
					req.Params.Name = "read_file"
					req.Params.Arguments = map[string]any{"path": "four.txt"}
					for j := 0; j < per; j++ {
						t0 := time.Now()
						res, err := c.CallTool(context.Background(), req)
						if err != nil || res.IsError {
							b.Errorf("%v %v", err, res)
							return
						}
						lat[i] = append(lat[i], time.Since(t0))
					}
				}(i, c)
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			if len(all) == 0 {
				return
			}
			slices.Sort(all)
			b.ReportMetric(float64(len(all))/el.Seconds(), "calls/s")
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "median-µs")
		})
	}
}

// BenchmarkHTTPReadFileRaw is the same call with a minimal client (one
// pre-encoded modern tools/call POST over keep-alive connections), so the
// figure is the server's, not the mcp-go client's, which shares the CPUs.
func BenchmarkHTTPReadFileRaw(b *testing.B) {
	for _, clients := range []int{1, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			f := newFixture(b, "profile = \"interactive-dev\"\n"+httpConfig)
			f.write(b, "four.txt", strings.Repeat(strings.Repeat("x", 63)+"\n", 64))
			srv := startHTTP(b, f)
			tr := &http.Transport{MaxIdleConnsPerHost: clients}
			hc := &http.Client{Transport: tr}
			defer tr.CloseIdleConnections()
			body := modernCall("four.txt")
			lat := make([][]time.Duration, clients)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			per := (b.N + clients - 1) / clients
			for i := 0; i < clients; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					for j := 0; j < per; j++ {
						req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Accept", "application/json, text/event-stream")
						req.Header.Set("Authorization", "Bearer "+srv.Token)
						req.Header.Set("MCP-Protocol-Version", "2026-07-28")
						req.Header.Set("Mcp-Method", "tools/call")
						req.Header.Set("Mcp-Name", "read_file")
						t0 := time.Now()
						resp, err := hc.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						out, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 || bytes.Contains(out, []byte(`"isError":true`)) {
							b.Errorf("%d %s", resp.StatusCode, out)
							return
						}
						lat[i] = append(lat[i], time.Since(t0))
					}
				}(i)
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			if len(all) == 0 {
				return
			}
			slices.Sort(all)
			b.ReportMetric(float64(len(all))/el.Seconds(), "calls/s")
			b.ReportMetric(float64(all[len(all)/2].Microseconds()), "median-µs")
		})
	}
}
