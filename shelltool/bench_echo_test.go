package shelltool

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// BenchmarkToolEcho is `echo hi` through the tool's Plan and Run, the
// sandbox and its warm helper included, without the server's decision and
// audit or the transport: the server-side share of a command's path
// (profile it with -cpuprofile; the helper runs in its own processes).
// server-cpu-us/op is this process's processor time per command (the
// helpers' start, the tool's and the sandbox's work on this side).
func BenchmarkToolEcho(b *testing.B) {
	f := newFixture(b, `profile = "interactive-dev"`)
	g := &allowAll{}
	env := envFor(f, g)
	raw := []byte(`{"command":"echo hi"}`)
	ctx := context.Background()
	cpu0 := selfCPU(b)
	for b.Loop() {
		plan, err := f.tool.Plan(ctx, env, raw)
		if err != nil {
			b.Fatal(err)
		}
		res := plan.Run(ctx, grantAll(plan))
		if res.Tool.IsError {
			b.Fatal(text(res.Tool))
		}
	}
	b.ReportMetric(float64((selfCPU(b)-cpu0).Microseconds())/float64(b.N), "server-cpu-us/op")
}

// selfCPU is this process's user and system time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
