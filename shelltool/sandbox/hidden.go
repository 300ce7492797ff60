//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Hidden files stay hidden for the whole command, whatever the host does
// to them meanwhile (helper side).
//
// /etc: a read-only overlay whose top layer (a tmpfs mounted nowhere) holds,
// for every secret name, an empty mode-0 file or an opaque mode-0 folder
// where the secret exists when the helper starts (before its spec) and a
// whiteout where it does not (at the first missing component of its path,
// or the first the helper's uid cannot reach):
// the name is masked by the overlay
// itself, not by a mount on the host's entry, so a host that renames a new
// /etc/shadow into place or creates /etc/krb5.keytab mid-command changes
// nothing the command can see. The mounts beneath /etc (a container's
// resolv.conf, hosts, hostname binds), which an overlay does not show, are
// bound back on top, unless they lie at or beneath a secret name; one that
// holds a secret name gets the same overlay (applyMask again).
//
// Elsewhere (Spec.Hidden: credential files inside the writable roots,
// which must stay writable around them) a placeholder is bound over each
// path, as are ReadOnly carve-outs. A host that replaces such a path by a
// rename (an editor saving .env) or removes it makes the kernel detach the
// mount in every namespace; nothing can keep the name masked then. PID 1
// therefore watches the namespace's mount table (/proc/self/mountinfo polls
// with POLLPRI on every change; once the set-up is done the table of this
// private namespace only changes when a mount is detached) and at a change
// that lost a mount of the set-up kills every process of the command
// (kill(-1, SIGKILL)), and the server drops the command's output: see
// guardWatch.

// guard is a mount of the set-up whose loss the command must not survive.
type guard struct {
	id   uint64 // mount ID, as /proc/self/mountinfo gives it (openWatch)
	path string // resolved: no symlink
	verb string // what its loss would let the command do: "read", "write"
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	id, parent uint64
	point      string
}

// parseMountinfo reads the mount ID, parent ID and mount point of each line
// of /proc/PID/mountinfo; a malformed line is skipped.
func parseMountinfo(b []byte) []mountEntry {
	var out []mountEntry
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.SplitN(line, " ", 6)
		if len(f) < 6 {
			continue
		}
		id, err1 := strconv.ParseUint(f[0], 10, 64)
		parent, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, mountEntry{id: id, parent: parent, point: unescapeMountinfo(f[4])})
	}
	return out
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 space, \011
// tab, \012 newline, \134 backslash) of a mountinfo path.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountID is the ID of the mount path resolves to (the topmost one there).
func mountID(path string) (uint64, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_MNT_ID, &st); err != nil {
		return 0, err
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return 0, errors.New("statx gives no mount ID")
	}
	return st.Mnt_id, nil
}

// phKind is what the top layer holds at a secret's name.
type phKind int

const (
	phWhiteout phKind = iota // the name does not exist at set-up
	phFile                   // an empty mode-0 file (a file, symlink or other)
	phDir                    // an opaque mode-0 folder
)

// phPlan is the top layer of one masking overlay.
type phPlan struct {
	entries map[string]phKind      // relative name → what masks it
	parents map[string]os.FileInfo // folders on the way (host's attributes)
	outside []string               // symlink targets outside the folder
}

// expandSecrets turns the names of etcSecrets (a trailing "*" is a prefix
// pattern, matched against the names present now) into plain names.
func expandSecrets(dir string, names []string) []string {
	var out []string
	for _, n := range names {
		prefix, ok := strings.CutSuffix(n, "*")
		if !ok {
			out = append(out, n)
			continue
		}
		parent := filepath.Dir(prefix)
		ents, _ := os.ReadDir(filepath.Join(dir, parent))
		for _, e := range ents {
			if q := filepath.Join(parent, e.Name()); strings.HasPrefix(q, prefix) {
				out = append(out, q)
			}
		}
	}
	return out
}

// planMask decides the top layer masking names (relative, clean) in dir.
// A symlink on the way is followed: its target is masked too, in dir (one
// more name) or, outside it, by a bind (plan.outside).
func planMask(dir string, names []string) (*phPlan, error) {
	p := &phPlan{entries: map[string]phKind{}, parents: map[string]os.FileInfo{}}
	queue := append([]string(nil), names...)
	seen := map[string]bool{}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		if len(seen) > 4*len(names)+64 {
			return nil, fmt.Errorf("mask %s: too many symlinks among the secret names", dir)
		}
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("mask %s: secret name %q is not a relative path inside it", dir, name)
		}
		comps := strings.Split(name, "/")
		for i := range comps {
			rel := strings.Join(comps[:i+1], "/")
			fi, err := os.Lstat(filepath.Join(dir, rel))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				// Absent, or in a folder the helper cannot search (a
				// non-root server's): a whiteout masks the name and
				// all beneath it whatever lies there, and the command,
				// with the helper's uid and no capabilities, could not
				// have reached it anyway.
				p.entries[rel] = phWhiteout
				break
			}
			if err != nil {
				return nil, fmt.Errorf("mask %s: %w", filepath.Join(dir, rel), err)
			}
			last := i == len(comps)-1
			if fi.Mode()&fs.ModeSymlink != 0 {
				if last {
					p.entries[rel] = phFile
				}
				target, err := filepath.EvalSymlinks(filepath.Join(dir, rel))
				if err != nil {
					break // dangling: the name itself is masked when it is the secret
				}
				target = filepath.Join(append([]string{target}, comps[i+1:]...)...)
				if r, err := filepath.Rel(dir, target); err == nil && filepath.IsLocal(r) {
					queue = append(queue, r)
				} else {
					p.outside = append(p.outside, target)
				}
				break
			}
			if last {
				p.entries[rel] = phFile
				if fi.IsDir() {
					p.entries[rel] = phDir
				}
				break
			}
			if !fi.IsDir() {
				break // a file cannot hold the name
			}
			p.parents[rel] = fi
		}
	}
	return p, nil
}

// buildTopLayer makes the plan's top layer on a fresh tmpfs mounted
// nowhere (only the returned descriptor reaches it). Folders on the way
// get the host's mode (and owner, where the helper can set it: the overlay
// shows the top layer's attributes for a merged folder).
// It tells whether the overlay must read user.* xattrs (trustedXattrs).
func buildTopLayer(p *phPlan) (int, bool, error) {
	fsfd, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, false, fmt.Errorf("fsopen tmpfs: %w", err)
	}
	defer unix.Close(fsfd)
	for _, kv := range [][2]string{{"size", "1m"}, {"mode", "0755"}} {
		if err := unix.FsconfigSetString(fsfd, kv[0], kv[1]); err != nil {
			return -1, false, fmt.Errorf("tmpfs %s: %w", kv[0], err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, false, fmt.Errorf("tmpfs create: %w", err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return -1, false, fmt.Errorf("fsmount tmpfs: %w", err)
	}
	trusted, err := trustedXattrs(mfd)
	if err == nil {
		err = fillTopLayer(mfd, p, trusted)
	}
	if err != nil {
		unix.Close(mfd)
		return -1, false, err
	}
	return mfd, !trusted, nil
}

func fillTopLayer(mfd int, p *phPlan, trusted bool) error {
	opaque := "trusted.overlay.opaque"
	if !trusted {
		opaque = "user.overlay.opaque" // with the userxattr option
	}
	names := make([]string, 0, len(p.entries))
	for n := range p.entries {
		names = append(names, n)
	}
	sort.Strings(names) // a parent before what it holds
	made := map[string]bool{}
	var masked []string // what lies beneath is hidden already
	for _, n := range names {
		if within(n, masked) {
			continue
		}
		masked = append(masked, n)
		comps := strings.Split(n, "/")
		for i := 1; i < len(comps); i++ {
			d := strings.Join(comps[:i], "/")
			if made[d] {
				continue
			}
			made[d] = true
			if err := unix.Mkdirat(mfd, d, 0o755); err != nil {
				return fmt.Errorf("mkdir %s: %w", d, err)
			}
			if fi, ok := p.parents[d]; ok {
				st, _ := fi.Sys().(*syscall.Stat_t)
				if st != nil { // the owner cannot be set in a user namespace
					_ = unix.Fchownat(mfd, d, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
				}
				if err := unix.Fchmodat(mfd, d, uint32(fi.Mode().Perm()), 0); err != nil {
					return fmt.Errorf("chmod %s: %w", d, err)
				}
			}
		}
		var err error
		switch p.entries[n] {
		case phWhiteout:
			err = unix.Mknodat(mfd, n, unix.S_IFCHR, 0)
		case phFile:
			var fd int
			fd, err = unix.Openat(mfd, n, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
		case phDir:
			err = unix.Mkdirat(mfd, n, 0)
			if err == nil {
				err = unix.Lsetxattr("/proc/self/fd/"+strconv.Itoa(mfd)+"/"+n, opaque, []byte("y"), 0)
			}
		}
		if err != nil {
			return fmt.Errorf("placeholder %s: %w", n, err)
		}
	}
	return nil
}

// initialUserNS tells whether the process seems to run in the initial
// user namespace, whose uid_map maps every ID to itself ("0 0
// 4294967295"); uid 0 of a user namespace (a rootless container, unshare
// -Ur) does not, and the mounts it inherited are locked. A namespace may
// copy that map, so nothing that masks depends on this alone: it only
// picks binds over an overlay that the kernel would refuse (EINVAL, which
// applyMask answers with binds too); the xattrs follow a probe
// (trustedXattrs).
func initialUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	return err == nil && isIdentityMap(b)
}

// isIdentityMap tells whether b (a uid_map) is the initial namespace's.
func isIdentityMap(b []byte) bool {
	return slices.Equal(strings.Fields(string(b)), []string{"0", "0", "4294967295"})
}

// trustedXattrs tells whether the process may set trusted.* xattrs on the
// top layer (at mfd), which takes CAP_SYS_ADMIN in the initial user
// namespace: then the overlay reads trusted.overlay.*. Otherwise it must
// read user.overlay.* (userxattr): an overlay mounted without that
// option by such a process would not see an opaque mark it cannot read
// and would show the folder's contents.
func trustedXattrs(mfd int) (bool, error) {
	root := "/proc/self/fd/" + strconv.Itoa(mfd) // followed: the layer's root
	const probe = "trusted.onellm-probe"
	switch err := unix.Setxattr(root, probe, []byte("y"), 0); {
	case errors.Is(err, unix.EPERM):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("probe trusted xattrs: %w", err)
	}
	if err := unix.Removexattr(root, probe); err != nil {
		return false, fmt.Errorf("probe trusted xattrs: %w", err)
	}
	return true, nil
}

// maskPrep is what masking a folder needs that no spec decides: its
// submounts and its top layer, made before the spec arrives (a warm helper
// makes it while it waits, off the command's path). A name's state is read
// then: what the host changes later is masked all the same (a whiteout, a
// placeholder and an opaque folder all mask a name whatever lies below).
// A secret pattern is expanded then, and again when the spec has arrived
// (refresh: a warm helper may have waited for hours); a name it matches
// that is made after that, mid-command, is not masked.
type maskPrep struct {
	dir   string
	raw   []string // as given: patterns unexpanded
	names []string // expanded
	subs  []string
	binds bool    // user namespace with mounts beneath dir: binds instead
	plan  *phPlan // names outside the submounts kept
	layer int     // the top layer's mount, -1 when none
	user  bool    // the layer's xattrs are user.* (mount with userxattr)
	err   error
}

// prepareMask reads dir and makes its top layer for names (patterns
// expanded now). Errors are kept for applyMask: nothing runs without it.
func prepareMask(dir string, names []string) *maskPrep {
	m := &maskPrep{dir: dir, raw: names, names: expandSecrets(dir, names), layer: -1}
	m.subs, m.err = submounts(dir)
	if m.err != nil {
		return m
	}
	if len(m.subs) > 0 && !initialUserNS() {
		// A user namespace: the mounts beneath dir are locked, and the
		// kernel refuses a layer with locked mounts beneath it
		// (clone_private_mount: EINVAL). Each secret present gets a bind
		// instead, which the watch guards (see the package doc).
		m.binds = true
		return m
	}
	var top []string // names that no submount kept holds
	for _, n := range m.names {
		if !within(filepath.Join(dir, n), m.kept()) {
			top = append(top, n)
		}
	}
	if m.plan, m.err = planMask(dir, top); m.err != nil {
		return m
	}
	m.layer, m.user, m.err = buildTopLayer(m.plan)
	return m
}

// kept are the submounts bound back on top of the overlay: those not at
// or beneath a secret name.
func (m *maskPrep) kept() []string {
	var out []string
	for _, s := range m.subs {
		rel, _ := filepath.Rel(m.dir, s)
		if !within(rel, m.names) {
			out = append(out, s)
		}
	}
	return out
}

// bindPaths are the paths to mask by binds in bind mode: every secret.
func (m *maskPrep) bindPaths() []string {
	var paths []string
	for _, n := range m.names {
		paths = append(paths, filepath.Join(m.dir, n))
	}
	return paths
}

// refresh expands m's patterns again and remakes m when what they match
// changed since prepareMask (one directory read per pattern otherwise).
func (m *maskPrep) refresh() {
	if m.err != nil || slices.Equal(expandSecrets(m.dir, m.raw), m.names) {
		return
	}
	fresh := prepareMask(m.dir, m.raw)
	m.close()
	*m = *fresh
}

func (m *maskPrep) close() {
	if m != nil && m.layer >= 0 {
		unix.Close(m.layer)
		m.layer = -1
	}
}

// applyMask mounts the masking overlay over m.dir and binds the kept
// submounts back on top, masking those that hold a secret name the same
// way (prepareMask and applyMask again). It returns the overlays' guards
// and the paths to hide by binds instead (symlink targets outside the
// folder; every secret in bind mode).
func applyMask(m *maskPrep, depth int) ([]guard, []string, error) {
	defer m.close()
	m.refresh()
	if m.err != nil {
		return nil, nil, step("hide "+m.dir, m.err)
	}
	if m.binds {
		return nil, m.bindPaths(), nil
	}
	if depth > 8 {
		return nil, nil, step("hide "+m.dir, errors.New("mounts nested too deep beneath the secret folder"))
	}
	type rebind struct {
		path string
		fd   int
	}
	var keep []rebind
	defer func() {
		for _, k := range keep {
			if k.fd >= 0 {
				unix.Close(k.fd)
			}
		}
	}()
	for _, s := range m.kept() {
		fd, err := unix.OpenTree(unix.AT_FDCWD, s, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return nil, nil, step("hide "+m.dir+": clone the mount at "+s, err)
		}
		keep = append(keep, rebind{path: s, fd: fd})
	}
	lower, err := unix.Open(m.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, step("hide "+m.dir, err)
	}
	defer unix.Close(lower)
	opts := "lowerdir=/proc/self/fd/" + strconv.Itoa(m.layer) + ":/proc/self/fd/" + strconv.Itoa(lower)
	if m.user {
		opts += ",userxattr" // a user namespace: trusted.* is not ours
	}
	err = unix.Mount("overlay", m.dir, "overlay", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, opts)
	if errors.Is(err, unix.EINVAL) && len(m.subs) > 0 {
		// Locked mounts beneath dir (a user namespace initialUserNS
		// did not tell): binds instead, as prepareMask decides there.
		return nil, m.bindPaths(), nil
	}
	if err != nil {
		return nil, nil, step("hide "+m.dir+": overlay", err)
	}
	guards := []guard{{path: m.dir, verb: "read"}}
	outside := append([]string(nil), m.plan.outside...)
	for i := range keep {
		k := &keep[i]
		err := unix.MoveMount(k.fd, "", unix.AT_FDCWD, k.path, unix.MOVE_MOUNT_F_EMPTY_PATH)
		unix.Close(k.fd)
		k.fd = -1
		if err != nil {
			return nil, nil, step("hide "+m.dir+": bind back "+k.path, err)
		}
		rel, _ := filepath.Rel(m.dir, k.path)
		var inner []string
		for _, n := range m.names {
			if r, ok := strings.CutPrefix(n, rel+"/"); ok {
				inner = append(inner, r)
			}
		}
		if len(inner) > 0 {
			g, o, err := applyMask(prepareMask(k.path, inner), depth+1)
			if err != nil {
				return nil, nil, err
			}
			guards, outside = append(guards, g...), append(outside, o...)
		}
	}
	return guards, outside, nil
}

// submounts are the mount points of the mounts directly on dir's mount
// strictly beneath dir, outermost first (each comes back with what is
// mounted beneath it).
func submounts(dir string) ([]string, error) {
	id, err := mountID(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range parseMountinfo(b) {
		if m.parent == id && m.point != dir && isBeneath(m.point, dir) && !seen[m.point] {
			seen[m.point] = true
			out = append(out, m.point)
		}
	}
	sort.Strings(out)
	return out, nil
}

// guardWatch is PID 1's watch over the mount table once the command runs.
type guardWatch struct {
	guards []guard
	// made are the mounts of the set-up (by ID: their mount points): the
	// namespace's mounts that were not inherited from the server's.
	made  map[uint64]string
	fd    int // polled by the watching goroutine
	final int // polled once, when the shell has exited
	mu    sync.Mutex
	why   atomic.Pointer[string]
}

// mountIDs reads the IDs of the namespace's mounts.
func mountIDs() (map[uint64]bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	ids := map[uint64]bool{}
	for _, m := range parseMountinfo(b) {
		ids[m.id] = true
	}
	return ids, nil
}

// openWatch opens the namespace's mount table (twice), notes the mounts
// the set-up made (those not in inherited), checks that every guard's path
// is still a mount's root and notes that mount's ID: a change from now on,
// even before the command starts, is seen.
func openWatch(guards []guard, inherited map[uint64]bool) (*guardWatch, error) {
	w := &guardWatch{guards: guards, made: map[uint64]string{}, fd: -1, final: -1}
	var err error
	if w.fd, err = unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return nil, step("watch mounts", err)
	}
	if w.final, err = unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		w.close()
		return nil, step("watch mounts", err)
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		w.close()
		return nil, step("watch mounts", err)
	}
	for _, m := range parseMountinfo(b) {
		if !inherited[m.id] {
			w.made[m.id] = m.point
		}
	}
	var kept []guard
	for _, g := range guards {
		// The mount the command will see there (a later bind of a
		// folder holding it, such as a pinned ancestor, copies it).
		var st unix.Statx_t
		err := unix.Statx(unix.AT_FDCWD, g.path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &st)
		if errors.Is(err, unix.ENOENT) && coveredBy(g.path, guards) {
			continue // a hidden folder's placeholder holds it: nothing to see
		}
		if err == nil && (st.Mask&unix.STATX_MNT_ID == 0 || st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0) {
			err = errors.New("statx gives no mount ID or mount root attribute")
		}
		if err != nil {
			w.close()
			return nil, step("watch mounts: "+g.path, err)
		}
		if st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
			w.close()
			return nil, step("watch mounts", fmt.Errorf("%s was replaced on the host while the sandbox was set up", g.path))
		}
		g.id = st.Mnt_id
		kept = append(kept, g)
	}
	w.guards = kept
	return w, nil
}

// coveredBy tells whether p lies beneath the path of another guard.
func coveredBy(p string, guards []guard) bool {
	for _, g := range guards {
		if g.path != p && isBeneath(p, g.path) {
			return true
		}
	}
	return false
}

func (w *guardWatch) close() {
	for _, fd := range []int{w.fd, w.final} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// start runs the watch in a goroutine of its own. The helper runs with
// GOMAXPROCS=1 and PID 1's main thread blocks in raw system calls (wait4)
// that never hand its processor back, so the watch gets a second one.
func (w *guardWatch) start() {
	runtime.GOMAXPROCS(2)
	go w.run()
}

// run waits for a change of the mount table that loses a mount of the
// set-up, then kills every process of the namespace at once (PID 1
// excepted) and records why. A change that loses only mounts the namespace
// inherited (the host removing a container's folder, say) hides nothing
// and is ignored: the poll is re-armed by the poll itself.
func (w *guardWatch) run() {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(fds, -1)
		if err == unix.EINTR || (err == nil && n == 0) {
			continue
		}
		if err == nil && fds[0].Revents&(unix.POLLNVAL|unix.POLLHUP) == 0 && w.lost() == "" {
			continue
		}
		_ = unix.Kill(-1, unix.SIGKILL)
		w.record(err)
		return
	}
}

// lost names a mount of the set-up that is gone: a guard first (one statx
// each, the quickest check), then any other by the mount table; "" when
// none is. A table that cannot be read counts as lost.
func (w *guardWatch) lost() string {
	for _, g := range w.guards {
		var st unix.Statx_t
		err := unix.Statx(unix.AT_FDCWD, g.path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &st)
		if err != nil || st.Mnt_id != g.id {
			return g.path
		}
	}
	now, err := mountIDs()
	if err != nil {
		return "/proc/self/mountinfo"
	}
	for id, p := range w.made {
		if !now[id] {
			return p
		}
	}
	return ""
}

// stopped is called by PID 1 once the shell has exited: it kills what is
// left of the command (so nothing reads after this check) and tells why
// the command was stopped, or "" when no mount of the set-up was lost.
func (w *guardWatch) stopped() string {
	if w == nil {
		return ""
	}
	_ = unix.Kill(-1, unix.SIGKILL)
	fds := []unix.PollFd{{Fd: int32(w.final), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	if err != nil || (n > 0 && w.lost() != "") {
		w.record(err)
	}
	if p := w.why.Load(); p != nil {
		return *p
	}
	return ""
}

// record sets why the command was stopped (once): the first guard whose
// mount is gone, else the first mount of the set-up gone.
func (w *guardWatch) record(pollErr error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.why.Load() != nil {
		return
	}
	msg := "the sandbox's mount table changed while the command ran; the command was killed"
	if pollErr != nil {
		msg = fmt.Sprintf("the sandbox's mounts could not be watched (%v); the command was killed", pollErr)
	}
	now, _ := mountIDs()
	gone := ""
	for _, g := range w.guards {
		if !now[g.id] {
			msg = fmt.Sprintf("%s was replaced or removed on the host while the command ran; the command was killed so it could not %s it", g.path, g.verb)
			gone = g.path
			break
		}
	}
	if gone == "" {
		var lost []string
		for id, p := range w.made {
			if !now[id] {
				lost = append(lost, p)
			}
		}
		sort.Strings(lost)
		if len(lost) > 0 {
			msg = fmt.Sprintf("the mount at %s was removed on the host while the command ran; the command was killed", lost[0])
		}
	}
	w.why.Store(&msg)
}

// stoppedResult applies the helper's reason for stopping the command to
// res: the output is dropped, since the command may have read a file that
// was no longer hidden in the moment before the kill.
func stoppedResult(res *Result, why string) {
	if why == "" {
		return
	}
	res.Stopped = why
	res.Stdout, res.Stderr = "", ""
}

// resolved is p with its symlinks resolved (a bind lands on the target),
// or p itself when that fails.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
