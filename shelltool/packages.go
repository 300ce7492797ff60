package shelltool

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/pelletier/go-toml/v2"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// Project configuration of package installs (package.install).
//
// The analyzer decides an install's index from the line (cmdline, whose
// pkgconfig.go makes it <dynamic> when the line may write the installer's
// configuration first). What the installer also reads is the project's
// files that exist when the line starts, written by the person or by an
// earlier command. The sandbox pins what it can (toolchains.IndexPins: npm's
// registry, pip's and uv's config files, cargo's CARGO_HOME config); what it
// cannot pin is read here, once, and its indexes join the decision:
//
//   - npm and its relatives: every .npmrc from the folder up that the
//     command can read (npm reads its project's, the nearest folder with
//     a package.json): each
//     `@scope:registry=URL` adds that host (the pinned registry does not
//     outrank a scope's); without the pins (on the host, toolchains off),
//     `registry=URL` too. A value with ${…} is <dynamic>. yarn with a
//     .yarnrc or .yarnrc.yml, bun with a bunfig.toml, pnpm with a
//     .pnpmfile.cjs or a pnpm-workspace.yaml naming registries are
//     <dynamic>: those name registries the sandbox does not pin, or run
//     code that rewrites them. A package.json's git and URL dependencies
//     and a lockfile's URLs add their hosts.
//   - workspaces: a root manifest's members (package.json "workspaces",
//     pnpm-workspace.yaml packages, Cargo [workspace] members,
//     [tool.uv.workspace] members) have their manifests read too, as the
//     tool installs or locks them all (members).
//   - pip: the requirement and constraint files the line names (-r, -c):
//     their --index-url, --extra-index-url and URL requirements add hosts,
//     --find-links and ${…} are <dynamic>, nested -r/-c files are read.
//     uv reads such a file by its name as a PEP 723 script, a
//     pyproject.toml or a pylock; it is read that way too (requirementsAs).
//   - uv and poetry: pyproject.toml and the lockfile (uv.lock,
//     poetry.lock), poetry.toml, and without the pins uv.toml, read as
//     TOML reads them (tomlSourceHosts: a real parser for any form but
//     the plain one lockfiles use; one that does not parse is
//     <dynamic>): every registry, git or
//     url source adds its host (a lockfile's package files, with a hash,
//     are its index's). A script's PEP 723 block is read as the PEP's
//     reference implementation reads it.
//   - cargo: a .cargo/config.toml (or .cargo/config) from the folder up
//     with a source replacement, registries, [patch], [http] or [net]
//     table, or an include, is <dynamic>.
//   - pdm and rye: pyproject.toml (and pdm.lock, pdm.toml) sources as
//     uv's; pixi: every URL of pixi.toml (its channels) and pixi.lock.
//   - bundle: the Gemfile's `source` URLs add hosts; a .bundle/config
//     with a mirror is <dynamic>. composer: composer.json's repository
//     URLs add hosts.
//
// In the sandbox a file the sandbox hides from the command is not read (a
// credential file no allow rule names exactly, such as a project's .npmrc,
// or a brokered secret's source: sandboxHides, the rules the run's scan
// applies): the installer cannot read it,
// so the decision names exactly the indexes it reads. Only a regular file
// reached with no symlink on its way is taken as hidden, and the run hides
// each such file at its path, also where its own scan does not look (past
// the credential scan's bound, in node_modules). On the host, and where a
// rule lifts the file, it is read.
//
// Only files inside the writable roots are read: one outside (pip -r
// /etc/x, a working folder elsewhere) is <dynamic>, so the server reads
// nothing a command could not. A file that is a symlink or lies under one
// (a dangling one too: the line may create its target), too large, or
// unreadable for another reason than its absence is <dynamic>: the
// installer would read it, and the run's placeholder follows a link only
// at set-up. Files are opened by fstools.OpenRegular (the kernel refuses
// every symlink on the way). When the
// install may run in another folder (Package.Elsewhere: the line changes
// folder, or --prefix, -C, --directory name one), every such file in the
// writable roots counts, up to maxProjectEntries entries walked (beyond:
// <dynamic>); the walk skips dependency folders as the credential scan
// does, so the folders the command names literally (its cd, a word naming
// a folder: npm --prefix node_modules/x) have their chain read directly,
// and a folder named only at run time is <dynamic>. Hosts are only added:
// an index the line decided stays.

// Bounds on reading project configuration.
const (
	maxProjectFile    = 4 << 20 // a lockfile larger than this is <dynamic>
	maxProjectEntries = 20000   // entries walked for an install elsewhere
	maxRequirements   = 32      // requirement files read, nested ones included
	maxChainDepth     = 64      // folders from the working folder up
)

// projectFiles are the files each manager's project configuration lies
// in (relative to a folder), by Package.Manager.
var projectFiles = map[string][]string{
	"npm":      {".npmrc", "package.json", "package-lock.json", "npm-shrinkwrap.json"},
	"pnpm":     {".npmrc", "package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml", ".pnpmfile.cjs"},
	"yarn":     {".npmrc", ".yarnrc", ".yarnrc.yml", "package.json", "yarn.lock"},
	"bun":      {".npmrc", "bunfig.toml", "package.json", "bun.lock", "bun.lockb"},
	"uv":       {"pyproject.toml", "uv.lock"},
	"poetry":   {"pyproject.toml", "poetry.lock", "poetry.toml"},
	"cargo":    {".cargo/config.toml", ".cargo/config", "Cargo.toml", "Cargo.lock"},
	"bundle":   {"Gemfile", ".bundle/config"},
	"composer": {"composer.json"},
	"pdm":      {"pyproject.toml", "pdm.lock", "pdm.toml"},
	"rye":      {"pyproject.toml"},
	"pixi":     {"pixi.toml", "pyproject.toml", "pixi.lock"},
	"corepack": {".corepack.env"},
}

// unpinnedFiles are read only where the sandbox's pins are off: there the
// tool reads them.
var unpinnedFiles = map[string][]string{"uv": {"uv.toml"}}

// pinnedIndexes is pkgs with each PinnedHost in force where the sandbox's
// pins hold (a pip.conf the line writes is not read there), each request
// once.
func pinnedIndexes(pinned bool, pkgs []cmdline.Package) []cmdline.Package {
	var out []cmdline.Package
	for _, pk := range pkgs {
		if pinned && pk.PinnedHost != "" {
			pk.Host = pk.PinnedHost
		}
		if n := len(out); n > 0 && out[n-1].Command == pk.Command && out[n-1].Name == pk.Name && out[n-1].Host == pk.Host {
			continue
		}
		out = append(out, pk)
	}
	return out
}

// projectBin reports whether npm exec runs pk's command from the project's
// own bin folder, fetching nothing (Package.LocalBin: npx tsc in a project
// with typescript installed): an executable file
// node_modules/.bin/LocalBin in npm's local prefix, the nearest folder
// from cwd up with a package.json or a node_modules folder (cwd itself
// when none has). Not when the exec may run elsewhere (--prefix, a cd).
// A bin the command writes before it runs npx is seen at exec, where npx
// is decided again.
func projectBin(pk cmdline.Package, cwd string) bool {
	if pk.LocalBin == "" || pk.Elsewhere || !filepath.IsAbs(cwd) {
		return false
	}
	prefix := cwd
	for dir := filepath.Clean(cwd); ; dir = filepath.Dir(dir) {
		_, errPkg := os.Stat(filepath.Join(dir, "package.json"))
		nm, errNM := os.Stat(filepath.Join(dir, "node_modules"))
		if errPkg == nil || errNM == nil && nm.IsDir() {
			prefix = dir
			break
		}
		if dir == "/" {
			break
		}
	}
	fi, err := os.Stat(filepath.Join(prefix, "node_modules", ".bin", pk.LocalBin))
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// projectIndexes returns pkgs with the indexes the project's configuration
// adds to each: a Package per added host after the package's own. hidden
// are the files it took as hidden from the command (sandboxHides) and so
// did not read: the run hides them, whatever its own scan finds. Without
// hideAware every file is read (installRequests at exec: one the run does
// not hide).
func projectIndexes(p *grants.Policy, cwd string, surface grants.Surface, pkgs []cmdline.Package, cmds []cmdline.Command, hideAware bool) (_ []cmdline.Package, hidden []string) {
	pinned := toolchainsApply(p, surface)
	pkgs = pinnedIndexes(pinned, pkgs)
	pc := &projectConfig{cwd: cwd, pinned: pinned, roots: slices.Concat([]string{p.Workspace}, p.Sandbox.Writable), hosts: map[string][]string{}}
	if surface == grants.SurfaceSandbox && hideAware {
		pc.policy = p
	}
	var out []cmdline.Package
	for i, pk := range pkgs {
		out = append(out, pk)
		if i+1 < len(pkgs) && pkgs[i+1].Command == pk.Command && pkgs[i+1].Name == pk.Name {
			continue // the last of the package's requests carries the additions
		}
		var have []string
		for j := i; j >= 0 && pkgs[j].Command == pk.Command && pkgs[j].Name == pk.Name; j-- {
			have = append(have, pkgs[j].Host)
		}
		out, have = withDirectHosts(out, pk, have, func(byLine bool) bool { return goDirect(surface, pinned, byLine, commandEnv(p)) })
		if slices.Contains(have, cmdline.Dynamic) || pk.URL != "" || slices.Equal(have, []string{""}) {
			continue // already any index, a URL's own host, or no network
		}
		var cmd cmdline.Command
		if pk.Command >= 0 && pk.Command < len(cmds) {
			cmd = cmds[pk.Command]
		}
		for _, h := range pc.indexes(pk, cmd) {
			if !slices.Contains(have, h) {
				have = append(have, h)
				add := pk
				add.Host = h
				out = append(out, add)
			}
		}
	}
	return out, pc.hidden
}

// projectConfig reads the project configuration for one line's installs,
// each file once.
type projectConfig struct {
	cwd    string
	pinned bool
	// policy is set in the sandbox, which hides from the command the
	// credential files the policy keeps from it (sandboxHides): such a
	// file is not read, as the installer cannot read it, and is recorded
	// in hidden.
	policy  *grants.Policy
	hidden  []string
	roots   []string
	hosts   map[string][]string // file read → the hosts it adds
	walked  []string            // files found in the roots (an install elsewhere)
	walkOK  bool
	didWalk bool
}

// indexes are the hosts the project's configuration adds to pk, which
// cmd installs.
func (pc *projectConfig) indexes(pk cmdline.Package, cmd cmdline.Command) []string {
	var out []string
	for i, f := range slices.Concat(pk.Files, pk.Scripts) {
		if f == cmdline.Dynamic || f == "" || pk.Elsewhere && !filepath.IsAbs(f) {
			// Named at run time (stdin, a URL's script), or relative to
			// a folder the line moves to.
			return []string{cmdline.Dynamic}
		}
		if i < len(pk.Files) {
			seen := 0
			out = append(out, pc.requirements(pc.abs(f), &seen, 0)...)
		} else {
			out = append(out, pc.script(pc.abs(f))...)
		}
	}
	names := append(slices.Clone(projectFiles[pk.Manager]), unpinned(pc.pinned, pk.Manager)...)
	if len(names) == 0 {
		return out
	}
	files := pc.chain(pc.cwd, names)
	if pk.Elsewhere {
		found, ok := pc.walk()
		dirs, known := pc.targets(cmd)
		if !ok || !known || pk.DirByVariable {
			return append(out, cmdline.Dynamic)
		}
		for _, d := range dirs {
			files = append(files, pc.chain(d, names)...) // a folder the walk skips too (node_modules/x)
		}
		for _, f := range found {
			if slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(f, string(filepath.Separator)+filepath.FromSlash(n)) }) {
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		out = append(out, pc.file(pk.Manager, f)...)
	}
	return out
}

// What load found at a project file's path.
type fileState int

const (
	fileRead    fileState = iota // a regular file, read
	fileAbsent                   // nothing there: the installer reads nothing
	fileHidden                   // hidden from the command (recorded in pc.hidden), not read
	fileUnknown                  // what the installer reads is not known: <dynamic>
)

// load reads one project file at path (absolute) as the installer meets
// it. A file outside the roots is not read (fileUnknown: the server reads
// nothing a command could not). A symlink at the name or at any folder on
// its way (fstools.OpenRegular: the kernel refuses them), anything but a
// regular file, a file too large or unreadable is fileUnknown: the run's
// placeholder would follow a link only at set-up, so a dangling link, or
// one the line re-points, would show the command a file the decision did
// not read. Only a regular file reached without a link is taken as
// hidden (pc.hides), and the run hides exactly that file.
func (pc *projectConfig) load(path string) ([]byte, fileState) {
	path = filepath.Clean(path)
	if !pc.inRoots(path) {
		return nil, fileUnknown
	}
	err := fstools.StatRegular(path)
	if err == nil && pc.hides(path) {
		return nil, fileHidden
	}
	var b []byte
	if err == nil {
		b, err = fstools.ReadRegular(path, maxProjectFile)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fileAbsent
	case err != nil:
		return nil, fileUnknown
	}
	return b, fileRead
}

// hides reports whether the sandbox hides path, a regular file, from the
// command, and records it (each once).
func (pc *projectConfig) hides(path string) bool {
	if pc.policy == nil || !sandboxHides(pc.policy, path) {
		return false
	}
	if !slices.Contains(pc.hidden, path) {
		pc.hidden = append(pc.hidden, path)
	}
	return true
}

func unpinned(pinned bool, manager string) []string {
	if pinned {
		return nil
	}
	return unpinnedFiles[manager]
}

func (pc *projectConfig) abs(f string) string {
	if filepath.IsAbs(f) {
		return filepath.Clean(f)
	}
	return filepath.Join(pc.cwd, f)
}

// chain is each of names in the working folder and every folder above it
// that exists (or is not a plain file: a symlink there or on its way is
// read as <dynamic>).
//
// Only folders inside the writable roots are read (the server reads what
// a command might not: a file above them is the person's, such as
// ~/.npmrc, which commands cannot read); a working folder outside them is
// <dynamic>.
func (pc *projectConfig) chain(from string, names []string) []string {
	var out []string
	dir := filepath.Clean(from)
	if !pc.inRoots(dir) {
		return []string{cmdline.Dynamic}
	}
	for depth := 0; pc.inRoots(dir); depth++ {
		if depth == maxChainDepth {
			// Folders above, still in the roots, are not read.
			return append(out, cmdline.Dynamic)
		}
		for _, n := range names {
			// A symlink at the name or on its way (a dangling one too) is
			// listed: load makes it <dynamic>.
			f := filepath.Join(dir, filepath.FromSlash(n))
			if !errors.Is(fstools.StatRegular(f), fs.ErrNotExist) {
				out = append(out, f)
			}
		}
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return out
}

// targets are the folders an install elsewhere may run in that the
// command names literally: the folder the line's cd leaves it in, and each
// of its words (or an option's value after "=") that names a folder in the
// roots (npm --prefix D, uv --directory D: more folders than the tool uses
// only add hosts). Their configuration is read directly, since the walk
// skips dependency folders (node_modules, vendor, .venv) as the credential
// scan does. known is false when the folder cannot be known: a cd to a
// folder named at run time, or an option whose value is not literal.
func (pc *projectConfig) targets(cmd cmdline.Command) (dirs []string, known bool) {
	if cmd.Dir == cmdline.Dynamic {
		return nil, false
	}
	base := pc.abs(cmd.Dir)
	dirs = append(dirs, base)
	for i, w := range cmd.Words {
		if i == 0 {
			continue
		}
		if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
			w = v
		}
		if strings.ContainsAny(w, "*?[") {
			return nil, false // a pattern: the folders are known only at run time
		}
		if strings.ContainsAny(w, "$`") {
			if strings.HasPrefix(cmd.Words[i], "-") || strings.HasPrefix(cmd.Words[i-1], "-") {
				return nil, false // an option's value known only at run time
			}
			continue
		}
		d := w
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		// A symlink too: its files are read as <dynamic>.
		d = filepath.Clean(d)
		if fi, err := os.Lstat(d); err == nil && (fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0) && pc.inRoots(d) && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs, true
}

// inRoots reports whether path is a writable root or inside one.
func (pc *projectConfig) inRoots(path string) bool { return inRoots(path, pc.roots) }

// walk lists the project configuration files in the writable roots, once;
// ok is false past maxProjectEntries.
func (pc *projectConfig) walk() ([]string, bool) {
	if pc.didWalk {
		return pc.walked, pc.walkOK
	}
	pc.didWalk, pc.walkOK = true, true
	want := map[string]bool{}
	under := map[string][]string{} // ".cargo" → "config.toml", "config"
	for _, list := range []map[string][]string{projectFiles, unpinnedFiles} {
		for _, names := range list {
			for _, n := range names {
				want[filepath.Base(n)] = true
				if d, rest, ok := strings.Cut(n, "/"); ok && !slices.Contains(under[d], rest) {
					under[d] = append(under[d], rest)
				}
			}
		}
	}
	entries := 0
	for _, root := range pc.roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			entries++
			switch {
			case entries > maxProjectEntries:
				pc.walkOK = false
				return filepath.SkipAll
			case err != nil:
				return nil
			case d.IsDir() && path != root && skippedDirs[d.Name()]: // as the credential scan (secrets.go)
				return filepath.SkipDir
			case !d.IsDir() && want[d.Name()]: // a symlink too: load makes it <dynamic>
				pc.walked = append(pc.walked, path)
			case d.Type()&fs.ModeSymlink != 0 && len(under[d.Name()]) > 0: // .cargo -> elsewhere
				for _, rest := range under[d.Name()] {
					pc.walked = append(pc.walked, filepath.Join(path, filepath.FromSlash(rest)))
				}
			}
			return nil
		})
	}
	return pc.walked, pc.walkOK
}

// file is what one project file adds to a manager's install.
func (pc *projectConfig) file(manager, path string) []string {
	if path == cmdline.Dynamic {
		return []string{cmdline.Dynamic} // the working folder is outside the roots
	}
	key := manager + "\x00" + path
	if h, ok := pc.hosts[key]; ok {
		return h
	}
	pc.hosts[key] = nil // in progress: a workspace naming itself as a member adds nothing more
	b, st := pc.load(path)
	var h []string
	switch base := filepath.Base(path); {
	case st == fileAbsent || st == fileHidden: // the installer reads nothing there
	case st == fileUnknown:
		h = []string{cmdline.Dynamic}
	case base == ".npmrc":
		h = npmrcIndexes(b, pc.pinned)
	case base == "package.json":
		h = npmManifestHosts(b, manager == "npm" && pc.pinned)
	case base == "package-lock.json" || base == "npm-shrinkwrap.json" || base == "yarn.lock" || base == "pnpm-lock.yaml" || strings.HasPrefix(base, "bun.lock"),
		base == "pixi.toml" || base == "pixi.lock": // pixi's channels and the lock's package URLs: every URL counts
		h = lockfileHosts(b, manager == "npm" && pc.pinned)
	case base == ".yarnrc" || base == ".yarnrc.yml" || base == "bunfig.toml" || base == ".pnpmfile.cjs":
		h = []string{cmdline.Dynamic} // registries the sandbox does not pin, or code that rewrites them
	case base == "pnpm-workspace.yaml":
		if pnpmRegistry.Match(b) {
			h = []string{cmdline.Dynamic}
			break
		}
		patterns, ok := pnpmMembers(b)
		h = pc.members(manager, filepath.Join(filepath.Dir(path), "package.json"), patterns, ok)
	case filepath.Base(filepath.Dir(path)) == ".cargo":
		if cargoConfigMovesIndex(b) {
			h = []string{cmdline.Dynamic}
		}
	case base == "config": // .bundle/config
		if strings.Contains(strings.ToUpper(string(b)), "MIRROR") {
			h = []string{cmdline.Dynamic}
		}
	case base == ".corepack.env":
		h = corepackEnvHosts(b)
	case base == "Gemfile":
		h = matchedHosts(gemSource, b)
	case base == "composer.json":
		h = matchedHosts(composerURL, b)
	default: // pyproject.toml, uv.lock, poetry.lock, uv.toml, poetry.toml
		h = tomlSourceHosts(b)
	}
	if base := filepath.Base(path); st == fileRead && (base == "package.json" || base == "Cargo.toml" || base == "pyproject.toml") {
		patterns, ok := workspaceMembers(base, b)
		h = append(h, pc.members(manager, path, patterns, ok)...)
	}
	pc.hosts[key] = h
	return h
}

// maxMembers bounds the workspace members read for one manifest.
const maxMembers = 256

// members are the hosts a workspace's members' manifests add (path is the
// root's manifest, patterns its members, ok false when they are not
// known): npm, yarn and bun install every workspace of a package.json's
// "workspaces", pnpm every package of pnpm-workspace.yaml's,
// cargo resolves every member of Cargo.toml's [workspace] members, uv
// locks every member of [tool.uv.workspace] members, each with its own
// git and URL dependencies and sources. Each pattern is expanded as a
// glob in the manifest's folder (a pattern with "**", braces or a negation
// is <dynamic>, as is a manifest whose members list does not parse or
// that has more than maxMembers); each member's manifest of the same name
// is read as the root's (through load: a symlinked member is <dynamic>).
// Members a pattern excludes are read too (only hosts are added).
func (pc *projectConfig) members(manager, path string, patterns []string, ok bool) []string {
	if !ok {
		return []string{cmdline.Dynamic}
	}
	var out []string
	n := 0
	for _, pat := range patterns {
		if pat == "" || filepath.IsAbs(pat) || strings.HasPrefix(pat, "!") || strings.Contains(pat, "**") || strings.ContainsAny(pat, "{}") {
			return append(out, cmdline.Dynamic)
		}
		matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), filepath.FromSlash(pat)))
		if err != nil {
			return append(out, cmdline.Dynamic)
		}
		for _, m := range matches {
			if n++; n > maxMembers {
				return append(out, cmdline.Dynamic)
			}
			out = append(out, pc.file(manager, filepath.Join(m, filepath.Base(path)))...)
		}
	}
	return out
}

// pnpmMembers are pnpm-workspace.yaml's packages, written as a block list
// of plain or quoted patterns; ok is false for any other form of the
// packages key (a flow list, an anchor).
func pnpmMembers(b []byte) (_ []string, ok bool) {
	var out []string
	in := false
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case trim == "" || trim[0] == '#':
		case pnpmPackages.MatchString(line):
			if line[0] == ' ' || line[0] == '\t' || strings.TrimSpace(line[strings.Index(line, ":")+1:]) != "" {
				return nil, false
			}
			in = true
		case in && (line[0] == ' ' || line[0] == '\t' || line[0] == '-'):
			item, isItem := strings.CutPrefix(trim, "- ")
			if i := strings.Index(item, " #"); i >= 0 {
				item = item[:i]
			}
			item = strings.TrimSpace(item)
			if q := strings.Trim(item, `"'`); len(q) == len(item)-2 && item[0] == item[len(item)-1] {
				item = q
			}
			if !isItem || item == "" || strings.ContainsAny(item, `"'[]{}`) || item[0] == '&' || item[0] == '*' {
				return nil, false
			}
			out = append(out, item)
		default:
			in = false
		}
	}
	return out, true
}

// workspaceMembers are the member patterns a manifest declares; ok is
// false when its members list is not one this reads.
func workspaceMembers(base string, b []byte) (_ []string, ok bool) {
	if base == "package.json" {
		var m struct {
			Workspaces json.RawMessage `json:"workspaces"`
		}
		if json.Unmarshal(b, &m) != nil {
			return nil, false
		}
		if len(m.Workspaces) == 0 || string(m.Workspaces) == "null" {
			return nil, true
		}
		var list []string
		if json.Unmarshal(m.Workspaces, &list) == nil {
			return list, true
		}
		var obj struct {
			Packages []string `json:"packages"`
		}
		err := json.Unmarshal(m.Workspaces, &obj)
		return obj.Packages, err == nil
	}
	var doc struct {
		Workspace struct {
			Members []string `toml:"members"`
		} `toml:"workspace"`
		Tool struct {
			UV struct {
				Workspace struct {
					Members []string `toml:"members"`
				} `toml:"workspace"`
			} `toml:"uv"`
		} `toml:"tool"`
	}
	if toml.Unmarshal(b, &doc) != nil {
		return nil, false
	}
	if base == "Cargo.toml" {
		return doc.Workspace.Members, true
	}
	return doc.Tool.UV.Workspace.Members, true
}

// script is what a Python script's inline metadata adds to uv's install
// of its dependencies: its sources and indexes, as a pyproject.toml's.
func (pc *projectConfig) script(path string) []string {
	b, st := pc.load(path)
	switch st {
	case fileAbsent, fileHidden:
		return nil // uv cannot read it (and fails)
	case fileUnknown:
		return []string{cmdline.Dynamic}
	}
	return scriptHosts(b)
}

// scriptHosts are the hosts a script's inline metadata names.
func scriptHosts(b []byte) []string {
	meta, ok := scriptMetadata(b)
	if !ok {
		return []string{cmdline.Dynamic}
	}
	if meta == nil {
		return nil // no block: no dependencies
	}
	return tomlSourceHosts(meta)
}

// requirementsAs are the hosts a requirements file adds when read as what
// uv takes it for by its name (uv's RequirementsSource: a .py or .pyw is a
// PEP 723 script, a file without extension one when it holds a block, a
// pyproject.toml a project, a pylock*.toml a lock), besides what pip,
// which reads every one as a requirements file, takes from it. Both are
// named: the Package does not say which reads it, and uv compares the
// name without regard to case. A setup.py or setup.cfg, a source tree uv
// builds, is <dynamic>.
func requirementsAs(path string, b []byte) []string {
	base := strings.ToLower(filepath.Base(path))
	switch ext := filepath.Ext(base); {
	case base == "setup.py" || base == "setup.cfg":
		return []string{cmdline.Dynamic} // a source tree uv builds: its requirements are not read here
	case ext == ".py" || ext == ".pyw" || ext == "":
		return scriptHosts(b)
	case base == "pyproject.toml":
		return tomlSourceHosts(b)
	case strings.HasPrefix(base, "pylock.") && ext == ".toml":
		return lockfileHosts(b, false) // its packages' own URLs
	}
	return nil
}

// pep723Block is PEP 723's reference regular expression for a metadata
// block, as written there. Go's matching is leftmost-first as Python's, so
// the greedy content runs to the LAST "# ///" of the comment run, as in the
// reference implementation and uv: a "# ///" inside a TOML multi-line
// string does not end the block.
var pep723Block = regexp.MustCompile(`(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$`)

// pythonLineBreaks are the line boundaries of Python's str.splitlines
// other than "\n".
const pythonLineBreaks = "\r\v\f\x1c\x1d\x1e\u0085\u2028\u2029"

// scriptMetadata is the TOML of a script's PEP 723 "script" block, read as
// the PEP's reference implementation reads it: each content line without
// its "# " (or "#"). Python code outside it (url = "https://…" in the
// program) is not read. ok is false where what uv makes of the file is not
// known here: two script blocks (an error in the reference), or a
// "# /// script" line that opens no block the regex matches.
func scriptMetadata(b []byte) (_ []byte, ok bool) {
	text := strings.ReplaceAll(string(b), "\r\n", "\n") // as Python reads text
	var found []string
	for _, m := range pep723Block.FindAllStringSubmatch(text, -1) {
		if m[1] == "script" {
			found = append(found, m[2])
		}
	}
	switch {
	case len(found) > 1:
		return nil, false
	case len(found) == 0:
		opened := slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool { return strings.HasPrefix(l, "# /// script") })
		return nil, !opened
	}
	if strings.ContainsAny(found[0], pythonLineBreaks) {
		return nil, false // Python's splitlines would cut the lines elsewhere
	}
	var out []byte
	for _, line := range strings.SplitAfter(found[0], "\n") {
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			out = append(out, rest...)
		} else {
			out = append(out, strings.TrimPrefix(line, "#")...)
		}
	}
	return out, true
}

// npmrcIndexes are the hosts an .npmrc's top-level scope registries name
// (and its registry, when the sandbox does not pin npm's).
func npmrcIndexes(b []byte, pinned bool) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			break // keys in a section are not npm's top-level settings
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.Trim(strings.TrimSpace(k), `"'`)
		if ok && strings.Contains(k, "${") {
			// npm expands variables in keys too: ${X}@s:registry may
			// be any scope's registry, or the registry itself.
			out = append(out, cmdline.Dynamic)
			continue
		}
		scoped := strings.HasPrefix(k, "@") && strings.HasSuffix(strings.ToLower(k), ":registry")
		if !ok || !scoped && (pinned || k != "registry") {
			continue
		}
		out = append(out, urlHost(strings.Trim(strings.TrimSpace(v), `"'`)))
	}
	return out
}

// urlHost is an index URL's host: <dynamic> when it names a variable or
// does not parse, "" for a file: URL.
func urlHost(v string) string {
	if strings.Contains(v, "${") || strings.Contains(v, "$") {
		return cmdline.Dynamic
	}
	_, rest, ok := strings.Cut(v, "://")
	if !ok {
		return cmdline.Dynamic
	}
	scheme := strings.ToLower(v[:len(v)-len(rest)-3])
	if strings.HasSuffix(scheme, "file") {
		return ""
	}
	if scheme == "ssh" || strings.HasSuffix(scheme, "+ssh") {
		if at := strings.LastIndexByte(strings.SplitN(rest, "/", 2)[0], '@'); at >= 0 {
			rest = rest[at+1:]
		}
		v = "ssh://" + rest
	}
	u, err := url.Parse(v)
	if err != nil || u.Hostname() == "" {
		return cmdline.Dynamic
	}
	return strings.ToLower(u.Hostname())
}

// corepackEnvHosts is the registry a .corepack.env names: corepack reads
// the COREPACK_ variables of the one beside the package.json it selects
// (where the environment lacks them), so its COREPACK_NPM_REGISTRY moves
// every fetch (a value that is not a plain URL, or a line naming it that
// is not a plain assignment, is <dynamic>).
func corepackEnvHosts(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "COREPACK_NPM_REGISTRY") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if !ok || strings.TrimSpace(strings.TrimPrefix(k, "export ")) != "COREPACK_NPM_REGISTRY" || strings.ContainsAny(v, "$#` \t") {
			out = append(out, cmdline.Dynamic)
			continue
		}
		out = append(out, urlHost(v))
	}
	return out
}

// cargoConfigMovesIndex reports whether a cargo config file may move where
// crates come from: a key cargoMovesIndex finds by its text, or, as cargo
// reads the file (quoted or escaped keys, a byte-order mark, dotted
// keys), a top-level table among cargoIndexKeys; a file that does not
// parse as TOML may (cargo's own parser is not ours).
func cargoConfigMovesIndex(b []byte) bool {
	if cargoMovesIndex.Match(b) {
		return true
	}
	var doc map[string]any
	if toml.Unmarshal(bytes.TrimPrefix(b, []byte("\uFEFF")), &doc) != nil {
		return true
	}
	for k := range doc {
		if slices.Contains(cargoIndexKeys, k) {
			return true
		}
	}
	return false
}

// cargoIndexKeys are the cargo config tables that move where crates come
// from, or read more configuration that may.
var cargoIndexKeys = []string{"source", "registries", "registry", "patch", "http", "net", "include"}

var (
	// cargoMovesIndex: a cargo config key or table that moves where crates
	// come from.
	cargoMovesIndex = regexp.MustCompile(`(?m)^\s*\[*\s*"?(source|registries|registry|patch|http|net|include)\b`)
	// tomlSource: a TOML key naming an index or a package's source.
	tomlSource = regexp.MustCompile(`(?m)\b(registry|git|url|index-url|extra-index-url|default-index|find-links|registry-index|source)\s*=\s*(\[|"[^"\n]*"|'[^'\n]*')`)
	// directReference: a quoted PEP 508 requirement naming its URL.
	directReference = regexp.MustCompile(`["'][A-Za-z0-9._-]+\s*(?:\[[^\]"']*\])?\s*@\s*([^"'\s;]+://[^"'\s;]*)`)
	// pep508Reference: a PEP 508 requirement naming its URL ("x[a] @ URL").
	pep508Reference = regexp.MustCompile(`^\s*[A-Za-z0-9._-]+\s*(?:\[[^\]]*\])?\s*@\s*([^\s;]+://[^\s;]*)`)
	pnpmPackages    = regexp.MustCompile(`(?m)^\s*["']?packages["']?\s*:`)
	pnpmRegistry    = regexp.MustCompile(`(?m)^\s*["']?(registry|registries|@[^:\s]+:registry)["']?\s*:`)
	gemSource       = regexp.MustCompile(`(?m)^\s*source\s*\(?\s*["']([^"'\n]*)["']`)
	composerURL     = regexp.MustCompile(`"url"\s*:\s*"([^"\n]*)"`)
)

// tomlSourceHosts are the hosts a pyproject.toml's, a lockfile's or a
// config's sources name: the string values of sourceKeys that name a URL
// (or a variable: <dynamic>), find-links (<dynamic>), and PEP 508 direct
// references anywhere ("x @ git+https://h/x"). A package file (a url with
// a hash, a lockfile's) is its index's.
//
// A file in the plain forms a lockfile is written in (bare keys, one-line
// strings without escapes) is read line by line, each distinct line once
// (a lockfile repeats one source line per package): a tenth of a full
// parse's time. Any other form (a quoted key, a multi-line string, an
// escape: tomlUnplain) is parsed as TOML by a real parser, and a file
// that does not parse is <dynamic>.
func tomlSourceHosts(b []byte) []string {
	if !tomlUnplain(b) {
		return tomlLineHosts(b)
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return []string{cmdline.Dynamic}
	}
	var out []string
	tomlHosts(doc, "", &out)
	return out
}

// tomlUnplain reports whether b has a TOML form the line reader does not
// read as TOML does: a multi-line string, an escape, or a quoted key (a
// quoted string at a line's start, or after "{", "," or a dotted key's
// ".", followed by "="). A false report only costs the full parse. (A
// hand-written scan: the equivalent regexp takes milliseconds on a
// lockfile.)
func tomlUnplain(b []byte) bool {
	if bytes.Contains(b, []byte(`"""`)) || bytes.Contains(b, []byte("'''")) || bytes.IndexByte(b, '\\') >= 0 {
		return true
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		for i, c := range line {
			if c != '"' && c != '\'' {
				continue
			}
			j := i - 1
			for j >= 0 && (line[j] == ' ' || line[j] == '\t') {
				j--
			}
			if j >= 0 && line[j] != '{' && line[j] != ',' && line[j] != '.' {
				continue // a value, not a key
			}
			end := bytes.IndexByte(line[i+1:], c)
			if end < 0 {
				continue
			}
			k := i + end + 2
			for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
				k++
			}
			if k < len(line) && line[k] == '=' {
				return true
			}
		}
	}
	return false
}

// tomlLineHosts is tomlSourceHosts for a plain file, line by line; a list
// value of a source key is <dynamic>.
func tomlLineHosts(b []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if seen[line] {
			continue // what it adds is added
		}
		seen[line] = true
		if strings.Contains(line, "@") && strings.Contains(line, "://") {
			// A PEP 508 direct reference in a dependency list, which may
			// stand on a line of its own.
			for _, m := range directReference.FindAllStringSubmatch(line, -1) {
				if h, ok := requirementURLHost(m[1]); ok {
					out = append(out, h)
				}
			}
		}
		if !strings.Contains(line, "=") || !strings.ContainsAny(line, ":$[") {
			continue // no source value (a URL, a variable, a list) can be on it
		}
		code := tomlCode(line)
		file := strings.Contains(code, "hash =") || strings.Contains(code, "hash=")
		for _, m := range tomlSource.FindAllStringSubmatch(code, -1) {
			v := m[2]
			switch {
			case m[1] == "url" && file && pypiFile(v[1:len(v)-1]):
				// a package file on PyPI's file host: its index's
			case m[1] == "source" && v == `"`+cratesIOGitIndex+`"`:
				out = append(out, "index.crates.io") // Cargo.lock's name for crates.io
			case m[1] != "source" && (v == "[" || m[1] == "find-links"):
				out = append(out, cmdline.Dynamic)
			case strings.Contains(v, "://") || strings.Contains(v, "$"):
				out = append(out, urlHost(v[1:len(v)-1]))
			case m[1] == "git" && scpHost(v[1:len(v)-1]) != "":
				out = append(out, scpHost(v[1:len(v)-1]))
			}
		}
	}
	return out
}

// tomlCode is a TOML line without its comment (a "#" outside a string).
func tomlCode(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return line[:i]
		}
	}
	return line
}

// scpHost is the host of git's scp-like address (git@github.com:o/r.git,
// which poetry documents), or "".
func scpHost(v string) string {
	if strings.Contains(v, "://") {
		return ""
	}
	at := strings.IndexByte(v, '@')
	colon := strings.IndexByte(v, ':')
	if at <= 0 || colon <= at+1 || strings.ContainsAny(v[:colon], "/") {
		return ""
	}
	return strings.ToLower(v[at+1 : colon])
}

// pypiFile reports whether a package file's URL (a lockfile's sdist or
// wheel, with its hash) is on PyPI's file host, which serves pypi.org's
// files. A file elsewhere is fetched from its own host (uv downloads the
// URL the lock records): that host is named.
func pypiFile(u string) bool {
	h := urlHost(u)
	return h == "files.pythonhosted.org" || h == "pypi.org"
}

// sourceKeys are the TOML keys naming an index or a package's source.
var sourceKeys = map[string]bool{
	"registry": true, "git": true, "url": true, "index-url": true, "extra-index-url": true, "default-index": true,
	"find-links": true, "registry-index": true, "source": true,
}

// tomlHosts adds to out the hosts v, the value of key in a parsed TOML
// document, names.
func tomlHosts(v any, key string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		_, file := v["hash"]
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if u, ok := v[k].(string); ok && k == "url" && file && pypiFile(u) {
				continue // a package file on PyPI's file host: its index's
			}
			tomlHosts(v[k], k, out)
		}
	case []any:
		for _, e := range v {
			tomlHosts(e, key, out)
		}
	case string:
		switch {
		case key == "source" && v == cratesIOGitIndex:
			*out = append(*out, "index.crates.io") // Cargo.lock's name for crates.io
		case key == "find-links":
			*out = append(*out, cmdline.Dynamic)
		case sourceKeys[key] && (strings.Contains(v, "://") || strings.Contains(v, "$")):
			*out = append(*out, urlHost(v))
		case key == "git" && scpHost(v) != "":
			*out = append(*out, scpHost(v))
		case strings.Contains(v, "@") && strings.Contains(v, "://"):
			if m := pep508Reference.FindStringSubmatch(v); m != nil {
				if h, ok := requirementURLHost(m[1]); ok {
					*out = append(*out, h)
				}
			}
		}
	}
}

// cratesIOGitIndex is how a Cargo.lock names crates.io.
const cratesIOGitIndex = "registry+https://github.com/rust-lang/crates.io-index"

// npmManifestHosts are the hosts a package.json's dependencies are
// fetched from when not from the registry (a git host, a tarball URL's:
// npm held to its registry asks the registry for a tarball instead); a
// manifest that does not parse is <dynamic>.
func npmManifestHosts(b []byte, heldToRegistry bool) []string {
	var m struct {
		Deps     map[string]string `json:"dependencies"`
		Dev      map[string]string `json:"devDependencies"`
		Optional map[string]string `json:"optionalDependencies"`
		Peer     map[string]string `json:"peerDependencies"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return []string{cmdline.Dynamic}
	}
	var out []string
	for _, deps := range []map[string]string{m.Deps, m.Dev, m.Optional, m.Peer} {
		for _, name := range slices.Sorted(maps.Keys(deps)) {
			u, h, ok := cmdline.NPMDependencyHost(deps[name])
			if ok && h != "" && !(heldToRegistry && isHTTP(u)) {
				out = append(out, h)
			}
		}
	}
	return out
}

// lockfileHosts are the hosts of the URLs a lockfile records: an
// installer following its lockfile fetches from them (npm held to its
// registry asks the registry for http(s) tarballs instead; git URLs it
// clones).
func lockfileHosts(b []byte, heldToRegistry bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range scanURLs(b) {
		if heldToRegistry && isHTTP(s) {
			continue
		}
		// Each origin once: a lockfile names thousands of one registry's.
		key := s
		if i := strings.Index(s, "://"); i >= 0 {
			if j := strings.IndexByte(s[i+3:], '/'); j >= 0 {
				key = s[:i+3+j]
			}
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if h := urlHost(s); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// urlEnd are the bytes that end a URL in a lockfile.
const urlEnd = " \t\r\n\"'<>,)}]"

// scanURLs finds the URLs in text: a scheme (a letter, then
// [A-Za-z0-9+.-]), "://" and what follows up to urlEnd.
func scanURLs(b []byte) []string {
	var out []string
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte("://"))
		if i < 0 {
			return out
		}
		i += off
		start := i
		for start > off && isSchemeByte(b[start-1]) {
			start--
		}
		for start < i && !isAlpha(b[start]) {
			start++
		}
		end := i + 3
		for end < len(b) && strings.IndexByte(urlEnd, b[end]) < 0 {
			end++
		}
		if start < i {
			out = append(out, string(b[start:end]))
		}
		off = end
	}
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isHTTP(u string) bool {
	scheme, _, _ := strings.Cut(strings.ToLower(u), "://")
	return scheme == "http" || scheme == "https"
}

// matchedHosts are the hosts of re's first group in b.
func matchedHosts(re *regexp.Regexp, b []byte) []string {
	var out []string
	for _, m := range re.FindAllSubmatch(b, -1) {
		if v := string(m[1]); strings.Contains(v, "://") || strings.Contains(v, "$") {
			out = append(out, urlHost(v))
		}
	}
	return out
}

// requirements are the hosts a pip requirement or constraint file adds:
// its index options and URL requirements, nested files read (up to
// maxRequirements); --find-links with a URL and ${…} are <dynamic>.
func (pc *projectConfig) requirements(path string, seen *int, depth int) []string {
	*seen++
	if *seen > maxRequirements || depth > 8 {
		return []string{cmdline.Dynamic} // too many, not read
	}
	b, st := pc.load(path)
	switch st {
	case fileAbsent, fileHidden:
		return nil // pip cannot read it (and fails)
	case fileUnknown:
		return []string{cmdline.Dynamic}
	}
	out := requirementsAs(path, b)
	text := strings.ReplaceAll(string(b), "\\\n", "")
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if strings.Contains(line, "${") {
			out = append(out, cmdline.Dynamic)
			continue
		}
		if line[0] != '-' {
			if h, ok := requirementURLHost(line); ok {
				out = append(out, h)
			}
			continue
		}
		name, val := requirementOption(line)
		switch {
		case name == "f" || len(name) >= 2 && strings.HasPrefix("find-links", name):
			if strings.Contains(val, "://") && !strings.HasPrefix(strings.ToLower(val), "file:") {
				out = append(out, cmdline.Dynamic)
			}
		case has(name, "r c") || len(name) >= 2 && (strings.HasPrefix("requirement", name) || strings.HasPrefix("constraint", name)):
			nested := val
			if !filepath.IsAbs(nested) {
				nested = filepath.Join(filepath.Dir(path), nested)
			}
			if strings.Contains(val, "://") {
				out = append(out, urlHost(val)) // pip fetches the file from there
				continue
			}
			out = append(out, pc.requirements(nested, seen, depth+1)...)
		case strings.Contains(val, "://"):
			out = append(out, urlHost(val))
		}
	}
	return out
}

// requirementOption splits an option line of a requirement file into the
// option's name (without dashes) and its value.
func requirementOption(line string) (name, val string) {
	opt, rest := line, ""
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 { // pip splits with shlex: a tab too
		opt, rest = line[:i], line[i+1:]
	}
	name, v, eq := strings.Cut(strings.TrimLeft(opt, "-"), "=")
	if eq {
		return name, strings.TrimSpace(v)
	}
	if !strings.HasPrefix(opt, "--") && len(name) > 1 { // -ihttps://…
		return name[:1], name[1:]
	}
	return name, strings.TrimSpace(rest)
}

// requirementURLHost is the host of a requirement named by its URL ("x @
// https://h/x.whl", "git+https://h/r", "https://h/x.whl").
func requirementURLHost(line string) (string, bool) {
	i := strings.Index(line, "://")
	if i < 0 {
		return "", false
	}
	start := i
	for start > 0 && (isSchemeByte(line[start-1])) {
		start--
	}
	end := strings.IndexAny(line[i:], " ;\t")
	if end < 0 {
		end = len(line) - i
	}
	h := urlHost(line[start : i+end])
	return h, h != ""
}

func isSchemeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// has reports whether s is one of list's space-separated words.
func has(s, list string) bool { return slices.Contains(strings.Fields(list), s) }

// Cargo aliases (cmdline.AliasFunc). cargo expands an [alias] of its
// configuration in its own process (`[alias] i = "install --git URL x"`,
// then `cargo i`), so the exec gate sees only `cargo i`: the alias is read
// here, for the line and again at exec, and its expansion is decided as
// the command it makes. cargo reads .cargo/config.toml and .cargo/config
// in the working folder and each folder above it, then CARGO_HOME's
// config.toml and config (in the sandbox the call's private CARGO_HOME,
// which the server makes, its files read with no link; on the host the
// server's CARGO_HOME or ~/.cargo, links followed); project files are read as the install's (projectConfig.load:
// in the roots, no symlink on the way). A value is a string (split on
// whitespace) or a list of strings. What cannot be known is <dynamic>:
// a file that does not parse as TOML, that has an include (another file
// may define it), whose alias is neither form, one that cannot be read
// as cargo meets it (a symlink, outside the roots, too large), an alias
// defined in two files (cargo merges them by precedence, a list's words
// joined), and, for a command that may run elsewhere (a cd, -C), an
// alias any configuration file in the roots defines.

// cargoConfigNames are the files cargo reads its configuration from in a
// folder (CARGO_HOME's are the same names without ".cargo/").
var cargoConfigNames = []string{".cargo/config.toml", ".cargo/config"}

// aliasReader is the cmdline.AliasFunc of commands run in cwd on surface.
// It reads nothing until asked (only a cargo subcommand that is none of
// cargo's own is looked up).
func aliasReader(p *grants.Policy, cwd string, surface grants.Surface) cmdline.AliasFunc {
	var pc *projectConfig // made on the first look-up, then kept (each file read once)
	return func(manager, name string, elsewhere bool) ([]string, bool) {
		if manager != "cargo" {
			return nil, false
		}
		if pc == nil {
			pc = &projectConfig{cwd: cwd, pinned: toolchainsApply(p, surface), roots: slices.Concat([]string{p.Workspace}, p.Sandbox.Writable), hosts: map[string][]string{}}
		}
		return pc.cargoAlias(name, cargoHome(p, surface), toolchainsApply(p, surface), elsewhere)
	}
}

// cargoHome is the CARGO_HOME of a command on surface, its symlinks
// resolved ("" when none is known): the call's private one where the
// toolchains apply (toolchains.Prepare makes it in the workspace's cache
// and removes its config at each call; a command may write one there
// before cargo runs), else the server's CARGO_HOME when [sandbox] env
// passes it, else ~/.cargo.
func cargoHome(p *grants.Policy, surface grants.Surface) string {
	var home string
	switch v, passed := os.LookupEnv("CARGO_HOME"); {
	case toolchainsApply(p, surface):
		if cache, err := os.UserCacheDir(); err == nil {
			home = filepath.Join(toolchains.WorkspaceCache(cache, p.Workspace), "cargo")
		}
	case passed && slices.Contains(p.Sandbox.Env, "CARGO_HOME"):
		home = v
	default:
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".cargo")
		}
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		return real // its folders are the server's; the command writes only in it
	}
	return home
}

// cargoAlias is what alias name expands to for a cargo command run in
// pc.cwd (or, with elsewhere, in any folder of the roots), with home as
// CARGO_HOME: nil when no file defines it, dynamic when that cannot be
// known (see above). A private CARGO_HOME (the call's, which commands
// write) is read with no link at its files; the person's own follows
// them.
func (pc *projectConfig) cargoAlias(name, home string, private, elsewhere bool) (words []string, dynamic bool) {
	files := pc.chain(pc.cwd, cargoConfigNames)
	if elsewhere {
		found, ok := pc.walk()
		if !ok {
			return nil, true
		}
		for _, f := range found {
			if slices.ContainsFunc(cargoConfigNames, func(n string) bool { return strings.HasSuffix(f, string(filepath.Separator)+filepath.FromSlash(n)) }) {
				files = append(files, f)
			}
		}
	}
	var defs [][]string
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			continue
		}
		seen[f] = true
		if f == cmdline.Dynamic {
			return nil, true
		}
		b, st := pc.load(f)
		switch st {
		case fileAbsent, fileHidden:
			continue // cargo reads nothing there
		case fileUnknown:
			return nil, true
		}
		w, found, ok := cargoAliasIn(b, name)
		if !ok {
			return nil, true
		}
		if found {
			defs = append(defs, w)
		}
	}
	for _, n := range cargoConfigNames {
		if home == "" {
			break
		}
		f := filepath.Join(home, filepath.Base(n))
		if !private {
			if real, err := filepath.EvalSymlinks(f); err == nil {
				f = real // the person's own (a dotfiles link): followed
			}
		}
		b, err := fstools.ReadRegular(f, maxProjectFile)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		w, found, ok := cargoAliasIn(b, name)
		if err != nil || !ok {
			return nil, true
		}
		if found {
			defs = append(defs, w)
		}
	}
	switch len(defs) {
	case 0:
		return nil, false
	case 1:
		return defs[0], false
	}
	return nil, true
}

// cargoAliasIn reads alias name from one cargo config file as cargo's
// TOML parser does (a byte-order mark, quoted and dotted keys: a real
// parser): its words when found; ok is false when the file does not
// parse, has an include, or the alias is neither a string nor a list of
// strings.
func cargoAliasIn(b []byte, name string) (words []string, found, ok bool) {
	var doc map[string]any
	if toml.Unmarshal(bytes.TrimPrefix(b, []byte("\uFEFF")), &doc) != nil {
		return nil, false, false
	}
	if _, inc := doc["include"]; inc {
		return nil, false, false
	}
	raw, defined := doc["alias"]
	table, isTable := raw.(map[string]any)
	if defined && !isTable {
		return nil, false, false
	}
	v, found := table[name]
	if !found {
		return nil, false, true
	}
	switch v := v.(type) {
	case string:
		return strings.Fields(v), true, true
	case []any:
		for _, e := range v {
			s, isStr := e.(string)
			if !isStr {
				return nil, false, false
			}
			words = append(words, s)
		}
		return words, true, true
	}
	return nil, false, false
}
