package telemetry

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

const (
	marker      = "MARKER-9f3c" // in every argument: must appear in no span
	traceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceState  = "rojo=00f067aa0ba902b7"
)

func newTest(key []byte) (*Tracer, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	return New(Options{Exporter: exp, Sync: true, HashKey: key, Version: "test"}), exp
}

// attrs is a span's attributes as strings.
func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, a := range s.Attributes {
		m[string(a.Key)] = a.Value.Emit()
	}
	return m
}

// noMarker fails when the marker is anywhere in any span: name,
// attributes, events, status, links.
func noMarker(t *testing.T, spans tracetest.SpanStubs) {
	t.Helper()
	for _, s := range spans {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), marker) {
			t.Errorf("span %q carries argument text: %s", s.Name, b)
		}
	}
}

func decision(eff grants.Effect, reason grants.Reason, rule string) grants.Decision {
	return grants.Decision{Effect: eff, Reason: reason, RuleID: rule, Request: grants.Request{
		Capability: grants.CapProcessExec, Risk: grants.RiskMedium, Surface: grants.SurfaceSandbox,
		Target: grants.Target{ToolName: "execute_terminal_command", Resource: "git", Command: "git push " + marker}}}
}

// TestCallSpans: a call with an ask that was approved and a command run:
// names, kinds, attributes, parenting from _meta.traceparent, and no
// argument text anywhere.
func TestCallSpans(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	tr, exp := newTest(key)
	args := json.RawMessage(`{"command":"git push ` + marker + `", "cwd":"/tmp/` + marker + `"}`)
	ctx, call := tr.StartCall(context.Background(), CallInfo{
		Tool: "execute_terminal_command", RequestID: json.RawMessage(`"req-7"`), ProtocolVersion: "2025-11-25",
		Transport: "pipe", Args: args,
		Meta: map[string]any{"traceparent": traceParent, "tracestate": traceState, "other": marker},
	})
	start := call.Now()
	asked := []grants.Decision{decision(grants.Ask, grants.ReasonMatchedAsk, "ask-git-push")}
	wait := call.StartApproval(ctx)
	wait.EndApproval(grants.ReasonApproved, "elicitation", false)
	settled := []grants.Decision{decision(grants.Allow, grants.ReasonApproved, "ask-git-push")}
	call.Decided(ctx, "interactive-dev", asked, settled, start, call.Now())
	runCtx, run := call.StartRun(ctx, grants.SurfaceSandbox)
	tr.Decided(runCtx, "interactive-dev", decision(grants.Deny, grants.ReasonMatchedDeny, "no-rm"),
		decision(grants.Deny, grants.ReasonMatchedDeny, "no-rm"), "exec", time.Now())
	run.EndRun("failed", time.Now(), 12*time.Millisecond)
	call.End("tool_error", true)

	spans := exp.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	root := byName["tools/call execute_terminal_command"]
	if len(root) != 1 || len(byName["run_guardrail onellm-mcp"]) != 2 || len(byName["approval"]) != 1 || len(byName["sandbox run"]) != 1 {
		t.Fatalf("spans: %v", names(spans))
	}
	c := root[0]
	if c.SpanKind != trace.SpanKindServer || c.Parent.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" ||
		c.Parent.SpanID().String() != "00f067aa0ba902b7" || !c.Parent.IsRemote() || c.SpanContext.TraceState().String() != traceState {
		t.Errorf("call span not parented from _meta.traceparent: kind %v parent %v state %q", c.SpanKind, c.Parent, c.SpanContext.TraceState())
	}
	want := map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "execute_terminal_command",
		"mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "req-7", "network.transport": "pipe",
		"error.type": "tool_error", "onellm.outcome": "tool_error", attrInputHash: hmacHex(key, args),
	}
	for k, v := range want {
		if got := attrs(c)[k]; got != v {
			t.Errorf("call span %s = %q, want %q", k, got, v)
		}
	}
	if c.Status.Code != codes.Error {
		t.Errorf("status %v", c.Status)
	}
	for _, s := range spans {
		if s.Name != c.Name && s.SpanContext.TraceID() != c.SpanContext.TraceID() {
			t.Errorf("%s is in another trace", s.Name)
		}
	}
	for _, s := range append(byName["approval"], byName["sandbox run"]...) {
		if s.Parent.SpanID() != c.SpanContext.SpanID() {
			t.Errorf("%s is not a child of the call", s.Name)
		}
	}
	var plan, exec tracetest.SpanStub
	for _, s := range byName["run_guardrail onellm-mcp"] {
		if attrs(s)["onellm.stage"] == "exec" {
			exec = s
		} else {
			plan = s
		}
	}
	for k, v := range map[string]string{
		"gen_ai.operation.name": "run_guardrail", "gen_ai.guardrail.verdict.type": "escalate", "gen_ai.guardrail.verdict.code": "matched_ask",
		"gen_ai.guardrail.action.type": "allow", "onellm.reason_code": "approved", "gen_ai.guardrail.security.policy.rule.id": "ask-git-push",
		"gen_ai.guardrail.security.policy.id": "interactive-dev", "onellm.capability": "process.exec", "onellm.risk_level": "medium",
		attrInputHash: hmacHex(key, args),
	} {
		if got := attrs(plan)[k]; got != v {
			t.Errorf("decision span %s = %q, want %q", k, got, v)
		}
	}
	if plan.Parent.SpanID() != c.SpanContext.SpanID() || plan.SpanKind != trace.SpanKindInternal {
		t.Error("the decision span is not an internal child of the call")
	}
	run0 := byName["sandbox run"][0]
	if exec.Parent.SpanID() != run0.SpanContext.SpanID() {
		t.Error("the exec decision is not a child of the run")
	}
	if a := attrs(exec); a["gen_ai.guardrail.action.type"] != "block" || a["gen_ai.guardrail.verdict.reason"] != "matched_deny" || a["gen_ai.guardrail.security.policy.rule.id"] != "no-rm" {
		t.Errorf("exec decision: %v", a)
	}
	if a := attrs(byName["approval"][0]); a["onellm.reason_code"] != "approved" || a["onellm.approval.channel"] != "elicitation" {
		t.Errorf("approval: %v", a)
	}
	if len(run0.Events) != 1 || run0.Events[0].Name != "command started" || attrs(run0)["onellm.command.result"] != "failed" {
		t.Errorf("run span: %v %v", attrs(run0), run0.Events)
	}
	noMarker(t, spans)
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func hmacHex(key []byte, args json.RawMessage) string {
	m := hmac.New(sha256.New, key)
	m.Write(toolkit.CanonicalArguments(args))
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// TestParenting: what _meta may carry and what becomes of it.
func TestParenting(t *testing.T) {
	for _, tc := range []struct {
		name     string
		meta     map[string]any
		parented bool
		exported bool
	}{
		{"valid", map[string]any{"traceparent": traceParent}, true, true},
		{"none", nil, false, true},
		{"garbage", map[string]any{"traceparent": "00-" + marker}, false, true},
		{"all-zero trace id", map[string]any{"traceparent": "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, false, true},
		{"not a string", map[string]any{"traceparent": 7}, false, true},
		{"prefixed key is not read", map[string]any{"io.example/traceparent": traceParent}, false, true},
		{"not sampled", map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, ok := oneCall(t, CallInfo{Tool: "read_file", Meta: tc.meta, Args: json.RawMessage(`{}`)}, tc.exported)
			if !ok {
				return
			}
			if got := sp.Parent.IsValid(); got != tc.parented {
				t.Errorf("parented %v, want %v", got, tc.parented)
			}
			if _, ok := attrs(sp)[attrInputHash]; ok {
				t.Error("an argument hash without hash_arguments")
			}
			if _, ok := attrs(sp)["error.type"]; ok {
				t.Error("error.type on a call that succeeded")
			}
		})
	}
}

// oneCall starts and ends one call span and checks whether it was
// exported; ok says there is a span to check further.
func oneCall(t *testing.T, ci CallInfo, exported bool) (span tracetest.SpanStub, ok bool) {
	t.Helper()
	tr, exp := newTest(nil)
	_, call := tr.StartCall(context.Background(), ci)
	call.End("ok", false)
	spans := exp.GetSpans()
	if (len(spans) == 1) != exported {
		t.Fatalf("%d spans exported", len(spans))
	}
	if !exported {
		return tracetest.SpanStub{}, false
	}
	return spans[0], true
}

// TestHTTPParent: over HTTP the traceparent/tracestate headers are the
// parent when _meta carries no valid traceparent; when it does, _meta wins
// and the headers' context, if it names another span, is a link.
func TestHTTPParent(t *testing.T) {
	const (
		metaTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		hdrTrace  = "0af7651916cd43dd8448eb211c80319c"
		hdrParent = "00-" + hdrTrace + "-b7ad6b7169203331-01"
	)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	for _, tc := range []struct {
		name      string
		meta      map[string]any
		header    http.Header
		parent    string // trace id of the parent; "" none
		state     string // the parent's tracestate
		link      string // trace id of the one link; "" none
		linkState string
		exported  bool
	}{
		{"header only", nil, hdr("traceparent", hdrParent, "tracestate", "congo=t61rcWkgMzE"), hdrTrace, "congo=t61rcWkgMzE", "", "", true},
		{"meta wins, header is a link", map[string]any{"traceparent": traceParent, "tracestate": traceState},
			hdr("traceparent", hdrParent, "tracestate", "congo=t61rcWkgMzE"), metaTrace, traceState, hdrTrace, "congo=t61rcWkgMzE", true},
		{"same context: no link", map[string]any{"traceparent": traceParent}, hdr("traceparent", traceParent), metaTrace, "", "", "", true},
		{"meta garbage, header used", map[string]any{"traceparent": "00-" + marker}, hdr("traceparent", hdrParent), hdrTrace, "", "", "", true},
		{"meta without traceparent", map[string]any{"tracestate": traceState}, hdr("traceparent", hdrParent), hdrTrace, "", "", "", true},
		{"header garbage", map[string]any{"traceparent": traceParent}, hdr("traceparent", "00-"+marker), metaTrace, "", "", "", true},
		{"two traceparent headers: none", nil, hdr("traceparent", hdrParent, "traceparent", traceParent), "", "", "", "", true},
		{"tracestate over two fields", nil, hdr("traceparent", hdrParent, "tracestate", "a=1", "tracestate", "b=2"), hdrTrace, "a=1,b=2", "", "", true},
		{"header not sampled", nil, hdr("traceparent", "00-"+hdrTrace+"-b7ad6b7169203331-00"), "", "", "", "", false},
		{"meta not sampled wins over a sampled header", map[string]any{"traceparent": "00-" + metaTrace + "-00f067aa0ba902b7-00"}, hdr("traceparent", hdrParent), "", "", "", "", false},
		{"meta sampled, header not: linked", map[string]any{"traceparent": traceParent}, hdr("traceparent", "00-"+hdrTrace+"-b7ad6b7169203331-00"), metaTrace, "", hdrTrace, "", true},
		{"stdio: no header", map[string]any{"traceparent": traceParent}, nil, metaTrace, "", "", "", true},
		{"neither", nil, hdr("other", "x"), "", "", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp, ok := oneCall(t, CallInfo{Tool: "read_file", Meta: tc.meta, Header: tc.header, Args: json.RawMessage(`{}`)}, tc.exported)
			if !ok {
				return
			}
			if tc.parent == "" {
				if sp.Parent.IsValid() {
					t.Errorf("parented by %v", sp.Parent)
				}
			} else if sp.Parent.TraceID().String() != tc.parent || !sp.Parent.IsRemote() || sp.SpanContext.TraceID() != sp.Parent.TraceID() {
				t.Errorf("parent %v, span %v; want trace %s", sp.Parent, sp.SpanContext, tc.parent)
			}
			if got := sp.Parent.TraceState().String(); got != tc.state {
				t.Errorf("parent tracestate %q, want %q", got, tc.state)
			}
			switch {
			case tc.link == "" && len(sp.Links) != 0:
				t.Errorf("links %v", sp.Links)
			case tc.link != "" && (len(sp.Links) != 1 || sp.Links[0].SpanContext.TraceID().String() != tc.link ||
				sp.Links[0].SpanContext.TraceState().String() != tc.linkState):
				t.Errorf("links %v, want one to %s (tracestate %q)", sp.Links, tc.link, tc.linkState)
			}
		})
	}
}

// TestArgumentHash: keyed, over the canonical form.
func TestArgumentHash(t *testing.T) {
	a, _ := newTest([]byte("key-a"))
	b, _ := newTest([]byte("key-b"))
	x := a.argsHash(json.RawMessage(`{"path":"a","limit":2}`))
	if y := a.argsHash(json.RawMessage(` { "limit":2 , "path":"a" }`)); x != y {
		t.Error("the same arguments written differently hash differently")
	}
	if y := a.argsHash(json.RawMessage(`{"path":"b","limit":2}`)); x == y {
		t.Error("other arguments hash the same")
	}
	if y := b.argsHash(json.RawMessage(`{"path":"a","limit":2}`)); x == y {
		t.Error("the hash does not depend on the key")
	}
	plain := sha256.Sum256(toolkit.CanonicalArguments(json.RawMessage(`{"path":"a","limit":2}`)))
	if strings.Contains(x, hex.EncodeToString(plain[:])) || !strings.HasPrefix(x, "hmac-sha256:") {
		t.Errorf("not a keyed hash: %s", x)
	}
}

func TestRequestID(t *testing.T) {
	for raw, want := range map[string]string{`"abc"`: "abc", `7`: "7", `-1.5`: "-1.5", `null`: "", ``: "", `{}`: ""} {
		got, ok := requestID(json.RawMessage(raw))
		if got != want || ok != (want != "") {
			t.Errorf("requestID(%s) = %q %v", raw, got, ok)
		}
	}
}

// TestOff: a nil Tracer and everything made from it do nothing.
func TestOff(t *testing.T) {
	var tr *Tracer
	ctx := context.Background()
	got, call := tr.StartCall(ctx, CallInfo{Tool: "x"})
	if got != ctx || call != nil || !call.Now().IsZero() {
		t.Fatal("off, StartCall changed something")
	}
	call.Decided(ctx, "p", nil, nil, time.Time{}, time.Time{})
	call.StartApproval(ctx).EndApproval("", "", false)
	rctx, run := call.StartRun(ctx, grants.SurfaceSandbox)
	run.EndRun("ok", time.Time{}, 0)
	tr.Decided(rctx, "p", grants.Decision{}, grants.Decision{}, "exec", time.Time{})
	call.End("ok", false)
	if err := tr.Shutdown(ctx); err != nil || rctx != ctx {
		t.Fatal(err)
	}
}
