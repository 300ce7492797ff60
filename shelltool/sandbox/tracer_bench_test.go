//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"strings"
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
	env := []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LC_ALL=C"}
	for i := range 30 { // a usual environment's size, the pins among it
		env = append(env, fmt.Sprintf("SOME_VARIABLE_%d=%s", i, strings.Repeat("v", 40)))
	}
	pins := []string{"npm_config_registry=https://registry.npmjs.org/", "PIP_CONFIG_FILE=/dev/null", "UV_NO_CONFIG=1", "GOPROXY=https://proxy.golang.org"}
	env = append(env, pins...)
	watch := EnvWatch{Pins: pins, Names: []string{"npm_config_*", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONFIG_FILE", "PIP_FIND_LINKS",
		"UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_CONFIG_FILE", "UV_FIND_LINKS", "UV_INDEX", "UV_NO_CONFIG", "UV_PROJECT",
		"GOPROXY", "GOPRIVATE", "GONOPROXY", "GOENV", "GOROOT", "CARGO_HOME", "CARGO_REGISTRY_DEFAULT", "CARGO_REGISTRIES_*", "YARN_REGISTRY",
		"YARN_NPM_REGISTRY_SERVER", "YARN_RC_FILENAME", "BUN_CONFIG_REGISTRY", "BUNDLE_MIRROR__*", "BUNDLE_GEMFILE", "BUNDLE_APP_CONFIG"}}
	for _, bc := range []struct {
		name  string
		watch EnvWatch
	}{{"argv", EnvWatch{}}, {"argv+env", watch}} {
		b.Run(bc.name, func(b *testing.B) {
			runtime.LockOSThread() // the tracer's thread: the one that started it
			defer runtime.UnlockOSThread()
			pid := stoppedAtExec(b, "/usr/bin/sleep", []string{"sleep", "60"}, env)
			var buf readBuf
			facts := execFacts{places: findWritablePlaces([]string{b.TempDir()}, nil), sizes: map[int64]bool{}, env: compileEnvWatch(bc.watch)}
			var t0, t1 unix.Timespec
			_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t0)
			n := 0
			for b.Loop() {
				if ev := readExecEvent(pid, &facts, &buf); ev.Problem != "" || len(ev.Env) != 0 || len(ev.EnvUnset) != 0 {
					b.Fatal(ev.Problem, ev.Env, ev.EnvUnset)
				}
				n++
			}
			_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &t1)
			b.ReportMetric(float64(t1.Nano()-t0.Nano())/float64(n), "thread-cpu-ns/op")
		})
	}
}
