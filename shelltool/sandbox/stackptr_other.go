//go:build linux && !amd64

package sandbox

import (
	"fmt"
	"runtime"
)

// stackPointer is only written for amd64 (so is the seccomp filter: the
// sandbox is unavailable elsewhere).
func stackPointer(int) (uint64, error) {
	return 0, fmt.Errorf("no stack reader for %s", runtime.GOARCH)
}
