// Package metrics keeps the server's counters, gauges and histograms and
// writes them in the Prometheus text exposition format (version 0.0.4) for
// /metrics.
//
// Security model: metrics carry no model-chosen text. Label values are the
// server's own vocabulary (tool names, effects, reason codes, outcomes),
// never paths, commands, hosts or arguments, so a scrape cannot leak what
// a call touched, and label sets stay bounded whatever clients send. The
// endpoint is served behind the same authentication as /mcp (or on its
// own loopback address).
package metrics

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Registry holds metric families in registration order.
type Registry struct {
	mu       sync.Mutex
	families []family
}

type family interface {
	write(w io.Writer)
}

// vec is the labelled series of one family.
type vec[S any] struct {
	name, help, kind string
	labels           []string
	mu               sync.Mutex
	series           map[string]*S
	order            []string
	make             func() *S
}

func (v *vec[S]) with(values []string) *S {
	if len(values) != len(v.labels) {
		panic(fmt.Sprintf("metrics: %s wants %d label values, got %d", v.name, len(v.labels), len(values)))
	}
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	s, ok := v.series[key]
	if !ok {
		s = v.make()
		v.series[key] = s
		v.order = append(v.order, key)
	}
	return s
}

// each calls fn for every series, sorted by label values, under the lock.
func (v *vec[S]) each(fn func(labels string, s *S)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	keys := slices.Clone(v.order)
	slices.Sort(keys)
	for _, k := range keys {
		fn(v.labelText(strings.Split(k, "\xff")), v.series[k])
	}
}

func (v *vec[S]) labelText(values []string) string {
	if len(v.labels) == 0 {
		return ""
	}
	parts := make([]string, len(v.labels))
	for i, l := range v.labels {
		parts[i] = l + `="` + escapeLabel(values[i]) + `"`
	}
	return strings.Join(parts, ",")
}

func (v *vec[S]) header(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", v.name, escapeHelp(v.help), v.name, v.kind)
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func braces(labels string) string {
	if labels == "" {
		return ""
	}
	return "{" + labels + "}"
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func newVec[S any](name, help, kind string, labels []string, mk func() *S) *vec[S] {
	v := &vec[S]{name: name, help: help, kind: kind, labels: labels, series: map[string]*S{}, make: mk}
	return v
}

func (r *Registry) add(f family) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.families = append(r.families, f)
}

// Counter is a family of monotonically increasing counts.
type Counter struct{ v *vec[float64] }

// NewCounter registers a counter with the given label names.
func (r *Registry) NewCounter(name, help string, labels ...string) *Counter {
	c := &Counter{newVec(name, help, "counter", labels, func() *float64 { return new(float64) })}
	r.add(c)
	return c
}

// Add adds n (≥ 0) to the series with these label values.
func (c *Counter) Add(n float64, values ...string) {
	if n < 0 {
		return
	}
	s := c.v.with(values)
	c.v.mu.Lock()
	*s += n
	c.v.mu.Unlock()
}

// Inc adds one.
func (c *Counter) Inc(values ...string) { c.Add(1, values...) }

func (c *Counter) write(w io.Writer) {
	c.v.header(w)
	c.v.each(func(labels string, s *float64) {
		fmt.Fprintf(w, "%s%s %s\n", c.v.name, braces(labels), formatFloat(*s))
	})
}

// Gauge is a family of values that go up and down.
type Gauge struct{ v *vec[float64] }

// NewGauge registers a gauge.
func (r *Registry) NewGauge(name, help string, labels ...string) *Gauge {
	g := &Gauge{newVec(name, help, "gauge", labels, func() *float64 { return new(float64) })}
	r.add(g)
	return g
}

// Add adds n (may be negative).
func (g *Gauge) Add(n float64, values ...string) {
	s := g.v.with(values)
	g.v.mu.Lock()
	*s += n
	g.v.mu.Unlock()
}

func (g *Gauge) write(w io.Writer) {
	g.v.header(w)
	g.v.each(func(labels string, s *float64) {
		fmt.Fprintf(w, "%s%s %s\n", g.v.name, braces(labels), formatFloat(*s))
	})
}

// Histogram is a family of observed distributions (seconds).
type Histogram struct {
	v       *vec[hist]
	buckets []float64
}

type hist struct {
	counts []uint64 // per bucket, not cumulative
	sum    float64
	count  uint64
}

// DefaultSeconds are buckets for durations from a millisecond to minutes.
func DefaultSeconds() []float64 {
	return []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}
}

// NewHistogram registers a histogram with these upper bounds (sorted).
func (r *Registry) NewHistogram(name, help string, buckets []float64, labels ...string) *Histogram {
	buckets = slices.Clone(buckets)
	slices.Sort(buckets)
	h := &Histogram{buckets: buckets}
	h.v = newVec(name, help, "histogram", labels, func() *hist { return &hist{counts: make([]uint64, len(buckets))} })
	r.add(h)
	return h
}

// Observe records one value.
func (h *Histogram) Observe(x float64, values ...string) {
	s := h.v.with(values)
	i, _ := slices.BinarySearch(h.buckets, x)
	h.v.mu.Lock()
	if i < len(s.counts) {
		s.counts[i]++
	}
	s.sum += x
	s.count++
	h.v.mu.Unlock()
}

// Since records the time since start, in seconds.
func (h *Histogram) Since(start time.Time, values ...string) {
	h.Observe(time.Since(start).Seconds(), values...)
}

func (h *Histogram) write(w io.Writer) {
	h.v.header(w)
	h.v.each(func(labels string, s *hist) {
		sep := ""
		if labels != "" {
			sep = ","
		}
		var cum uint64
		for i, b := range h.buckets {
			cum += s.counts[i]
			fmt.Fprintf(w, "%s_bucket{%s%sle=\"%s\"} %d\n", h.v.name, labels, sep, formatFloat(b), cum)
		}
		fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", h.v.name, labels, sep, s.count)
		fmt.Fprintf(w, "%s_sum%s %s\n", h.v.name, braces(labels), formatFloat(s.sum))
		fmt.Fprintf(w, "%s_count%s %d\n", h.v.name, braces(labels), s.count)
	})
}

// WriteText writes every family in the text exposition format.
func (r *Registry) WriteText(w io.Writer) {
	r.mu.Lock()
	fams := slices.Clone(r.families)
	r.mu.Unlock()
	for _, f := range fams {
		f.write(w)
	}
}

// ServeHTTP answers a scrape.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	r.WriteText(w)
}
