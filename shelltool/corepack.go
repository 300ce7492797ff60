package shelltool

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// corepack's shims (issue 16). After `corepack enable`, `pnpm` is a link
// to corepack's dist/pnpm.js, which fetches the package manager the
// project's package.json names ("packageManager": "pnpm@9.1.0", or
// devEngines.packageManager; its own default version without one) from
// its registry on first use, then runs it in the same process: the gate
// sees `pnpm install` (the manifest's dependencies), not the fetch of pnpm
// itself. At exec, a program that is such a shim (its path, or node's
// script, leads to a corepack dist/NAME.js: pnpm, pnpx, yarn, yarnpkg,
// npm, npx, or corepack.js itself) is decided as `corepack NAME[@SPEC]
// ARGS` is (a package.install of the manager from corepack's registry,
// cmdline's corepackRun, and the manager's own install).
//
// The manager's cache (COREPACK_HOME, else $XDG_CACHE_HOME/node/corepack)
// is not consulted: in the sandbox it lies in the call's fresh HOME, so a
// shim fetches on every call's first use, and a version the same call
// prepared is decided by the request `corepack prepare` of it was.
// COREPACK_ENABLE_NETWORK=0 in every command's environment would stop
// the fetch too, but corepack's prepare/install/use/up honour it as well
// (so the decided installs would fail), and it would keep every shim from
// working in a fresh HOME.

// corepackBins are the shims corepack's dist folder holds, by the
// package manager each runs ("" for corepack itself).
var corepackBins = map[string]string{"pnpm.js": "pnpm", "pnpx.js": "pnpm", "yarn.js": "yarn", "yarnpkg.js": "yarn",
	"npm.js": "npm", "npx.js": "npm", "corepack.js": ""}

// nodeModulesDir is corepack's test for a folder it skips when it looks
// for the project's package.json (a package inside node_modules).
var nodeModulesDir = regexp.MustCompile(`/node_modules/(@[^/]*/)?[^@/][^/]*$`)

// maxScriptWords bounds the words of node's argv read for its script.
const maxScriptWords = 16

// runsNode reports whether the program is node (by its executable's
// name or family): the script it runs is read from its words, which the
// gate's cache key holds but not the files they name, so such an event
// is decided again at each exec (a link may be re-pointed at a shim).
func runsNode(ev sandbox.ExecEvent) bool {
	n := filepath.Base(ev.Exe)
	return n == "node" || slices.Contains(cmdline.ProgramFamilies(n), "node")
}

// corepackShim finds, in a program about to run, corepack's entry point:
// the path it was exec'd by (a link to dist/pnpm.js run through its
// shebang), or the script node runs: its first word that is no option,
// or, after an option (which may take it as its value), each such word up
// to the first that follows another (maxScriptWords at most). manager is
// the package manager the shim runs ("" for corepack.js itself), args
// the words after it; ok is false for any other program.
func corepackShim(ev sandbox.ExecEvent) (manager string, args []string, ok bool) {
	// A shim is a script whose shebang is `#!/usr/bin/env node`: the
	// kernel runs env (or node), another file than the path. Any other
	// program is read no further, sparing its exec a walk of its path's
	// links; a shim behind a link named as its interpreter is caught at
	// node's exec, where every shim ends.
	if exe := filepath.Base(ev.Exe); filepath.Base(ev.ExecPath) != exe && (exe == "env" || runsNode(ev)) {
		if m, isShim := corepackEntry(ev.ExecPath, ev.Cwd); isShim {
			for i, w := range ev.Argv {
				if w == ev.ExecPath {
					return m, ev.Argv[i+1:], true
				}
			}
			return m, nil, true
		}
	}
	if !runsNode(ev) {
		return "", nil, false
	}
	for i := 1; i < len(ev.Argv) && i <= maxScriptWords; i++ {
		w := ev.Argv[i]
		if strings.HasPrefix(w, "-") {
			continue
		}
		if m, isShim := corepackEntry(w, ev.Cwd); isShim {
			return m, ev.Argv[i+1:], true
		}
		if !strings.HasPrefix(ev.Argv[i-1], "-") {
			break // the script: not an option's value
		}
	}
	return "", nil, false
}

// corepackEntry reports whether path (relative to cwd) leads, through its
// links, to one of corepack's entry points (corepackBins in a dist
// folder of a folder named corepack), and the manager it runs.
func corepackEntry(path, cwd string) (manager string, ok bool) {
	if path == "" {
		return "", false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	dist := filepath.Dir(real)
	m, known := corepackBins[filepath.Base(real)]
	return m, known && filepath.Base(dist) == "dist" && filepath.Base(filepath.Dir(dist)) == "corepack"
}

// shimInstalls are the installs of a program that is a corepack shim
// (corepackShim), as `corepack NAME[@SPEC] ARGS` (cmdline): the manager
// at the version the project names (projectManager), the words after as
// its own. None for another program.
func shimInstalls(p *grants.Policy, ev sandbox.ExecEvent) (cmdline.Analysis, error) {
	manager, args, ok := corepackShim(ev)
	if !ok {
		return cmdline.Analysis{}, nil
	}
	words := []string{"corepack"}
	if manager != "" {
		words = append(words, projectManager(p, ev.Cwd, manager))
	}
	return cmdline.AnalyzeProgramIn(append(words, args...), cmdline.ProgramEnv{Set: ev.Env, Unset: ev.EnvUnset})
}

// projectManager is the package manager spec a corepack shim of manager
// runs in cwd, as corepack's loadSpec finds it: the packageManager of the
// nearest package.json from cwd up that names one (corepack skips the
// packages inside node_modules), else the devEngines.packageManager of
// the last one it read; when that names the manager, its spec (its hash,
// "+sha512.…", left off), else the manager alone, at corepack's default
// version (when none does, or one names another: corepack's transparent
// commands then run its default). A package.json that cannot be read as
// the shim reads it (outside the roots, a symlink, not JSON) gives
// cmdline.Dynamic as the version: any release, from corepack's registry.
func projectManager(p *grants.Policy, cwd, manager string) string {
	pc := &projectConfig{cwd: cwd, roots: slices.Concat([]string{p.Workspace}, p.Sandbox.Writable), hosts: map[string][]string{}}
	dev := ""
	for _, f := range pc.chain(cwd, []string{"package.json"}) {
		if f == cmdline.Dynamic {
			return manager + "@" + cmdline.Dynamic
		}
		if nodeModulesDir.MatchString(filepath.ToSlash(filepath.Dir(f))) {
			continue
		}
		b, st := pc.load(f)
		switch st {
		case fileAbsent, fileHidden:
			continue
		case fileUnknown:
			return manager + "@" + cmdline.Dynamic
		}
		spec, devSpec, ok := packageManagerField(b)
		switch {
		case !ok:
			return manager + "@" + cmdline.Dynamic
		case spec != "":
			return managerSpec(manager, spec)
		}
		dev = devSpec
	}
	return managerSpec(manager, dev)
}

// managerSpec is spec ("pnpm@9.1.0+sha512.…") as the manager's install
// names it: without its hash; the manager alone when spec names another
// or none.
func managerSpec(manager, spec string) string {
	name, version, _ := strings.Cut(spec, "@")
	if name != manager || version == "" {
		return manager
	}
	version, _, _ = strings.Cut(version, "+")
	return name + "@" + version
}

// packageManagerField is what a package.json says of its package manager,
// as corepack reads it: packageManager (a string), and
// devEngines.packageManager's name and version ("*" without one); ok is
// false when it is not JSON.
func packageManagerField(b []byte) (spec, devSpec string, ok bool) {
	var m struct {
		PackageManager any `json:"packageManager"`
		DevEngines     struct {
			PackageManager any `json:"packageManager"`
		} `json:"devEngines"`
	}
	if json.Unmarshal(b, &m) != nil {
		return "", "", false
	}
	spec, _ = m.PackageManager.(string)
	if d, isObj := m.DevEngines.PackageManager.(map[string]any); isObj {
		if name, _ := d["name"].(string); name != "" {
			version, _ := d["version"].(string)
			devSpec = name + "@" + cmp.Or(version, "*")
		}
	}
	return spec, devSpec, true
}

// shimNames are the command names corepack enable links to its shims.
const shimNames = "pnpm pnpx yarn yarnpkg npm npx"

// lineShims is a with the package managers its commands' corepack shims
// fetch (shimInstalls): a shim's name as PATH finds it (the server's
// PATH), or a command named by a path, that leads to corepack's entry
// points (as the kernel runs it: through its shebang's env), run in the
// folder the line leaves it in (one known only at run
// time: any version). The line is so asked what the exec gate decides
// when the shim runs (and on the host, where no gate runs); the
// manager's own install is the command's already.
func lineShims(p *grants.Policy, a cmdline.Analysis, cwd string) cmdline.Analysis {
	a.Commands, a.Packages = slices.Clip(a.Commands), slices.Clip(a.Packages) // the caller's stay as they are
	for _, c := range slices.Clone(a.Commands) {
		path := c.Name
		if path == cmdline.Dynamic || len(c.Words) == 0 || !strings.Contains(path, "/") && !has(path, shimNames) {
			continue
		}
		if !strings.Contains(path, "/") {
			found := toolchains.Host{Getenv: os.Getenv}.LookPath(path)
			if found == "" {
				continue
			}
			path = found
		}
		dir := cwd
		switch {
		case c.Dir == cmdline.Dynamic && !filepath.IsAbs(path):
			continue // a folder known only when run: the exec gate decides it there
		case c.Dir == cmdline.Dynamic:
			dir = ""
		case c.Dir != "" && filepath.IsAbs(c.Dir):
			dir = c.Dir
		case c.Dir != "":
			dir = filepath.Join(cwd, c.Dir)
		}
		shim, err := shimInstalls(p, sandbox.ExecEvent{Exe: "/usr/bin/env", ExecPath: path, Argv: append([]string{path}, c.Words[1:]...), Cwd: dir})
		if err != nil {
			shim = cmdline.Analysis{Commands: []cmdline.Command{c}, Packages: []cmdline.Package{{Name: cmdline.Dynamic, Host: cmdline.Dynamic, Manager: "corepack"}}}
		}
		shim.Packages = slices.DeleteFunc(shim.Packages, func(pk cmdline.Package) bool { return pk.Manager != "corepack" })
		addInstalls(&a, shim)
	}
	return a
}
