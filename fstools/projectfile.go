package fstools

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is the error of OpenRegular for a path that is no regular
// file (a folder, a FIFO, a device) or that a symlink leads to.
var ErrNotRegular = errors.New("not a regular file reached without a symlink")

// OpenRegular opens the regular file at the absolute path p for reading
// with the kernel refusing a symlink in every component (openat2
// RESOLVE_NO_SYMLINKS, as every path here is opened), so what it opens is
// the file a command meets at that name, not one a link leads to now and
// another later. Its absence is fs.ErrNotExist (a dangling symlink is not
// absence: ErrNotRegular). shelltool reads the installers' project files
// for the package.install decision through it (StatRegular, ReadRegular).
func OpenRegular(p string) (*os.File, error) {
	f, err := openNoSymlinksRaw(p, unix.O_RDONLY|unix.O_NONBLOCK)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("%s: %w", p, ErrNotRegular)
	case err != nil:
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, ErrNotRegular)
	}
	return f, nil
}

// StatRegular is OpenRegular's answer without reading: nil when p is a
// regular file with no symlink on its way.
func StatRegular(p string) error {
	f, err := OpenRegular(p)
	if err == nil {
		f.Close()
	}
	return err
}

// ReadRegular reads the file OpenRegular opens, at most max bytes (a
// larger one is an error).
func ReadRegular(p string, max int64) ([]byte, error) {
	f, err := OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s is larger than %d bytes", p, max)
	}
	return b, err
}

// openNoSymlinksRaw is openNoSymlinks keeping the kernel's error (ELOOP for
// a symlink on the way, ENOENT for absence), for callers to tell them apart.
func openNoSymlinksRaw(p string, flags int) (*os.File, error) {
	fd, err := openat2NoSymlinks(p, flags, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}
