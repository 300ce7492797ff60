//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/internal/gitmeta"
)

// writablePlaces are where the command can write files, and so make or
// copy programs: the Writable roots, /tmp and /dev/shm (by real path), and
// the devices of those no system folder (nor Readable root) shares, such
// as the private tmpfs of /tmp and /dev/shm. A writable root on the same
// file system as /usr is known by path only: its device would name every
// system program too. A file can reach another path only by a link, and
// the command cannot link across mounts (every Writable root is a mount of
// its own, EXDEV) nor into a system folder (landlock).
type writablePlaces struct {
	roots []string
	devs  map[uint64]bool
}

func findWritablePlaces(writable, readable []string) writablePlaces {
	w := writablePlaces{devs: map[uint64]bool{}}
	system := map[uint64]bool{}
	for _, p := range append(systemReadExec(), readable...) {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil {
			system[st.Dev] = true
		}
	}
	for _, r := range append([]string{"/tmp", "/dev/shm"}, writable...) {
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue // a missing root grants nothing
		}
		w.roots = append(w.roots, filepath.Clean(real))
		var st unix.Stat_t
		if unix.Stat(real, &st) == nil && !system[st.Dev] {
			w.devs[st.Dev] = true
		}
	}
	return w
}

// holds reports whether a file at the clean absolute path p on device dev
// lies in a writable place.
func (w *writablePlaces) holds(p string, dev uint64) bool {
	if w.devs[dev] {
		return true
	}
	for _, r := range w.roots {
		if isBeneath(p, r) {
			return true
		}
	}
	return false
}

// execFacts is what the tracer needs to tell a written program: the
// writable places and the sizes worth hashing.
type execFacts struct {
	places writablePlaces
	sizes  map[int64]bool
	env    *envWatch // nil: no variable watched
	// git are the guarded entries each git directory lacked when the
	// command started (ExecEvent.GitChanged).
	git []gitAbsent
}

// gitAbsent is a git directory and the guarded entries it lacked.
type gitAbsent struct {
	dir   string
	names []string
}

// watchGitDirs lists, for each git directory of dirs (as the command
// sees it, before it has run), the guarded entries it lacks.
func watchGitDirs(dirs []string) []gitAbsent {
	var out []gitAbsent
	for _, d := range dirs {
		w := gitAbsent{dir: d}
		for _, n := range gitmeta.GuardedEntries() {
			var st unix.Stat_t
			if unix.Lstat(d+"/"+n, &st) != nil {
				w.names = append(w.names, n)
			}
		}
		out = append(out, w) // (each: its HEAD is looked at too)
	}
	return out
}

// gitChanged are the git directories in which one of the entries they
// lacked exists now, or whose HEAD is no longer a valid one (a regular
// file naming a ref or an object: git passes over a git directory whose
// HEAD is not, to one above or a bare repository at the work tree's
// level, both the command's: review rev20f H1). A failed look counts as
// changed (fail closed).
func (f *execFacts) gitChanged() []string {
	var out []string
	for _, w := range f.git {
		changed := !validHead(w.dir + "/HEAD")
		for _, n := range w.names {
			var st unix.Stat_t
			if changed {
				break
			}
			changed = unix.Lstat(w.dir+"/"+n, &st) != unix.ENOENT
		}
		if changed {
			out = append(out, w.dir)
		}
	}
	return out
}

// validHead reports whether the file at p is a HEAD git takes: a regular
// file (not a FIFO or a link) of "ref: refs/…" or an object name.
func validHead(p string) bool {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	var b [256]byte
	n, err := unix.Read(fd, b[:])
	if err != nil || n <= 0 {
		return false
	}
	head := strings.TrimRight(string(b[:n]), "\n")
	if ref, ok := strings.CutPrefix(head, "ref: "); ok {
		return strings.HasPrefix(ref, "refs/") && !strings.ContainsAny(ref, " \n\x00")
	}
	return (len(head) == 40 || len(head) == 64) && strings.Trim(head, "0123456789abcdef") == ""
}

// identify sets ev's Written, BuildID and SHA256 (ev.Exe, Dev, Ino, Size,
// ExecPath and Cwd are set; dir is the process's /proc folder, buf the
// stop's read buffer): an executable in a writable place is read
// through /proc/PID/exe (the running file itself, whatever its name now);
// a script exec'd from a writable place marks the event Written too. It
// returns a problem when what is needed cannot be read.
func (f *execFacts) identify(dir int, buf *readBuf, ev *ExecEvent) string {
	if f.places.holds(ev.Exe, ev.Dev) {
		ev.Written, ev.WrittenExe = ev.Exe, true
		if p := f.readContent(dir, buf, ev); p != "" {
			return p
		}
	}
	if ev.ExecPath != "" && ev.Written == "" {
		// A shebang script (or a symlink) named by a path of the
		// command's own: by where the path lies, or where it leads.
		p := ev.ExecPath
		if !filepath.IsAbs(p) {
			p = ev.Cwd + "/" + p
		}
		// The kernel resolves a symlink before the ".." after it, while
		// a lexical clean drops both: a path with ".." is unknown (and
		// kept as given, so it names nothing else).
		dotdot := hasDotDot(p)
		if !dotdot {
			p = filepath.Clean(p)
		}
		// A descriptor's path (execveat of a descriptor gives /dev/fd/N;
		// /dev/stdin, /proc/self/fd/N) would name the helper's own
		// descriptor here: unknown. (Nothing else executable lives in
		// /dev but /dev/shm, which is written anyway.)
		unknown := dotdot || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/")
		if !unknown && p == ev.Exe {
			// The path of the executable itself (a program found on
			// PATH), which the caller just found to name the running
			// file, outside every writable place: the command cannot
			// put anything else there, so a stat would say the same.
			return ""
		}
		var st unix.Stat_t
		if unknown || unix.Stat(p, &st) != nil || f.places.holds(p, st.Dev) {
			ev.Written = p // unknown counts as written: it only takes approvals away
		}
	}
	return ""
}

// hasDotDot reports whether the path p has a ".." component.
func hasDotDot(p string) bool {
	return p == ".." || strings.HasPrefix(p, "../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "/../")
}

func (f *execFacts) readContent(dir int, buf *readBuf, ev *ExecEvent) string {
	fd, err := openAt(dir, "exe")
	if err != nil {
		return fmt.Sprintf("written executable unreadable: %v", err)
	}
	exe := os.NewFile(uintptr(fd), "exe")
	defer exe.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(exe.Fd()), &st); err != nil || st.Dev != ev.Dev || st.Ino != ev.Ino {
		return "written executable unreadable: not the running file"
	}
	id, err := ReadELFIdent(exe)
	if err != nil {
		return fmt.Sprintf("written executable unreadable: %v", err)
	}
	switch {
	case id.Unclassified:
		return "written ELF executable of a machine the reader cannot tell"
	case id.Dyn && id.Interp == "":
		// What the dynamic loader is (under any name, wherever it was
		// copied from); a static-pie program looks the same.
		return "written ELF shared object run without an interpreter (a dynamic loader, or static-pie)"
	}
	ev.BuildID, ev.GoBuildID = id.BuildID, id.GoBuildID
	// Whatever else the kernel mapped at the exec is the ELF interpreter
	// (however the file's header names it): it runs first, so it is
	// identified too (a written one is refused: no build needs one).
	path, dev, ino, err := loadedInterp(dir, buf, ev.Dev, ev.Ino)
	switch {
	case err != nil:
		return fmt.Sprintf("ELF interpreter unknown: %v", err)
	case ino == 0:
		if id.Interp != "" {
			return "ELF interpreter " + id.Interp + " not mapped"
		}
	case f.places.holds(path, dev):
		return "ELF interpreter " + path + " lies where the command can write"
	default:
		ev.InterpDev, ev.InterpIno = dev, ino
	}
	if f.sizes[ev.Size] {
		if ev.SHA256, err = FileSHA256(exe); err != nil {
			return fmt.Sprintf("written executable unreadable: %v", err)
		}
	}
	return ""
}

// loadedInterp finds the ELF interpreter mapped into a process stopped at
// its exec (dir: its /proc folder): at that stop the only files mapped are the executable
// (device exeDev, inode exeIno) and its interpreter. /proc/PID/maps gives
// each mapping's device, inode and path. None mapped gives inode 0.
func loadedInterp(dir int, buf *readBuf, exeDev, exeIno uint64) (string, uint64, uint64, error) {
	b, err := buf.readCappedAt(dir, "maps", 1<<16)
	if err != nil {
		return "", 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		maj, min, ok := strings.Cut(f[3], ":")
		ino, err1 := strconv.ParseUint(f[4], 10, 64)
		ma, err2 := strconv.ParseUint(maj, 16, 32)
		mi, err3 := strconv.ParseUint(min, 16, 32)
		if !ok || err1 != nil || err2 != nil || err3 != nil {
			return "", 0, 0, fmt.Errorf("maps line %q", line)
		}
		dev := unix.Mkdev(uint32(ma), uint32(mi))
		if dev == exeDev && ino == exeIno {
			continue
		}
		if ino == 0 {
			return "", 0, 0, fmt.Errorf("maps line %q: a file of inode 0", line)
		}
		return strings.Join(f[5:], " "), dev, ino, nil
	}
	return "", 0, 0, nil
}
