package shelltool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
)

// pushRepos says whose configuration a git push the exec gate decides
// reads. A repository that existed when the command started, in the
// workspace or a writable root (Spec.GitDirs), keeps its config, hooks and
// info read-only in the sandbox, and one outside every place the command
// writes cannot change at all: their configuration is the person's. A
// repository the command made (git init in the workspace, a clone in
// /tmp) has the command's configuration: remote.<name>.push = +refs/…,
// remote.<name>.mirror, pushurl and the rest turn the approved words
// `git push origin main` into a forced push somewhere else (review rev20d),
// so a push from one is critical, as a push with configuration the
// command sets on its line is (cmdline: -c, GIT_CONFIG_*).
type pushRepos struct {
	// protected are the git directories that existed (real paths).
	protected []string
	// writable are where the command can write: the sandbox's writable
	// roots, /tmp and /dev/shm.
	writable []string
	// readOnly are the files the sandbox binds read-only (Spec.ReadOnly:
	// includedConfigs among them), which the command cannot write.
	readOnly []string
	// roots are the folders the sandbox shows as they are on the host
	// (its writable and readable roots): elsewhere in its private /tmp
	// and /dev/shm the server sees nothing of what the command sees.
	roots []string
}

// privatePlaces are the sandbox's own tmpfs folders, which the server
// cannot look into.
func privatePlaces() []string { return []string{"/tmp", "/dev/shm"} }

// optionOwnRepo is the option of the critical request ownRepoPush leads to;
// optionRepoChanged that of a program started, after a push was let run
// in the call, while a repository holds configuration the command added
// (the push's transport: git reads its configuration after its own exec).
const (
	optionOwnRepo     = "git push from a repository the command made (its configuration is the command's)"
	optionRepoChanged = "a repository's configuration changed by the command while a push runs"
)

// ownRepoPush returns the git push form request among reqs (the event's,
// from folder cwd with argv, its words) when the repository it pushes
// from is not the person's (the gate adds it again at critical risk:
// optionOwnRepo), or false. changed are the protected git directories
// the command has added configuration to while it runs
// (sandbox.ExecEvent.GitChanged): not the person's now.
func (r pushRepos) ownRepoPush(reqs []grants.Request, cwd string, argv, changed []string) (grants.Request, bool) {
	i := slices.IndexFunc(reqs, func(q grants.Request) bool { return q.Target.Resource == "git" && isPushForm(q.Target.Command) })
	if i < 0 || cwd == "" {
		return grants.Request{}, false
	}
	if r.personal(gitStartDir(cwd, argv), changed) {
		return grants.Request{}, false
	}
	return reqs[i], true
}

// isPushForm reports whether command (a git form's request command, "git
// SUB …") pushes from a repository: push, send-pack or http-push.
func isPushForm(command string) bool {
	f := strings.Fields(command)
	return len(f) > 1 && f[0] == "git" && (f[1] == "push" || f[1] == "send-pack" || f[1] == "http-push")
}

// gitStartDir is the folder git starts in: cwd, moved by the -C options
// among git's global options in argv (each taken from the one before, as
// git does). A dashed program (git-push) has none.
func gitStartDir(cwd string, argv []string) string {
	dir := cwd
	if len(argv) == 0 || filepath.Base(argv[0]) != "git" {
		return dir
	}
	for i := 1; i < len(argv) && strings.HasPrefix(argv[i], "-"); i++ {
		switch argv[i] {
		case "-C":
			if i+1 < len(argv) {
				i++
				if filepath.IsAbs(argv[i]) {
					dir = argv[i]
				} else if argv[i] != "" {
					dir = filepath.Join(dir, argv[i])
				}
			}
		case "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env", "--exec-path", "--list-cmds", "--attr-source":
			i++ // its value (--exec-path= forms carry theirs)
		}
	}
	return dir
}

// personal reports whether the repository git finds from dir (as git's
// discovery does: at each level, a .git entry, else the level itself when
// it is a git directory) is the person's: one of the protected, or one
// outside every place the command writes. One that cannot be read is not
// (fail closed), nor is a level in the sandbox's private /tmp or /dev/shm
// outside its roots (a clone in /tmp, a .git the command made above a
// workspace that lies in /tmp: the server cannot see them). None found is: git finds none either (what could make it
// look elsewhere, GIT_DIR and --git-dir, makes the push critical by
// itself; GIT_CEILING_DIRECTORIES and the like only make it find less),
// so the push fails with nothing to push from.
func (r pushRepos) personal(dir string, changed []string) bool {
	known := func(gd string) bool {
		real, err := filepath.EvalSymlinks(gd)
		return err == nil && !slices.Contains(changed, real) && r.known(real)
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if inRoots(d, privatePlaces()) && !inRoots(d, r.roots) {
			return false // the sandbox's own: what is there is the command's
		}
		if gd, ok := dotGit(d); ok {
			return gd != "" && known(gd)
		}
		if isGitDir(d) {
			return known(d)
		}
		if d == "/" {
			return true
		}
	}
}

// known reports whether the git directory real (its real path) is
// protected or lies outside the places the command writes, and its
// configuration includes no file the command can write (review rev20f
// M1: include.path = ../.gitconfig-shared, a project pattern, hands the
// push's refspecs to the worktree).
func (r pushRepos) known(real string) bool {
	if !slices.Contains(r.protected, real) && inRoots(real, r.writable) {
		return false
	}
	for _, f := range configFiles(real) {
		if r.includesWritable(f, 0) {
			return false
		}
	}
	return true
}

// configFiles are the files of the git directory gd git reads its
// repository configuration from: its config and config.worktree, and
// those of the common directory its commondir names (a linked
// worktree's: review rev20g F2, F3). A commondir that cannot be read
// names gd itself (the protected check comes first: the tracer reports
// a commondir the command made).
func configFiles(gd string) []string {
	files := []string{filepath.Join(gd, "config"), filepath.Join(gd, "config.worktree")}
	if b, err := fstools.ReadRegular(filepath.Join(gd, "commondir"), 4096); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gd, common)
		}
		files = append(files, filepath.Join(common, "config"), filepath.Join(common, "config.worktree"))
	}
	return files
}

// includedConfigs are the files the configs of the git directories dirs
// include (through their includes) that lie in the roots writable (real
// paths, existing ones): the sandbox binds them read-only, as it does a
// repository's config, so a command cannot leave configuration there for
// the person's later git runs on the host (a worktree's
// .gitconfig-shared with core.fsmonitor: review rev20f M1). "~/" names
// the person's home here (the host's git reads it): a file there lies in
// no writable root.
func includedConfigs(dirs, writable []string) []string {
	home, _ := os.UserHomeDir()
	var out []string
	var walk func(path string, depth int)
	walk = func(path string, depth int) {
		b, err := fstools.ReadRegular(path, 1<<20)
		if err != nil || depth >= maxIncludeDepth {
			return
		}
		for _, inc := range configIncludes(string(b)) {
			switch {
			case strings.HasPrefix(inc, "~/") && home != "":
				inc = filepath.Join(home, inc[2:])
			case !filepath.IsAbs(inc):
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			real, err := filepath.EvalSymlinks(inc)
			if err != nil {
				continue
			}
			if inRoots(real, writable) && !slices.Contains(out, real) {
				out = append(out, real)
			}
			walk(real, depth+1)
		}
	}
	for _, d := range dirs {
		for _, f := range configFiles(d) {
			walk(f, 0)
		}
	}
	return out
}

// maxIncludeDepth bounds the includes followed (git's own bound is 10).
const maxIncludeDepth = 10

// includesWritable reports whether the git config file at path includes
// (include.path, includeIf.*.path, through the files it includes) one
// that lies where the command writes: relative paths from the file's
// folder, "~/" from the command's HOME (the sandbox's private one: its
// own). A file that cannot be read, or includes past the bound, counts
// (fail closed); a missing one includes nothing.
func (r pushRepos) includesWritable(path string, depth int) bool {
	b, err := fstools.ReadRegular(path, 1<<20)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false
	case err != nil || depth >= maxIncludeDepth:
		return true
	}
	for _, inc := range configIncludes(string(b)) {
		switch {
		case strings.HasPrefix(inc, "~"):
			return true
		case !filepath.IsAbs(inc):
			inc = filepath.Join(filepath.Dir(path), inc)
		}
		real, err := filepath.EvalSymlinks(inc)
		if err != nil {
			real = filepath.Clean(inc) // not there yet: the command may make it
		}
		if inRoots(real, r.writable) && !slices.Contains(r.readOnly, real) || r.includesWritable(inc, depth+1) {
			return true
		}
	}
	return false
}

// configIncludes are the path values of a git config text's [include]
// and [includeIf "…"] sections (names without regard to case, values
// unquoted), as git reads them closely enough to name every file it may
// include: a line it cannot read adds its text as a path (fail closed).
func configIncludes(text string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "["), "]")
			name = strings.ToLower(strings.TrimSpace(name))
			in = name == "include" || strings.HasPrefix(name, "includeif")
			if _, rest, ok := strings.Cut(line, "]"); ok && strings.TrimSpace(rest) != "" {
				line = strings.TrimSpace(rest) // a key on the header's line
			} else {
				continue
			}
		}
		if !in || line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "path") {
			continue
		}
		val = strings.TrimSpace(val)
		if c := strings.IndexAny(val, "#;"); c >= 0 && !strings.HasPrefix(val, "\"") {
			val = strings.TrimSpace(val[:c])
		}
		out = append(out, strings.Trim(val, "\""))
	}
	return out
}

// dotGit is the git directory d's .git entry names: the folder itself, or
// the one a .git file points to ("gitdir: PATH"); ok is false when d has
// no .git, and gd empty when it has one that cannot be read.
func dotGit(d string) (gd string, ok bool) {
	p := filepath.Join(d, ".git")
	fi, err := os.Lstat(p)
	switch {
	case os.IsNotExist(err):
		return "", false
	case err != nil:
		return "", true
	case fi.IsDir():
		return p, true
	}
	b, err := fstools.ReadRegular(p, 4096)
	if err != nil {
		return "", true // (a symlink to a file too: fail closed)
	}
	target, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !found || target == "" {
		return "", true
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(d, target)
	}
	return target, true
}

// isGitDir reports whether d may be a git directory as git's discovery
// tells one: a HEAD, and objects and refs, or a commondir naming where
// they are (review rev20e H1: a folder of HEAD and commondir only is a
// repository of the command's, whatever lies above it). It may say yes
// where git says no (HEAD unread): the push is then critical.
func isGitDir(d string) bool {
	exists := func(n string) bool {
		_, err := os.Lstat(filepath.Join(d, n))
		return err == nil
	}
	return exists("HEAD") && (exists("commondir") || exists("objects") && exists("refs"))
}
