//go:build linux

package sandbox

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// nosuidRoots binds every writable root onto itself and makes it, and every
// mount beneath it, nosuid and nodev: a setuid file already in a root, or a
// device node, is then just a file inside the sandbox. The private /tmp and
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
		if err := step("nosuid "+r, addMountAttrs(r, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)); err != nil {
			return err
		}
	}
	return nil
}

// addMountAttrs adds attrs (MOUNT_ATTR_*) to the mount at p and to every
// mount beneath it, in one mount_setattr call. The flags they already have
// stay (a bind remount would replace them all, and a user namespace may not
// clear the ones its mounts were locked with).
func addMountAttrs(p string, attrs uint64) error {
	return unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attrs})
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
