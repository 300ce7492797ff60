package telemetry

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// scopeName is the instrumentation scope of every span.
const scopeName = "github.com/onellm/onellm-mcp/server"

// component is gen_ai.guardrail.component.name: the policy engine deciding.
const component = "onellm-mcp"

// Tracer makes the server's spans. A nil *Tracer is telemetry off: every
// method returns at once.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	// key is the HMAC key for argument hashes; nil: no hashes.
	key []byte
}

// Options build a Tracer.
type Options struct {
	// Exporter receives batches of ended spans (New's OTLP exporter, or
	// the SDK's in-memory one in tests).
	Exporter sdktrace.SpanExporter
	// Sync exports each span as it ends (tests); otherwise spans are
	// batched on a bounded queue, dropped when it is full.
	Sync bool
	// HashKey turns on argument hashes ([telemetry] hash_arguments).
	HashKey []byte
	// Version is service.version.
	Version string
}

// New starts a tracer provider that exports to o.Exporter.
func New(o Options) *Tracer {
	res := resource.NewSchemaless(attribute.String("service.name", "onellm-mcp"), attribute.String("service.version", o.Version))
	proc := sdktrace.NewBatchSpanProcessor(o.Exporter,
		sdktrace.WithMaxQueueSize(2048), sdktrace.WithMaxExportBatchSize(512),
		sdktrace.WithBatchTimeout(2*time.Second), sdktrace.WithExportTimeout(exportTimeout))
	if o.Sync {
		proc = sdktrace.NewSimpleSpanProcessor(o.Exporter)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES still apply: the SDK
	// merges them over this resource.
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(proc),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
	return &Tracer{provider: tp, tracer: tp.Tracer(scopeName, trace.WithInstrumentationVersion(o.Version)), key: o.HashKey}
}

// Shutdown exports what is queued (within ctx) and stops.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// CallInfo is what a tools/call span is made from.
type CallInfo struct {
	Tool string
	// RequestID is the JSON-RPC id as it was sent (a JSON string or number).
	RequestID json.RawMessage
	// ProtocolVersion is the MCP protocol version of the request.
	ProtocolVersion string
	// Transport is "pipe" (stdio) or "tcp" (HTTP), as network.transport.
	Transport string
	// Meta is the request's params._meta (traceparent, tracestate).
	Meta map[string]any
	// Header is the HTTP request's header when the call came over HTTP
	// (nil on stdio): its W3C traceparent/tracestate are the transport's
	// context, the parent only when Meta carries no valid traceparent.
	Header http.Header
	// Args are the call's raw arguments: only ever hashed.
	Args json.RawMessage
}

// Call is one tools/call span; nil when telemetry is off.
type Call struct {
	t    *Tracer
	span trace.Span
	hash string // "" unless hashing
}

// StartCall starts the span of one tool call, parented from the W3C trace
// context in the request's _meta or else in its HTTP headers (see
// parentOf; an invalid one is ignored: the span starts a new trace). The
// returned context carries the span, so the decision, approval and run
// spans made with it are its children.
func (t *Tracer) StartCall(ctx context.Context, ci CallInfo) (context.Context, *Call) {
	if t == nil {
		return ctx, nil
	}
	parent, link := parentOf(ci.Meta, ci.Header)
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	attrs := append(make([]attribute.KeyValue, 0, 8),
		attribute.String("mcp.method.name", "tools/call"),
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", ci.Tool),
	)
	if ci.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", ci.ProtocolVersion))
	}
	if id, ok := requestID(ci.RequestID); ok {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", id))
	}
	if ci.Transport != "" {
		attrs = append(attrs, attribute.String("network.transport", ci.Transport))
	}
	c := &Call{t: t}
	if t.key != nil {
		c.hash = t.argsHash(ci.Args)
		attrs = append(attrs, attribute.String(attrInputHash, c.hash))
	}
	name, kind, with := "tools/call "+ci.Tool, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...)
	if link.IsValid() {
		ctx, c.span = t.tracer.Start(ctx, name, kind, with, trace.WithLinks(trace.Link{SpanContext: link}))
	} else {
		ctx, c.span = t.tracer.Start(ctx, name, kind, with)
	}
	return ctx, c
}

// parentOf picks the remote parent of a call's span. The MCP conventions
// (docs/gen-ai/mcp.md, "Context propagation") say a server uses the
// context in params._meta as the parent and links the ambient (transport)
// context: one HTTP request may carry several MCP messages and one message
// may be retried over several requests. So _meta wins; the HTTP
// traceparent/tracestate headers are the parent only when _meta carries no
// valid traceparent, and otherwise, when they name another span, a link.
// A not-sampled flag in the winner's traceparent is honoured (ParentBased).
func parentOf(meta map[string]any, h http.Header) (parent, link trace.SpanContext) {
	tc := propagation.TraceContext{}
	parent = trace.SpanContextFromContext(tc.Extract(context.Background(), metaCarrier(meta)))
	if h == nil {
		return parent, trace.SpanContext{}
	}
	ambient := trace.SpanContextFromContext(tc.Extract(context.Background(), headerCarrier(h)))
	switch {
	case !parent.IsValid():
		return ambient, trace.SpanContext{}
	case ambient.IsValid() && !ambient.Equal(parent):
		return parent, ambient
	}
	return parent, trace.SpanContext{}
}

// Now is the time, when c records spans (the zero time otherwise: a call
// without telemetry reads no clock for it).
func (c *Call) Now() time.Time {
	if c == nil {
		return time.Time{}
	}
	return time.Now()
}

// attrInputHash is the guardrail conventions' name for a hash of the input
// evaluated: here, of the call's arguments.
const attrInputHash = "gen_ai.guardrail.security.content.input.hash"

// End ends the call's span with its outcome (the /metrics vocabulary: ok,
// tool_error, refused, invalid_arguments, input_required, audit_failure).
// A result that is an error sets error.type "tool_error", as the MCP
// conventions say for isError results, and the span's status; the status
// text is the outcome, never the result's text.
func (c *Call) End(outcome string, isError bool) {
	if c == nil {
		return
	}
	c.span.SetAttributes(attribute.String("onellm.outcome", outcome))
	if isError {
		c.span.SetAttributes(attribute.String("error.type", "tool_error"))
		c.span.SetStatus(codes.Error, outcome)
	}
	c.span.End()
}

// Decided records the decisions of a call made before it runs: asked is
// what the policy said (DecideAll), settled the same decisions after a
// person's answer (equal to asked when none was needed). Each gets a
// run_guardrail span over [start, end].
func (c *Call) Decided(ctx context.Context, profile string, asked, settled []grants.Decision, start, end time.Time) {
	if c == nil {
		return
	}
	for i, d := range asked {
		final := d
		if i < len(settled) {
			final = settled[i]
		}
		c.t.decision(ctx, profile, d, final, "", c.hash, start, end)
	}
}

// Decided records one decision made while a call runs (a program the
// command executes, a redirect's hop), as a child of the span in ctx.
func (t *Tracer) Decided(ctx context.Context, profile string, asked, final grants.Decision, stage string, start time.Time) {
	if t == nil || !trace.SpanFromContext(ctx).SpanContext().IsValid() {
		return
	}
	t.decision(ctx, profile, asked, final, stage, "", start, time.Now())
}

func (t *Tracer) decision(ctx context.Context, profile string, asked, final grants.Decision, stage, hash string, start, end time.Time) {
	attrs := append(make([]attribute.KeyValue, 0, 17),
		attribute.String("gen_ai.operation.name", "run_guardrail"),
		attribute.String("gen_ai.guardrail.component.name", component),
		attribute.String("gen_ai.guardrail.target.type", "input"),
		attribute.String("gen_ai.guardrail.target.subtype", "tool_call"),
		attribute.String("gen_ai.guardrail.verdict.type", verdictType(asked.Effect)),
		attribute.String("gen_ai.guardrail.verdict.code", string(asked.Reason)),
		attribute.String("gen_ai.guardrail.action.type", actionType(final.Effect)),
		attribute.String("gen_ai.guardrail.security.policy.id", profile),
		attribute.String("onellm.capability", string(final.Request.Capability)),
		attribute.String("onellm.reason_code", string(final.Reason)),
		attribute.String("onellm.risk_level", final.Request.Risk.String()),
	)
	if final.RuleID != "" {
		attrs = append(attrs, attribute.String("gen_ai.guardrail.security.policy.rule.id", final.RuleID))
	}
	if final.Effect != grants.Allow {
		// Conditionally required when the verdict is not allow: the
		// reason code, which is low-cardinality and holds no call text.
		attrs = append(attrs, attribute.String("gen_ai.guardrail.verdict.reason", string(final.Reason)))
	}
	if s := final.Request.Surface; s != grants.SurfaceNone {
		attrs = append(attrs, attribute.String("onellm.execution_surface", string(s)))
	}
	if stage != "" {
		attrs = append(attrs, attribute.String("onellm.stage", stage))
	}
	if hash != "" {
		attrs = append(attrs, attribute.String(attrInputHash, hash))
	}
	_, span := t.tracer.Start(ctx, "run_guardrail "+component, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	span.End(trace.WithTimestamp(end))
}

// verdictType maps the policy's effect to gen_ai.guardrail.verdict.type.
func verdictType(e grants.Effect) string {
	switch e {
	case grants.Allow:
		return "allow"
	case grants.Ask:
		return "escalate"
	}
	return "deny"
}

// actionType maps the enforced effect to gen_ai.guardrail.action.type.
func actionType(e grants.Effect) string {
	switch e {
	case grants.Allow:
		return "allow"
	case grants.Ask:
		return "escalate" // the call waits for a person's answer (input_required)
	}
	return "block"
}

// Span is a child span of a call (an approval wait, a command run); nil
// when telemetry is off.
type Span struct{ span trace.Span }

// StartApproval starts the span of a wait for a person's answer.
func (c *Call) StartApproval(ctx context.Context) *Span {
	if c == nil {
		return nil
	}
	_, s := c.t.tracer.Start(ctx, "approval", trace.WithSpanKind(trace.SpanKindInternal))
	return &Span{span: s}
}

// EndApproval ends an approval span with the answer's reason code and
// channel; pending is set when the client answers in a retry
// (input_required) rather than now.
func (s *Span) EndApproval(reason grants.Reason, channel string, pending bool) {
	if s == nil {
		return
	}
	if pending {
		s.span.SetAttributes(attribute.Bool("onellm.approval.pending", true))
	} else {
		s.span.SetAttributes(attribute.String("onellm.reason_code", string(reason)))
	}
	if channel != "" {
		s.span.SetAttributes(attribute.String("onellm.approval.channel", channel))
	}
	s.span.End()
}

// StartRun starts the span of a command's run on surface (sandbox or
// host); the returned context parents what the run decides.
func (c *Call) StartRun(ctx context.Context, surface grants.Surface) (context.Context, *Span) {
	if c == nil {
		return ctx, nil
	}
	ctx, s := c.t.tracer.Start(ctx, string(surface)+" run", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("onellm.execution_surface", string(surface))))
	return ctx, &Span{span: s}
}

// EndRun ends a run span with the command's result (ok, failed, not_run)
// and, when the sandbox reported it, the moment the command was running
// (an event "command started", start-up time in onellm.sandbox.start_seconds).
func (s *Span) EndRun(result string, started time.Time, startup time.Duration) {
	if s == nil {
		return
	}
	s.span.SetAttributes(attribute.String("onellm.command.result", result))
	if startup > 0 {
		s.span.AddEvent("command started", trace.WithTimestamp(started.Add(startup)),
			trace.WithAttributes(attribute.Float64("onellm.sandbox.start_seconds", startup.Seconds())))
	}
	s.span.End()
}

// argsHash is "hmac-sha256:" and the hex HMAC of the canonical arguments
// (toolkit.CanonicalArguments: the form approvals bind).
func (t *Tracer) argsHash(raw json.RawMessage) string {
	m := hmac.New(sha256.New, t.key)
	m.Write(toolkit.CanonicalArguments(raw))
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// requestID is jsonrpc.request.id: a string id unquoted, a number as
// written; none for a missing or null id.
func requestID(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
		return "", false
	}
	return string(raw), true
}

// metaCarrier reads traceparent and tracestate from params._meta: string
// values only, under their unprefixed W3C names (SEP-414). Nothing else of
// _meta is read.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	if key != "traceparent" && key != "tracestate" {
		return ""
	}
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(string, string) {}

func (m metaCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// headerCarrier reads the W3C trace context of an HTTP request: a
// traceparent sent more than once is no traceparent (W3C Trace Context
// allows one; a client or proxy that sends two is not guessed between),
// and several tracestate fields are one list (RFC 9110 field combining),
// whose bad members the propagator drops.
type headerCarrier http.Header

func (h headerCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		if v := http.Header(h).Values("Traceparent"); len(v) == 1 {
			return v[0]
		}
	case "tracestate":
		return strings.Join(http.Header(h).Values("Tracestate"), ",")
	}
	return ""
}

func (h headerCarrier) Set(string, string) {}

func (h headerCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }
