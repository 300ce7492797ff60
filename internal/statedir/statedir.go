// Package statedir owns the user's state folder: where the server keeps what
// it holds for itself and no tool may ever see (the approval console's
// token; other parts keep signing keys and journals there).
//
// Security model: a file placed here is only as safe as the folder is out of
// reach. Open proves it before anything is written: the folder is a real
// directory (no symlink at its last component), owned by the server's user,
// mode 0700 (tightened when wider), and its real path lies beneath none of
// the readable roots the caller lists (every root any tool can read: the
// workspace, the sandbox's writable, readable and system folders), nor is
// any such root inside it. When that cannot be shown, Open fails and the
// caller must refuse to start rather than write the file elsewhere.
//
// Runtime is the user's private runtime folder for the server's sockets
// (the approval inbox's rendezvous): mode 0700, this user's, no symlink,
// beneath no readable root.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Name is the folder's name under $XDG_STATE_HOME or ~/.local/state.
const Name = "onellm-mcp"

// Path is where the state folder is: $XDG_STATE_HOME/onellm-mcp when that
// variable is absolute, else HOME/.local/state/onellm-mcp (the system's
// temporary folder standing in for an empty home). Nothing is checked.
func Path(home string) string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, Name)
	}
	if home == "" {
		home = os.TempDir()
	}
	return filepath.Join(home, ".local", "state", Name)
}

// Open makes the state folder for home (creating it and missing parents
// with mode 0700), checks it as the package doc says against readable, and
// returns its real path. readable are absolute roots; a root that does not
// exist is compared as written.
func Open(home string, readable []string) (string, error) {
	dir := Path(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("state folder %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("state folder %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("state folder %s is not a folder (a symlink or a file is refused)", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("state folder %s is not owned by this user (uid %d)", dir, os.Geteuid())
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("state folder %s: %w", dir, err)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("state folder %s: %w", dir, err)
	}
	if err := Reachable(real, readable); err != nil {
		return "", err
	}
	return real, nil
}

// ErrReachable marks a state folder that a tool could read.
var ErrReachable = errors.New("a tool could read it")

// Reachable returns an error wrapping ErrReachable when dir (a real path)
// is one of roots, lies beneath one, or holds one; both the root as written
// and its real path are compared, so a symlinked root is caught either way.
func Reachable(dir string, roots []string) error {
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("state folder check: root %q is not absolute", r)
		}
		forms := []string{filepath.Clean(r)}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			forms = append(forms, real)
		}
		for _, f := range forms {
			if beneath(dir, f) || beneath(f, dir) {
				return fmt.Errorf("state folder %s: %w (it overlaps the readable root %s); set XDG_STATE_HOME to a folder no tool can read, or narrow the roots",
					dir, ErrReachable, r)
			}
		}
	}
	return nil
}

// beneath reports whether p is root or lies beneath it (lexically).
func beneath(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}
