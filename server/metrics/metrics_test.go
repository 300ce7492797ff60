package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestTextFormat(t *testing.T) {
	r := &Registry{}
	c := r.NewCounter("calls_total", "Calls.\nSecond line.", "tool", "outcome")
	g := r.NewGauge("pending", "Pending.")
	h := r.NewHistogram("wait_seconds", "Wait.", []float64{1, 0.1}, "reason")
	c.Inc("read_file", "ok")
	c.Add(2, "read_file", "ok")
	c.Inc("apply_patch", `we"ird\`+"\n")
	c.Add(-5, "read_file", "ok") // ignored: counters only go up
	g.Add(3)
	g.Add(-1)
	h.Observe(0.05, "approved")
	h.Observe(0.5, "approved")
	h.Observe(7, "approved")
	var b strings.Builder
	r.WriteText(&b)
	want := `# HELP calls_total Calls.\nSecond line.
# TYPE calls_total counter
calls_total{tool="apply_patch",outcome="we\"ird\\\n"} 1
calls_total{tool="read_file",outcome="ok"} 3
# HELP pending Pending.
# TYPE pending gauge
pending 2
# HELP wait_seconds Wait.
# TYPE wait_seconds histogram
wait_seconds_bucket{reason="approved",le="0.1"} 1
wait_seconds_bucket{reason="approved",le="1"} 2
wait_seconds_bucket{reason="approved",le="+Inf"} 3
wait_seconds_sum{reason="approved"} 7.55
wait_seconds_count{reason="approved"} 3
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestConcurrentCounts(t *testing.T) {
	s := NewServer()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				s.Calls.Inc("read_file", "ok")
				s.CommandDuration.Observe(0.01, "ok")
			}
		}()
	}
	wg.Wait()
	rec := httptest.NewRecorder()
	s.Registry.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, line := range []string{`onellm_tool_calls_total{tool="read_file",outcome="ok"} 8000`, `onellm_command_duration_seconds_count{result="ok"} 8000`} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("missing %q in\n%s", line, body)
		}
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
}

func TestWrongLabelCountPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a wrong label count")
		}
	}()
	(&Registry{}).NewCounter("x", "x", "a").Inc()
}

func BenchmarkCounterInc(b *testing.B) {
	s := NewServer()
	for b.Loop() {
		s.Calls.Inc("read_file", "ok")
	}
}
