package fstools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// maxEditBytes bounds a file apply_patch reads into memory.
const maxEditBytes = 32 << 20

// original is a file's content and mode as read before a change.
type original struct {
	content []byte
	mode    os.FileMode
}

// readOriginal reads a regular text file by its real path, refusing any
// symlink on the way.
func readOriginal(real string) (original, error) {
	f, err := openNoSymlinks(real, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return original{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return original{}, err
	}
	if !fi.Mode().IsRegular() {
		return original{}, fmt.Errorf("%s is not a regular file", real)
	}
	if fi.Size() > maxEditBytes {
		return original{}, fmt.Errorf("%s is %d bytes, over the %d-byte limit for editing", real, fi.Size(), maxEditBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEditBytes+1))
	if err != nil {
		return original{}, err
	}
	if len(data) > maxEditBytes {
		return original{}, fmt.Errorf("%s grew over the %d-byte limit while read", real, maxEditBytes)
	}
	if strings.IndexByte(string(data[:min(len(data), 8000)]), 0) >= 0 {
		return original{}, fmt.Errorf("%s is a binary file; apply_patch changes text files", real)
	}
	return original{content: data, mode: fi.Mode().Perm()}, nil
}

// transaction applies file changes all or nothing: each write goes to a
// temporary file beside its target, is synced and renamed over it; deletions
// come last; when a step fails, every step already taken is undone.
type transaction struct {
	undo []func() error
	// dirs are the folders whose entries changed; each is synced once when
	// the transaction is done, so several files in one folder cost one
	// directory sync rather than one each.
	dirs []string
}

func (tx *transaction) touched(dir string) {
	if !slices.Contains(tx.dirs, dir) {
		tx.dirs = append(tx.dirs, dir)
	}
}

// syncDirs makes the renames and deletions durable.
func (tx *transaction) syncDirs() error {
	var errs []error
	for _, dir := range tx.dirs {
		d, err := openNoSymlinks(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := unix.Fsync(int(d.Fd())); err != nil {
			errs = append(errs, fmt.Errorf("syncing folder %s: %w", dir, err))
		}
		d.Close()
	}
	return errors.Join(errs...)
}

// openDir opens a folder by its real path for *at calls, refusing symlinks,
// creating missing folders (0755) beneath the deepest existing one.
func (tx *transaction) openDir(real string) (*os.File, error) {
	d, err := openNoSymlinks(real, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err == nil {
		return d, nil
	}
	if !errors.Is(err, unix.ENOENT) || real == "/" {
		return nil, err
	}
	parent, err := tx.openDir(filepath.Dir(real))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	name := filepath.Base(real)
	if err := unix.Mkdirat(int(parent.Fd()), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &os.PathError{Op: "mkdir", Path: real, Err: err}
	}
	parentPath := filepath.Dir(real)
	tx.undo = append(tx.undo, func() error {
		p, err := openNoSymlinks(parentPath, unix.O_DIRECTORY|unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer p.Close()
		return unix.Unlinkat(int(p.Fd()), name, unix.AT_REMOVEDIR)
	})
	return openNoSymlinks(real, unix.O_DIRECTORY|unix.O_RDONLY, 0)
}

// write replaces (or creates) the file at real with content and mode. prev
// is the content to restore on undo; nil when the file is new.
func (tx *transaction) write(real string, content []byte, mode os.FileMode, prev *original) error {
	dir, err := tx.openDir(filepath.Dir(real))
	if err != nil {
		return err
	}
	defer dir.Close()
	name := filepath.Base(real)
	if err := writeAtomic(int(dir.Fd()), name, content, mode, prev == nil); err != nil {
		return fmt.Errorf("writing %s: %w", real, err)
	}
	dirPath := filepath.Dir(real)
	tx.touched(dirPath)
	if prev == nil {
		tx.undo = append(tx.undo, func() error { return unlinkIn(dirPath, name) })
	} else {
		saved := *prev
		tx.undo = append(tx.undo, func() error { return restoreIn(dirPath, name, saved) })
	}
	return nil
}

// remove deletes the file at real; prev is its content for undo.
func (tx *transaction) remove(real string, prev original) error {
	dirPath, name := filepath.Dir(real), filepath.Base(real)
	if err := unlinkIn(dirPath, name); err != nil {
		return fmt.Errorf("deleting %s: %w", real, err)
	}
	tx.touched(dirPath)
	tx.undo = append(tx.undo, func() error { return restoreIn(dirPath, name, prev) })
	return nil
}

// rollback undoes every step taken, newest first, and reports what could
// not be undone.
func (tx *transaction) rollback() error {
	var errs []error
	for i := len(tx.undo) - 1; i >= 0; i-- {
		if err := tx.undo[i](); err != nil {
			errs = append(errs, err)
		}
	}
	tx.undo = nil
	return errors.Join(errs...)
}

func unlinkIn(dirPath, name string) error {
	d, err := openNoSymlinks(dirPath, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Unlinkat(int(d.Fd()), name, 0)
}

func restoreIn(dirPath, name string, o original) error {
	d, err := openNoSymlinks(dirPath, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := writeAtomic(int(d.Fd()), name, o.content, o.mode, false); err != nil {
		return err
	}
	return unix.Fsync(int(d.Fd())) // a rollback is made durable at once
}

// writeAtomic writes content to a new temporary file in dirfd, syncs it,
// sets its mode and renames it over name. The folder is synced by the
// caller (transaction.syncDirs), once for all its files.
//
// When create is set the name must not exist (RENAME_NOREPLACE): a file that
// appeared since the patch was planned is never overwritten, and the patch
// fails instead.
func writeAtomic(dirfd int, name string, content []byte, mode os.FileMode, create bool) error {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := "." + name + ".onellm-" + hex.EncodeToString(rnd[:])
	if len(tmp) > 255 {
		tmp = ".onellm-" + hex.EncodeToString(rnd[:])
	}
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(content)
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		if create {
			werr = unix.Renameat2(dirfd, tmp, dirfd, name, unix.RENAME_NOREPLACE)
			if errors.Is(werr, unix.EEXIST) {
				werr = fmt.Errorf("%s appeared while the patch was applied; not overwritten", name)
			}
		} else {
			werr = unix.Renameat(dirfd, tmp, dirfd, name)
		}
	}
	if werr != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return werr
	}
	return nil
}
