package fstools

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// How a patch reaches the disk (all or nothing, nothing lost):
//
//  1. Every new content is written to an unnamed file (O_TMPFILE) in its
//     target's folder, synced, and its inode noted. Nothing is visible yet.
//  2. A patch of two or more steps writes its journal (journal.go): the
//     steps, the names it will use and the inodes involved.
//  3. Each step is switched in: a replacement is linked at a temporary name
//     and exchanged with its target (RENAME_EXCHANGE), so the file it
//     displaced is known exactly; a creation is linked at its name (which
//     fails if the name exists); a deletion renames the file aside. Before
//     and after each switch the file is compared with what was read: one
//     changed by someone else is switched back and the patch fails with a
//     conflict (the caller may re-place it).
//  4. The folders are synced, the displaced files removed, the journal
//     deleted.
//
// A failure at any step settles every step backwards (settle), using the
// inodes to tell what was done; a crash leaves the journal, and the next
// start settles it the same way (Recover).

// step kinds.
const (
	stepReplace = "replace"
	stepCreate  = "create"
	stepDelete  = "delete"
)

// step is one file's change, as journaled.
type step struct {
	Op   string `json:"op"`
	Dir  string `json:"dir"`  // real path of the folder
	Name string `json:"name"` // the file's name in Dir
	// Tmp is where the new file is linked before a replacement's exchange
	// (and where the displaced one ends), a named temporary file where
	// O_TMPFILE is missing, or where a deleted file is moved aside.
	Tmp string `json:"tmp,omitempty"`
	// Bak holds the old file when RENAME_EXCHANGE is missing (it is
	// linked there before the new one is renamed over it).
	Bak string `json:"bak,omitempty"`
	Dev uint64 `json:"dev"`
	Old uint64 `json:"old,omitempty"` // inode replaced or deleted
	New uint64 `json:"new,omitempty"` // inode of the new file

	file  *os.File  // the new content; unnamed unless named
	named bool      // file is linked at Tmp already (no O_TMPFILE)
	prev  *original // what was read, to compare before switching
	done  bool      // switched in by this process
}

// ConflictError reports a file that changed on disk between the read and
// the switch; nothing of the patch was kept.
type ConflictError struct {
	Path     string
	Appeared bool // a file to create appeared
}

func (e *ConflictError) Error() string {
	if e.Appeared {
		return fmt.Sprintf("%s appeared since the patch was planned; not overwritten", e.Path)
	}
	return fmt.Sprintf("%s changed since it was read; read it again", e.Path)
}

func (s *step) path() string { return filepath.Join(s.Dir, s.Name) }

// tempName returns a fresh hidden name beside name.
func tempName(name string) (string, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	tmp := "." + name + ".onellm-" + hex.EncodeToString(rnd[:])
	if len(tmp) > 255 {
		tmp = ".onellm-" + hex.EncodeToString(rnd[:])
	}
	return tmp, nil
}

// prepare writes content to a new unnamed file in dirfd (a named temporary
// one where O_TMPFILE is not supported), sets its mode and syncs it.
func (s *step) prepare(dirfd int, content []byte, mode os.FileMode) error {
	var err error
	if s.Tmp, err = tempName(s.Name); err != nil {
		return err
	}
	if s.Op == stepReplace {
		if s.Bak, err = tempName(s.Name); err != nil {
			return err
		}
	}
	fd, err := unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
			return err
		}
		fd, err = unix.Openat(dirfd, s.Tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return err
		}
		s.named = true
	}
	f := os.NewFile(uintptr(fd), s.Tmp)
	s.file = f
	_, werr := f.Write(content)
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	var st unix.Stat_t
	if werr == nil {
		werr = unix.Fstat(fd, &st)
	}
	if werr != nil {
		return werr
	}
	s.Dev, s.New = uint64(st.Dev), st.Ino
	return nil
}

// linkNew gives the unnamed new file the name to in dirfd; EEXIST if taken.
func (s *step) linkNew(dirfd int, to string) error {
	if s.named {
		return unix.Linkat(dirfd, s.Tmp, dirfd, to, 0)
	}
	proc := "/proc/self/fd/" + strconv.Itoa(int(s.file.Fd()))
	err := unix.Linkat(unix.AT_FDCWD, proc, dirfd, to, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) { // no /proc: needs CAP_DAC_READ_SEARCH
		err = unix.Linkat(int(s.file.Fd()), "", dirfd, to, unix.AT_EMPTY_PATH)
	}
	return err
}

// apply switches the step in. A *ConflictError means the file on disk was
// not what was read; the step is then back as it was.
func (s *step) apply(dirfd int) error {
	switch s.Op {
	case stepCreate:
		err := s.linkNew(dirfd, s.Name)
		if errors.Is(err, unix.EEXIST) {
			return &ConflictError{Path: s.path(), Appeared: true}
		}
		if err != nil {
			return fmt.Errorf("creating %s: %w", s.path(), err)
		}
		s.done = true
		if s.named {
			unix.Unlinkat(dirfd, s.Tmp, 0)
		}
		return nil
	case stepReplace:
		if !s.named {
			if err := s.linkNew(dirfd, s.Tmp); err != nil {
				return fmt.Errorf("writing %s: %w", s.path(), err)
			}
		}
		pre, ok := sameFile(dirfd, s.Name, s.prev, nil)
		if !ok {
			return &ConflictError{Path: s.path()}
		}
		err := unix.Renameat2(dirfd, s.Tmp, dirfd, s.Name, unix.RENAME_EXCHANGE)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			// No exchange on this file system: keep the old file at Bak,
			// then rename the new one over it (a short unguarded window).
			if err = unix.Linkat(dirfd, s.Name, dirfd, s.Bak, 0); err == nil {
				err = unix.Renameat(dirfd, s.Tmp, dirfd, s.Name)
			}
			s.done = err == nil
			if err != nil {
				return fmt.Errorf("replacing %s: %w", s.path(), err)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("replacing %s: %w", s.path(), err)
		}
		s.done = true
		// Tmp now holds what was displaced: exactly what was read, or the
		// exchange is undone.
		if _, ok := sameFile(dirfd, s.Tmp, s.prev, &pre); !ok {
			if unix.Renameat2(dirfd, s.Tmp, dirfd, s.Name, unix.RENAME_EXCHANGE) == nil {
				s.done = false
			}
			return &ConflictError{Path: s.path()}
		}
		return nil
	case stepDelete:
		pre, ok := sameFile(dirfd, s.Name, s.prev, nil)
		if !ok {
			return &ConflictError{Path: s.path()}
		}
		if err := unix.Renameat2(dirfd, s.Name, dirfd, s.Tmp, unix.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("deleting %s: %w", s.path(), err)
		}
		s.done = true
		if _, ok := sameFile(dirfd, s.Tmp, s.prev, &pre); !ok {
			if unix.Renameat2(dirfd, s.Tmp, dirfd, s.Name, unix.RENAME_NOREPLACE) == nil {
				s.done = false
			}
			return &ConflictError{Path: s.path()}
		}
		return nil
	}
	return fmt.Errorf("unknown step %q", s.Op)
}

// sameFile reports whether name in dirfd is the file read as prev: the same
// inode and the same bytes. With a non-nil since (the stat of a full check
// made just before), the bytes are compared only when the size or the
// modification time moved since: a cheap check right after a switch, which
// changes the change time but never the modification time. It returns the
// stat it made.
func sameFile(dirfd int, name string, prev *original, since *unix.Stat_t) (unix.Stat_t, bool) {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return st, false
	}
	if uint64(st.Dev) != prev.dev || st.Ino != prev.ino || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != int64(len(prev.content)) {
		return st, false
	}
	if since != nil && st.Mtim == since.Mtim && st.Size == since.Size {
		return st, true
	}
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return st, false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st2 unix.Stat_t
	if unix.Fstat(fd, &st2) != nil || st2.Ino != prev.ino {
		return st, false
	}
	buf := make([]byte, len(prev.content)+1)
	n, err := io.ReadFull(f, buf)
	return st2, (err == io.ErrUnexpectedEOF || err == io.EOF || (err == nil && n == len(buf))) && bytes.Equal(buf[:n], prev.content)
}

// inode returns the inode at name in dirfd, 0 when there is none.
func inode(dirfd int, name string) uint64 {
	if name == "" {
		return 0
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	return st.Ino
}

// switched reports, from what is on disk, whether the step is in place.
func (s *step) switched(dirfd int) bool {
	at := inode(dirfd, s.Name)
	switch s.Op {
	case stepReplace, stepCreate:
		return at != 0 && at == s.New
	case stepDelete:
		return at != s.Old
	}
	return false
}

// settle finishes a step (forward: only the leftovers go) or undoes it,
// judging by the inodes on disk, so it is right after a crash at any point.
// Only files whose inode the step names are ever moved or removed.
func (s *step) settle(dirfd int, forward bool) error {
	removeIf := func(name string, inos ...uint64) {
		if at := inode(dirfd, name); at != 0 {
			for _, ino := range inos {
				if at == ino {
					unix.Unlinkat(dirfd, name, 0)
					return
				}
			}
		}
	}
	var err error
	if !forward && s.switched(dirfd) {
		switch s.Op {
		case stepReplace:
			// The old file is at Tmp (exchanged) or Bak (linked).
			from := s.Tmp
			if inode(dirfd, from) != s.Old {
				from = s.Bak
			}
			if inode(dirfd, from) == s.Old {
				err = unix.Renameat(dirfd, from, dirfd, s.Name)
			} else {
				err = fmt.Errorf("the original of %s was not found to restore", s.path())
			}
		case stepCreate:
			removeIf(s.Name, s.New)
		case stepDelete:
			if inode(dirfd, s.Tmp) == s.Old {
				err = unix.Renameat2(dirfd, s.Tmp, dirfd, s.Name, unix.RENAME_NOREPLACE)
			}
		}
		if err != nil {
			return fmt.Errorf("restoring %s: %w", s.path(), err)
		}
	}
	removeIf(s.Tmp, s.Old, s.New)
	removeIf(s.Bak, s.Old, s.New)
	s.done = false
	return nil
}

// dirCache opens each folder once, without following symlinks.
type dirCache map[string]*os.File

func (c dirCache) fd(dir string) (int, error) {
	if d, ok := c[dir]; ok {
		return int(d.Fd()), nil
	}
	d, err := openNoSymlinks(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return -1, err
	}
	c[dir] = d
	return int(d.Fd()), nil
}

func (c dirCache) close() {
	for _, d := range c {
		d.Close()
	}
}

// syncAll syncs every folder opened: the switches become durable.
func (c dirCache) syncAll() error {
	var errs []error
	for dir, d := range c {
		if err := unix.Fsync(int(d.Fd())); err != nil {
			errs = append(errs, fmt.Errorf("syncing folder %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// mkdirs creates the missing folders up to dir (0755) and returns those it
// made, outermost first.
func mkdirs(dir string) ([]string, error) {
	d, err := openNoSymlinks(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err == nil {
		d.Close()
		return nil, nil
	}
	if !errors.Is(err, unix.ENOENT) || dir == "/" {
		return nil, err
	}
	made, err := mkdirs(filepath.Dir(dir))
	if err != nil {
		return made, err
	}
	parent, err := openNoSymlinks(filepath.Dir(dir), unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return made, err
	}
	defer parent.Close()
	if err := unix.Mkdirat(int(parent.Fd()), filepath.Base(dir), 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return made, &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return append(made, dir), nil
}

// removeDirs removes the folders a patch made, innermost first, where they
// are empty.
func removeDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		d, err := openNoSymlinks(filepath.Dir(dirs[i]), unix.O_DIRECTORY|unix.O_RDONLY, 0)
		if err != nil {
			continue
		}
		unix.Unlinkat(int(d.Fd()), filepath.Base(dirs[i]), unix.AT_REMOVEDIR)
		d.Close()
	}
}
