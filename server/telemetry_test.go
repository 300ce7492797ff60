package server

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/server/telemetry"
)

const spanMarker = "MARKER-71ce"

// TestCallTelemetry: the call path makes the call, decision, approval and
// mid-action spans, parented from _meta.traceparent, with the request id
// the transport recorded, and no argument or target text in any span.
func TestCallTelemetry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tool     fakeTool
		approver *fakeApprover
		outcome  string
		spans    map[string]int
		action   string
	}{
		{name: "approved ask and a mid-action exec",
			tool: fakeTool{build: reqs(exec("git push origin "+spanMarker, grants.RiskMedium)),
				mid: []midReq{{req: exec("ls "+spanMarker, grants.RiskMedium), stage: grants.StageExec}}},
			approver: &fakeApprover{outcome: toolkit.ApprovalOutcome{Approved: true, Reason: grants.ReasonApproved, Channel: "elicitation"}},
			outcome:  "ok", spans: map[string]int{"tools/call fake": 1, "run_guardrail onellm-mcp": 2, "approval": 1}, action: "allow"},
		{name: "refused",
			tool:    fakeTool{build: reqs(exec("rm -f "+spanMarker, grants.RiskMedium))},
			outcome: "refused", spans: map[string]int{"tools/call fake": 1, "run_guardrail onellm-mcp": 1}, action: "block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCallEnv(t, callPolicy, tc.approver)
			exp := tracetest.NewInMemoryExporter()
			e.s.tel = telemetry.New(telemetry.Options{Exporter: exp, Sync: true, HashKey: []byte("k")})
			ran, mid := 0, []midResult{}
			tc.tool.ran, tc.tool.midOut = &ran, &mid
			req := mcp.CallToolRequest{}
			req.Params.Name = "fake"
			req.Params.RawArguments = json.RawMessage(`{"command":"` + spanMarker + `"}`)
			req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
			ctx := e.s.withCallMeta(context.Background(), json.RawMessage(`41`), "pipe", nil)
			e.s.call(ctx, tc.tool, req)

			spans := exp.GetSpans()
			count := map[string]int{}
			var call tracetest.SpanStub
			for _, s := range spans {
				count[s.Name]++
				if s.Name == "tools/call fake" {
					call = s
				}
			}
			for name, n := range tc.spans {
				if count[name] != n {
					t.Errorf("%d %q spans, want %d (all: %v)", count[name], name, n, count)
				}
			}
			got := map[string]string{}
			for _, a := range call.Attributes {
				got[string(a.Key)] = a.Value.Emit()
			}
			if got["onellm.outcome"] != tc.outcome || got["jsonrpc.request.id"] != "41" || got["network.transport"] != "pipe" ||
				call.Parent.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || !strings.HasPrefix(got["gen_ai.guardrail.security.content.input.hash"], "hmac-sha256:") {
				t.Errorf("call span: %v parent %v", got, call.Parent)
			}
			if (tc.outcome == "refused") != (got["error.type"] == "tool_error") {
				t.Errorf("error.type %q for outcome %s", got["error.type"], tc.outcome)
			}
			for _, s := range spans {
				if s.Name != "run_guardrail onellm-mcp" {
					continue
				}
				if s.Parent.SpanID() != call.SpanContext.SpanID() {
					t.Errorf("decision span not a child of the call")
				}
				for _, a := range s.Attributes {
					if a.Key == "gen_ai.guardrail.action.type" && a.Value.AsString() != tc.action {
						t.Errorf("action %s, want %s", a.Value.AsString(), tc.action)
					}
				}
			}
			b, _ := json.Marshal(spans)
			if strings.Contains(string(b), spanMarker) {
				t.Errorf("argument text in a span: %s", b)
			}
		})
	}
}

// TestTelemetryOffTouchesNothing: off, a call's context is not wrapped.
func TestTelemetryOffTouchesNothing(t *testing.T) {
	e := newCallEnv(t, callPolicy, nil)
	ctx := context.Background()
	if got := e.s.withCallMeta(ctx, json.RawMessage(`1`), "pipe", nil); got != ctx {
		t.Fatal("the context was wrapped with telemetry off")
	}
	if _, span := e.s.startCallSpan(ctx, fakeTool{}, mcp.CallToolRequest{}); span != nil {
		t.Fatal("a span with telemetry off")
	}
}

// TestTelemetryKey: made 0600 at first use, the same afterwards; a key
// others can read is refused.
func TestTelemetryKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := loadTelemetryKey(dir)
	if err != nil || len(k1) != 32 {
		t.Fatal(k1, err)
	}
	fi, _ := os.Stat(filepath.Join(dir, telemetryKeyFile))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if k2, err := loadTelemetryKey(dir); err != nil || string(k2) != string(k1) {
		t.Errorf("second load: %v", err)
	}
	os.Chmod(filepath.Join(dir, telemetryKeyFile), 0o644)
	if _, err := loadTelemetryKey(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a readable key: %v", err)
	}
}

// BenchmarkCallTelemetry: one read_file call through the call path with
// traces off (no tracer) and on (a span per call and decision, batched to an
// exporter that discards), alternating per iteration (and which goes
// first) so a shared machine's load falls on both alike; ns/op is the pair.
func BenchmarkCallTelemetry(b *testing.B) {
	var servers [2]*Server
	for i := range servers {
		s, ws := testServer(b, DefaultTools()[0])
		if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("x", 4096)), 0o644); err != nil {
			b.Fatal(err)
		}
		servers[i] = s
	}
	servers[1].tel = telemetry.New(telemetry.Options{Exporter: discard{}, HashKey: []byte("k")})
	defer servers[1].tel.Shutdown(context.Background())
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_file"
	req.Params.RawArguments = json.RawMessage(`{"path":"f.txt"}`)
	req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	var spent [2]time.Duration
	b.ReportAllocs()
	flip := 0
	for b.Loop() {
		flip ^= 1 // the first call of a pair is the slower one: take turns
		for j := range servers {
			i := j ^ flip
			s := servers[i]
			ctx := s.withCallMeta(context.Background(), json.RawMessage(`1`), "pipe", nil)
			start := time.Now()
			res := s.call(ctx, s.tools[0], req)
			spent[i] += time.Since(start)
			if res.IsError {
				b.Fatal(res.Content)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(spent[0].Nanoseconds())/n/1e3, "off-µs/call")
	b.ReportMetric(float64(spent[1].Nanoseconds())/n/1e3, "on-µs/call")
}

// discard is an exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// TestIngressTraceContext: the strict ingress lets the W3C trace context in
// params._meta through, and refuses it twice (which value parents the span
// would be ambiguous).
func TestIngressTraceContext(t *testing.T) {
	s, _ := testServer(t, DefaultTools()[0])
	const tp = `"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`
	for _, tc := range []struct {
		meta string
		pass bool
	}{
		{`{` + tp + `,"tracestate":"rojo=00f067aa0ba902b7"}`, true},
		{`{` + tp + `,` + tp + `}`, false},
		{`{` + tp + `,"Traceparent":"x"}`, true}, // another key: read by no one (the carrier reads exact names)
	} {
		msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"},"_meta":` + tc.meta + `}}`
		if ok := s.admit("test", []byte(msg)).msg != nil; ok != tc.pass {
			t.Errorf("_meta %s: admitted %v, want %v", tc.meta, ok, tc.pass)
		}
	}
}

// tracedHTTP serves read_file (with f.txt in the workspace) over HTTP on
// 127.0.0.1 with traces going to the returned exporter; stop ends the
// server and waits for it.
func tracedHTTP(t *testing.T) (exp *tracetest.InMemoryExporter, url string, stop func()) {
	t.Helper()
	s, ws := testServer(t, fstools.ReadFile{})
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("hi\n"), 0o644)
	exp = tracetest.NewInMemoryExporter()
	s.tel = telemetry.New(telemetry.Options{Exporter: exp, Sync: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeHTTP(ctx, ln, HTTPOptions{Token: testToken, Loopback: true}) }()
	return exp, "http://" + ln.Addr().String() + "/mcp", func() { cancel(); <-served }
}

// TestHTTPCallSpans: over HTTP, in both eras, the call's span has the
// JSON-RPC id the guard read, transport tcp, the protocol version of the
// request and the parent from _meta.
func TestHTTPCallSpans(t *testing.T) {
	for _, modern := range []bool{false, true} {
		exp, url, stop := tracedHTTP(t)
		c := connect(t, url, modern)
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "read_file", map[string]any{"path": "f.txt"}
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
		res, err := c.CallTool(context.Background(), req)
		c.Close()
		stop()
		if err != nil || res.IsError {
			t.Fatalf("modern %v: %v %v", modern, err, res)
		}
		var call tracetest.SpanStub
		for _, sp := range exp.GetSpans() {
			if sp.Name == "tools/call read_file" {
				call = sp
			}
		}
		got := map[string]string{}
		for _, a := range call.Attributes {
			got[string(a.Key)] = a.Value.Emit()
		}
		wantVersion := mcp.ProtocolVersion20251125
		if modern {
			wantVersion = mcp.ProtocolVersion20260728
		}
		if got["jsonrpc.request.id"] == "" || got["network.transport"] != "tcp" || got["mcp.protocol.version"] != wantVersion ||
			call.Parent.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("modern %v: call span %v, parent %v", modern, got, call.Parent)
		}
	}
}

// TestHTTPTraceparentHeader: over HTTP the request's traceparent header is
// the parent of a call whose _meta carries none; a call whose _meta does
// carry one is parented from _meta and links the header's context.
func TestHTTPTraceparentHeader(t *testing.T) {
	const (
		hdrTrace = "0af7651916cd43dd8448eb211c80319c"
		hdrSpan  = "b7ad6b7169203331"
		metaTrac = "4bf92f3577b34da6a3ce929d0e0e4736"
	)
	exp, url, stop := tracedHTTP(t)
	c := connectWithHeaders(t, url, true,
		map[string]string{"traceparent": "00-" + hdrTrace + "-" + hdrSpan + "-01", "tracestate": "congo=t61rcWkgMzE"})
	var calls []tracetest.SpanStub
	for _, meta := range []map[string]any{nil, {"traceparent": "00-" + metaTrac + "-00f067aa0ba902b7-01"}} {
		exp.Reset()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "read_file", map[string]any{"path": "f.txt"}
		if meta != nil {
			req.Params.Meta = &mcp.Meta{AdditionalFields: meta}
		}
		if res, err := c.CallTool(context.Background(), req); err != nil || res.IsError {
			t.Fatalf("call: %v %v", err, res)
		}
		for _, sp := range exp.GetSpans() {
			if sp.Name == "tools/call read_file" {
				calls = append(calls, sp)
			}
		}
	}
	c.Close()
	stop()
	if len(calls) != 2 {
		t.Fatalf("%d call spans", len(calls))
	}
	if p := calls[0].Parent; p.TraceID().String() != hdrTrace || p.SpanID().String() != hdrSpan ||
		p.TraceState().String() != "congo=t61rcWkgMzE" || len(calls[0].Links) != 0 {
		t.Errorf("header only: parent %v, links %v", p, calls[0].Links)
	}
	if p := calls[1].Parent; p.TraceID().String() != metaTrac || len(calls[1].Links) != 1 ||
		calls[1].Links[0].SpanContext.TraceID().String() != hdrTrace || calls[1].Links[0].SpanContext.SpanID().String() != hdrSpan {
		t.Errorf("_meta and header: parent %v, links %v", p, calls[1].Links)
	}
}
