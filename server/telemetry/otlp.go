package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// This is an OTLP/HTTP exporter of our own rather than the SDK's
// otlptracehttp: that one links google.golang.org/protobuf and gRPC, whose
// package initialisers cost every start-up about 0.6 ms (measured with
// GODEBUG=inittrace=1), telemetry on or off. OTLP/HTTP collectors accept
// the JSON encoding (Content-Type application/json) on the same path; see
// the OTLP specification, "JSON Protobuf Encoding": ids in hex, field
// names in lowerCamelCase, enums as integers, 64-bit integers as strings.

// exportTimeout bounds one export (the OTLP default).
const exportTimeout = 10 * time.Second

// maxResponse bounds what is read of a collector's answer.
const maxResponse = 64 << 10

// Doer sends one HTTP request (an *http.Client).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Exporter POSTs batches of spans to an OTLP/HTTP collector as OTLP JSON.
// A failed batch is dropped, not retried: traces are never worth a retry
// storm against a collector that is down, nor memory the server needs.
type Exporter struct {
	url     string
	headers map[string]string
	client  Doer
	logf    func(string, ...any)

	mu      sync.Mutex
	failing bool // the last export failed: a new failure is not said again
}

// NewExporter exports to s.Endpoint with s.Headers; client nil is an
// http.Client with exportTimeout that follows no redirect (a redirect
// would send the spans somewhere the host did not name).
func NewExporter(s Settings, client Doer, logf func(string, ...any)) *Exporter {
	if client == nil {
		client = &http.Client{Timeout: exportTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Exporter{url: s.Endpoint, headers: s.Headers, client: client, logf: logf}
}

// ExportSpans implements sdktrace.SpanExporter. A batch that cannot be
// sent is dropped.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := json.Marshal(encodeSpans(spans))
	if err != nil {
		return fmt.Errorf("telemetry: encoding spans: %w", err)
	}
	err = e.post(ctx, body)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil && !e.failing:
		e.failing = true
		e.logf("telemetry: %d spans dropped: %v (said once until an export succeeds)", len(spans), err)
	case err == nil && e.failing:
		e.failing = false
		e.logf("telemetry: exporting spans again")
	}
	// Said here, once per streak: returned, the SDK would say it again on
	// stderr for every batch.
	return nil
}

func (e *Exporter) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 != 2 {
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return fmt.Errorf("collector answered %s: %q", resp.Status, msg)
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter (nothing is held).
func (e *Exporter) Shutdown(context.Context) error { return nil }

// The OTLP JSON shapes (opentelemetry-proto, trace/v1 and common/v1).
type (
	exportRequest struct {
		ResourceSpans []resourceSpans `json:"resourceSpans"`
	}
	resourceSpans struct {
		Resource   resourceJSON `json:"resource"`
		ScopeSpans []scopeSpans `json:"scopeSpans"`
	}
	resourceJSON struct {
		Attributes []keyValue `json:"attributes"`
	}
	scopeSpans struct {
		Scope scopeJSON  `json:"scope"`
		Spans []spanJSON `json:"spans"`
	}
	scopeJSON struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}
	spanJSON struct {
		TraceID      string      `json:"traceId"`
		SpanID       string      `json:"spanId"`
		TraceState   string      `json:"traceState,omitempty"`
		ParentSpanID string      `json:"parentSpanId,omitempty"`
		Flags        uint32      `json:"flags,omitempty"`
		Name         string      `json:"name"`
		Kind         int         `json:"kind"`
		Start        string      `json:"startTimeUnixNano"`
		End          string      `json:"endTimeUnixNano"`
		Attributes   []keyValue  `json:"attributes,omitempty"`
		Events       []eventJSON `json:"events,omitempty"`
		Links        []linkJSON  `json:"links,omitempty"`
		Status       statusJSON  `json:"status"`
	}
	eventJSON struct {
		Time       string     `json:"timeUnixNano"`
		Name       string     `json:"name"`
		Attributes []keyValue `json:"attributes,omitempty"`
	}
	linkJSON struct {
		TraceID    string     `json:"traceId"`
		SpanID     string     `json:"spanId"`
		TraceState string     `json:"traceState,omitempty"`
		Attributes []keyValue `json:"attributes,omitempty"`
	}
	statusJSON struct {
		Code    int    `json:"code,omitempty"`
		Message string `json:"message,omitempty"`
	}
	keyValue struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	anyValue struct {
		String *string     `json:"stringValue,omitempty"`
		Bool   *bool       `json:"boolValue,omitempty"`
		Int    *string     `json:"intValue,omitempty"`
		Double *float64    `json:"doubleValue,omitempty"`
		Array  *arrayValue `json:"arrayValue,omitempty"`
	}
	arrayValue struct {
		Values []anyValue `json:"values"`
	}
)

// encodeSpans groups spans by resource and scope, in the order they came.
func encodeSpans(spans []sdktrace.ReadOnlySpan) exportRequest {
	var req exportRequest
	resources := map[string]int{}
	type scopeKey struct {
		res           int
		name, version string
	}
	scopes := map[scopeKey]int{}
	for _, s := range spans {
		res := s.Resource()
		ri, ok := resources[res.String()]
		if !ok {
			req.ResourceSpans = append(req.ResourceSpans, resourceSpans{Resource: resourceJSON{Attributes: keyValues(res.Attributes())}})
			ri = len(req.ResourceSpans) - 1
			resources[res.String()] = ri
		}
		rs := &req.ResourceSpans[ri]
		sc := s.InstrumentationScope()
		k := scopeKey{ri, sc.Name, sc.Version}
		si, ok := scopes[k]
		if !ok {
			rs.ScopeSpans = append(rs.ScopeSpans, scopeSpans{Scope: scopeJSON{Name: sc.Name, Version: sc.Version}})
			si = len(rs.ScopeSpans) - 1
			scopes[k] = si
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, encodeSpan(s))
	}
	return req
}

func encodeSpan(s sdktrace.ReadOnlySpan) spanJSON {
	sc := s.SpanContext()
	out := spanJSON{
		TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(),
		TraceState: sc.TraceState().String(), Flags: uint32(sc.TraceFlags()),
		Name: s.Name(), Kind: int(s.SpanKind()), // trace.SpanKind numbers are OTLP's
		Start: unixNano(s.StartTime()), End: unixNano(s.EndTime()),
		Attributes: keyValues(s.Attributes()),
	}
	if p := s.Parent(); p.IsValid() {
		out.ParentSpanID = p.SpanID().String()
		if p.IsRemote() {
			out.Flags |= 0x300 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | IS_REMOTE
		} else {
			out.Flags |= 0x100
		}
	}
	for _, ev := range s.Events() {
		out.Events = append(out.Events, eventJSON{Time: unixNano(ev.Time), Name: ev.Name, Attributes: keyValues(ev.Attributes)})
	}
	for _, l := range s.Links() {
		out.Links = append(out.Links, linkJSON{TraceID: l.SpanContext.TraceID().String(),
			SpanID: l.SpanContext.SpanID().String(), TraceState: l.SpanContext.TraceState().String(),
			Attributes: keyValues(l.Attributes)})
	}
	switch st := s.Status(); st.Code {
	case codes.Ok:
		out.Status = statusJSON{Code: 1}
	case codes.Error:
		out.Status = statusJSON{Code: 2, Message: st.Description}
	}
	return out
}

func unixNano(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

func keyValues(attrs []attribute.KeyValue) []keyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]keyValue, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, keyValue{Key: string(a.Key), Value: encodeValue(a.Value)})
	}
	return out
}

func encodeValue(v attribute.Value) anyValue {
	switch v.Type() {
	case attribute.BOOL:
		b := v.AsBool()
		return anyValue{Bool: &b}
	case attribute.INT64:
		s := strconv.FormatInt(v.AsInt64(), 10)
		return anyValue{Int: &s}
	case attribute.FLOAT64:
		f := v.AsFloat64()
		return anyValue{Double: &f}
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE:
		var vals []anyValue
		switch v.Type() {
		case attribute.BOOLSLICE:
			for _, x := range v.AsBoolSlice() {
				vals = append(vals, encodeValue(attribute.BoolValue(x)))
			}
		case attribute.INT64SLICE:
			for _, x := range v.AsInt64Slice() {
				vals = append(vals, encodeValue(attribute.Int64Value(x)))
			}
		case attribute.FLOAT64SLICE:
			for _, x := range v.AsFloat64Slice() {
				vals = append(vals, encodeValue(attribute.Float64Value(x)))
			}
		default:
			for _, x := range v.AsStringSlice() {
				vals = append(vals, encodeValue(attribute.StringValue(x)))
			}
		}
		return anyValue{Array: &arrayValue{Values: vals}}
	}
	s := v.Emit()
	return anyValue{String: &s}
}
