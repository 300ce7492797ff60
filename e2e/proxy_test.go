package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// proxyConfig: strict mode, commands allowed in the sandbox, and one host
// (127.0.0.1, loopback, hence allow_private) open to every HTTP method.
const proxyConfig = `mode = "strict"

[sandbox]
network = "proxy"

[[rules.allow]]
rule_id    = "run-commands"
capability = "process.exec"

[[rules.allow]]
rule_id    = "local-api"
capability = "network.http.*"
target     = { host = "127.0.0.1" }
conditions = { allow_private = true }
`

// countingServer is an HTTP server on addr ("127.0.0.1:0") that counts
// accepted connections.
type countingServer struct {
	*httptest.Server
	accepts atomic.Int64
}

type countingLn struct {
	net.Listener
	n *atomic.Int64
}

func (l countingLn) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func newCountingServer(t testing.TB, addr string, tls bool) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		testkit.Missing(t, "cannot listen on %s: %v", addr, err)
	}
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s %s\n", r.Method, r.URL.Path)
	}))
	s.Listener = countingLn{ln, &s.accepts}
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func needCurl(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		testkit.Missing(t, "curl is not installed: the egress proxy e2e test needs it")
	}
}

type cmdOut struct {
	ExitCode int      `json:"exit_code"`
	Stdout   string   `json:"stdout"`
	Stderr   string   `json:"stderr"`
	Egress   []string `json:"egress"`
}

func runCmd(t testing.TB, c *client.Client, cmd string) (cmdOut, string) {
	t.Helper()
	res := call(t, c, "execute_terminal_command", map[string]any{"command": cmd, "timeout_seconds": 20})
	var out cmdOut
	structured(t, res, &out)
	return out, text(res)
}

func TestSandboxEgressProxy(t *testing.T) {
	needCurl(t)
	allowed := newCountingServer(t, "127.0.0.1:0", false)
	secure := newCountingServer(t, "127.0.0.1:0", true)
	other := newCountingServer(t, "127.0.0.2:0", false) // no rule names 127.0.0.2
	f := newFixture(t, proxyConfig)
	c := stdioClient(t, f, Modern)

	tool := toolNames(t, c)["execute_terminal_command"]
	if !strings.Contains(tool.Description, "127.0.0.1 (any method, https included)") || !strings.Contains(tool.Description, "http://127.0.0.1:3128") {
		t.Errorf("description does not say what is reachable:\n%s", tool.Description)
	}

	// Plain http through the proxy.
	out, txt := runCmd(t, c, "curl -sS --max-time 10 "+allowed.URL+"/hello")
	if out.ExitCode != 0 || out.Stdout != "hello from GET /hello\n" {
		t.Fatalf("allowed host over http: %s", txt)
	}
	if len(out.Egress) != 1 || !strings.Contains(out.Egress[0], "GET 127.0.0.1:") || !strings.HasSuffix(out.Egress[0], "/hello: allowed") {
		t.Fatalf("egress %q", out.Egress)
	}

	// https through CONNECT (the rule allows every method for the host).
	out, txt = runCmd(t, c, "curl -sS -k --max-time 10 "+secure.URL+"/tls")
	if out.ExitCode != 0 || out.Stdout != "hello from GET /tls\n" {
		t.Fatalf("allowed host over https: %s", txt)
	}

	// A host no rule names: 403, and the server never sees a connection.
	out, txt = runCmd(t, c, "curl -sS --max-time 10 -o /dev/null -w '%{http_code}\\n' "+other.URL+"/x; curl -sS -k --max-time 10 https://"+other.Listener.Addr().String()+"/y")
	if !strings.HasPrefix(out.Stdout, "403") || !strings.Contains(out.Stderr, "403") {
		t.Fatalf("refused host: %s", txt)
	}
	if len(out.Egress) != 2 || !strings.Contains(out.Egress[0], "403") || !strings.Contains(out.Egress[1], "CONNECT 127.0.0.2") || !strings.Contains(txt, "egress proxy:") {
		t.Fatalf("egress %q", out.Egress)
	}
	t.Logf("refused, as the model sees it:\n%s", txt)
	if n := other.accepts.Load(); n != 0 {
		t.Fatalf("the refused host saw %d connections", n)
	}

	// Ignoring the proxy fails closed: nothing but the proxy is reachable.
	before := allowed.accepts.Load()
	out, txt = runCmd(t, c, "curl -sS --noproxy '*' --max-time 5 "+allowed.URL+"/direct; echo exit=$?")
	if !strings.Contains(out.Stdout, "exit=7") || strings.Contains(out.Stdout, "hello") {
		t.Fatalf("direct connection: %s", txt)
	}
	if allowed.accepts.Load() != before {
		t.Fatalf("a direct connection reached the server")
	}

	// Every destination was decided and audited.
	var sawDeny, sawAllow bool
	for _, l := range f.auditLines(t) {
		tgt, _ := l["target"].(map[string]any)
		if l["tool"] != "execute_terminal_command" || tgt == nil || tgt["host"] == nil {
			continue
		}
		switch {
		case tgt["host"] == "127.0.0.2" && l["effect"] == "deny":
			sawDeny = true
		case tgt["host"] == "127.0.0.1" && l["effect"] == "allow" && l["capability"] == "network.http.get":
			sawAllow = true
		}
	}
	if !sawDeny || !sawAllow {
		t.Fatalf("audit: deny %v allow %v", sawDeny, sawAllow)
	}
}

// BenchmarkSandboxCurl compares a sandboxed curl through the proxy with
// the same curl run directly on the host (no server, no sandbox).
func BenchmarkSandboxCurl(b *testing.B) {
	needCurl(b)
	s := newCountingServer(b, "127.0.0.1:0", false)
	b.Run("sandbox-proxy", func(b *testing.B) {
		f := newFixture(b, proxyConfig)
		c := stdioClient(b, f, Modern)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			out, txt := runCmd(b, c, "curl -sS "+s.URL+"/b")
			if out.ExitCode != 0 {
				b.Fatal(txt)
			}
		}
	})
	b.Run("host-direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if out, err := exec.Command("curl", "-sS", s.URL+"/b").CombinedOutput(); err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
}

// TestSandboxEgressRedactsSecrets: a brokered secret a command puts into a
// URL path reaches neither the egress lines of the result nor the audit log
// (the proxy's decisions are audited on the redacted target).
func TestSandboxEgressRedactsSecrets(t *testing.T) {
	needCurl(t)
	const value = "s3cr3t-v4lue-in-the-path"
	srv := newCountingServer(t, "127.0.0.1:0", false)
	f := newFixture(t, proxyConfig+`
[[rules.allow]]
rule_id    = "use-tok"
capability = "secret.use"

[secrets.tok]
env   = "E2E_TOK"
hosts = ["127.0.0.1"]
`)
	f.Env = append(f.Env, "E2E_TOK="+value)
	c := stdioClient(t, f, Legacy)
	res := call(t, c, "execute_terminal_command", map[string]any{
		"command": `curl -s "` + srv.URL + `/x/$E2E_TOK"; curl -s "http://127.0.0.2:9/y/$E2E_TOK"; exit 0`, "secrets": []string{"tok"}, "timeout_seconds": 20})
	var out cmdOut
	structured(t, res, &out)
	all := text(res) + strings.Join(out.Egress, "\n")
	if strings.Contains(all, value) {
		t.Fatalf("the secret reached the result: %s", all)
	}
	if len(out.Egress) != 2 || !strings.Contains(out.Egress[0], "/x/[REDACTED:tok]") || !strings.Contains(out.Egress[1], "/y/[REDACTED:tok]") {
		t.Fatalf("egress lines %q, want both with /[REDACTED:tok]", out.Egress)
	}
	b, err := os.ReadFile(f.Audit)
	if err != nil {
		t.Fatal(err)
	}
	audit := string(b)
	if strings.Contains(audit, value) {
		t.Fatalf("the secret reached the audit log:\n%s", audit)
	}
	if !strings.Contains(audit, "/x/[REDACTED:tok]") {
		t.Fatalf("the proxy's decision is not in the audit log:\n%s", audit)
	}
}
