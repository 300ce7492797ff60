package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Runtime makes and checks the user's private runtime folder for the
// server's sockets (the approval inbox's rendezvous): $XDG_RUNTIME_DIR/
// onellm-mcp when that variable is an absolute folder of this user's, else
// "run" inside stateDir (a state folder Open returned, so out of every
// tool's reach). $XDG_RUNTIME_DIR is used only when it is not open to
// other users and lies beneath none of the readable roots (as Open checks
// the state folder), so no tool can delete or replace the socket. The
// folder is made with mode 0700 and must be a real folder (no symlink at
// its last component) owned by this user with mode 0700 (tightened when
// wider); another user must not be able to reach what it holds.
func Runtime(stateDir string, readable []string) (string, error) {
	dir := filepath.Join(stateDir, "run")
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		// Reachable compares real paths: a symlink in a parent of the
		// variable's folder could put it inside a readable root.
		if real, err := filepath.EvalSymlinks(x); err == nil && private(x, false) == nil && private(real, false) == nil && Reachable(filepath.Join(real, Name), readable) == nil {
			dir = filepath.Join(real, Name)
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("runtime folder %s: %w", dir, err)
	}
	if err := private(dir, true); err != nil {
		return "", err
	}
	return dir, nil
}

// CheckRuntime checks that dir is still fit to hold the server's sockets
// as Runtime made it: a real folder (no symlink) owned by this user and
// closed to others. The approval inbox checks it again each time it opens
// its socket, which may be long after start-up (a takeover).
func CheckRuntime(dir string) error {
	return private(dir, false)
}

// private checks that dir is a real folder owned by this user and, with
// tighten, makes its mode 0700; without, it must not be open to others.
func private(dir string, tighten bool) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("runtime folder %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("runtime folder %s is not a folder (a symlink or a file is refused)", dir)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("runtime folder %s is not owned by this user (uid %d)", dir, os.Geteuid())
	case fi.Mode().Perm() == 0o700:
		return nil
	case !tighten && fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("runtime folder %s is open to other users (mode %o)", dir, fi.Mode().Perm())
	case !tighten:
		return nil
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("runtime folder %s: %w", dir, err)
	}
	return nil
}
