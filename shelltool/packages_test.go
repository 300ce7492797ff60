package shelltool

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
)

// TestPackageInstallRequests: an install is decided as its process.exec and
// one package.install per package and index, which interactive-dev asks.
func TestPackageInstallRequests(t *testing.T) {
	root := t.TempDir()
	p := policyFor(t, root, `profile = "interactive-dev"`)
	reqs, err := LineRequests(p, "pip install 'requests==2.31.0' --extra-index-url https://mirror.example/simple", p.Workspace, grants.SurfaceSandbox)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reqs {
		if r.Capability == grants.CapPackageInstall {
			got = append(got, r.Target.Resource+" "+r.Target.Host)
			if d := p.Decide(r); d.Effect != grants.Ask || d.RuleID != "interactive-dev/ask-package-install" {
				t.Errorf("%s: %+v", r.Describe(), d)
			}
		}
	}
	want := []string{"requests==2.31.0 pypi.org", "requests==2.31.0 mirror.example"}
	if len(reqs) != 3 || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("requests %+v\npackages %q, want %q", reqs, got, want)
	}
}

// TestNPMTarballURLs: npm held to its registry in the sandbox fetches a
// tarball URL from that registry, so one on another host is refused,
// before anyone is asked, saying why; one on the registry's own host, a
// git URL, a file, one the line un-pins, and any on the host surface or
// without toolchains are decided as installs from the host they come from.
func TestNPMTarballURLs(t *testing.T) {
	compile := func(extra string) *grants.Policy {
		return policyFor(t, t.TempDir(), "profile = \"interactive-dev\"\n"+extra)
	}
	pinned, none := compile(""), compile("[sandbox]\ntoolchains = \"none\"\n")
	for _, tc := range []struct {
		p       *grants.Policy
		surface grants.Surface
		line    string
		host    string // the package.install's host; "" refused
	}{
		{pinned, grants.SurfaceSandbox, "npm install https://h.example/x.tgz", ""},
		{pinned, grants.SurfaceSandbox, "npm i x@HTTP://h.example/x.tgz", ""},
		{pinned, grants.SurfaceSandbox, "npm i --registry http://127.0.0.1:9/ http://127.0.0.2:9/x.tgz", ""},
		{pinned, grants.SurfaceSandbox, "npm_config_registry=$R npm i https://h.example/x.tgz", cmdline.Dynamic},
		{pinned, grants.SurfaceSandbox, "npm i --registry http://127.0.0.1:9/ http://127.0.0.1:9/x/-/x-1.tgz", "127.0.0.1"},
		{pinned, grants.SurfaceSandbox, "npm i --registry http://127.0.0.1:9/ http://127.0.0.1:8/x/-/x-1.tgz", ""}, // another port
		{pinned, grants.SurfaceSandbox, "npm i https://registry.npmjs.org/x/-/x-1.tgz", "registry.npmjs.org"},
		{pinned, grants.SurfaceSandbox, "npm i git+https://github.com/a/b.git", "github.com"},
		{pinned, grants.SurfaceSandbox, "npm i --replace-registry-host=never https://h.example/x.tgz", cmdline.Dynamic},
		{pinned, grants.SurfaceSandbox, "pip install https://h.example/x.whl", "h.example"},
		{pinned, grants.SurfaceHost, "npm install https://h.example/x.tgz", "h.example"},
		{none, grants.SurfaceSandbox, "npm install https://h.example/x.tgz", "h.example"},
	} {
		reqs, err := LineRequests(tc.p, tc.line, tc.p.Workspace, tc.surface)
		if tc.host == "" {
			if err == nil || !strings.Contains(err.Error(), "npm_config_replace_registry_host=always") || !strings.Contains(err.Error(), "nothing ran") {
				t.Errorf("%q: %v, want it refused saying why", tc.line, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		var hosts []string
		for _, r := range reqs {
			if r.Capability == grants.CapPackageInstall {
				hosts = append(hosts, r.Target.Host)
			}
		}
		if len(hosts) != 1 || hosts[0] != tc.host {
			t.Errorf("%q: package.install hosts %q, want %q", tc.line, hosts, tc.host)
		}
	}
}

// TestProjectIndexes: the project configuration an installer reads when
// the line starts (written by the person or an earlier command) adds its
// indexes to the decision, in the sandbox (npm's registry pinned: only a
// scope's registry counts) and on the host (the project's registry too);
// what cannot be read as the installer would is <dynamic>.
func TestProjectIndexes(t *testing.T) {
	ws := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("npm/.npmrc", "; comment\nregistry=https://mirror.example/\n@acme:registry = \"https://npm.acme.example/\"\n//npm.acme.example/:_authToken=${TOKEN}\n[section]\n@late:registry=https://late.example/\n")
	write("npm/sub/package.json", "{}")
	write("npmvar/.npmrc", "@s:registry=${EVIL}/\n")
	write("yarn/.yarnrc.yml", "npmRegistryServer: https://y.example\n")
	write("pip/requirements.txt", "requests==2 # see https://comment.example/\n--extra-index-url https://extra.example/simple\n-r more.txt\nx @ https://files.example/x.whl\ngit+https://git.example/a/b#egg=b\n")
	write("pip/more.txt", "-ihttps://more.example/simple\n--extra-index=https://abbrev.example/simple\n")
	write("pip/links.txt", "--find-links https://links.example/\n")
	write("pip/var.txt", "--index-url ${IDX}\n")
	write("pip/tab.txt", "--index-url\thttps://tab.example/simple\n-i\thttps://tabi.example/simple\n")
	write("uv/pyproject.toml", "[project]\nname = \"p\"\nurls = { Homepage = \"https://home.example\" }\n[tool.uv.sources]\nb = { git = \"https://github.com/a/b\" }\n")
	write("uv/uv.lock", "[[package]]\nname = \"x\"\nsource = { registry = \"https://pypi.org/simple\" }\nwheels = [\n { url = \"https://files.pythonhosted.org/x.whl\", hash = \"sha256:00\" },\n]\n[[package]]\nname = \"y\"\nsource = { registry = \"https://evil.example/simple\" }\n")
	write("uvscript/tool.py", "#!/usr/bin/env -S uv run\n# /// script\n# dependencies = [\"rich\", \"x @ git+https://scriptgit.example/x\"]\n#\n# [[tool.uv.index]]\n# url = \"https://meta.example/simple\"\n# ///\nurl = \"https://code.example/api\"\n")
	write("uvdirect/pyproject.toml", "[project]\nname = \"p\"\ndependencies = [\n  \"requests>=2\",\n  'x[extra] @ https://direct.example/x.whl',\n  \"y@git+ssh://git@dgit.example/y\",\n  \"email-validator; python_version > '3' # mail@host.example://\",\n]\n")
	write("uvscript/bad.py", "# /// script\n# dependencies = []\nimport os\n")
	write("uvscript/plain.py", "url = \"https://code.example/api\"\n")
	write("uvcfg/uv.toml", "index-url = \"https://uvtoml.example/simple\"\n")
	write("cargo/.cargo/config.toml", "[source.crates-io]\nreplace-with = \"e\"\n")
	write("cargobuild/.cargo/config.toml", "[build]\nrustflags = [\"-C\", \"target-cpu=native\"]\n")
	// Keys cargo reads as source that the text pattern does not see (rev16 H3).
	write("cargoquoted/.cargo/config.toml", "'source'.crates-io.replace-with = \"e\"\n")
	write("cargobom/.cargo/config.toml", "\uFEFF[source.crates-io]\nreplace-with = \"e\"\n")
	write("cargoescaped/.cargo/config.toml", "[\"\\u0073ource\".crates-io]\nreplace-with = \"e\"\n")
	write("cargobroken/.cargo/config.toml", "[build\n")
	write("gem/Gemfile", "source \"https://rubygems.org\"\nsource 'https://gems.example' do\nend\n")
	write("deps/package.json", `{"dependencies": {"a": "^1", "b": "github:u/b", "c": "https://tar.example/c.tgz", "d": "file:../d"}, "devDependencies": {"e": "git+https://git.example/e.git"}}`)
	write("deps/package-lock.json", `{"packages": {"node_modules/a": {"resolved": "https://registry.npmjs.org/a/-/a-1.tgz"}, "node_modules/f": {"resolved": "git+ssh://git@lockgit.example/u/f.git#abc"}}}`)
	write("deps/yarn.lock", "a@^1:\n  resolved \"https://mirror.example/a/-/a-1.tgz#sha\"\n")
	write("badjson/package.json", "{")
	write("crate/Cargo.toml", "[dependencies]\nx = { git = \"https://github.com/a/x\" }\nserde = \"1\"\n")
	write("crate/Cargo.lock", "[[package]]\nname = \"serde\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n[[package]]\nname = \"y\"\nsource = \"git+https://gitlab.example/y?rev=1#abc\"\n")
	write("pnpmws/pnpm-workspace.yaml", "packages:\n  - 'a/*'\nregistries:\n  default: https://p.example/\n")
	write("pnpmplain/pnpm-workspace.yaml", "packages:\n  - 'a/*'\n")
	write("pnpmfile/.pnpmfile.cjs", "module.exports = {hooks: {readPackage (p) { return p }}}\n")
	write("poetry/poetry.toml", "[repositories.e]\nurl = \"https://poetry.example/simple\"\n")
	write("pdm/pyproject.toml", "[project]\nname = \"p\"\n[[tool.pdm.source]]\nname = \"e\"\nurl = \"https://pdm.example/simple\"\n")
	write("rye/pyproject.toml", "[project]\nname = \"p\"\n[[tool.rye.sources]]\nname = \"e\"\nurl = \"https://rye.example/simple\"\n")
	write("pixi/pixi.toml", "[workspace]\nchannels = [\"conda-forge\", \"https://chan.example/c\"]\nplatforms = [\"linux-64\"]\n")
	write("far/deep/.npmrc", "@far:registry=https://far.example/\n")
	// corepack reads a .corepack.env beside the package.json (issue 16).
	write("corepackenv/package.json", `{"packageManager": "pnpm@9.1.0"}`)
	write("corepackenv/.corepack.env", "# registry\nCOREPACK_NPM_REGISTRY=\"https://cp.example\"\n")
	write("corepackvar/.corepack.env", "COREPACK_NPM_REGISTRY=${R}\n")
	// A symlink may lead where the server, not the command, can read.
	write("npmlink/package.json", "{}")
	if err := os.Symlink(filepath.Join(ws, "npm", ".npmrc"), filepath.Join(ws, "npmlink", ".npmrc")); err != nil {
		t.Fatal(err)
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct {
		surface grants.Surface
		dir     string
		line    string
		hosts   string
	}{
		// In the sandbox a project's .npmrc is hidden from the command (a
		// credential file no rule lifts): npm reads nothing there.
		{grants.SurfaceSandbox, "npm", "npm i @acme/x", "registry.npmjs.org"},
		{grants.SurfaceSandbox, "npm/sub", "npm ci", "registry.npmjs.org"},
		{grants.SurfaceHost, "npm", "npm i @acme/x", "registry.npmjs.org mirror.example npm.acme.example"},
		{grants.SurfaceHost, "npm/sub", "npm ci", "registry.npmjs.org mirror.example npm.acme.example"},
		{grants.SurfaceSandbox, "npm", "pnpm add --registry https://r.example x", "r.example"},
		{grants.SurfaceHost, "npm", "pnpm add --registry https://r.example x", "r.example mirror.example npm.acme.example"},
		// A local package's dependencies come from the project's indexes.
		{grants.SurfaceSandbox, "npm", "npm i ./local.tgz", "registry.npmjs.org"},
		{grants.SurfaceHost, "npm", "npm i ./local.tgz", "registry.npmjs.org mirror.example npm.acme.example"},
		{grants.SurfaceSandbox, "npm", "npm i https://registry.npmjs.org/x/-/x-1.tgz", "registry.npmjs.org"},
		{grants.SurfaceSandbox, "npmvar", "npm ci", "registry.npmjs.org"},
		{grants.SurfaceHost, "npmvar", "npm ci", "registry.npmjs.org <dynamic>"},
		{grants.SurfaceSandbox, "npmlink", "npm ci", "registry.npmjs.org <dynamic>"}, // a symlink is never taken as hidden: the run's placeholder follows it only at set-up
		{grants.SurfaceHost, "npmlink", "npm ci", "registry.npmjs.org <dynamic>"},
		{grants.SurfaceSandbox, "yarn", "yarn add x", "registry.yarnpkg.com <dynamic>"},
		{grants.SurfaceSandbox, "yarn", "npm i x", "registry.npmjs.org"},
		{grants.SurfaceSandbox, "pip", "pip install -r requirements.txt", "pypi.org extra.example more.example abbrev.example files.example git.example"},
		{grants.SurfaceSandbox, "pip", "pip install -c links.txt x", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "pip", "uv pip install -r var.txt", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "pip", "pip install -r tab.txt", "pypi.org tab.example tabi.example"}, // rev16 H5: pip splits on tabs too
		{grants.SurfaceSandbox, "pip", "pip install -r missing.txt", "pypi.org"},
		{grants.SurfaceSandbox, "pip", "pip install -r /etc/passwd", "pypi.org <dynamic>"}, // outside the roots: not read
		{grants.SurfaceSandbox, "pip", "pip install -r \"$F\"", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "pip", "cd .. && pip install -r requirements.txt", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "uv", "uv sync", "pypi.org github.com evil.example"},
		// The commands that fetch the manifest's packages without saying
		// install read the same project files.
		{grants.SurfaceSandbox, "uv", "uv run pytest", "pypi.org github.com evil.example"},
		{grants.SurfaceSandbox, "uv", "uv lock --upgrade", "pypi.org github.com evil.example"},
		{grants.SurfaceSandbox, "uv", "uv run --no-sync pytest", ""},
		// A script's inline metadata (its block only, not its code).
		{grants.SurfaceSandbox, "uvscript", "uv run tool.py", "pypi.org scriptgit.example meta.example"},
		{grants.SurfaceSandbox, "uvscript", "uv run --no-sync tool.py", "pypi.org scriptgit.example meta.example"},
		{grants.SurfaceSandbox, "uvscript", "uv add --script tool.py httpx", "pypi.org scriptgit.example meta.example"},
		{grants.SurfaceSandbox, "uvscript", "uv run plain.py", "pypi.org"},
		{grants.SurfaceSandbox, "uvdirect", "uv sync", "pypi.org direct.example dgit.example"},
		{grants.SurfaceSandbox, "uvscript", "uv run bad.py", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "uvscript", "uv run missing.py", "pypi.org"},
		{grants.SurfaceSandbox, "uvscript", "uv run - < tool.py", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "uvscript", "uv run /etc/x.py", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "uvscript", "cd .. && uv run tool.py", "pypi.org <dynamic>"},
		{grants.SurfaceSandbox, "uv", "uv run --offline pytest", ""},
		{grants.SurfaceSandbox, "pip", "uv pip sync requirements.txt", "pypi.org extra.example more.example abbrev.example files.example git.example"},
		{grants.SurfaceSandbox, "crate", "cargo fetch", "index.crates.io github.com gitlab.example"},
		{grants.SurfaceSandbox, "crate", "cargo update -p serde", "index.crates.io github.com gitlab.example"},
		{grants.SurfaceSandbox, "cargo", "cargo generate-lockfile", "index.crates.io <dynamic>"},
		{grants.SurfaceSandbox, "crate", "cargo build", ""},
		{grants.SurfaceSandbox, "deps", "npm update", "registry.npmjs.org github.com git.example lockgit.example"},
		{grants.SurfaceSandbox, "poetry", "poetry lock", "pypi.org poetry.example"},
		// A pip.conf the line writes is not read where the pins hold.
		{grants.SurfaceSandbox, "", "echo x > pip.conf; pip install -i https://a.example/ -i https://a.example/simple x", "a.example"},
		{grants.SurfaceHost, "", "echo x > pip.conf; pip install x", "<dynamic>"},
		{grants.SurfaceSandbox, "", "echo x > .npmrc; npm i x", "<dynamic>"},
		{grants.SurfaceSandbox, "uvcfg", "uv add x", "pypi.org"}, // UV_NO_CONFIG: uv.toml is not read
		{grants.SurfaceHost, "uvcfg", "uv add x", "pypi.org uvtoml.example"},
		{grants.SurfaceSandbox, "cargo", "cargo add serde", "index.crates.io <dynamic>"},
		{grants.SurfaceSandbox, "cargobuild", "cargo add serde", "index.crates.io"},
		{grants.SurfaceSandbox, "cargoquoted", "cargo add serde", "index.crates.io <dynamic>"},
		{grants.SurfaceSandbox, "cargobom", "cargo add serde", "index.crates.io <dynamic>"},
		{grants.SurfaceSandbox, "cargoescaped", "cargo add serde", "index.crates.io <dynamic>"},
		{grants.SurfaceSandbox, "cargobroken", "cargo add serde", "index.crates.io <dynamic>"},
		{grants.SurfaceSandbox, "gem", "bundle install", "rubygems.org gems.example"},
		{grants.SurfaceSandbox, "pnpmws", "pnpm install", "registry.npmjs.org <dynamic>"},
		{grants.SurfaceSandbox, "pnpmplain", "pnpm install", "registry.npmjs.org"},
		{grants.SurfaceSandbox, "pnpmfile", "pnpm add x", "registry.npmjs.org <dynamic>"},
		{grants.SurfaceSandbox, "poetry", "poetry add x", "pypi.org poetry.example"},
		{grants.SurfaceSandbox, "pdm", "pdm add x", "pypi.org pdm.example"},
		{grants.SurfaceSandbox, "rye", "rye sync", "pypi.org rye.example"},
		{grants.SurfaceSandbox, "pixi", "pixi add numpy", "conda.anaconda.org chan.example"},
		// A manifest's or lockfile's git and URL dependencies come from
		// their hosts (npm in the sandbox asks its registry for tarballs).
		{grants.SurfaceSandbox, "deps", "npm ci", "registry.npmjs.org github.com git.example lockgit.example"},
		{grants.SurfaceHost, "deps", "npm ci", "registry.npmjs.org github.com tar.example git.example lockgit.example"},
		{grants.SurfaceSandbox, "deps", "yarn", "registry.yarnpkg.com github.com tar.example git.example mirror.example"},
		{grants.SurfaceSandbox, "badjson", "npm ci", "registry.npmjs.org <dynamic>"},
		{grants.SurfaceSandbox, "crate", "cargo add serde", "index.crates.io github.com gitlab.example"},
		{grants.SurfaceSandbox, "", "npm i @far/x", "registry.npmjs.org"},
		{grants.SurfaceSandbox, "corepackenv", "corepack pnpm@9 --version", "registry.npmjs.org cp.example"},
		{grants.SurfaceSandbox, "corepackenv", "corepack prepare pnpm@9.1.0", "registry.npmjs.org cp.example"},
		{grants.SurfaceSandbox, "corepackvar", "corepack npm@10 --version", "registry.npmjs.org <dynamic>"},
		{grants.SurfaceSandbox, "", "corepack npm@10 --version", "registry.npmjs.org"},
		{grants.SurfaceSandbox, "", "cd far/deep && npm i @far/x", "registry.npmjs.org <dynamic> lockgit.example github.com git.example"},
		{grants.SurfaceHost, "", "cd far/deep && npm i @far/x", "registry.npmjs.org far.example <dynamic> lockgit.example github.com tar.example git.example mirror.example npm.acme.example"},
		{grants.SurfaceSandbox, "", "npm --prefix far/deep i @far/x", "registry.npmjs.org <dynamic> lockgit.example github.com git.example"},
	} {
		reqs, err := LineRequests(p, tc.line, filepath.Join(ws, tc.dir), tc.surface)
		if err != nil {
			t.Errorf("%s: %q: %v", tc.dir, tc.line, err)
			continue
		}
		if got := installHosts(reqs); got != tc.hosts {
			t.Errorf("%s (%s): %q: hosts %q, want %q", tc.dir, tc.surface, tc.line, got, tc.hosts)
		}
	}
}

// BenchmarkProjectIndexes: what reading the project configuration adds to
// deciding an install (this repository as the workspace): in the working
// folder and up, and, after a cd, walking the whole workspace.
func BenchmarkProjectIndexes(b *testing.B) {
	root, err := filepath.Abs("..")
	if err != nil {
		b.Fatal(err)
	}
	p := policyFor(b, root, `profile = "interactive-dev"`)
	for _, line := range []string{"echo hi", "npm ci", "cd e2e && npm ci"} {
		b.Run(line, func(b *testing.B) {
			for b.Loop() {
				if _, err := LineRequests(p, line, filepath.Join(root, "e2e", "ts"), grants.SurfaceSandbox); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHiddenProjectFiles: in the sandbox the decision reads no project file
// the sandbox hides from the command (a credential file the policy keeps
// from it: a project's .npmrc, a requirement file named .env), so it names
// exactly the indexes the sandboxed installer reads, and the files it took
// as hidden are handed to the run to hide, wherever they lie (a skipped
// folder such as node_modules, past the scan's bound). On the host, and
// where a rule lifts the file, it is read.
func TestHiddenProjectFiles(t *testing.T) {
	ws := t.TempDir()
	for rel, body := range map[string]string{
		"app/.npmrc":                      "@acme:registry=https://npm.acme.example/\n",
		"app/package.json":                "{}",
		"app/node_modules/m/.npmrc":       "@deep:registry=https://deep.example/\n",
		"app/node_modules/m/package.json": "{}",
		"py/.env":                         "--extra-index-url https://env.example/simple\n",
		"py/requirements.txt":             "-r .env\n--extra-index-url https://req.example/simple\n",
		"py/brokered.txt":                 "--extra-index-url https://brokered.example/simple\n",
		"lifted/.npmrc":                   "@lift:registry=https://lift.example/\n",
		"lifted/package.json":             "{}",
		"plain/package.json":              "{}",
	} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	compile := func(extra string) *grants.Policy {
		return policyFor(t, ws, "profile = \"interactive-dev\"\n"+extra)
	}
	def := compile("")
	lift := compile("[[rules.allow]]\nrule_id = \"npmrc\"\ncapability = \"workspace.files.read\"\ntarget = { path = \"lifted/.npmrc\" }\n")
	none := compile("[sandbox]\ntoolchains = \"none\"\n")
	secret := compile("[secrets.tok]\nfile = \"" + filepath.Join(ws, "py", "brokered.txt") + "\"\nhosts = [\"api.example.com\"]\n")
	askLift := compile("[[rules.allow]]\nrule_id = \"npmrc\"\ncapability = \"workspace.files.read\"\ntarget = { path = \"app/.npmrc\" }\n" +
		"[[rules.ask]]\nrule_id = \"ask-npmrc\"\ncapability = \"workspace.files.read\"\ntarget = { path = \"app/.npmrc\" }\n")
	for _, tc := range []struct {
		name    string
		p       *grants.Policy
		surface grants.Surface
		dir     string
		line    string
		hosts   string
		hidden  []string // relative to ws
	}{
		{"sandbox hides the .npmrc", def, grants.SurfaceSandbox, "app", "npm i @acme/x", "registry.npmjs.org", []string{"app/.npmrc"}},
		{"host reads it", def, grants.SurfaceHost, "app", "npm i @acme/x", "registry.npmjs.org npm.acme.example", nil},
		{"toolchains off: still hidden", none, grants.SurfaceSandbox, "app", "npm i @acme/x", "registry.npmjs.org", []string{"app/.npmrc"}},
		{"in a skipped folder: hidden by the decision", def, grants.SurfaceSandbox, "app/node_modules/m", "npm ci",
			"registry.npmjs.org", []string{"app/node_modules/m/.npmrc", "app/.npmrc"}},
		{"a rule lifts it", lift, grants.SurfaceSandbox, "lifted", "npm i @lift/x", "registry.npmjs.org lift.example", nil},
		{"lifted but asked: may be approved, so read", askLift, grants.SurfaceSandbox, "app", "npm i @acme/x", "registry.npmjs.org npm.acme.example", nil},
		{"a requirement file named .env", def, grants.SurfaceSandbox, "py", "pip install -r requirements.txt", "pypi.org req.example", []string{"py/.env"}},
		{"the same on the host", def, grants.SurfaceHost, "py", "pip install -r requirements.txt", "pypi.org env.example req.example", nil},
		{"a brokered secret's source, whatever its name", secret, grants.SurfaceSandbox, "py", "pip install -r brokered.txt", "pypi.org", []string{"py/brokered.txt"}},
		{"not a secret there", def, grants.SurfaceSandbox, "py", "pip install -r brokered.txt", "pypi.org brokered.example", nil},
		{"no .npmrc: nothing hidden", def, grants.SurfaceSandbox, "plain", "npm ci", "registry.npmjs.org", nil},
	} {
		a, err := cmdline.Analyze(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		reqs, hidden, err := requests(tc.p, a, filepath.Join(ws, tc.dir), tc.surface)
		if err != nil {
			t.Errorf("%s: %q: %v", tc.name, tc.line, err)
			continue
		}
		var want []string
		for _, h := range tc.hidden {
			want = append(want, filepath.Join(ws, h))
		}
		if got := installHosts(reqs); got != tc.hosts || !slices.Equal(hidden, want) {
			t.Errorf("%s: %q: hosts %q hidden %q, want %q %q", tc.name, tc.line, got, hidden, tc.hosts, want)
		}
	}
}

// BenchmarkFetchForms: deciding the commands that fetch a manifest's
// packages without saying install, against a build of the same project
// (no package.install), in a workspace with a uv project (a uv.lock of 50
// packages) and a Go module (a go.mod of 20 requires).
func BenchmarkFetchForms(b *testing.B) {
	ws := b.TempDir()
	var lock, mod strings.Builder
	lock.WriteString("version = 1\n")
	for i := range 50 {
		fmt.Fprintf(&lock, "[[package]]\nname = \"p%d\"\nversion = \"1.0.%d\"\nsource = { registry = \"https://pypi.org/simple\" }\n"+
			"sdist = { url = \"https://files.pythonhosted.org/p%d-1.0.tar.gz\", hash = \"sha256:00\", size = 1 }\n"+
			"wheels = [\n    { url = \"https://files.pythonhosted.org/p%d-1.0-py3-none-any.whl\", hash = \"sha256:00\", size = 1 },\n]\n", i, i, i, i)
	}
	mod.WriteString("module example.com/m\n\ngo 1.22\n\nrequire (\n")
	for i := range 20 {
		fmt.Fprintf(&mod, "\texample.com/dep%d v1.%d.0\n", i, i)
	}
	mod.WriteString(")\n")
	for name, body := range map[string]string{
		"pyproject.toml": "[project]\nname = \"p\"\nversion = \"0\"\ndependencies = [\"p0\", \"p1\"]\n",
		"uv.lock":        lock.String(),
		"go.mod":         mod.String(),
	} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	p := policyFor(b, ws, `profile = "interactive-dev"`)
	for _, line := range []string{"uv sync", "uv run pytest", "uv run --no-sync pytest", "go mod download", "go build ./..."} {
		b.Run(line, func(b *testing.B) {
			for b.Loop() {
				if _, err := LineRequests(p, line, ws, grants.SurfaceSandbox); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestProjectBin: npx and npm exec of a command the project has in its own
// node_modules/.bin fetch nothing, so they are no install in the sandbox
// (where the exec gate decides npx again when it runs); a version, -p, a
// command the project lacks, a prefix folder without the bin, another
// folder, a non-executable file and the host surface are installs still.
func TestProjectBin(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	for name, mode := range map[string]os.FileMode{"node_modules/.bin/tsc": 0o755, "node_modules/.bin/notexec": 0o644, "package.json": 0o644, "sub/package.json": 0o644} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte("{}"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "src/deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	tests := []struct {
		line, cwd string
		surface   grants.Surface
		install   bool
	}{
		{"npx tsc --noEmit", ws, grants.SurfaceSandbox, false},
		{"npm exec tsc", ws, grants.SurfaceSandbox, false},
		{"npx tsc", filepath.Join(ws, "src/deep"), grants.SurfaceSandbox, false}, // prefix: ws
		{"npx tsc@5", ws, grants.SurfaceSandbox, true},
		{"npx -p typescript tsc", ws, grants.SurfaceSandbox, true},
		{"npx jest", ws, grants.SurfaceSandbox, true},
		{"npx notexec", ws, grants.SurfaceSandbox, true},
		{"npx tsc", filepath.Join(ws, "sub"), grants.SurfaceSandbox, true}, // sub's own prefix lacks it
		{"npx --prefix sub tsc", ws, grants.SurfaceSandbox, true},
		{"npx tsc", ws, grants.SurfaceHost, true},
	}
	for _, tc := range tests {
		reqs, err := LineRequests(p, tc.line, tc.cwd, tc.surface)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		got := slices.ContainsFunc(reqs, func(r grants.Request) bool { return r.Capability == grants.CapPackageInstall })
		if got != tc.install {
			t.Errorf("%s in %s (%s): package.install %v, want %v", tc.line, strings.TrimPrefix(tc.cwd, ws), tc.surface, got, tc.install)
		}
	}
}
