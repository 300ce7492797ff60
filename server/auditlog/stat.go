package auditlog

import (
	"errors"

	"golang.org/x/sys/unix"
)

// fileStat is what the log needs to know of a file: which inode it is,
// whether it has a name, and its size.
type fileStat struct {
	dev, ino uint64
	nlink    uint64
	size     int64
	regular  bool
}

// statWanted is every field fileStat holds. The timestamps are left out on
// purpose: on a kernel with multigrain timestamps (Linux 6.13 on, ext4,
// xfs, btrfs, tmpfs) asking for a file's ctime or mtime marks it queried,
// and the next write then takes a fine-grained timestamp and dirties the
// inode again (a journal update on ext4): with a stat before and after
// every append, that was every append, about 40% more per write.
const statWanted = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_NLINK | unix.STATX_SIZE

// statx stats path relative to dirfd with flags (AT_SYMLINK_NOFOLLOW, or
// AT_EMPTY_PATH with path "" for the open file dirfd itself).
func statx(dirfd int, path string, flags int) (fileStat, error) {
	var sx unix.Statx_t
	err := unix.Statx(dirfd, path, flags|unix.AT_STATX_SYNC_AS_STAT, statWanted, &sx)
	if err == nil && sx.Mask&statWanted == statWanted {
		return fileStat{dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), ino: sx.Ino, nlink: uint64(sx.Nlink),
			size: int64(sx.Size), regular: uint32(sx.Mode)&unix.S_IFMT == unix.S_IFREG}, nil
	}
	if err != nil && !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) {
		return fileStat{}, err
	}
	// No statx (an old kernel, a filter that refuses it) or a filesystem
	// that did not give every field: the classic stat says them all.
	var st unix.Stat_t
	if dirfd != unix.AT_FDCWD && path == "" {
		err = unix.Fstat(dirfd, &st)
	} else {
		err = unix.Fstatat(dirfd, path, &st, flags&unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return fileStat{}, err
	}
	return fileStat{dev: uint64(st.Dev), ino: st.Ino, nlink: uint64(st.Nlink), size: st.Size,
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG}, nil
}

// lstatPath is the file at path itself (a symlink is not followed).
func lstatPath(path string) (fileStat, error) {
	return statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW)
}

// fstat is the open file fd.
func fstat(fd int) (fileStat, error) {
	return statx(fd, "", unix.AT_EMPTY_PATH)
}
