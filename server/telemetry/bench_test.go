package telemetry

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/onellm/onellm-mcp/grants"
)

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkCallSpans is what telemetry adds to a call that makes one
// decision: the call span, its decision span, the argument hash, batched
// to an exporter that discards.
func BenchmarkCallSpans(b *testing.B) {
	for _, hash := range []bool{false, true} {
		name := "plain"
		var key []byte
		if hash {
			name, key = "hash_arguments", []byte("k")
		}
		b.Run(name, func(b *testing.B) {
			tr := New(Options{Exporter: discard{}, HashKey: key})
			defer tr.Shutdown(context.Background())
			ci := CallInfo{Tool: "read_file", RequestID: json.RawMessage(`7`), Transport: "pipe", ProtocolVersion: "2025-11-25",
				Meta: map[string]any{"traceparent": traceParent}, Args: json.RawMessage(`{"path":"f.txt"}`)}
			ds := []grants.Decision{decision(grants.Allow, grants.ReasonMatchedAllow, "read")}
			b.ReportAllocs()
			for b.Loop() {
				ctx, call := tr.StartCall(context.Background(), ci)
				now := time.Now()
				call.Decided(ctx, "interactive-dev", ds, ds, now, now)
				call.End("ok", false)
			}
		})
	}
}
