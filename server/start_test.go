package server

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
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
