package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
)

// collector is an OTLP/HTTP receiver on 127.0.0.1 that keeps what it is sent.
type collector struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	status  int
}

func newCollector(t *testing.T) *collector {
	c := &collector{status: 200}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.URL.Path != "/v1/traces" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		c.bodies = append(c.bodies, b)
		c.headers = append(c.headers, r.Header.Clone())
		w.WriteHeader(c.status)
		io.WriteString(w, "{}")
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) setStatus(code int) { c.mu.Lock(); c.status = code; c.mu.Unlock() }

// TestExporterJSON: the OTLP JSON encoding a collector reads: hex ids,
// camelCase, enum integers, string-encoded int64s.
func TestExporterJSON(t *testing.T) {
	col := newCollector(t)
	exp := NewExporter(Settings{Endpoint: col.URL + "/v1/traces", Headers: map[string]string{"X-Api-Key": "k1"}}, nil, t.Logf)
	tr := New(Options{Exporter: exp, Sync: true, Version: "v9"})
	ctx, call := tr.StartCall(context.Background(), CallInfo{Tool: "read_file", RequestID: json.RawMessage(`12`),
		Meta: map[string]any{"traceparent": traceParent}, Args: json.RawMessage(`{"path":"` + marker + `"}`)})
	call.Decided(ctx, "strict-production", []grants.Decision{{Effect: grants.Deny, Reason: grants.ReasonMatchedDeny, RuleID: "r1"}},
		nil, time.Now(), time.Now())
	_, run := call.StartRun(ctx, grants.SurfaceSandbox)
	run.EndRun("ok", time.Now(), time.Millisecond)
	call.End("refused", true)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.bodies) != 3 {
		t.Fatalf("%d exports", len(col.bodies))
	}
	if h := col.headers[0]; h.Get("Content-Type") != "application/json" || h.Get("X-Api-Key") != "k1" {
		t.Errorf("headers %v", h)
	}
	var got struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []struct {
					Key   string
					Value map[string]any
				}
			}
			ScopeSpans []struct {
				Scope struct{ Name, Version string }
				Spans []struct {
					TraceID, SpanID, ParentSpanID, Name string
					Kind, Flags                         int
					StartTimeUnixNano, EndTimeUnixNano  string
					Attributes                          []struct {
						Key   string
						Value map[string]any
					}
					Events []struct {
						TimeUnixNano, Name string
						Attributes         []struct {
							Key   string
							Value map[string]any
						}
					}
					Status struct {
						Code    int
						Message string
					}
				}
			}
		}
	}
	var all string
	for _, b := range col.bodies {
		all += string(b)
	}
	if strings.Contains(all, marker) {
		t.Errorf("argument text exported: %s", all)
	}
	// Last export: the call span (it ends last).
	dec := json.NewDecoder(strings.NewReader(string(col.bodies[2])))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v: %s", err, col.bodies[2])
	}
	rs := got.ResourceSpans[0]
	if rs.Resource.Attributes[0].Key == "" || len(rs.ScopeSpans) != 1 || rs.ScopeSpans[0].Scope.Name != scopeName || rs.ScopeSpans[0].Scope.Version != "v9" {
		t.Errorf("resource/scope: %+v", rs)
	}
	sp := rs.ScopeSpans[0].Spans[0]
	hex32, hex16, num := regexp.MustCompile(`^[0-9a-f]{32}$`), regexp.MustCompile(`^[0-9a-f]{16}$`), regexp.MustCompile(`^[1-9][0-9]{15,}$`)
	if !hex32.MatchString(sp.TraceID) || sp.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || !hex16.MatchString(sp.SpanID) || sp.ParentSpanID != "00f067aa0ba902b7" {
		t.Errorf("ids: %+v", sp)
	}
	if sp.Kind != 2 || !num.MatchString(sp.StartTimeUnixNano) || !num.MatchString(sp.EndTimeUnixNano) || sp.Status.Code != 2 || sp.Status.Message != "refused" {
		t.Errorf("span: %+v", sp)
	}
	found := false
	for _, a := range sp.Attributes {
		if a.Key == "jsonrpc.request.id" && a.Value["stringValue"] == "12" {
			found = true
		}
	}
	if !found {
		t.Errorf("attributes: %+v", sp.Attributes)
	}
	// The run span's event carries a double; the decision span is internal (1).
	if !strings.Contains(string(col.bodies[1]), `"doubleValue":0.001`) || !strings.Contains(string(col.bodies[0]), `"kind":1`) {
		t.Errorf("run/decision exports: %s\n%s", col.bodies[1], col.bodies[0])
	}
}

// TestExporterFailures: a failed export is an error, said once per streak;
// a redirect is not followed.
func TestExporterFailures(t *testing.T) {
	col := newCollector(t)
	var logs []string
	logf := func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }
	exp := NewExporter(Settings{Endpoint: col.URL + "/v1/traces"}, nil, logf)
	tr := New(Options{Exporter: exp, Sync: true})
	one := func() {
		_, call := tr.StartCall(context.Background(), CallInfo{Tool: "t"})
		call.End("ok", false)
	}
	col.setStatus(503)
	one()
	one()
	col.setStatus(200)
	one()
	if len(logs) != 2 || !strings.Contains(logs[0], "503") || !strings.Contains(logs[1], "again") {
		t.Errorf("logs: %q", logs)
	}

	elsewhere := newCollector(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/v1/traces", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	rexp := NewExporter(Settings{Endpoint: redirect.URL + "/v1/traces"}, nil, nil)
	if err := rexp.post(context.Background(), []byte(`{}`)); err == nil || len(elsewhere.bodies) != 0 {
		t.Errorf("redirect followed: err %v, %d bodies elsewhere", err, len(elsewhere.bodies))
	}
}
