//go:build linux

package sandbox

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkReadExecEvent: the tracer's reads for one exec stop (the /proc
// entries and the new stack), again and again on one process stopped at
// its exec: what an exec costs the helper beside the stops themselves and
// the round trip to the server (a new pid's /proc entries cost more: they
// are cold).
// thread-cpu-ns/op is the reading thread's own CPU time, which the load of
// a shared machine disturbs far less than wall time.
func BenchmarkReadExecEvent(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid := stoppedAtExec(b, "/usr/bin/sleep", []string{"sleep", "60"}, []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LC_ALL=C"})
	var buf readBuf
	facts := execFacts{places: findWritablePlaces([]string{b.TempDir()}, nil), sizes: map[int64]bool{}}
	var t0, t1 unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
	n := 0
	for b.Loop() {
		if ev := readExecEvent(pid, &facts, &buf); ev.Problem != "" {
			b.Fatal(ev.Problem)
		}
		n++
	}
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1)
	b.ReportMetric(float64(t1.Nano()-t0.Nano())/float64(n), "thread-cpu-ns/op")
}
