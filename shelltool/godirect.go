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
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
)

// goDirect reports whether a go command that installs could fetch a
// module from the module's own host (GOPROXY's "direct", or a module
// GONOPROXY/GOPRIVATE exempts from the proxy) in the environment it runs
// in, where the line cannot show it. In the sandbox with the toolchains
// applied GOPROXY is pinned without direct (pinned); a sandbox without them
// runs go on its own defaults (go.env's "https://proxy.golang.org,direct"):
// direct. On the host the command gets the names [sandbox] env passes (commandEnv): each
// variable as go reads it, the environment first, then the go env file
// ($GOENV, else the user config folder's go/env), then GOROOT's default
// (GOPROXY with direct, the others empty). A go env file that cannot be
// read counts as direct (fail closed). byLine: the line names GOPROXY
// (the analyzer decided it), so only GONOPROXY and GOPRIVATE count.
func goDirect(surface grants.Surface, pinned, byLine bool, getenv func(string) string) bool {
	switch {
	case pinned:
		return false
	case surface == grants.SurfaceSandbox:
		return true
	}
	file, ok := goEnvFile(getenv)
	if !ok {
		return true
	}
	value := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return file[k]
	}
	if value("GONOPROXY") != "" || value("GOPRIVATE") != "" {
		return true
	}
	if byLine {
		return false
	}
	proxy := value("GOPROXY")
	if proxy == "" {
		return true // GOROOT/go.env: https://proxy.golang.org,direct
	}
	for _, entry := range strings.FieldsFunc(proxy, func(r rune) bool { return r == ',' || r == '|' }) {
		if strings.TrimSpace(entry) == "direct" {
			return true
		}
	}
	return false
}

// goEnvFile reads the go env file as `go env -w` writes it (KEY=VALUE
// lines); ok is false when it exists but cannot be read. GOENV=off means
// none.
func goEnvFile(getenv func(string) string) (map[string]string, bool) {
	path := getenv("GOENV")
	if path == "off" {
		return nil, true
	}
	if path == "" {
		dir := getenv("XDG_CONFIG_HOME")
		if dir == "" {
			home := getenv("HOME")
			if home == "" {
				return nil, false
			}
			dir = filepath.Join(home, ".config")
		}
		path = filepath.Join(dir, "go", "env")
	}
	if !filepath.IsAbs(path) {
		return nil, false
	}
	b, err := fstools.ReadRegular(path, 1<<20) // a symlinked one: unread, so direct
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		return nil, false
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out, true
}

// withDirectHosts adds to pk's requests (have: their hosts so far) one per
// host go's direct fallback reaches (Package.DirectHosts), where goDirect
// holds.
func withDirectHosts(out []cmdline.Package, pk cmdline.Package, have []string, direct func(byLine bool) bool) ([]cmdline.Package, []string) {
	if len(pk.DirectHosts) == 0 || !direct(pk.ProxyByLine) {
		return out, have
	}
	for _, h := range pk.DirectHosts {
		if !slices.Contains(have, h) {
			have = append(have, h)
			add := pk
			add.Host = h
			out = append(out, add)
		}
	}
	return out, have
}

// commandEnv looks a variable up as a command sees it: the server's value
// of the names [sandbox] env passes (environment), nothing else.
func commandEnv(p *grants.Policy) func(string) string {
	return func(k string) string {
		if slices.Contains(p.Sandbox.Env, k) {
			return os.Getenv(k)
		}
		return ""
	}
}
