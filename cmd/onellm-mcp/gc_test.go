package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestSetGCTarget: stdio and HTTP get their targets; a GOGC or GOMEMLIMIT
// the host set is left alone.
func TestSetGCTarget(t *testing.T) {
	gogc0, limit0 := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(gogc0); debug.SetMemoryLimit(limit0) })
	for _, tc := range []struct {
		name  string
		http  bool
		env   map[string]string
		gogc  int
		limit int64
	}{
		{name: "stdio", gogc: 400, limit: 14 << 20},
		{name: "http", http: true, gogc: 400, limit: 512 << 20},
		{name: "host GOGC", env: map[string]string{"GOGC": "50"}, gogc: 77, limit: 14 << 20},
		{name: "host GOMEMLIMIT", http: true, env: map[string]string{"GOMEMLIMIT": "1GiB"}, gogc: 400, limit: math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(77) // what a host's GOGC would have set
			debug.SetMemoryLimit(math.MaxInt64)
			setGCTarget(tc.http, func(k string) string { return tc.env[k] })
			if got := debug.SetGCPercent(77); got != tc.gogc {
				t.Errorf("GOGC %d, want %d", got, tc.gogc)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.limit {
				t.Errorf("memory limit %d, want %d", got, tc.limit)
			}
		})
	}
}
