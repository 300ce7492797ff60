//go:build linux

package sandbox

import "golang.org/x/sys/unix"

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
