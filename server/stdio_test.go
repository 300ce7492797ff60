package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// stdioPeer drives ServeStdioWith over pipes, as a host does.
type stdioPeer struct {
	t      *testing.T
	in     *io.PipeWriter
	out    chan map[string]any
	served chan error
}

func startStdio(t *testing.T, s *Server, ctx context.Context, opts StdioOptions) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, out: make(chan map[string]any, 64), served: make(chan error, 1)}
	go func() {
		p.served <- s.ServeStdioWith(ctx, inR, outW, opts)
		outW.Close()
	}()
	go func() {
		defer close(p.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the server wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			p.out <- m
		}
	}()
	t.Cleanup(func() { inW.Close() })
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	p.expect("init")
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing to the server: %v", err)
	}
}

// expect returns the next message with the id, failing on a timeout.
func (p *stdioPeer) expect(id any) map[string]any {
	p.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-p.out:
			if !ok {
				p.t.Fatalf("output ended before id %v", id)
			}
			if fmt.Sprint(m["id"]) == fmt.Sprint(id) {
				return m
			}
		case <-timeout:
			p.t.Fatalf("no message with id %v", id)
		}
	}
}

// rest closes the input and returns everything written until the server
// returned.
func (p *stdioPeer) rest() []map[string]any {
	p.t.Helper()
	p.in.Close()
	var all []map[string]any
	for m := range p.out {
		all = append(all, m)
	}
	select {
	case err := <-p.served:
		if err != nil {
			p.t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		p.t.Fatal("ServeStdio did not return")
	}
	return all
}

func waitCall(id any) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tools/call","params":{"name":"probe","arguments":{"mode":"wait"}}}`, id)
}

// A line over the cap is answered with an error and skipped; the next line
// is served.
func TestStdioMessageCap(t *testing.T) {
	s, _ := testServer(t, probeTool{})
	p := startStdio(t, s, context.Background(), StdioOptions{MaxMessage: 1024})
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"probe","arguments":{"mode":"` + strings.Repeat("x", 5000) + `"}}}`)
	m := p.expect(9)
	if e, _ := m["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "limits.stdio_max_message_bytes") {
		t.Errorf("over-long line answered %v", m)
	}
	// Exactly at the cap (with CRLF) is fine.
	ping := `{"jsonrpc":"2.0","id":10,"method":"ping"}`
	p.send(ping + strings.Repeat(" ", 1024-len(ping)) + "\r")
	if m := p.expect(10); m["error"] != nil {
		t.Errorf("a line at the cap: %v", m)
	}
	// An over-long notification gets no answer: the next message out is the
	// ping's.
	p.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"` + strings.Repeat("x", 5000) + `"}}`)
	p.send(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	select {
	case m := <-p.out:
		if fmt.Sprint(m["id"]) != "11" {
			t.Errorf("after an over-long notification the server wrote %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the ping")
	}
	p.rest()
}

// A refused message never reaches a tool.
func TestStdioIngressRefusal(t *testing.T) {
	pt := probeTool{started: make(chan struct{}, 4), release: make(chan struct{}), saw: make(chan error, 4)}
	s, _ := testServer(t, pt)
	p := startStdio(t, s, context.Background(), StdioOptions{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","Name":"probe","arguments":{"mode":"wait"}}}`)
	if m := p.expect(1); m["error"] == nil {
		t.Errorf("case variant of name: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"probe","arguments":{"mode":"x","mode":"wait"}}}`)
	if m := p.expect(2); !strings.Contains(fmt.Sprint(m["result"]), "invalid_arguments") {
		t.Errorf("duplicate argument: %v", m)
	}
	p.rest()
	if len(pt.started) != 0 {
		t.Error("a refused call ran")
	}
}

// A request the client cancelled gets no response.
func TestStdioCancelledGetsNoResponse(t *testing.T) {
	pt := probeTool{started: make(chan struct{}, 1), release: make(chan struct{}), saw: make(chan error, 1)}
	s, _ := testServer(t, pt)
	p := startStdio(t, s, context.Background(), StdioOptions{})
	p.send(waitCall(5))
	<-pt.started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`)
	if err := <-pt.saw; err == nil {
		t.Error("the call's context did not end")
	}
	p.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	p.expect(6)
	// Cancelling an id that is not in flight changes nothing.
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	p.expect(7)
	for _, m := range p.rest() {
		if fmt.Sprint(m["id"]) == "5" {
			t.Errorf("the cancelled request got a response: %v", m)
		}
	}
}

// On shutdown a call in flight finishes within the grace period, new
// requests are refused, and a call that outlasts it is cancelled and still
// answered.
func TestStdioShutdownGrace(t *testing.T) {
	for _, finishes := range []bool{true, false} {
		t.Run(fmt.Sprint("finishes=", finishes), func(t *testing.T) {
			pt := probeTool{started: make(chan struct{}, 1), release: make(chan struct{}), saw: make(chan error, 1)}
			s, _ := testServer(t, pt)
			ctx, stop := context.WithCancel(context.Background())
			// A call that finishes gets a grace no loaded machine runs out
			// of (it ends as soon as the call does); one that outlasts it
			// gets a short one, which it must not be cancelled before.
			grace := time.Minute
			if !finishes {
				grace = 2 * time.Second
			}
			p := startStdio(t, s, ctx, StdioOptions{Grace: grace})
			p.send(waitCall(3))
			<-pt.started
			begin := time.Now()
			stop()
			p.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
			if m := p.expect(4); !strings.Contains(fmt.Sprint(m["error"]), "shutting down") {
				t.Errorf("a request during the shutdown: %v", m)
			}
			if finishes {
				close(pt.release)
				if m := p.expect(3); m["result"] == nil || strings.Contains(fmt.Sprint(m["result"]), "isError:true") {
					t.Errorf("the call in flight: %v", m)
				}
			} else {
				m := p.expect(3)
				if el := time.Since(begin); el < 1900*time.Millisecond {
					t.Errorf("cancelled after %s, before the grace period", el)
				}
				if m["result"] == nil && m["error"] == nil {
					t.Errorf("the cancelled call's answer: %v", m)
				}
			}
			select {
			case err := <-p.served:
				if err != nil {
					t.Errorf("ServeStdio: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ServeStdio did not return after the grace period")
			}
		})
	}
}

// A second tools/call with the id of one still in flight is refused, and
// the first one is neither cancelled nor answered for it.
func TestStdioDuplicateIDRefused(t *testing.T) {
	pt := probeTool{started: make(chan struct{}, 2), release: make(chan struct{}), saw: make(chan error, 2)}
	s, _ := testServer(t, pt)
	p := startStdio(t, s, context.Background(), StdioOptions{})
	p.send(waitCall(5))
	<-pt.started
	p.send(waitCall(5))
	m := p.expect(5)
	if e, _ := m["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "still in flight") {
		t.Fatalf("the duplicate was answered %v", m)
	}
	// Any other request reusing the id is refused too: its answer would
	// end the call's tracking (a cancel, the shutdown's wait).
	p.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if m := p.expect(5); m["error"] == nil || !strings.Contains(fmt.Sprint(m["error"]), "still in flight") {
		t.Fatalf("a ping reusing the call's id was answered %v", m)
	}
	close(pt.release)
	if m := p.expect(5); m["result"] == nil {
		t.Fatalf("the first call's answer: %v", m)
	}
	select {
	case err := <-pt.saw:
		t.Errorf("the first call was cancelled: %v", err)
	default:
	}
}

type fakeSession struct{ id string }

func (fakeSession) Initialize()                                         {}
func (fakeSession) Initialized() bool                                   { return true }
func (fakeSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (f fakeSession) SessionID() string                                 { return f.id }

// notifications/roots/list_changed takes effect before the reader reads the
// next line: mcp-go handles notifications on its own loop while tool calls
// run on the reader's, so a call sent right after it must not depend on
// mcp-go having got to it (here mcp-go never reads it at all).
func TestStdioRootsChangeAppliesBeforeTheNextLine(t *testing.T) {
	s, _ := testServer(t)
	link := &stdioLink{out: io.Discard, inflight: map[string]bool{}, idle: make(chan struct{}, 1)}
	calls := newStdioCalls(s, link)
	calls.bind(s.mcp.WithContext(context.Background(), fakeSession{id: "stdio"}))
	s.roots.session = map[string][]string{"stdio": {"/old/root"}}
	r := &stdioReader{s: s, link: link, max: 1 << 20, ctx: context.Background(), calls: calls, stop: make(chan struct{})}
	if err := r.message([]byte(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`), io.Discard); err != nil {
		t.Fatal(err)
	}
	s.roots.mu.Lock()
	defer s.roots.mu.Unlock()
	if _, ok := s.roots.session["stdio"]; ok {
		t.Fatal("the old roots are still in force after notifications/roots/list_changed was read")
	}
}
