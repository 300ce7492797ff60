//go:build linux && !amd64

package sandbox

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// seccompProgram is only written for amd64: elsewhere the sandbox is
// unavailable (fail closed) until a filter for that architecture exists.
func seccompProgram() ([]unix.SockFilter, error) {
	return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}

func installSeccomp(prog []unix.SockFilter) error {
	return fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}
