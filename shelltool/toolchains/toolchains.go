// Package toolchains finds the developer toolchains the server's user has
// (go, git, pyenv/virtualenv/~/.local Python, nvm/volta Node, rustup and
// cargo) and says how a sandboxed command sees them: which folders it may
// read and execute, which private folders it may write, and the
// environment that points each tool at them.
//
// Security model. The home folder stays closed: a command gets read and
// execute access to exactly the toolchain folders found (never ~/.ssh,
// ~/.gitconfig, ~/.npmrc, ~/.netrc, ~/.cargo/credentials.toml, keyrings, or
// the rest of $HOME), and never write access to any of them. Every cache a
// tool writes (Go's build and module caches, npm's, pip's, cargo's, the user
// site) is a private folder the server owns per workspace, under the user's
// cache folder, so nothing a command writes reaches the person's own caches
// and poisons their later builds; a per-workspace cache shares only that
// workspace's trust. HOME is a fresh, empty folder for each call (made by
// the sandbox in its private /tmp when the caller passes one, else here). git gets a
// generated global config holding only user.name and user.email read from
// the real one (no url.*.insteadOf token, no credential helper, no include)
// and the system config is skipped. Go reads the host's module cache only
// as a read-only file:// proxy. npm and pip fetch from the index the
// command line decided (package.install): npm's registry is set in the
// environment, above a project's .npmrc, with a lockfile's URLs sent to it,
// and pip reads no pip.conf, uv no uv.toml or [tool.uv] table, go uses the
// host's module cache then proxy.golang.org and never a module's own host
// (GoProxy), and a cargo config a command left in the private CARGO_HOME is
// removed at each call; what a project's files name beyond that (an
// .npmrc's scope registries, lockfiles, requirement files) is read into
// the decision by the caller. Their installations' own token-bearing
// config files (npm's global npmrc, pip's site config) are reported for
// hiding wherever they lie (Configs). Detection only looks at the file system
// (stat, readlink, small reads of the git config and npm's global config):
// it starts no process.
package toolchains

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Names of the toolchains Detect knows, as `[sandbox] toolchains` lists them.
const (
	Go     = "go"
	Git    = "git"
	Python = "python"
	Node   = "node"
	Rust   = "rust"
)

// NpmRegistry is the registry npm uses in the sandbox unless the command
// line names another: the default index package.install decides for npm.
const NpmRegistry = "https://registry.npmjs.org/"

// Known lists every toolchain name, in the order they are reported.
var Known = []string{Git, Go, Python, Node, Rust}

// Host is what detection looks at: the server's own environment and home.
type Host struct {
	Home   string              // the user's home folder
	Getenv func(string) string // the server's environment
}

// Toolchain is one toolchain found on the host.
type Toolchain struct {
	Name string
	// Where says what was found, for check and doctor ("go in /usr/local/go").
	Where []string
	// Readable are folders outside the system folders the command needs to
	// read and execute (the toolchain's own tree, its shims, its bin).
	Readable []string
	// hostModCache is Go's host module download cache, served read-only as
	// a file:// proxy.
	hostModCache string
	// rustupHome is the host RUSTUP_HOME, read-only.
	rustupHome string
	// pyenvRoot is the host PYENV_ROOT: commands run its interpreter
	// directly, not through its shims (a shim's pip hook rewrites the shims,
	// which stay read-only).
	pyenvRoot string
	// configs are the installations' own config files that hold registry
	// tokens when a person sets one there, found at the place the tool reads
	// them (however deep): npm's global npmrc (<prefix>/etc/npmrc, what
	// `npm config set -g` writes) and its built-in one
	// (<prefix>/lib/node_modules/npm/npmrc), and pip's site config
	// (<prefix>/pip.conf).
	configs []string
	// npmCAFile is the CA bundle the real global npmrc names (cafile),
	// carried into the generated one.
	npmCAFile string
}

// Set is the toolchains a config selected.
type Set struct {
	Found []Toolchain
	// git identity read from the real global config.
	userName, userEmail string
}

// Has reports whether the named toolchain was found.
func (s Set) Has(name string) bool {
	return slices.ContainsFunc(s.Found, func(t Toolchain) bool { return t.Name == name })
}

// Select parses `[sandbox] toolchains`: "auto" (or empty) is every known
// toolchain, "none" is none, otherwise a list of names.
func Select(setting []string) ([]string, error) {
	switch {
	case len(setting) == 0, len(setting) == 1 && setting[0] == "auto":
		return Known, nil
	case len(setting) == 1 && setting[0] == "none":
		return nil, nil
	}
	for _, n := range setting {
		if !slices.Contains(Known, n) {
			return nil, fmt.Errorf("[sandbox] toolchains: unknown toolchain %q; known: %s, or \"auto\" or \"none\"", n, strings.Join(Known, ", "))
		}
	}
	return setting, nil
}

// Detect finds the selected toolchains. It only stats and reads small files.
func Detect(h Host, selected []string) Set {
	var s Set
	for _, name := range selected {
		var t Toolchain
		var ok bool
		switch name {
		case Go:
			t, ok = detectGo(h)
		case Git:
			t, ok = detectGit(h)
			if ok {
				s.userName, s.userEmail = gitIdentity(h)
			}
		case Python:
			t, ok = detectPython(h)
		case Node:
			t, ok = detectNode(h)
		case Rust:
			t, ok = detectRust(h)
		}
		if ok {
			t.Name = name
			s.Found = append(s.Found, t.safeRoots(h))
		}
	}
	return s
}

// LookPath finds an executable in the host's PATH, without running it
// ("" when none).
func (h Host) LookPath(name string) string {
	return lookPath(h, name)
}

// lookPath finds an executable in the host's PATH, without running it.
func lookPath(h Host, name string) string {
	for _, dir := range filepath.SplitList(h.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// underHome reports whether p is inside the home folder (so the sandbox
// does not see it unless we grant it).
func underHome(h Host, p string) bool {
	return h.Home != "" && (p == h.Home || strings.HasPrefix(p, h.Home+string(filepath.Separator)))
}

// envOr is the variable's value, else the default.
func envOr(h Host, key, def string) string {
	if v := h.Getenv(key); v != "" && filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return def
}

// safeRoots is t without the roots no toolchain may be granted
// (refusedRoot), each named in Where; the private roots that depend on
// a refused one (pyenv's, rustup's, the module cache) go with it.
func (t Toolchain) safeRoots(h Host) Toolchain {
	var kept []string
	for _, r := range t.Readable {
		if why := refusedRoot(h, r); why != "" {
			t.Where = append(t.Where, "not granted: "+r+" ("+why+")")
			continue
		}
		kept = append(kept, r)
	}
	t.Readable = kept
	for _, p := range []*string{&t.hostModCache, &t.rustupHome, &t.pyenvRoot} {
		if *p != "" && !slices.Contains(kept, *p) {
			*p = ""
		}
	}
	return t
}

// refusedRoot says why root must never be granted as a toolchain folder,
// or "" when it may: the home folder and every folder holding it, and the
// home's folders of everyone's configuration, caches and data (~/.local,
// ~/.local/share, ~/.config, ~/.cache, and where XDG_* moves them), which
// hold keyrings and tokens beside any tool. Both the path and where its
// symlinks lead are checked, against the home as written and resolved; a
// root that cannot be resolved is refused.
func refusedRoot(h Host, root string) string {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "cannot be resolved"
	}
	if filepath.Clean(root) == "/" || real == "/" {
		return "it is the root folder" // holds every home, whatever HOME says
	}
	if h.Home == "" || !filepath.IsAbs(h.Home) {
		return ""
	}
	roots := []string{filepath.Clean(root), real}
	homes := []string{filepath.Clean(h.Home)}
	if r, err := filepath.EvalSymlinks(h.Home); err == nil {
		homes = append(homes, r)
	}
	for _, home := range homes {
		for _, r := range roots {
			if r == home || strings.HasPrefix(home, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
				return "it is or holds the home folder"
			}
			if slices.Contains(sharedHomeFolders(h, home), r) {
				return "it holds every tool's configuration or data"
			}
		}
	}
	return ""
}

// sharedHomeFolders are the folders of home shared by every tool, which
// hold its secrets (keyrings, tokens) beside any toolchain.
func sharedHomeFolders(h Host, home string) []string {
	out := []string{
		filepath.Join(home, ".local"), filepath.Join(home, ".local", "share"),
		filepath.Join(home, ".config"), filepath.Join(home, ".cache"), filepath.Join(home, ".local", "state"),
	}
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"} {
		if v := h.Getenv(k); filepath.IsAbs(v) {
			out = append(out, filepath.Clean(v))
		}
	}
	return out
}

// isGoroot reports whether dir looks like a Go installation: its VERSION
// file, its runtime's source and its tool folder. A go found in PATH is
// often no GOROOT's bin/go: a version manager's shim (mise's is a symlink to
// the mise binary in ~/.local/bin) or a copy in ~/bin, two folders below
// ~/.local or the home folder itself.
func isGoroot(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "VERSION"))
	return err == nil && fi.Mode().IsRegular() &&
		isDir(filepath.Join(dir, "src", "runtime")) && isDir(filepath.Join(dir, "pkg", "tool"))
}

// detectGo finds the go in PATH. Its GOROOT (the GOROOT variable, else two
// folders above the resolved binary; detection runs no `go env`) is
// readable only when it looks like one (isGoroot); otherwise go gets its
// GOPATH bin and module cache, and no GOROOT.
func detectGo(h Host) (Toolchain, bool) {
	bin := lookPath(h, "go")
	if bin == "" {
		return Toolchain{}, false
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return Toolchain{}, false
	}
	var t Toolchain
	if goroot := envOr(h, "GOROOT", filepath.Dir(filepath.Dir(real))); isGoroot(goroot) {
		t.Where, t.Readable = []string{"go in " + goroot}, []string{goroot}
	} else {
		t.Where = []string{"go at " + bin + " (" + goroot + " is no GOROOT: not granted)"}
	}
	gopath := envOr(h, "GOPATH", filepath.Join(h.Home, "go"))
	if first, _, _ := strings.Cut(gopath, string(filepath.ListSeparator)); first != "" {
		gopath = first
	}
	if b := filepath.Join(gopath, "bin"); isDir(b) {
		t.Readable = append(t.Readable, b)
	}
	mod := envOr(h, "GOMODCACHE", filepath.Join(gopath, "pkg", "mod"))
	if dl := filepath.Join(mod, "cache", "download"); isDir(dl) {
		t.hostModCache = dl
		t.Readable = append(t.Readable, dl)
		t.Where = append(t.Where, "host module cache "+mod+" (read-only, as a file:// proxy)")
	}
	return t, true
}

func detectGit(h Host) (Toolchain, bool) {
	bin := lookPath(h, "git")
	if bin == "" {
		return Toolchain{}, false
	}
	t := Toolchain{Where: []string{"git at " + bin}}
	if underHome(h, bin) {
		t.Readable = append(t.Readable, filepath.Dir(bin))
	}
	return t, true
}

func detectPython(h Host) (Toolchain, bool) {
	var t Toolchain
	root := envOr(h, "PYENV_ROOT", filepath.Join(h.Home, ".pyenv"))
	if isDir(filepath.Join(root, "versions")) {
		t.Readable = append(t.Readable, root)
		t.pyenvRoot = root
		t.Where = append(t.Where, "pyenv in "+root)
		t.configs = append(t.configs, inPrefixes(filepath.Join(root, "versions"), "pip.conf")...)
	}
	if venv := h.Getenv("VIRTUAL_ENV"); venv != "" && filepath.IsAbs(venv) && isDir(venv) && underHome(h, venv) {
		t.Readable = append(t.Readable, filepath.Clean(venv))
		t.Where = append(t.Where, "virtualenv "+venv)
		t.configs = append(t.configs, existing(filepath.Join(venv, "pip.conf"))...)
	}
	local := filepath.Join(h.Home, ".local")
	if b := filepath.Join(local, "bin"); isDir(b) {
		t.Readable = append(t.Readable, b)
		libs, _ := filepath.Glob(filepath.Join(local, "lib", "python*"))
		t.Readable = append(t.Readable, libs...)
		t.Where = append(t.Where, "user scripts in "+b)
	}
	if len(t.Readable) == 0 && lookPath(h, "python3") == "" {
		return Toolchain{}, false
	}
	if len(t.Where) == 0 {
		t.Where = []string{"python3 at " + lookPath(h, "python3")}
	}
	return t, true
}

// npmConfigs are the config files npm reads inside a Node installation
// (relative to its prefix), where a token can lie: the global npmrc
// (`npm config set -g` writes it) and npm's own built-in npmrc.
var npmConfigs = []string{filepath.Join("etc", "npmrc"), filepath.Join("lib", "node_modules", "npm", "npmrc")}

func detectNode(h Host) (Toolchain, bool) {
	var t Toolchain
	npmrc := npmConfigs[0]
	if nvm := envOr(h, "NVM_DIR", filepath.Join(h.Home, ".nvm")); isDir(filepath.Join(nvm, "versions")) {
		t.Readable = append(t.Readable, filepath.Join(nvm, "versions"))
		t.Where = append(t.Where, "nvm in "+nvm)
		t.configs = append(t.configs, inPrefixes(filepath.Join(nvm, "versions", "node"), npmConfigs...)...)
	}
	if volta := envOr(h, "VOLTA_HOME", filepath.Join(h.Home, ".volta")); isDir(volta) {
		for _, sub := range []string{"bin", "tools"} {
			if d := filepath.Join(volta, sub); isDir(d) {
				t.Readable = append(t.Readable, d)
			}
		}
		t.Where = append(t.Where, "volta in "+volta)
		t.configs = append(t.configs, inPrefixes(filepath.Join(volta, "tools", "image", "node"), npmConfigs...)...)
	}
	bin := lookPath(h, "node")
	if bin != "" {
		// The node in PATH: its global npmrc's CA bundle is kept, and the
		// file is hidden when it is the user's own (a system one, such as
		// /usr/etc/npmrc, is like the rest of the system folders; npm reads
		// neither in the sandbox).
		if real, err := filepath.EvalSymlinks(bin); err == nil {
			prefix := filepath.Dir(filepath.Dir(real))
			if underHome(h, prefix) {
				for _, rel := range npmConfigs {
					t.configs = append(t.configs, existing(filepath.Join(prefix, rel))...)
				}
			}
			t.npmCAFile = npmCAFile(h, filepath.Join(prefix, npmrc))
		}
	}
	if len(t.Readable) == 0 {
		if bin == "" {
			return Toolchain{}, false
		}
		t.Where = []string{"node at " + bin}
	}
	return t, true
}

// inPrefixes is each of rels inside each installation folder of dir (one
// folder per version, as nvm, volta and pyenv keep them), where it exists.
func inPrefixes(dir string, rels ...string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		for _, rel := range rels {
			out = append(out, existing(filepath.Join(dir, e.Name(), rel))...)
		}
	}
	return out
}

// existing is p when it exists.
func existing(p string) []string {
	if _, err := os.Lstat(p); err != nil {
		return nil
	}
	return []string{p}
}

func detectRust(h Host) (Toolchain, bool) {
	var t Toolchain
	cargo := envOr(h, "CARGO_HOME", filepath.Join(h.Home, ".cargo"))
	if b := filepath.Join(cargo, "bin"); isDir(b) {
		t.Readable = append(t.Readable, b) // never cargo's credentials.toml or registry
		t.Where = append(t.Where, "cargo binaries in "+b)
	}
	if rustup := envOr(h, "RUSTUP_HOME", filepath.Join(h.Home, ".rustup")); isDir(filepath.Join(rustup, "toolchains")) {
		t.rustupHome = rustup
		t.Readable = append(t.Readable, rustup)
		t.Where = append(t.Where, "rustup in "+rustup)
	}
	if len(t.Readable) == 0 {
		bin := lookPath(h, "cargo")
		if bin == "" {
			return Toolchain{}, false
		}
		t.Where = []string{"cargo at " + bin}
	}
	return t, true
}

// Readable is every folder the found toolchains need readable.
func (s Set) Readable() []string {
	return s.union(func(t Toolchain) []string { return t.Readable })
}

// Configs are the found installations' own config files that may hold
// registry tokens (npm's global npmrc, pip's site config), wherever they
// lie in the toolchain's folders: commands see them hidden. The sandbox
// points npm and pip away from them too (Prepare).
func (s Set) Configs() []string {
	return s.union(func(t Toolchain) []string { return t.configs })
}

// union is field of every toolchain found, sorted, each path once.
func (s Set) union(field func(Toolchain) []string) []string {
	var out []string
	for _, t := range s.Found {
		out = append(out, field(t)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Describe lists what was found, one line a toolchain, for check and doctor.
func (s Set) Describe() []string {
	var out []string
	for _, t := range s.Found {
		out = append(out, t.Name+": "+strings.Join(t.Where, "; "))
	}
	return out
}

// WorkspaceCache is the private cache folder the server keeps for one
// workspace under the user's cache folder.
func WorkspaceCache(userCache, workspace string) string {
	sum := sha256.Sum256([]byte(workspace))
	return filepath.Join(userCache, "onellm-mcp", "workspaces", filepath.Base(workspace)+"-"+hex.EncodeToString(sum[:6]))
}

// Call is the sandbox view of the toolchains for one command.
type Call struct {
	// Env overrides the command's environment (KEY=VALUE).
	Env []string
	// Readable are extra roots to read and execute.
	Readable []string
	// Writable are extra roots to write (the caches and the call's HOME).
	Writable []string
	// PathPrefix goes before the command's PATH (pyenv's interpreter).
	PathPrefix []string
	// home is the call's private HOME when Prepare made it, removed by
	// Close.
	home string
}

// Close removes the call's private HOME if Prepare made it.
func (c *Call) Close() error {
	if c.home == "" {
		return nil
	}
	return os.RemoveAll(c.home)
}

// Prepare makes the folders of one call under cache (WorkspaceCache):
// the per-workspace caches (kept) and the generated configs, and returns the
// environment pointing the tools at them. home is the call's HOME when the
// caller has it made fresh and empty for the call (the sandbox does, in its
// private /tmp: sandbox.Spec.Home); with "" Prepare makes one under cache
// (removed by Close).
func (s Set) Prepare(cache string, workspaceRoots []string, home string) (*Call, error) {
	if cache == "" || !filepath.IsAbs(cache) {
		return nil, errors.New("toolchains: no cache folder")
	}
	if home != "" && (!filepath.IsAbs(home) || filepath.Clean(home) != home) {
		return nil, fmt.Errorf("toolchains: home %q is not a clean absolute path", home)
	}
	dirs := map[string]string{}
	for _, d := range []string{"go-build", "go-mod", "npm", "pip", "pyuser", "cargo", "etc", "homes"} {
		p := filepath.Join(cache, d)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, fmt.Errorf("toolchains: cache folder: %w", err)
		}
		dirs[d] = p
	}
	if err := clearCargoConfig(dirs["cargo"]); err != nil {
		return nil, err
	}
	c := &Call{Readable: s.Readable()}
	c.Writable = []string{dirs["go-build"], dirs["go-mod"], dirs["npm"], dirs["pip"], dirs["pyuser"], dirs["cargo"]}
	if home == "" {
		h, err := os.MkdirTemp(dirs["homes"], "home-")
		if err != nil {
			return nil, fmt.Errorf("toolchains: private home: %w", err)
		}
		home, c.home = h, h
		c.Writable = append([]string{h}, c.Writable...)
	}
	gen, err := s.generate(dirs["etc"], workspaceRoots)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.Readable = append(c.Readable, dirs["etc"])
	c.Env = []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"GIT_CONFIG_GLOBAL=" + gen.gitconfig,
		"GIT_CONFIG_NOSYSTEM=1",
		"GOCACHE=" + dirs["go-build"],
		"GOMODCACHE=" + dirs["go-mod"],
		"GOTOOLCHAIN=local",
		"GOENV=off",
		"npm_config_cache=" + dirs["npm"],
		"npm_config_userconfig=" + gen.npmrc,
		"npm_config_globalconfig=" + gen.npmGlobal,
		"npm_config_update_notifier=false",
		"PIP_CACHE_DIR=" + dirs["pip"],
		"PIP_DISABLE_PIP_VERSION_CHECK=1",
		"PYTHONUSERBASE=" + dirs["pyuser"],
		"CARGO_HOME=" + dirs["cargo"],
	}
	for _, pin := range IndexPins() {
		c.Env = append(c.Env, pin.Key+"="+pin.Value)
	}
	if gen.goTelemetry != "" {
		c.Env = append(c.Env, "TEST_TELEMETRY_DIR="+gen.goTelemetry)
	}
	c.Env = append(c.Env, "GOPROXY="+s.goProxy())
	for _, t := range s.Found {
		if t.rustupHome != "" {
			c.Env = append(c.Env, "RUSTUP_HOME="+t.rustupHome)
		}
		if t.pyenvRoot != "" {
			if v, bin := pyenvVersion(t.pyenvRoot, workspaceRoots); bin != "" {
				c.PathPrefix = append(c.PathPrefix, bin)
				c.Env = append(c.Env, "PYENV_VERSION="+v)
			}
		}
	}
	return c, nil
}

// Sets reports whether Prepare gives commands a variable of this name
// (its value then replaces one [sandbox] env passes from the server's
// environment).
func Sets(name string) bool {
	switch name {
	case "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
		"GOCACHE", "GOMODCACHE", "GOTOOLCHAIN", "GOENV", "npm_config_cache", "npm_config_userconfig",
		"npm_config_globalconfig", "npm_config_update_notifier", "PIP_CACHE_DIR", "PIP_DISABLE_PIP_VERSION_CHECK",
		"PYTHONUSERBASE", "CARGO_HOME", "TEST_TELEMETRY_DIR", "GOPROXY", "RUSTUP_HOME", "PYENV_VERSION":
		return true
	}
	for _, pin := range IndexPins() {
		if pin.Key == name {
			return true
		}
	}
	return false
}

// cargoConfigs are the files cargo reads its configuration from in
// CARGO_HOME (source replacement, registries, [patch]).
var cargoConfigs = []string{"config.toml", "config"}

// clearCargoConfig removes the configuration files in the private
// CARGO_HOME: only a command (of an earlier call) can have put one there,
// and one would move the index of every later cargo install of the
// workspace (`[source.crates-io] replace-with`). The cache itself stays.
func clearCargoConfig(cargoHome string) error {
	for _, name := range cargoConfigs {
		if err := os.RemoveAll(filepath.Join(cargoHome, name)); err != nil {
			return fmt.Errorf("toolchains: cargo config: %w", err)
		}
	}
	return nil
}

// GoProxy is the module proxy go uses in the sandbox unless the line
// names another (GOPROXY=, GOPRIVATE=): the default index package.install
// decides for go. Go's own default adds ",direct", fetching a module the
// proxy does not have from its own host, which the decision does not name.
const GoProxy = "https://proxy.golang.org"

// goProxy is GOPROXY for commands: the host's module download cache first
// (read-only, as a file:// proxy: what the host has builds offline), then
// GoProxy; never direct.
func (s Set) goProxy() string {
	for _, t := range s.Found {
		if t.hostModCache != "" {
			return "file://" + t.hostModCache + "," + GoProxy
		}
	}
	return GoProxy
}

// IndexPin is one setting of a sandboxed command's environment that holds
// an installer to the index its command line decided (package.install).
type IndexPin struct {
	Key, Value string
	// Why says what the setting stops, for doctor.
	Why string
}

// IndexPins are the settings Prepare gives every command (and doctor
// reports). The registry npm uses is the one the command line decided:
// --registry or an npm_config_registry= assignment on the line (both
// override these), else NpmRegistry, the index package.install assumes; a
// project's .npmrc cannot move it (environment config outranks project
// config), and a lockfile's resolved URLs are fetched from that registry,
// not their own host. pip reads no configuration file (os.DevNull skips
// them all): a pip.conf in a virtualenv, the call's HOME or /etc cannot add
// an index the line did not name, nor hand pip a token. uv reads no
// persistent configuration (UV_NO_CONFIG: no uv.toml, no pyproject.toml
// [tool.uv] table, so no [[tool.uv.index]] the line does not show); what
// a project's lockfile and [tool.uv.sources] name is read by the caller
// (shelltool's project configuration). Cargo's own config in CARGO_HOME
// is removed at each call (Prepare).
func IndexPins() []IndexPin {
	return []IndexPin{
		{"npm_config_registry", NpmRegistry, "npm's registry is the one the line decided: a project's .npmrc cannot move it (`--registry URL` on the line is decided as an install from that host)"},
		{"npm_config_replace_registry_host", "always", "a lockfile's resolved URLs are fetched from that registry, not from their own host"},
		{"PIP_CONFIG_FILE", os.DevNull, "pip reads no pip.conf (a virtualenv's, the home folder's, /etc's): none can add an index or a token (`--index-url` on the line is decided)"},
		{"UV_NO_CONFIG", "1", "uv reads no uv.toml and no [tool.uv] table of a pyproject.toml (a project's or /etc's): none can add an index (`--index-url`, `--default-index` on the line are decided)"},
	}
}

// generated are the config files the server writes for commands, in a
// folder they may read but not write.
type generated struct {
	gitconfig, npmrc, npmGlobal string
	goTelemetry                 string // "" without go
}

// generate (re)writes the generated configs in etc: each is rewritten only
// when its content changed.
func (s Set) generate(etc string, workspaceRoots []string) (generated, error) {
	// npm refuses one file as both its user and its global config.
	g := generated{gitconfig: filepath.Join(etc, "gitconfig"), npmrc: filepath.Join(etc, "npmrc"), npmGlobal: filepath.Join(etc, "npmrc-global")}
	const npmHeader = "# generated by onellm-mcp: no registry tokens reach commands\n"
	for f, content := range map[string]string{g.gitconfig: s.gitconfig(workspaceRoots), g.npmrc: npmHeader, g.npmGlobal: npmHeader + s.npmGlobal()} {
		if err := writeFile(f, content); err != nil {
			return generated{}, err
		}
	}
	if s.Has(Go) {
		dir, err := goTelemetryOff(etc)
		if err != nil {
			return generated{}, err
		}
		g.goTelemetry = dir
	}
	return g, nil
}

// npmGlobal is what the generated global npmrc carries over from the real
// one: the CA bundle npm is told to trust, nothing else.
func (s Set) npmGlobal() string {
	for _, t := range s.Found {
		if t.npmCAFile != "" {
			return "cafile=" + t.npmCAFile + "\n"
		}
	}
	return ""
}

// goTelemetryOff makes the go command's telemetry folder a generated one
// under etc (read-only to commands) whose mode is "off", and returns it.
// Left at its default ("local") in a call's fresh, empty config folder,
// every go command creates the telemetry folder, a counter file and an
// upload token, and starts a copy of itself ("** telemetry **") in the
// background: one more program through the exec gate and a second Go
// start-up per call, for counters deleted with the HOME. GOTELEMETRY in the
// environment is not read. The go command takes its telemetry folder from
// TEST_TELEMETRY_DIR (cmd/internal/telemetry; `go env GOTELEMETRYDIR` shows
// it), which costs nothing per call, where a mode file in each fresh HOME
// cost three folders and a file per command. Should a later go drop the
// variable, it falls back to its default: slower, nothing more
// (TestGoTelemetryOff notices).
func goTelemetryOff(etc string) (string, error) {
	dir := filepath.Join(etc, "go-telemetry")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("toolchains: go telemetry: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "mode"), "off\n"); err != nil {
		return "", fmt.Errorf("toolchains: go telemetry: %w", err)
	}
	return dir, nil
}

// pyenvVersion is the version pyenv would pick for the workspace (its
// .python-version, else the global version file) and its bin folder, when
// that version is installed.
func pyenvVersion(root string, workspaceRoots []string) (version, bin string) {
	files := []string{filepath.Join(root, "version")}
	if len(workspaceRoots) > 0 {
		files = append([]string{filepath.Join(workspaceRoots[0], ".python-version")}, files...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || len(b) > 4096 {
			continue
		}
		v, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		v = strings.TrimSpace(v)
		if v == "" || v == "system" || strings.ContainsAny(v, "/\\") || v == "." || v == ".." {
			continue
		}
		if d := filepath.Join(root, "versions", v, "bin"); isDir(d) {
			return v, d
		}
	}
	return "", ""
}

// writeFile replaces path atomically (concurrent calls each write their
// own temporary file), unless it already holds exactly content.
func writeFile(path, content string) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == content {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".gen-")
	if err != nil {
		return fmt.Errorf("toolchains: %w", err)
	}
	_, werr := f.WriteString(content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("toolchains: %w", werr)
	}
	return nil
}
