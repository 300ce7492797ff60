// Package fstools owns read_file and apply_patch, and the safe path handling
// they share: a path is resolved once to its real path, the policy decides
// that path, and the file is then opened by that real path with the kernel
// refusing any symlink on the way (openat2 RESOLVE_NO_SYMLINKS), so a
// component swapped for a symlink between the decision and the open makes the
// open fail instead of reaching another file. EntryNames lists a folder the
// same way, for the exec gate (a removal of every entry of the workspace).
//
// Security model: what was decided is what is opened. Hard links are not
// symlinks: a hard link inside the workspace to a file outside it is read as
// the workspace file it appears to be (the sandbox and file permissions are
// the defence there). Writes replace files by rename, so they never write
// through a hard link into another file.
//
// apply_patch also owns what happens between the read and the write: calls
// changing one real path are serialised (locks.go); each new file is
// swapped in with RENAME_EXCHANGE and the file it displaced must be the one
// read, so a change made meanwhile by another process is never overwritten
// (commit.go); a multi-file patch keeps a journal in the server's state
// folder that the next start settles, back or forward (journal.go). Patch
// paths are always relative to the workspace, and every change that reads
// a file's content also asks to read it, so no error or dry run shows text
// the policy keeps from the model.
package fstools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/grants"
)

// Resolved is a path after resolution: absolute, cleaned, symlinks followed
// in every component that exists.
type Resolved struct {
	Real        string // the path the policy decides and the tool opens
	Exists      bool   // the final component exists (as a non-symlink after resolution)
	InWorkspace bool
}

// Resolve turns a tool's path argument (absolute, "~/…", or relative to the
// workspace) into its real path. It refuses NUL bytes and empty paths.
func Resolve(p *grants.Policy, arg string) (Resolved, error) {
	if arg == "" {
		return Resolved{}, errors.New("path is empty")
	}
	if strings.IndexByte(arg, 0) >= 0 {
		return Resolved{}, errors.New("path contains a NUL byte")
	}
	if len(arg) > 4096 {
		return Resolved{}, errors.New("path is longer than 4096 bytes")
	}
	var abs string
	switch {
	case arg == "~" || strings.HasPrefix(arg, "~/"):
		if p.Home == "" {
			return Resolved{}, errors.New("~ used but the home folder is unknown")
		}
		abs = filepath.Join(p.Home, strings.TrimPrefix(arg[1:], "/"))
	case filepath.IsAbs(arg):
		abs = filepath.Clean(arg)
	default:
		abs = filepath.Join(p.Workspace, arg)
	}
	real, exists, err := realPath(abs)
	if err != nil {
		return Resolved{}, err
	}
	return Resolved{Real: real, Exists: exists, InWorkspace: p.InWorkspace(real)}, nil
}

// ResolveRelative resolves a path a patch names (a diff's or an envelope's
// path): always relative to the workspace, as git apply reads them, so
// "~/x" is the file "~/x" in the workspace, never one in the home folder.
// The patch parser has already refused absolute paths and "..".
func ResolveRelative(p *grants.Policy, rel string) (Resolved, error) {
	if rel == "" || strings.IndexByte(rel, 0) >= 0 || len(rel) > 4096 || filepath.IsAbs(rel) {
		return Resolved{}, fmt.Errorf("path %q is not a relative path", rel)
	}
	real, exists, err := realPath(filepath.Join(p.Workspace, rel))
	if err != nil {
		return Resolved{}, err
	}
	return Resolved{Real: real, Exists: exists, InWorkspace: p.InWorkspace(real)}, nil
}

// maxLinks bounds how many dangling symlinks one resolution follows (the
// kernel's own limit is 40).
const maxLinks = 40

// realPath resolves symlinks in the longest existing prefix of abs and
// appends the missing rest. A dangling symlink is followed to where it
// points: that is the file a writer (a shell's `> link`) would create, so
// it is what must be decided, not the link's own name.
func realPath(abs string) (string, bool, error) { return realPathLinks(abs, 0) }

func realPathLinks(abs string, links int) (string, bool, error) {
	var rest []string
	for cur := abs; ; cur = filepath.Dir(cur) {
		real, err := kernelRealPath(cur)
		if err == nil {
			if len(rest) == 0 {
				return real, true, nil
			}
			return filepath.Join(append([]string{real}, rest...)...), false, nil
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.ENOTDIR) {
			return "", false, fmt.Errorf("resolving %s: %w", abs, unwrap(err))
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return followDangling(abs, cur, rest, links)
		}
		if cur == "/" {
			return abs, false, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
	}
}

// followDangling resolves abs whose prefix cur is a symlink to nothing:
// the link's target, taken from the link's real folder, then the rest.
func followDangling(abs, cur string, rest []string, links int) (string, bool, error) {
	if links >= maxLinks {
		return "", false, fmt.Errorf("resolving %s: too many levels of symbolic links", abs)
	}
	target, err := os.Readlink(cur)
	if err != nil {
		// cur changed since it was seen as a link (replaced meanwhile):
		// resolve the whole path again.
		return realPathLinks(abs, links+1)
	}
	if !filepath.IsAbs(target) {
		dir, _, err := realPathLinks(filepath.Dir(cur), links+1)
		if err != nil {
			return "", false, err
		}
		target = filepath.Join(dir, target)
	}
	real, _, err := realPathLinks(filepath.Join(append([]string{target}, rest...)...), links+1)
	return real, false, err
}

// kernelRealPath asks the kernel for the real path of an existing file p
// (absolute and clean). Most paths hold no symlink: opened with the kernel
// refusing every symlink on the way (openat2 RESOLVE_NO_SYMLINKS, O_PATH),
// such a path is its own real path, in two system calls. Any other error
// of that open is the error following symlinks would give too: the walk
// is the same up to the component that failed. A path with a symlink
// (ELOOP) is opened following symlinks, with O_PATH, and the
// descriptor's name read back from /proc, a few system calls however deep
// the path is. A file renamed meanwhile (an editor's save, another patch's
// exchange) would give its new name, so the path is checked to still lead
// to the same file, and read again if not. Without /proc it falls back to
// walking the path.
func kernelRealPath(p string) (string, error) {
	if real, err, ok := noSymlinkRealPath(p); ok {
		return real, err
	}
	for range 8 {
		real, again, err := kernelRealPathOnce(p)
		if !again {
			return real, err
		}
	}
	return filepath.EvalSymlinks(p)
}

// noSymlinkRealPath is p when it exists and no component of it is a
// symlink, the error when the open fails as it would following symlinks;
// ok is false when p has a symlink, is not absolute and clean, or the
// kernel has no openat2.
func noSymlinkRealPath(p string) (real string, err error, ok bool) {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return "", nil, false // "..", "." and "//" are not their own real path
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
	switch {
	case err == nil:
		unix.Close(fd)
		return p, nil, true
	case openat2Fallback(err):
		return "", nil, false
	}
	return "", &os.PathError{Op: "open", Path: p, Err: err}, true
}

// openat2Fallback reports whether openat2's error err means "take the
// old way" rather than an answer about the path: a symlink on it (ELOOP),
// an interrupted or racing lookup (EINTR, EAGAIN), or an openat2 this
// kernel or its seccomp filter does not offer (ENOSYS; EPERM where an
// older container profile refuses unknown system calls; EINVAL and E2BIG
// where the kernel knows no such flags or struct size).
func openat2Fallback(err error) bool {
	for _, e := range []error{unix.ELOOP, unix.EINTR, unix.EAGAIN, unix.ENOSYS, unix.EPERM, unix.EINVAL, unix.E2BIG} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func kernelRealPathOnce(p string) (real string, again bool, err error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false, &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	if err != nil || n == 0 || buf[0] != '/' || n >= len(buf) {
		real, err := filepath.EvalSymlinks(p)
		return real, false, err
	}
	var held, now unix.Stat_t
	if unix.Fstat(fd, &held) != nil || unix.Stat(p, &now) != nil || held.Dev != now.Dev || held.Ino != now.Ino {
		return "", true, nil // p names another file now: ask again
	}
	real = string(buf[:n])
	if strings.HasSuffix(real, " (deleted)") {
		return "", true, nil
	}
	return real, false, nil
}

func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadCapability is the capability a read of the resolved path requests.
func (r Resolved) ReadCapability() grants.Capability {
	if r.InWorkspace {
		return grants.CapWorkspaceRead
	}
	return grants.CapFilesystemRead
}

// WriteCapability is the capability a create or change of the path requests.
func (r Resolved) WriteCapability() grants.Capability {
	if r.InWorkspace {
		return grants.CapWorkspaceWrite
	}
	return grants.CapFilesystemWrite
}

// DeleteCapability is the capability a delete of the path requests.
func (r Resolved) DeleteCapability() grants.Capability {
	if r.InWorkspace {
		return grants.CapWorkspaceDelete
	}
	return grants.CapFilesystemDelete
}

// Request builds the request for capability c on this path.
func (r Resolved) Request(tool string, c grants.Capability) grants.Request {
	req := grants.Request{
		Capability: c,
		Target:     grants.Target{ToolName: tool, Path: r.Real},
		Risk:       grants.BaseRisk(c, grants.SurfaceNone),
	}
	if grants.IsCredentialPath(r.Real) {
		req.DataClasses = []grants.DataClass{grants.DataCredential}
	}
	return req
}

// openNoSymlinks opens a real path with the kernel refusing every symlink on
// the way, so a path decided by its real name cannot be redirected.
func openNoSymlinks(real string, flags int, mode uint32) (*os.File, error) {
	fd, err := openNoSymlinksFD(real, flags, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), real), nil
}

// openNoSymlinksFD is openNoSymlinks giving the bare descriptor, which the
// caller closes: read_file reads a small file through it without an
// os.File's poller registration and cleanup (two system calls, a finaliser).
func openNoSymlinksFD(real string, flags int, mode uint32) (int, error) {
	fd, err := openat2NoSymlinks(real, flags, mode)
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("open %s: a path component changed into a symlink after the decision; refused", real)
	}
	return fd, err
}

// openat2NoSymlinks opens real with the kernel refusing a symlink in every
// component, keeping the kernel's error (ELOOP for a symlink on the way,
// ENOENT for absence) in an *fs.PathError; kernels without openat2 walk the
// path with O_NOFOLLOW instead.
func openat2NoSymlinks(real string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Mode:    uint64(mode),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, real, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.ENOSYS):
			return openByComponentsFD(real, flags, mode)
		}
		return -1, &os.PathError{Op: "open", Path: real, Err: err}
	}
}

// openByComponents is the fallback for kernels without openat2: it walks the
// path one folder at a time with O_NOFOLLOW.
func openByComponents(real string, flags int, mode uint32) (*os.File, error) {
	fd, err := openByComponentsFD(real, flags, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), real), nil
}

func openByComponentsFD(real string, flags int, mode uint32) (int, error) {
	dir, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	parts := strings.Split(strings.Trim(real, "/"), "/")
	for i, part := range parts {
		last := i == len(parts)-1
		f := unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			f |= flags
		} else {
			f |= unix.O_DIRECTORY | unix.O_RDONLY | unix.O_PATH
		}
		next, err := unix.Openat(dir, part, f, mode)
		unix.Close(dir)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: real, Err: err}
		}
		dir = next
	}
	return dir, nil
}
