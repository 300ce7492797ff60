package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestStdioProcs: stdio runs on one processor unless the host set
// GOMAXPROCS; HTTP keeps the default.
func TestStdioProcs(t *testing.T) {
	for _, tc := range []struct {
		name string
		http bool
		env  map[string]string
		want int
	}{
		{name: "stdio", want: 1},
		{name: "http", http: true, want: 0},
		{name: "host GOMAXPROCS", env: map[string]string{"GOMAXPROCS": "4"}, want: 0},
		{name: "host GOMAXPROCS, http", http: true, env: map[string]string{"GOMAXPROCS": "4"}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stdioProcs(tc.http, func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("GOMAXPROCS %d, want %d (0: left)", got, tc.want)
			}
		})
	}
}

// TestSetGCTarget: stdio and HTTP get their targets; a GOGC or GOMEMLIMIT
// the host set is left alone.
func TestSetGCTarget(t *testing.T) {
	gogc0, limit0 := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(gogc0); debug.SetMemoryLimit(limit0) })
	for _, tc := range []struct {
		name    string
		http    bool
		env     map[string]string
		gogc    int
		limit   int64
		atLeast bool // the stdio limit follows the live heap: at least the floor
	}{
		{name: "stdio", gogc: 400, limit: stdioMemoryFloor, atLeast: true},
		{name: "http", http: true, gogc: 400, limit: 512 << 20},
		{name: "host GOGC", env: map[string]string{"GOGC": "50"}, gogc: 77, limit: stdioMemoryFloor, atLeast: true},
		{name: "host GOMEMLIMIT", http: true, env: map[string]string{"GOMEMLIMIT": "1GiB"}, gogc: 400, limit: math.MaxInt64},
		{name: "host GOMEMLIMIT, stdio", env: map[string]string{"GOMEMLIMIT": "1GiB"}, gogc: 400, limit: math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(77) // what a host's GOGC would have set
			debug.SetMemoryLimit(math.MaxInt64)
			setGCTarget(tc.http, func(k string) string { return tc.env[k] })
			if got := debug.SetGCPercent(77); got != tc.gogc {
				t.Errorf("GOGC %d, want %d", got, tc.gogc)
			}
			got := debug.SetMemoryLimit(-1)
			if (tc.atLeast && (got < tc.limit || got == math.MaxInt64)) || (!tc.atLeast && got != tc.limit) {
				t.Errorf("memory limit %d, want %d (at least: %v)", got, tc.limit, tc.atLeast)
			}
		})
	}
}

// TestFollowLimit: what is held besides objects, plus what is live, plus
// the headroom, never under the floor; negative figures (a torn read)
// count as zero.
func TestFollowLimit(t *testing.T) {
	for _, tc := range []struct{ floor, live, other, want int64 }{
		{14 << 20, 0, 0, 14 << 20},
		{14 << 20, 3 << 20, 4 << 20, 14 << 20},
		{14 << 20, 5 << 20, 8 << 20, 15 << 20},
		{1, 10, -5, 10 + followHeadroom},
		{1, -3, 7, 7 + followHeadroom},
	} {
		if got := followLimit(tc.floor, tc.live, tc.other); got != tc.want {
			t.Errorf("followLimit(%d, %d, %d) = %d, want %d", tc.floor, tc.live, tc.other, got, tc.want)
		}
	}
}

// TestHeapFollowerFollows: after a collection with a large live heap the
// limit is at least that heap plus the headroom (the collector does not
// run without pause);
// once the heap is garbage again the limit comes back to the floor.
//
// An adjustment is made by a finalizer, which may run late (GOMAXPROCS=1,
// a loaded machine): one queued by an earlier collection can run during
// the forced one and report that earlier heap. So next takes only an
// adjustment that read the heap after a collection that finished after
// the call, forcing collections until one comes.
func TestHeapFollowerFollows(t *testing.T) {
	limit0 := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(limit0) })
	type adjustment struct{ limit, cycles int64 }
	limits := make(chan adjustment, 64)
	f := &heapFollower{floor: stdioMemoryFloor, collected: func(l int64) {
		select {
		case limits <- adjustment{l, gcCycles()}:
		default:
		}
	}}
	f.arm()
	t.Cleanup(func() { f.stopped.Store(true) })
	next := func() int64 {
		since := gcCycles()
		deadline := time.Now().Add(10 * time.Second) // a bound on a finalizer that never runs, not a speed target
		for time.Now().Before(deadline) {
			runtime.GC() // completes a cycle that began after since
			select {
			case a := <-limits:
				// Counted after the adjustment read the heap: two more
				// than since means it read at least one cycle after since.
				if a.cycles > since+1 {
					return a.limit
				}
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Fatal("no adjustment after a collection")
		return 0
	}
	held := make([][]byte, 40)
	for i := range held {
		held[i] = make([]byte, 1<<20)
	}
	if l := next(); l < 40<<20+followHeadroom {
		t.Errorf("with 40 MiB live the limit is %d MiB, want at least 40 + the headroom", l>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	next() // the collection that frees them reads the heap before it is swept
	if l := next(); l > 32<<20 {
		t.Errorf("after the heap was freed the limit is %d MiB, want near the floor", l>>20)
	}
}

// gcCycles is the number of completed collections.
func gcCycles() int64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
