//go:build linux

package sandbox

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

func BenchmarkZZGated(b *testing.B) {
	dir := b.TempDir()
	s := Spec{Command: "for i in $(seq 200); do /bin/true; done", Dir: dir, Writable: []string{dir}, Env: []string{"PATH=/usr/bin:/bin"}}
	if os.Getenv("ZZ_PLAIN") == "" {
		s.ExecGate = func(ExecEvent) bool { return true }
	}
	self := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var tr, srv, cpu int64
	for b.Loop() {
		c0 := self()
		r, err := Run(context.Background(), s)
		if err != nil {
			b.Fatal(err)
		}
		srv += int64(self() - c0)
		tr += int64(r.GateCPU)
		cpu += int64(r.CPU)
	}
	b.ReportMetric(float64(tr)/float64(b.N)/200/1000, "tracer-us/exec")
	b.ReportMetric(float64(srv)/float64(b.N)/200/1000, "server-us/exec")
	b.ReportMetric(float64(cpu)/float64(b.N)/200/1000, "cmd-cpu-us/exec")
}
