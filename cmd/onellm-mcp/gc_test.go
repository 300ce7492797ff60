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

// TestIdleWatch: memory is released once each time calls stop (the first
// tick after a busy one that finds no new call), never while calls keep
// coming, and not again while the server stays idle.
func TestIdleWatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		// start is the count when the watch starts (start-up released);
		// ticks the count each tick finds, want whether it releases.
		start uint64
		ticks []uint64
		want  []bool
	}{
		{name: "idle from the start", ticks: []uint64{0, 0}, want: []bool{false, false}},
		{name: "calls, then idle", ticks: []uint64{5, 5, 5}, want: []bool{false, true, false}},
		{name: "calls keep coming", ticks: []uint64{5, 9, 12}, want: []bool{false, false, false}},
		{name: "two busy spells", start: 3, ticks: []uint64{7, 7, 7, 8, 8, 8}, want: []bool{false, true, false, false, true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := idleWatch{seen: tc.start, released: true}
			for i, n := range tc.ticks {
				if got := w.tick(n); got != tc.want[i] {
					t.Errorf("tick %d (count %d): release %v, want %v", i+1, n, got, tc.want[i])
				}
			}
		})
	}
}

// TestReleaseWhenIdle: the loop releases on the tick the watch says, and
// returns when done ends.
func TestReleaseWhenIdle(t *testing.T) {
	tick, done, ran := make(chan time.Time), make(chan struct{}), make(chan struct{})
	counts := make(chan uint64) // what each calls() finds, in turn
	released := make(chan struct{}, 4)
	go func() {
		releaseWhenIdle(done, tick, func() uint64 { return <-counts }, func() { released <- struct{}{} })
		close(ran)
	}()
	counts <- 0 // at the start
	for _, n := range []uint64{
		2, // calls moved
		2, // calls stopped: a release
		2, // still idle: none
	} {
		tick <- time.Time{}
		counts <- n
	}
	select {
	case <-released:
	case <-time.After(10 * time.Second):
		t.Fatal("no release after the calls stopped")
	}
	close(done)
	<-ran
	if len(released) != 0 {
		t.Errorf("%d releases more than one", len(released))
	}
}
