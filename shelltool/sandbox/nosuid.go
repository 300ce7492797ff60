//go:build linux

package sandbox

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// nosuidRoots binds every writable root onto itself and remounts it nosuid
// and nodev (keeping the flags the mount already had, which a user
// namespace may not clear): a setuid file already in a root, or a device
// node, is then just a file inside the sandbox. The private /tmp and
// /dev/shm are mounted nosuid, nodev already.
func nosuidRoots(roots []string) error {
	for _, r := range roots {
		var st unix.Stat_t
		if err := unix.Stat(r, &st); err != nil {
			continue // a missing root grants nothing
		}
		if err := step("bind "+r, unix.Mount(r, r, "", unix.MS_BIND|unix.MS_REC, "")); err != nil {
			return err
		}
		if err := step("remount nosuid "+r, remountBind(r, unix.MS_NOSUID|unix.MS_NODEV)); err != nil {
			return err
		}
	}
	return nil
}

// remountBind remounts the bind mount at p with extra flags added to those
// it has (read from statfs, since a bind remount replaces them all).
func remountBind(p string, extra uintptr) error {
	var sf unix.Statfs_t
	if err := unix.Statfs(p, &sf); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND|unix.MS_REMOUNT) | extra
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if sf.Flags&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	return unix.Mount("", p, "", flags, "")
}

// pinAncestors binds each folder between p and the writable root holding it
// (root included, p excluded) onto itself, outermost first, unless pinned
// already: a mount point cannot be renamed or removed, so neither p nor a
// folder holding it can be moved away and replaced by one of the command's
// making.
func pinAncestors(p string, writable []string, pinned map[string]bool) error {
	w := ""
	for _, r := range writable {
		if isBeneath(p, r) && len(r) > len(w) {
			w = r
		}
	}
	if w == "" || w == p {
		return nil
	}
	var chain []string
	for a := filepath.Dir(p); isBeneath(a, w); a = filepath.Dir(a) {
		chain = append(chain, a)
		if a == w || a == "/" {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		a := chain[i]
		if pinned[a] {
			continue
		}
		if err := step("pin "+a, unix.Mount(a, a, "", unix.MS_BIND|unix.MS_REC, "")); err != nil {
			return err
		}
		pinned[a] = true
	}
	return nil
}
