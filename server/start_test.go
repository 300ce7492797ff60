package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/server/auditlog"
)

// slowStarter is a tool whose Start blocks until release is closed.
type slowStarter struct {
	called, release chan struct{}
}

func (slowStarter) Name() string { return "slow" }
func (slowStarter) Capabilities() []grants.Capability {
	return []grants.Capability{grants.CapWorkspaceRead}
}
func (slowStarter) Definition(*grants.Policy) mcp.Tool { return mcp.NewTool("slow") }
func (t slowStarter) Start(*grants.Policy) {
	close(t.called)
	<-t.release
}
func (slowStarter) Plan(context.Context, *toolkit.Env, json.RawMessage) (*toolkit.Plan, error) {
	return &toolkit.Plan{Run: func(context.Context, toolkit.Grant) toolkit.Result {
		return toolkit.Result{Tool: mcp.NewToolResultText("ran")}
	}}, nil // no request: refused, but only once planned, after the start
}

// TestStartAfterFirstAnswer: the initialize response does not wait for a
// tool's Start, which begins once it is out; a call to that tool waits
// for the Start to finish.
func TestStartAfterFirstAnswer(t *testing.T) {
	tool := slowStarter{called: make(chan struct{}), release: make(chan struct{})}
	s, _ := testServer(t, tool)
	p := startStdio(t, s, context.Background(), StdioOptions{}) // the initialize response came
	select {
	case <-tool.called:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool was not started after the first answer")
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	p.expect(3) // answered while the call waits
	select {
	case m := <-p.out:
		t.Fatalf("the call was answered before its tool started: %v", m)
	case <-time.After(50 * time.Millisecond):
	}
	close(tool.release)
	if res := p.expect(2); res["result"] == nil {
		t.Fatalf("the call after the start: %v", res)
	}
}

// TestToolsStartWhenQuiet: over stdio the tools' start (the sandbox probe,
// a helper process) waits until no request is in flight, so it does not
// compete with the calls a client sends right after initialize; a call to
// a Starter does not wait for that, it starts them at once.
func TestToolsStartWhenQuiet(t *testing.T) {
	for _, kick := range []bool{false, true} {
		t.Run(map[bool]string{false: "quiet", true: "starter call"}[kick], func(t *testing.T) {
			starter := slowStarter{called: make(chan struct{}), release: make(chan struct{})}
			close(starter.release) // its Start returns at once
			probe := probeTool{started: make(chan struct{}, 1), release: make(chan struct{}), saw: make(chan error, 1)}
			s, _ := testServer(t, starter, probe)
			p := startWithCallInFlight(t, s)
			select {
			case <-probe.started: // the call runs: the log is open, the call in flight
			case <-time.After(10 * time.Second):
				t.Fatal("the call did not run")
			}
			select {
			case <-starter.called:
				t.Fatal("the tools started while a call was in flight")
			case <-time.After(50 * time.Millisecond):
			}
			if kick {
				p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
				waitClosed(t, starter.called, "the tools were not started for a call to a Starter")
				p.expect(3)
				close(probe.release)
				p.expect(2)
				return
			}
			close(probe.release)
			p.expect(2)
			waitClosed(t, starter.called, "the tools were not started once no call was in flight")
		})
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second): // a bound on a start that never comes, not a speed target
		t.Fatal(msg)
	}
}

// The config watch (AfterAuditOpen) does not wait for the tools' start:
// with a call held in flight the tools wait for a quiet moment, but the
// hook runs as soon as the audit log is open, so a changed config is
// applied whatever the client keeps in flight.
func TestAfterAuditOpenRunsWhileACallIsInFlight(t *testing.T) {
	starter := slowStarter{called: make(chan struct{}), release: make(chan struct{})}
	close(starter.release)
	probe := probeTool{started: make(chan struct{}, 1), release: make(chan struct{}), saw: make(chan error, 1)}
	s, _ := testServer(t, starter, probe)
	hooked := make(chan struct{})
	s.AfterAuditOpen(func() { close(hooked) })
	p := startWithCallInFlight(t, s)
	select {
	case <-probe.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not run")
	}
	waitClosed(t, hooked, "the hook waited for the tools' start")
	select {
	case <-starter.called:
		t.Fatal("the tools started while a call was in flight")
	default:
	}
	close(probe.release)
	p.expect(2)
	waitClosed(t, starter.called, "the tools were not started once no call was in flight")
}

// A request with a null id is refused (MCP: an id is never null): mcp-go
// would take it for a notification and answer nothing, and the request
// would stay in flight for ever, holding back the tools' start.
func TestNullIDRequestRefused(t *testing.T) {
	starter := slowStarter{called: make(chan struct{}), release: make(chan struct{})}
	close(starter.release)
	s, _ := testServer(t, starter)
	p := startStdio(t, s, context.Background(), StdioOptions{})
	p.send(`{"jsonrpc":"2.0","id":null,"method":"ping"}`)
	p.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	p.expect("after")
	waitClosed(t, starter.called, "a null-id request kept the server from ever being quiet")
}

// startWithCallInFlight serves s over stdio with its audit log held back
// until a probe call (id 2, mode wait) is in flight, so the start begins
// with a request in flight, then lets the log open.
func startWithCallInFlight(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	later, err := OpenAuditLater(s.Policy(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { later.Close() })
	gate, open := make(chan struct{}), later.open
	later.open = func() (*auditlog.Log, error) { <-gate; return open() }
	s.audit = later
	p := startStdio(t, s, context.Background(), StdioOptions{})
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"probe","arguments":{"mode":"wait"}}}`)
	p.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	p.expect("after") // lines are read in order: the call is in flight
	close(gate)
	return p
}
