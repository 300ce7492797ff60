//go:build linux

package shelltool

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/webtools"
)

func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}

const dnsChildEnv = "ONELLM_DNS_TEST_CHILD"

// TestProxyMakesNoDNSQueryForRefusedHost: a sandboxed curl through the
// egress proxy to hosts no rule allows makes no DNS query; one to an
// allowed host does (so the resolver is really the one asked). The test
// re-runs itself in a network and mount namespace of its own, where a tiny
// resolver on 127.0.0.1:53 counts the queries and /etc/resolv.conf names
// it: nothing leaves the machine.
func TestProxyMakesNoDNSQueryForRefusedHost(t *testing.T) {
	if os.Getenv(dnsChildEnv) == "1" {
		dnsChild(t)
		return
	}
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf // under CI a missing dependency fails
	}
	if _, err := exec.LookPath("curl"); err != nil {
		skip("curl is not installed")
	}
	if _, err := sandbox.Probe(); err != nil {
		skip("no sandbox here: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyMakesNoDNSQueryForRefusedHost$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), dnsChildEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET | syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		skip("cannot make namespaces: %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("child:\n%s", out)
}

// dnsResolver answers every query REFUSED and records the names asked.
type dnsResolver struct {
	mu    sync.Mutex
	names []string
}

func (d *dnsResolver) serve(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if n < 12 {
			continue
		}
		d.mu.Lock()
		d.names = append(d.names, qname(buf[12:n]))
		d.mu.Unlock()
		resp := append([]byte(nil), buf[:n]...)
		flags := binary.BigEndian.Uint16(resp[2:]) | 0x8000 | 5 // QR, REFUSED
		binary.BigEndian.PutUint16(resp[2:], flags)
		_, _ = pc.WriteTo(resp, addr)
	}
}

func (d *dnsResolver) asked(sub string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, q := range d.names {
		if strings.Contains(q, sub) {
			n++
		}
	}
	return n
}

// qname reads the first question's name.
func qname(b []byte) string {
	var labels []string
	for len(b) > 0 && b[0] != 0 && int(b[0]) < len(b) {
		labels = append(labels, string(b[1:1+b[0]]))
		b = b[1+b[0]:]
	}
	return strings.Join(labels, ".")
}

func dnsChild(t *testing.T) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(conf, []byte("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(conf, "/etc/resolv.conf", "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:53")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	dns := &dnsResolver{}
	go dns.serve(pc)

	ws := t.TempDir()
	cfg, err := grants.Parse([]byte(`mode = "strict"
[sandbox]
network = "proxy"
[[rules.allow]]
rule_id = "run"
capability = "process.exec"
[[rules.allow]]
rule_id = "allowed"
capability = "network.http.*"
target = { host = "allowed.test" }
`), filepath.Join(ws, "c.toml"), ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: ws})
	if err != nil {
		t.Fatal(err)
	}
	gate := func(_ context.Context, r grants.Request, _ grants.Stage) (grants.Decision, error) {
		return p.Decide(r), nil
	}
	var events []string
	var mu sync.Mutex
	px := &webtools.Proxy{Client: webtools.NewClient(webtools.Options{}), Decide: webtools.ProxyPolicy(gate, Name, nil),
		OnEvent: func(e webtools.ProxyEvent) { mu.Lock(); events = append(events, e.String()); mu.Unlock() }}
	r, err := sandbox.Run(context.Background(), sandbox.Spec{
		Command: "curl -s -m 5 http://data-in-the-name.unallowed.test/x; curl -s -m 5 https://unallowed.test/; " +
			"curl -s -m 5 http://allowed.test/y; exit 0",
		Dir: ws, Writable: []string{ws}, Env: []string{"PATH=/usr/bin:/bin"}, Network: sandbox.NetworkProxy, Proxy: px.Serve,
		Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	t.Logf("exit %d, events %q\nstdout %s\nstderr %s", r.ExitCode, events, r.Stdout, r.Stderr)
	mu.Unlock()
	if n := dns.asked("unallowed"); n != 0 {
		t.Errorf("%d DNS queries for hosts no rule allows", n)
	}
	if n := dns.asked("allowed.test"); n == 0 {
		t.Errorf("no DNS query for the allowed host: the resolver is not the one asked, the test proves nothing")
	}
}
