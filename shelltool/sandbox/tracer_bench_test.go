//go:build linux

package sandbox

import (
	"os/exec"
	"testing"
)

// BenchmarkReadExecEvent: the tracer's /proc reads for one exec stop, on
// a live process (not stopped, same reads): what an exec costs the helper
// beside the stops themselves and the round trip to the server.
func BenchmarkReadExecEvent(b *testing.B) {
	cmd := exec.Command("/usr/bin/sleep", "60")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	facts := execFacts{places: findWritablePlaces([]string{b.TempDir()}, nil), sizes: map[int64]bool{}}
	for b.Loop() {
		if ev := readExecEvent(cmd.Process.Pid, &facts); ev.Problem != "" {
			b.Fatal(ev.Problem)
		}
	}
}
