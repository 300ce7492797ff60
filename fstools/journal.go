package fstools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/grants"
)

// The journal makes a multi-file patch all or nothing across a crash. It is
// one small JSON file per patch in progress, in the server's state folder:
// the steps with the folders, names and inodes they involve (the originals
// stay in their own folders, under the steps' temporary names, until the
// patch is done). It is written whole to an unnamed file, locked, synced,
// and only then given a name, so a journal that can be seen is complete and
// is locked for as long as its patch runs.
//
// Recover, at start-up, settles every journal whose lock no process holds:
// forward when every step was in place (the crash hit the clean-up), back
// otherwise. Both are decided per step from the inodes on disk, so the
// answer is right wherever the crash fell.

// journalVersion is the format written; Recover refuses any other.
const journalVersion = 1

type journal struct {
	Version int      `json:"version"`
	Steps   []step   `json:"steps"`
	Dirs    []string `json:"dirs,omitempty"` // folders the patch made, outermost first
}

// JournalDir is where apply_patch keeps its journals: "patches" in the
// server's state folder, or "" (no journal: a crash may leave a multi-file
// patch half done) when that folder lies where tools can reach, since a
// journal tells the server which files to move at start-up and must never
// be something a model can write.
func JournalDir(p *grants.Policy) string {
	dir := grants.StateDir(p.Home)
	if p.ToolsReach(dir) {
		return ""
	}
	return filepath.Join(dir, "patches")
}

// openJournalDir opens (creating it 0700) the journal folder, refusing one
// that others may write.
func openJournalDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	d, err := openNoSymlinks(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		d.Close()
		return nil, err
	}
	if st.Mode&0o022 != 0 || st.Uid != uint32(os.Getuid()) {
		d.Close()
		return nil, fmt.Errorf("journal folder %s is writable by others or not ours; chmod 700 it", dir)
	}
	return d, nil
}

// writeJournal writes j durably into dir and returns the open, locked file
// and its name; closing the file releases the lock.
func writeJournal(dir string, j *journal) (*os.File, string, error) {
	d, err := openJournalDir(dir)
	if err != nil {
		return nil, "", fmt.Errorf("patch journal: %w", err)
	}
	defer d.Close()
	data, err := json.Marshal(j)
	if err != nil {
		return nil, "", err
	}
	fd, err := unix.Openat(int(d.Fd()), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("patch journal in %s: %w", dir, err)
	}
	f := os.NewFile(uintptr(fd), "journal")
	fail := func(err error) (*os.File, string, error) {
		f.Close()
		return nil, "", fmt.Errorf("patch journal in %s: %w", dir, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := unix.Fdatasync(fd); err != nil {
		return fail(err)
	}
	name, err := tempName("patch")
	if err != nil {
		return fail(err)
	}
	name = strings.TrimPrefix(name, ".") + ".json"
	s := &step{file: f}
	if err := s.linkNew(int(d.Fd()), name); err != nil {
		return fail(err)
	}
	if err := unix.Fsync(int(d.Fd())); err != nil {
		unix.Unlinkat(int(d.Fd()), name, 0)
		return fail(err)
	}
	return f, name, nil
}

// removeJournal deletes a finished patch's journal and releases its lock.
// It is not synced: a journal that reappears after a power loss finds every
// step settled and is settled again, changing nothing.
func removeJournal(dir string, f *os.File, name string) {
	if d, err := openNoSymlinks(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0); err == nil {
		unix.Unlinkat(int(d.Fd()), name, 0)
		d.Close()
	}
	f.Close()
}

// Recovered is what Recover did with one interrupted patch.
type Recovered struct {
	Journal string
	Forward bool // finished (every new file was in place) rather than rolled back
	Files   int
	Err     error
}

// Recover settles the patches a crash interrupted, from the journals in dir
// that no running process holds: each is finished when every one of its
// steps is in place, and rolled back otherwise; every temporary file it made
// is removed.
func Recover(dir string) ([]Recovered, error) {
	if dir == "" {
		return nil, nil
	}
	d, err := openJournalDir(dir)
	if err != nil {
		return nil, fmt.Errorf("patch journals: %w", err)
	}
	defer d.Close()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("patch journals: %w", err)
	}
	var out []Recovered
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), "patch.onellm-") || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if r, ok := recoverOne(int(d.Fd()), e.Name()); ok {
			r.Journal = filepath.Join(dir, e.Name())
			out = append(out, r)
		}
	}
	return out, nil
}

// recoverOne settles one journal; ok is false when it belongs to a running
// patch (locked) or is gone.
func recoverOne(dirfd int, name string) (Recovered, bool) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Recovered{}, false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return Recovered{}, false // its patch is still running
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Nlink == 0 {
		return Recovered{}, false // finished meanwhile
	}
	var j journal
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err == nil {
		err = json.Unmarshal(data, &j)
	}
	if err == nil {
		err = j.check()
	}
	if err != nil {
		// Kept for a person to look at: a journal is never guessed at.
		return Recovered{Err: fmt.Errorf("unreadable patch journal kept: %w", err)}, true
	}
	forward, err := settleAll(j.Steps, j.Dirs, nil, true)
	r := Recovered{Forward: forward, Files: len(j.Steps), Err: err}
	if err == nil {
		unix.Unlinkat(dirfd, name, 0)
		unix.Fsync(dirfd)
	}
	return r, true
}

// check validates a journal read back: absolute clean folders, plain names
// and temporary names of the form this package makes.
func (j *journal) check() error {
	if j.Version != journalVersion {
		return fmt.Errorf("version %d, want %d", j.Version, journalVersion)
	}
	plain := func(n string) bool { return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00") }
	ours := func(n string) bool { return n == "" || plain(n) && strings.Contains(n, ".onellm-") }
	for i, s := range j.Steps {
		switch {
		case s.Op != stepReplace && s.Op != stepCreate && s.Op != stepDelete:
			return fmt.Errorf("step %d: unknown op %q", i, s.Op)
		case !filepath.IsAbs(s.Dir) || filepath.Clean(s.Dir) != s.Dir:
			return fmt.Errorf("step %d: folder %q", i, s.Dir)
		case !plain(s.Name) || !ours(s.Tmp) || !ours(s.Bak):
			return fmt.Errorf("step %d: names %q %q %q", i, s.Name, s.Tmp, s.Bak)
		}
	}
	for _, d := range j.Dirs {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return fmt.Errorf("folder %q", d)
		}
	}
	return nil
}

// settleAll settles every step: forward when every step is in place (and
// auto), otherwise back, newest first, removing the folders the patch made.
// It reports which way it went.
func settleAll(steps []step, dirs []string, cache dirCache, auto bool) (forward bool, err error) {
	if cache == nil {
		cache = dirCache{}
		defer cache.close()
	}
	forward = auto
	for i := range steps {
		fd, err := cache.fd(steps[i].Dir)
		if err != nil || !steps[i].switched(fd) {
			forward = false
			break
		}
	}
	var errs []error
	for i := len(steps) - 1; i >= 0; i-- {
		fd, err := cache.fd(steps[i].Dir)
		if err != nil {
			if !errors.Is(err, unix.ENOENT) {
				errs = append(errs, err)
			}
			continue
		}
		if err := steps[i].settle(fd, forward); err != nil {
			errs = append(errs, err)
		}
	}
	if err := cache.syncAll(); err != nil {
		errs = append(errs, err)
	}
	if !forward {
		removeDirs(dirs)
	}
	return forward, errors.Join(errs...)
}

// RecoverAtStart settles, before the server serves, the patches a crash
// interrupted, and says on logf what it did.
func RecoverAtStart(p *grants.Policy, logf func(format string, args ...any)) {
	dir := JournalDir(p)
	if dir == "" {
		logf("apply_patch: the state folder %s lies where tools can reach; multi-file patches run without a crash journal", grants.StateDir(p.Home))
		return
	}
	rs, err := Recover(dir)
	if err != nil {
		logf("apply_patch: %v", err)
	}
	for _, r := range rs {
		switch {
		case r.Err != nil:
			logf("apply_patch: interrupted patch %s: %v", r.Journal, r.Err)
		case r.Forward:
			logf("apply_patch: finished an interrupted patch of %d steps (every new file was in place)", r.Files)
		default:
			logf("apply_patch: rolled back an interrupted patch of %d steps", r.Files)
		}
	}
}
