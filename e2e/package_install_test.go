package e2e

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// wheel builds a pure-Python wheel hello_pkg 1.0 in memory.
func wheel(t *testing.T) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"hello_pkg/__init__.py", "VALUE = 42\n"},
		{"hello_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: hello-pkg\nVersion: 1.0\n"},
		{"hello_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: onellm-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("hello_pkg-1.0.dist-info/RECORD,,\n")
	w, _ := zw.Create("hello_pkg-1.0.dist-info/RECORD")
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// localIndex is a PEP 503 simple index on addr (a loopback address)
// serving one wheel.
func localIndex(t *testing.T, addr string) (*httptest.Server, *atomic.Int64) {
	whl := wheel(t)
	sum := sha256.Sum256(whl)
	var hits atomic.Int64
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("index on %s: %v", addr, err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/simple/hello-pkg/":
			fmt.Fprintf(w, `<!doctype html><html><body><a href="/files/hello_pkg-1.0-py3-none-any.whl#sha256=%s">hello_pkg-1.0-py3-none-any.whl</a></body></html>`, hex.EncodeToString(sum[:]))
		case "/files/hello_pkg-1.0-py3-none-any.whl":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(whl)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestPackageInstallThroughTheProxy: `pip install` from a package index on
// 127.0.0.1 works in the sandbox through the egress proxy when a rule
// allows installing from that index, and is refused before anything runs
// without one; the package.install request is in the audit log with the
// package and the index's host. What is decided is what is fetched: a
// pip.conf the command writes first, adding a second index (127.0.0.2,
// reachable through the proxy too), is not read.
func TestPackageInstallThroughTheProxy(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		testkit.Missing(t, "python3 is not installed: %v", err)
	}
	index, hits := localIndex(t, "127.0.0.1:0")
	decoy, decoyHits := localIndex(t, "127.0.0.2:0")
	pipConf := `python3 -c "import os; d = os.path.expanduser('~/.config/pip'); os.makedirs(d); ` +
		`open(d + '/pip.conf', 'w').write('[global]\\nextra-index-url = ` + decoy.URL + `/simple/\\n')" && `
	install := pipConf + "python3 -m pip install --no-cache-dir --disable-pip-version-check --target /tmp/site " +
		"--index-url " + index.URL + "/simple/ hello-pkg && PYTHONPATH=/tmp/site python3 -c 'import hello_pkg; print(hello_pkg.VALUE)'"

	allowed := newFixture(t, npmConfig+`
[[rules.allow]]
rule_id    = "local-index"
capability = "package.install"
target     = { host = "127.0.0.1" }
`)
	c := stdioClient(t, allowed, Modern)
	res := call(t, c, "execute_terminal_command", map[string]any{"command": install, "timeout_seconds": 120})
	var out cmdOut
	structured(t, res, &out)
	if res.IsError || out.ExitCode != 0 || strings.TrimSpace(out.Stdout[strings.LastIndex(strings.TrimRight(out.Stdout, "\n"), "\n")+1:]) != "42" {
		t.Fatalf("pip install through the proxy: %s", text(res))
	}
	if hits.Load() < 2 {
		t.Fatalf("the index saw %d requests", hits.Load())
	}
	if decoyHits.Load() != 0 {
		t.Fatalf("the index only a pip.conf named saw %d requests", decoyHits.Load())
	}
	var sawInstall bool
	for _, l := range allowed.auditLines(t) {
		tgt, _ := l["target"].(map[string]any)
		if l["capability"] == "package.install" && tgt["resource"] == "hello-pkg" && tgt["host"] == "127.0.0.1" && l["effect"] == "allow" {
			sawInstall = true
		}
	}
	if !sawInstall {
		t.Fatal("no allowed package.install of hello-pkg from 127.0.0.1 in the audit log")
	}

	refused := newFixture(t, proxyConfig)
	before := hits.Load()
	c2 := stdioClient(t, refused, Modern)
	res = call(t, c2, "execute_terminal_command", map[string]any{"command": install, "timeout_seconds": 120})
	if !res.IsError || !strings.Contains(text(res), "package.install") {
		t.Fatalf("install without a rule: %s", text(res))
	}
	if hits.Load() != before {
		t.Fatal("a refused install reached the index")
	}
}
