package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// otlpReceiver is an OTLP/HTTP collector on 127.0.0.1: it keeps the spans
// of every JSON export it is sent.
type otlpReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	raw    []string
	spans  []otlpSpan
	notify chan struct{}
}

type otlpSpan struct {
	TraceID, SpanID, ParentSpanID, Name string
	Kind                                int
	Attributes                          []otlpKV
	Events                              []struct {
		Name       string
		Attributes []otlpKV
	}
	Status struct{ Code int }
}

type otlpKV struct {
	Key   string
	Value map[string]any
}

func (s otlpSpan) attr(k string) string {
	for _, a := range s.Attributes {
		if a.Key == k {
			return fmt.Sprint(a.Value["stringValue"])
		}
	}
	return ""
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{notify: make(chan struct{}, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST to /v1/traces", http.StatusBadRequest)
			return
		}
		var body struct {
			ResourceSpans []struct {
				ScopeSpans []struct{ Spans []otlpSpan }
			}
		}
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.raw = append(r.raw, string(b))
		for _, rs := range body.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		r.notify <- struct{}{}
		io.WriteString(w, "{}")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// waitFor waits until n spans named name have arrived.
func (r *otlpReceiver) waitFor(t *testing.T, name string, n int) []otlpSpan {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		var got []otlpSpan
		for _, s := range r.spans {
			if s.Name == name {
				got = append(got, s)
			}
		}
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("%d %q spans arrived, want %d", len(got), name, n)
		}
	}
}

// TestOpenTelemetryTraces: the real binary over stdio exports its spans to
// an OTLP/HTTP collector named by [telemetry] otlp_endpoint, parented from
// each request's _meta.traceparent, with argument hashes and no argument
// text.
func TestOpenTelemetryTraces(t *testing.T) {
	const marker = "MARKER-e2e-5d1"
	rcv := newOTLPReceiver(t)
	f := newFixture(t, fmt.Sprintf("profile = \"interactive-dev\"\n[telemetry]\notlp_endpoint = %q\nhash_arguments = true\n", rcv.srv.URL))
	f.write(t, marker+".txt", "hello\n")
	outside := f.write(t, filepath.Join(f.Root, marker+"-outside.txt"), "outside\n")
	c := stdioClient(t, f, Legacy) // declares no elicitation: the outside read is refused
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": marker + ".txt"}},
		{"execute_terminal_command", map[string]any{"command": "echo " + marker}},
		{"read_file", map[string]any{"path": outside}},
	}
	for i, tc := range calls {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tc.tool, tc.args
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{
			"traceparent": fmt.Sprintf("00-%s-%016x-01", traceID, i+1), "tracestate": "vendor=" + fmt.Sprint(i)}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := c.CallTool(ctx, req)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if (i == 2) != res.IsError {
			t.Fatalf("%s: %s", tc.tool, text(res))
		}
	}
	c.Close() // the server ends and flushes what is queued

	reads := rcv.waitFor(t, "tools/call read_file", 2)
	cmds := rcv.waitFor(t, "tools/call execute_terminal_command", 1)
	runs := rcv.waitFor(t, "sandbox run", 1)
	decisions := rcv.waitFor(t, "run_guardrail onellm-mcp", 3)
	byParent := map[string]otlpSpan{}
	for _, s := range append(reads, cmds...) {
		byParent[s.ParentSpanID] = s
		if s.TraceID != traceID || s.Kind != 2 || s.attr("mcp.method.name") != "tools/call" || s.attr("gen_ai.operation.name") != "execute_tool" ||
			s.attr("mcp.protocol.version") != "2025-11-25" || s.attr("jsonrpc.request.id") == "" || s.attr("network.transport") != "pipe" ||
			!strings.HasPrefix(s.attr("gen_ai.guardrail.security.content.input.hash"), "hmac-sha256:") {
			t.Errorf("call span: %+v", s)
		}
	}
	refused, ok := byParent[fmt.Sprintf("%016x", 3)]
	if !ok || refused.attr("error.type") != "tool_error" || refused.attr("onellm.outcome") != "refused" || refused.Status.Code != 2 {
		t.Errorf("the refused call's span: %+v (parents %v)", refused, byParent)
	}
	cmd := cmds[0]
	if cmd.ParentSpanID != fmt.Sprintf("%016x", 2) || runs[0].ParentSpanID != cmd.SpanID || len(runs[0].Events) != 1 || runs[0].Events[0].Name != "command started" {
		t.Errorf("command span %+v, run span %+v", cmd, runs[0])
	}
	denied := false
	for _, d := range decisions {
		denied = denied || (d.attr("gen_ai.guardrail.action.type") == "block" && d.attr("onellm.reason_code") == "approval_unavailable" &&
			d.attr("gen_ai.guardrail.verdict.type") == "escalate")
	}
	if !denied {
		t.Errorf("no blocked decision span for the refused read: %+v", decisions)
	}
	rcv.mu.Lock()
	all := strings.Join(rcv.raw, "\n")
	rcv.mu.Unlock()
	if strings.Contains(all, marker) || strings.Contains(all, f.Workspace) {
		t.Errorf("argument text or a path was exported: %s", all)
	}
	fi, err := os.Stat(filepath.Join(f.Root, ".local", "state", "onellm-mcp", "telemetry.key"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("telemetry key: %v %v", fi, err)
	}
}
