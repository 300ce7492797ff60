//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// greeter is a ProxyHandler that greets every connection and counts them.
type greeter struct {
	accepted atomic.Int32
	returned atomic.Bool
	mu       sync.Mutex
	ln       net.Listener
}

func (g *greeter) serve(ctx context.Context, ln net.Listener) {
	defer g.returned.Store(true)
	g.mu.Lock()
	g.ln = ln
	g.mu.Unlock()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		g.accepted.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			fmt.Fprintf(c, "proxy got %q\n", strings.TrimSpace(line))
		}()
	}
}

func TestProxyNetwork(t *testing.T) {
	abi := needSandbox(t)
	ws := newWorkspace(t)
	hostPort, hostAccepted := listener(t)
	eachPath(t, func(t *testing.T, run runFunc) {
		g := &greeter{}
		s := ws.spec(fmt.Sprintf(`echo "env: $HTTP_PROXY|$https_proxy|$ALL_PROXY|NO_PROXY=$NO_PROXY."
exec 3<>/dev/tcp/127.0.0.1/%d && { echo ping >&3; head -1 <&3; } || echo "proxy port refused"
(echo x > /dev/tcp/127.0.0.1/%d) 2>/dev/null && echo "host port reached" || echo "host port refused"
(echo x > /dev/tcp/127.0.0.1/3129) 2>/dev/null && echo "other port reached" || echo "other port refused"
(echo x > /dev/tcp/10.0.0.1/80) 2>/dev/null && echo "outside reached" || echo "outside refused"
echo "env passed: $KEEP"`, ProxyPort, hostPort))
		s.Network = NetworkProxy
		s.Proxy = g.serve
		s.Env = append(s.Env, "KEEP=yes", "HTTP_PROXY=http://evil.example:1") // replaced
		r, err := run(context.Background(), s)
		if err != nil {
			t.Fatalf("run: %v (%+v)", err, r)
		}
		for _, want := range []string{
			"env: " + ProxyURL + "|" + ProxyURL + "|" + ProxyURL + "|NO_PROXY=.",
			`proxy got "ping"`,
			"host port refused", "other port refused", "outside refused",
			"env passed: yes",
		} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("stdout lacks %q:\n%s\nstderr:\n%s", want, r.Stdout, r.Stderr)
			}
		}
		if strings.Contains(r.Stdout, "evil") {
			t.Errorf("a proxy variable of Env survived: %s", r.Stdout)
		}
		if n := g.accepted.Load(); n != 1 {
			t.Errorf("proxy accepted %d connections, want 1", n)
		}
		if n := hostAccepted.Load(); n != 0 {
			t.Errorf("the host listener saw %d connections", n)
		}
		if !g.returned.Load() {
			t.Errorf("Run returned before the proxy handler")
		}
		g.mu.Lock()
		ln := g.ln
		g.mu.Unlock()
		if ln == nil {
			t.Fatal("the handler never got the listener")
		}
		if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("listener still open after the command: Accept = %v", err)
		}
		if abi >= 4 {
			// Landlock: no bind, and connect to the proxy port only.
			s2 := ws.spec(`perl -MSocket -e 'socket(my $s, PF_INET, SOCK_STREAM, 0) or die; bind($s, pack_sockaddr_in(8080, inet_aton("127.0.0.1"))) ? print "bound\n" : print "bind: $!\n"'`)
			s2.Network, s2.Proxy = NetworkProxy, g.serve
			r2, err := run(context.Background(), s2)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r2.Stdout, "bind: Permission denied") {
				t.Errorf("bind inside the proxy namespace: %q %q", r2.Stdout, r2.Stderr)
			}
		}
	})
}

// TestProxyStopsWithCommand: a connection the command leaves open, and a
// timeout, still end the handler before Run returns.
func TestProxyStopsWithCommand(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	eachPath(t, func(t *testing.T, run runFunc) {
		var returned atomic.Bool
		h := func(ctx context.Context, ln net.Listener) {
			defer returned.Store(true)
			c, err := ln.Accept()
			if err != nil {
				return
			}
			<-ctx.Done() // hold the connection until the command is gone
			c.Close()
		}
		s := ws.spec(fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d; sleep 30", ProxyPort))
		s.Network, s.Proxy, s.Timeout = NetworkProxy, h, 500*time.Millisecond
		start := time.Now()
		r, err := run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if !r.TimedOut || !returned.Load() {
			t.Fatalf("timed out %v, handler returned %v", r.TimedOut, returned.Load())
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %s", d)
		}
	})
}

func TestProxyNoLeaks(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	run := func() {
		g := &greeter{}
		s := ws.spec(fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d; echo hi >&3; head -1 <&3", ProxyPort))
		s.Network, s.Proxy = NetworkProxy, g.serve
		r, err := Run(context.Background(), s)
		if err != nil || !strings.Contains(r.Stdout, "proxy got") {
			t.Fatalf("%v %+v", err, r)
		}
	}
	run()
	fds, gs := countFDs(), numGoroutine()
	for i := 0; i < 20; i++ {
		run()
	}
	if d := grewBy(countFDs, fds); d > 0 {
		t.Errorf("open files grew by %d", d)
	}
	if d := grewBy(numGoroutine, gs); d > 0 {
		t.Errorf("goroutines grew by %d", d)
	}
}

// A helper that fails before handing the listener over: Run reports
// ErrUnavailable and the handler never runs.
func TestProxySetupFailure(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	eachPath(t, func(t *testing.T, run runFunc) {
		var called atomic.Bool
		s := ws.spec("true")
		s.Network, s.Proxy = NetworkProxy, func(context.Context, net.Listener) { called.Store(true) }
		s.simulateNoLandlock = true
		if _, err := run(context.Background(), s); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err %v", err)
		}
		if called.Load() {
			t.Errorf("the handler ran")
		}
	})
}

func BenchmarkRunProxyTrue(b *testing.B) {
	needSandbox(b)
	h := func(ctx context.Context, ln net.Listener) { <-ctx.Done() }
	benchMedian(b, func() error {
		_, err := Run(context.Background(), Spec{Command: "true", Dir: "/tmp", Network: NetworkProxy, Proxy: h})
		return err
	})
}
