//go:build linux

package sandbox

import (
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/internal/gitmeta"
)

// Git directories in writable roots: a command may record work (objects,
// refs, logs and the record files gitmeta names) but nothing that makes git
// run code or look elsewhere on the host later.
//
// How: each git directory that exists when the command starts (Spec.GitDirs)
// becomes, inside the sandbox, an overlay whose lower layer is the real
// directory and whose upper layer is a folder of the stage: a tmpfs the
// helper makes without mounting it anywhere, so the command cannot see it,
// and hands to the server (makeGitStage). Its record folders are the
// real ones, bound back writable; config, hooks/, info/, commondir, gitdir
// and config.worktree are the real ones bound back read-only; objects/info
// (alternates, http-alternates: where git reads objects from) and the
// submodule and worktree git directories beneath it are overlays of their
// own. So every
// other write, a new top-level file included, lands in the stage only.
// After the command, when nothing of it runs any more, the server copies
// the record files (index, HEAD, *_HEAD, packed-refs, COMMIT_EDITMSG) from
// the stage into the real directory, applies their deletions, and drops the
// rest, listing what it dropped; closing the stage frees it. A .git file (a worktree's or submodule's
// "gitdir:" pointer) is bound read-only (Spec.ReadOnly).

// GitLayout is what FindGitDirs found.
type GitLayout struct {
	// Dirs are real paths of git directories, parents before what they hold.
	Dirs []string
	// Links are .git files (pointers to a git directory).
	Links []string
}

// maxGitScan bounds the entries FindGitDirs looks at.
const maxGitScan = 50000

// FindGitDirs walks roots (at most maxGitScan entries, not descending into
// the folders skip names) for ".git" entries: git directories, with the
// submodule (modules/…) and worktree (worktrees/NAME) git directories they
// hold, and .git files, with the git directory they point to when it lies
// inside roots.
func FindGitDirs(roots []string, skip func(name string) bool) GitLayout {
	var out GitLayout
	seen := map[string]bool{}
	addDir := func(d string) {
		for _, g := range withNestedGitDirs(d) {
			// Every git directory is a real folder inside the roots, reached
			// through no symlink: the server writes into it after the command.
			if real, err := filepath.EvalSymlinks(g); err != nil || real != g || !within(g, roots) {
				continue
			}
			if !seen[g] {
				seen[g] = true
				out.Dirs = append(out.Dirs, g)
			}
		}
	}
	n := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n++; n > maxGitScan {
				return filepath.SkipAll
			}
			if d.Name() != ".git" {
				if d.IsDir() && p != root && skip != nil && skip(d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			switch {
			case d.IsDir():
				if real, err := filepath.EvalSymlinks(p); err == nil {
					addDir(real)
				}
				return filepath.SkipDir
			case d.Type().IsRegular():
				out.Links = append(out.Links, p)
				if g, ok := gitLinkTarget(p); ok && within(g, roots) {
					addDir(g)
				}
			case d.Type()&fs.ModeSymlink != 0:
				// A symlinked git directory: its target is protected (the
				// link itself can be replaced, like a new repository).
				if real, err := filepath.EvalSymlinks(p); err == nil && within(real, roots) {
					if fi, err := os.Stat(real); err == nil && fi.IsDir() {
						addDir(real)
					}
				}
			}
			return nil
		})
	}
	slices.Sort(out.Dirs) // a parent sorts before what it holds
	return out
}

// gitLinkTarget reads a .git file ("gitdir: PATH") and returns the real
// path of the folder it names.
func gitLinkTarget(file string) (string, bool) {
	f, err := os.Open(file)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", false
	}
	g := strings.TrimSpace(rest)
	if !filepath.IsAbs(g) {
		g = filepath.Join(filepath.Dir(file), g)
	}
	real, err := filepath.EvalSymlinks(g)
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", false
	}
	return real, true
}

// withNestedGitDirs returns g and the git directories beneath it: each
// worktrees/NAME, and each folder under modules/ holding a HEAD file (a
// submodule's name may contain slashes), recursively.
func withNestedGitDirs(g string) []string {
	out := []string{g}
	wt := filepath.Join(g, "worktrees")
	// Only a real worktrees folder: ReadDir would follow a symlink planted
	// there to any folder the command can see.
	if fi, err := os.Lstat(wt); err != nil || !fi.IsDir() {
		wt = ""
	}
	if ents, err := os.ReadDir(wt); wt != "" && err == nil {
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, filepath.Join(g, "worktrees", e.Name()))
			}
		}
	}
	mods := filepath.Join(g, "modules")
	_ = filepath.WalkDir(mods, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == mods {
			return nil
		}
		if fi, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil && fi.Mode().IsRegular() {
			out = append(out, withNestedGitDirs(p)...)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// stageName is the folder of the stage tmpfs holding the overlay's u and w
// of the i-th entry of Spec.GitDirs.
func stageName(i int) string { return strconv.Itoa(i) }

// makeGitStage (helper side) makes the stage of every git directory to
// overlay: a tmpfs of at most size bytes that is mounted nowhere (fsopen and
// fsmount: only the returned descriptor reaches it, so nothing in the
// sandbox can see it, and no host folder is made or removed per command),
// holding stageName(i)/u and /w for each, and sends it to the server over
// fdGitStage, which it closes. The server reads the stage after the command
// and frees it by closing its descriptor.
func makeGitStage(mounts []gitMount, size int64) (int, error) {
	defer unix.Close(fdGitStage)
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, step("git stage: fsopen tmpfs", err)
	}
	defer unix.Close(fsfd)
	for _, kv := range [][2]string{{"size", strconv.FormatInt(size, 10)}, {"mode", "0700"}} {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return -1, step("git stage: tmpfs "+kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, step("git stage: tmpfs create", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return -1, step("git stage: fsmount", err)
	}
	for _, m := range mounts {
		for _, d := range []string{m.name, m.name + "/u", m.name + "/w"} {
			if err := unix.Mkdirat(mfd, d, 0o700); err != nil {
				unix.Close(mfd)
				return -1, step("git stage: mkdir "+d, err)
			}
		}
	}
	if err := unix.Sendmsg(fdGitStage, []byte{'G'}, unix.UnixRights(mfd), nil, 0); err != nil {
		unix.Close(mfd)
		return -1, step("git stage: send to the server", err)
	}
	return mfd, nil
}

// receiveGitStage (server side) takes the stage the helper sent on c. The
// helper is gone by now, so the message is there or never will be: it does
// not wait. Nil when none came (the helper overlaid nothing).
func receiveGitStage(c *net.UnixConn) *os.File {
	if c == nil {
		return nil
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	var fds []int
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4*4))
	_ = rc.Read(func(fd uintptr) bool {
		_, oobn, _, _, err := unix.Recvmsg(int(fd), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
		if err != nil {
			return true
		}
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		for _, m := range msgs {
			got, _ := unix.ParseUnixRights(&m)
			fds = append(fds, got...)
		}
		return true
	})
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil
	}
	return os.NewFile(uintptr(fds[0]), "git-stage")
}

// mergeGitStages brings the record files the command changed into the real
// git directories, drops everything else, frees the stage and returns what
// was dropped (or could not be kept). Called once the command is gone, with
// the stage receiveGitStage took (nil: nothing was overlaid).
//
// What it writes to the host is bounded by what the stage could hold
// (size, the stage tmpfs's size) and by maxMergedRecords *_HEAD files
// (index, HEAD, packed-refs and COMMIT_EDITMSG always count, so a command
// that makes many cannot push a commit's own records out): the copy
// runs after the command, beyond its time limit and rlimits, so a sparse
// file (little room in the stage, its length in zeros on the host) or
// thousands of record-named files are dropped, not written out.
func mergeGitStages(dirs []string, stage *os.File, size int64) []string {
	if stage == nil {
		return nil
	}
	defer stage.Close() // the last reference: the stage tmpfs goes with it
	root := "/proc/self/fd/" + strconv.Itoa(int(stage.Fd()))
	var dropped []string
	var keptBytes int64
	keptHeads := 0
	for i := range dirs {
		up := filepath.Join(root, stageName(i), "u")
		// The command never sees the stage (it is mounted nowhere); what
		// the overlay put there is read without following a symlink in
		// place of u or of an entry all the same.
		if fi, err := os.Lstat(up); err != nil || !fi.IsDir() {
			continue
		}
		ents, _ := os.ReadDir(up)
		for _, e := range ents {
			name, dst := e.Name(), filepath.Join(dirs[i], e.Name())
			fi, err := e.Info()
			switch {
			case err != nil:
				dropped = append(dropped, dst+" ("+err.Error()+")")
			case slices.Contains(gitmeta.RecordDirs(), name) || name == "modules" || name == "worktrees":
				// bound over or overlaid: nothing of theirs is in the stage
			case !gitmeta.RecordFile(name):
				dropped = append(dropped, dst)
			case fi.Mode()&fs.ModeCharDevice != 0 && rawStat(fi).Rdev == 0:
				// an overlay whiteout: the command deleted it
				if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
					dropped = append(dropped, dst+" (deletion not kept: "+err.Error()+")")
				}
			case fi.Mode().IsRegular() && rawStat(fi).Blocks*512 < fi.Size():
				dropped = append(dropped, dst+" (not kept: a sparse file)")
			case fi.Mode().IsRegular() && (extraHead(name) && keptHeads >= maxMergedRecords || keptBytes+fi.Size() > size):
				dropped = append(dropped, dst+" (not kept: the git records written exceed what the stage holds)")
			case fi.Mode().IsRegular():
				if extraHead(name) {
					keptHeads++
				}
				keptBytes += fi.Size()
				if err := copyInto(dirs[i], name, filepath.Join(up, name), fi.Mode().Perm()); err != nil {
					dropped = append(dropped, dst+" (not kept: "+err.Error()+")")
				}
			default:
				dropped = append(dropped, dst+" (not a regular file)")
			}
		}
		dropped = append(dropped, droppedInfo(root, i, dirs[i])...)
	}
	return dropped
}

// droppedInfo lists what the command changed in the objects/info of the
// git directory dir (the i-th), which its own overlay kept in the stage:
// none of it is kept.
func droppedInfo(root string, i int, dir string) []string {
	up := filepath.Join(root, infoStageName(i), "u")
	if fi, err := os.Lstat(up); err != nil || !fi.IsDir() {
		return nil
	}
	ents, _ := os.ReadDir(up)
	var out []string
	for _, e := range ents {
		out = append(out, filepath.Join(dir, "objects", "info", e.Name()))
	}
	return out
}

// rawStat is the stat of an entry os read (a *syscall.Stat_t on Linux; a
// zero one, which keeps nothing as a whiteout, should that ever change).
func rawStat(fi fs.FileInfo) syscall.Stat_t {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return *st
	}
	return syscall.Stat_t{Rdev: ^uint64(0)}
}

// extraHead reports a record file of the open-ended *_HEAD kind (FETCH_HEAD,
// ORIG_HEAD, ...), the kind a command could make without end.
func extraHead(name string) bool { return name != "HEAD" && strings.HasSuffix(name, "_HEAD") }

// maxMergedRecords bounds the *_HEAD record files brought back per command: git
// writes a handful (FETCH_HEAD, ORIG_HEAD, MERGE_HEAD, ...).
const maxMergedRecords = 256

// copyInto replaces dir/name with the contents of src: a temporary file
// beside it, synced, then renamed over it.
func copyInto(dir, name, src string, perm fs.FileMode) error {
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dir, "."+name+".onellm-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Chmod(perm & 0o777)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// gitMount is one git directory to overlay, with descriptors opened on the
// real folders before any overlay hides them.
type gitMount struct {
	dir     string
	name    string // stageName of its Spec.GitDirs index
	real    int    // the git directory
	entries []gitEntry
}

type gitEntry struct {
	name string
	fd   int
	ro   bool
}

// openGitMounts opens, on the real folders, every descriptor the overlays
// need (helper side).
func openGitMounts(hs *helperSpec) []gitMount {
	var mounts []gitMount
	for i, g := range hs.GitDirs {
		fd, err := unix.Open(g, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone since it was found: nothing to protect
		}
		mounts = append(mounts, gitMount{dir: g, name: stageName(i), real: fd})
		m := &mounts[len(mounts)-1]
		add := func(name string, ro bool) {
			efd, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return
			}
			var sb unix.Stat_t
			if unix.Fstat(efd, &sb) != nil || sb.Mode&unix.S_IFMT == unix.S_IFLNK {
				unix.Close(efd) // a symlink stays the overlay's: a change to it is dropped
				return
			}
			m.entries = append(m.entries, gitEntry{name: name, fd: efd, ro: ro})
		}
		for _, name := range gitmeta.RecordDirs() {
			add(name, false)
		}
		for _, name := range gitmeta.GuardedEntries() {
			add(name, true)
		}
		if info, ok := openObjectsInfo(m); ok {
			mounts = append(mounts, gitMount{dir: filepath.Join(g, "objects", "info"), name: infoStageName(i), real: info})
		}
	}
	return mounts
}

// infoStageName is the folder of the stage holding the overlay of the i-th
// git directory's objects/info.
func infoStageName(i int) string { return stageName(i) + "-info" }

// openObjectsInfo opens objects/info of a git directory whose objects
// folder is bound back writable (helper side), making it first when it is
// missing (an empty folder, as git init makes it). It gets an overlay of
// its own, so what a command writes there stays in the stage and is
// dropped: objects/info/alternates and http-alternates make git read
// objects from any folder they name; the rest (commit-graph, packs) is a
// cache git rebuilds. Fail closed: when objects/info cannot be opened as a
// real folder (a symlink there), the objects folder is not bound back
// either, so all the command writes in it is dropped.
func openObjectsInfo(m *gitMount) (int, bool) {
	i := slices.IndexFunc(m.entries, func(e gitEntry) bool { return e.name == "objects" })
	if i < 0 {
		return -1, false // no objects folder bound back: its writes stay in the stage
	}
	fd, err := openInfo(m.entries[i].fd)
	if err != nil {
		unix.Close(m.entries[i].fd)
		m.entries = slices.Delete(m.entries, i, i+1)
		return -1, false
	}
	return fd, true
}

// openInfo opens (an O_PATH descriptor on) the real folder info in the
// objects folder objects, making it when it is missing.
func openInfo(objects int) (int, error) {
	obj, err := unix.Openat(objects, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(obj)
	if err := unix.Mkdirat(obj, "info", 0o755); err != nil && err != unix.EEXIST {
		return -1, err
	}
	return unix.Openat(obj, "info", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

func closeGitMounts(mounts []gitMount) {
	for _, m := range mounts {
		unix.Close(m.real)
		for _, e := range m.entries {
			unix.Close(e.fd)
		}
	}
}

// mountGitOverlays mounts the overlays, parents first, and binds the real
// record folders (writable) and guarded entries (read-only) back into each.
// The folders holding a git directory that is not inside another one are
// pinned first, so the repository cannot be moved aside and replaced.
func mountGitOverlays(mounts []gitMount, stage int, writable []string, pinned map[string]bool) error {
	fdPath := func(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
	// The xattrs overlayfs may keep on the stage: trusted.* where the
	// kernel lets this process set them (init user namespace with
	// CAP_SYS_ADMIN), user.* with userxattr elsewhere, uid 0 inside a user
	// namespace included: the same probe as the /etc mask's.
	trusted, err := trustedXattrs(stage)
	if err != nil {
		return step("overlay git directories", err)
	}
	var done []string
	for _, m := range mounts {
		if !within(m.dir, done) {
			if err := pinAncestors(m.dir, writable, pinned); err != nil {
				return err
			}
		}
		done = append(done, m.dir)
		// volatile: the upper layer is never synced (it is a tmpfs the
		// merge reads back and then frees).
		st := fdPath(stage) + "/" + m.name
		opts := "lowerdir=" + fdPath(m.real) + ",upperdir=" + st + "/u,workdir=" + st + "/w,volatile"
		if !trusted {
			opts += ",userxattr"
		}
		if err := step("overlay "+m.dir, unix.Mount("overlay", m.dir, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts)); err != nil {
			return err
		}
		for _, e := range m.entries {
			p := filepath.Join(m.dir, e.name)
			if err := step("bind "+p, unix.Mount(fdPath(e.fd), p, "", unix.MS_BIND, "")); err != nil {
				return err
			}
			attrs := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
			if e.ro {
				attrs |= unix.MOUNT_ATTR_RDONLY
			}
			if err := step("flags "+p, addMountAttrs(p, attrs)); err != nil {
				return err
			}
		}
	}
	return nil
}
