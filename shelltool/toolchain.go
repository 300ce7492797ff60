package shelltool

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// toolchainDepth is how deep credential-looking names are looked for in a
// toolchain folder: the folders granted are installed software (like the
// system folders), so only what lies near their top (a .env, a
// credentials file) is hidden, not a CA bundle deep in a package. The
// config files an installation reads tokens from (npm's global npmrc,
// pip's site config) are found where the tool reads them, at any depth
// (toolchains.Set.Configs). Deeper name scans cost too much: on this
// machine depth 3 took 7 ms, depth 4 17 ms, every entry (263,000) 0.56 s
// warm and 2.7 s cold, and found only CA bundles and test keys.
const toolchainDepth = 2

// toolchainCache remembers detection per selection, so a command pays for
// it once, not per call: the toolchains found, the credential-looking files
// near the top of their folders and the config files deep inside that may
// hold tokens. Commands cannot change those folders, but the person can
// (a `.env` written, `npm config set -g` writing a prefix's npmrc, a new
// version installed): every call re-stats the folders whose listing the
// result came from, and detects again when one changed.
type toolchainCache struct {
	mu    sync.Mutex
	found map[string]detected
}

type detected struct {
	set toolchains.Set
	// credentials are candidates to hide, decided per call (a rule naming
	// one exactly lifts it).
	credentials []string
	// watched are the folders whose entries decided the result.
	watched []dirStamp
}

// dirStamp is what a folder looked like when it was listed.
type dirStamp struct {
	path     string
	dev, ino uint64
	mtime    int64
	missing  bool
}

func stampDir(path string) dirStamp {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return dirStamp{path: path, missing: true}
	}
	return dirStamp{path: path, dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano()}
}

// unchanged reports whether every folder still looks as it did.
func unchanged(stamps []dirStamp) bool {
	for _, st := range stamps {
		if stampDir(st.path) != st {
			return false
		}
	}
	return true
}

func (c *toolchainCache) detect(names []string) detected {
	key := strings.Join(names, ",")
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.found[key]; ok && unchanged(d.watched) {
		return d
	}
	home, _ := os.UserHomeDir()
	s := toolchains.Detect(toolchains.Host{Home: home, Getenv: os.Getenv}, names)
	found, watched := shallowCredentialPaths(s.Readable())
	creds := slices.Concat(found, s.Configs())
	slices.Sort(creds)
	// Where toolchains are found (a new version beside the others, a new
	// installation in the home folder) and where config files appear
	// (their folders lie at depth < toolchainDepth, or beside a root).
	extra := []string{home}
	for _, r := range s.Readable() {
		extra = append(extra, filepath.Dir(r))
	}
	for _, c := range s.Configs() {
		extra = append(extra, filepath.Dir(c))
	}
	slices.Sort(extra)
	for _, dir := range slices.Compact(extra) {
		watched = append(watched, stampDir(dir))
	}
	d := detected{set: s, credentials: slices.Compact(creds), watched: watched}
	if c.found == nil {
		c.found = map[string]detected{}
	}
	c.found[key] = d
	return d
}

// withToolchains gives a sandboxed command the toolchains the policy
// selected: read access to their folders, private caches and HOME, and the
// environment that points the tools at them. The returned function removes
// the call's HOME when it was made on the host.
func (t *Tool) withToolchains(ctx context.Context, gate toolkit.MidAction, p *grants.Policy, spec *sandbox.Spec) (func(), error) {
	if !toolchainsApply(p, grants.SurfaceSandbox) {
		return func() {}, nil
	}
	found := t.toolchains.detect(p.Sandbox.Toolchains)
	set := found.set
	cacheRoot, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("toolchains need the user's cache folder: %w", err)
	}
	roots := slices.Concat([]string{p.Workspace}, p.Sandbox.Writable)
	cache := toolchains.WorkspaceCache(cacheRoot, p.Workspace)
	// The call's HOME is made by the sandbox in its private /tmp (no host
	// folder to make and remove per call), unless a root takes that place.
	home := sandbox.PrivateHome(slices.Concat(spec.Writable, spec.Readable, set.Readable(), []string{cache}))
	call, err := set.Prepare(cache, roots, home)
	if err != nil {
		return nil, err
	}
	spec.Home = home
	spec.Env = overrideEnv(spec.Env, call.Env)
	// What the analysis assumes of every command (an installer's index
	// pins): the exec gate is shown a program's environment only where it
	// differs from these (sandbox.EnvWatch).
	spec.ExecEnv.Pins = call.Env
	if len(call.PathPrefix) > 0 {
		spec.Env = overrideEnv(spec.Env, []string{"PATH=" + strings.Join(append(slices.Clone(call.PathPrefix), envValue(spec.Env, "PATH")), ":")})
	}
	spec.Readable = slices.Concat(spec.Readable, call.Readable)
	spec.Writable = slices.Concat(spec.Writable, call.Writable)
	for _, path := range found.credentials {
		if !readable(ctx, gate, p, path) {
			spec.Hidden = append(spec.Hidden, path)
		}
	}
	return func() { _ = call.Close() }, nil
}

// toolchainsApply reports whether a command on surface gets the
// toolchains (withToolchains), and with them npm and pip held to the
// decided index (toolchains.IndexPins).
func toolchainsApply(p *grants.Policy, surface grants.Surface) bool {
	return surface == grants.SurfaceSandbox && len(p.Sandbox.Toolchains) > 0
}

// heldToRegistry refuses an npm package named by a tarball URL on another
// origin than the registry npm uses (Package.TarballElsewhere), when npm is held to that registry: it
// fetches every tarball from there (npm_config_replace_registry_host=
// always, so that a lockfile's URLs are fetched from where the install
// was decided), so the URL's path would be asked of the registry, and
// fail, while the person was asked about the URL's host. Refused before
// anyone is asked, saying how to install it instead.
func heldToRegistry(p *grants.Policy, pk cmdline.Package, surface grants.Surface) error {
	if !toolchainsApply(p, surface) || pk.Manager != "npm" || !pk.TarballElsewhere() {
		return nil
	}
	return toolkit.Argf("npm in the sandbox fetches every tarball from its registry (%s; npm_config_replace_registry_host=always, so that what package.install decided is what is fetched): the tarball %s would be asked of the registry, not of %s, and fail. "+
		"Install the package by name from a registry (--registry URL names another, decided as an install from that host), or fetch the file first (decided as a network request) and install it from the workspace: npm install ./FILE.tgz; nothing ran",
		pk.Index, pk.URL, pk.Host)
}

// envValue is the value of key in env ("" when absent).
func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// overrideEnv returns env with every KEY=VALUE of over replacing (or
// adding to) the same key.
func overrideEnv(env, over []string) []string {
	keys := map[string]bool{}
	for _, kv := range over {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(env)+len(over))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, over...)
}

// shallowCredentialPaths finds credential-looking files near the top of
// the toolchain folders (to depth toolchainDepth), and stamps every folder
// it listed, so a change in one can be seen (toolchainCache).
func shallowCredentialPaths(roots []string) ([]string, []dirStamp) {
	var out []string
	var listed []dirStamp
	for _, root := range roots {
		base := strings.Count(root, string(filepath.Separator))
		listed = append(listed, stampDir(root)) // also when missing: its appearance counts
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && strings.Count(path, string(filepath.Separator))-base >= toolchainDepth {
				return filepath.SkipDir
			}
			if path != root && grants.IsCredentialPath(path) {
				out = append(out, path)
				if d.IsDir() {
					return filepath.SkipDir
				}
			}
			if d.IsDir() && path != root {
				listed = append(listed, stampDir(path))
			}
			return nil
		})
	}
	return out, listed
}
