package grants

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// The config is the policy, so whoever can change it or swap it decides
// what the model may do. Like ssh with its keys, the server refuses a config
// that is not owned by its own user or root, that group or others can write,
// or that lies in a folder someone else could replace it in: a folder owned
// by another user, or one group or others can write unless it is sticky and
// the entry in it is ours (a sticky folder lets only an entry's owner rename
// or delete it). Every folder up to / is checked this way, for the real path
// and for the path as written when a symlink leads there.

// checkTrust refuses the config at abs unless only uid (or root) can change
// what it holds.
func checkTrust(abs string, uid int) error {
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return &ConfigError{File: abs, Msg: "cannot read: " + unwrapPathError(err)}
	}
	st, err := ownerMode(real)
	if err != nil {
		return &ConfigError{File: abs, Msg: "cannot read: " + unwrapPathError(err)}
	}
	if !st.mode.IsRegular() {
		return &ConfigError{File: abs, Msg: "not a regular file"}
	}
	if st.uid != uid && st.uid != 0 {
		return &ConfigError{File: abs, Msg: fmt.Sprintf(
			"refused: owned by uid %d, not by the server's user (uid %d) or root, so that user could change the policy; fix with: chown %d %s",
			st.uid, uid, uid, real)}
	}
	if perm := st.mode.Perm(); perm&0o022 != 0 {
		return &ConfigError{File: abs, Msg: fmt.Sprintf(
			"refused: writable by group or others (mode %04o), so someone else could change the policy; fix with: chmod go-w %s", perm, real)}
	}
	if err := checkFolders(abs, real, st.uid, uid); err != nil {
		return err
	}
	if written := filepath.Clean(abs); written != real {
		// The symlink itself can be swapped by whoever can write its folder.
		lst, err := os.Lstat(written)
		if err != nil {
			return &ConfigError{File: abs, Msg: "cannot read: " + unwrapPathError(err)}
		}
		linkOwner := int(lst.Sys().(*syscall.Stat_t).Uid)
		if err := checkFolders(abs, written, linkOwner, uid); err != nil {
			return err
		}
	}
	return nil
}

// checkFolders checks every folder above path, whose own owner is owner.
func checkFolders(cfg, path string, owner, uid int) error {
	for child, dir := path, filepath.Dir(path); ; child, dir = dir, filepath.Dir(dir) {
		st, err := ownerMode(dir)
		if err != nil {
			return &ConfigError{File: cfg, Msg: fmt.Sprintf("cannot check folder %s: %s", dir, unwrapPathError(err))}
		}
		if st.uid != uid && st.uid != 0 {
			return &ConfigError{File: cfg, Msg: fmt.Sprintf(
				"refused: its folder %s is owned by uid %d, who could replace the config; move the config to a folder owned by you (uid %d) or root", dir, st.uid, uid)}
		}
		if perm := st.mode.Perm(); perm&0o022 != 0 {
			sticky := st.mode&os.ModeSticky != 0
			if !sticky || (owner != uid && owner != 0) {
				return &ConfigError{File: cfg, Msg: fmt.Sprintf(
					"refused: its folder %s is writable by group or others (mode %s), so someone else could replace %s; fix with: chmod go-w %s (or move the config to a folder only you can write)",
					dir, modeString(st.mode), filepath.Base(child), dir)}
			}
		}
		if dir == "/" || dir == "." {
			return nil
		}
		owner = st.uid
	}
}

type ownership struct {
	uid  int
	mode os.FileMode
}

func ownerMode(path string) (ownership, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return ownership{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ownership{}, fmt.Errorf("no owner information for %s", path)
	}
	return ownership{uid: int(st.Uid), mode: fi.Mode()}, nil
}

func modeString(m os.FileMode) string {
	n := int(m.Perm())
	if m&os.ModeSticky != 0 {
		n |= 0o1000
	}
	return "0" + strconv.FormatInt(int64(n), 8)
}
