// Package gitmeta says which parts of a git directory record work and which
// make git run code or look elsewhere, so the policy (grants) and the
// sandbox protect the same things. It does no I/O.
//
// Security model: git runs code from a repository's config (core.fsmonitor,
// core.hooksPath, aliases, filters), its hooks/ folder, and follows
// commondir (another folder with its own config and hooks), gitdir (a
// worktree's way back), and a .git file ("gitdir: …", a submodule's or
// worktree's pointer). So, inside a git directory, only what git needs to
// record work is writable: objects/, refs/, logs/, packed-refs, index, HEAD
// and the *_HEAD files, COMMIT_EDITMSG, and git's own *.lock files. Every
// other entry (config, hooks/, info/, commondir, gitdir, remotes/,
// branches/, and any new top-level file) is protected. Submodule git directories
// (.git/modules/NAME/) and linked worktrees' (.git/worktrees/NAME/) are git
// directories in their own right. A path is a git directory's when one of
// its components is ".git"; bare repositories and git directories under
// other names are not recognised by the path alone.
package gitmeta

import "strings"

// RecordDirs are the folders of a git directory that record work: writable
// as a whole.
func RecordDirs() []string { return []string{"objects", "refs", "logs"} }

// GuardedEntries are the existing entries of a git directory that the
// sandbox binds read-only (anything else new or changed at the top level is
// not kept either).
func GuardedEntries() []string {
	// (remotes/ and branches/ hold git's older remote definitions: a
	// file there is a remote, with its push refspecs: review rev20e H1.)
	return []string{"config", "config.worktree", "hooks", "info", "commondir", "gitdir", "remotes", "branches"}
}

// RecordFile reports whether a top-level file of a git directory records
// work (index, HEAD, packed-refs, COMMIT_EDITMSG, *_HEAD) and may be written.
// Lock files are not record files: they are written and renamed away by git
// while it runs, and one left over is stale.
func RecordFile(name string) bool {
	switch name {
	case "index", "HEAD", "packed-refs", "COMMIT_EDITMSG":
		return true
	}
	return len(name) > len("_HEAD") && strings.HasSuffix(name, "_HEAD") && !strings.Contains(name, "/")
}

// Protected reports whether writing the slash-separated absolute path p
// could change what git runs or where it looks: p is a ".git" entry itself
// (a git directory or a .git file), or lies in a git directory (after
// stepping into modules/NAME/ and worktrees/NAME/) anywhere but in its
// record folders, its record files and *.lock files.
func Protected(p string) bool {
	parts := strings.Split(p, "/")
	at := -1
	for i, c := range parts {
		if c == ".git" {
			at = i
		}
	}
	if at < 0 {
		return false
	}
	rest := parts[at+1:]
	for len(rest) >= 2 && (rest[0] == "modules" || rest[0] == "worktrees") {
		rest = rest[2:]
	}
	switch {
	case len(rest) == 0:
		return true // the git directory (or .git file) itself
	case len(rest) == 1:
		return !RecordFile(rest[0]) && !strings.HasSuffix(rest[0], ".lock") && !isRecordDir(rest[0])
	default:
		return !isRecordDir(rest[0])
	}
}

func isRecordDir(name string) bool {
	for _, d := range RecordDirs() {
		if name == d {
			return true
		}
	}
	return false
}
