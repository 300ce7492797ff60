//go:build linux

package sandbox

import (
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkReadExecEvent: the tracer's /proc reads for one exec stop, on
// a live process (not stopped, same reads): what an exec costs the helper
// beside the stops themselves and the round trip to the server.
// thread-cpu-ns/op is the reading thread's own CPU time, which the load of
// a shared machine disturbs far less than wall time.
func BenchmarkReadExecEvent(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command("/usr/bin/sleep", "60")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var buf readBuf
	facts := execFacts{places: findWritablePlaces([]string{b.TempDir()}, nil), sizes: map[int64]bool{}}
	var t0, t1 unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
	n := 0
	for b.Loop() {
		if ev := readExecEvent(cmd.Process.Pid, &facts, &buf); ev.Problem != "" {
			b.Fatal(ev.Problem)
		}
		n++
	}
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1)
	b.ReportMetric(float64(t1.Nano()-t0.Nano())/float64(n), "thread-cpu-ns/op")
}
