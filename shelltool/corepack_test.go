package shelltool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// TestCorepackShimInstalls: a program that is a corepack shim (a link to
// corepack's dist/pnpm.js run through its shebang, or node running it,
// after its own options) fetches the package manager the project's
// package.json names before it runs it: decided as `corepack
// pnpm@VERSION ARGS` (issue 16). Any other program is no shim.
func TestCorepackShimInstalls(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dist := filepath.Join(ws, "lib", "node_modules", "corepack", "dist")
	for _, n := range []string{"pnpm.js", "yarn.js", "npx.js", "corepack.js"} {
		write(filepath.Join("lib", "node_modules", "corepack", "dist", n), "#!/usr/bin/env node\n")
	}
	write("other/dist/pnpm.js", "#!/usr/bin/env node\n") // not corepack's
	if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dist, "pnpm.js"), filepath.Join(ws, "bin", "pnpm")); err != nil {
		t.Fatal(err)
	}
	write("p/package.json", `{"packageManager": "pnpm@9.1.0+sha512.abc"}`)
	write("p/node_modules/dep/package.json", `{"packageManager": "pnpm@1.0.0"}`) // corepack skips a dependency's
	write("y/package.json", `{"packageManager": "yarn@4.1.0"}`)
	write("dev/package.json", `{"devEngines": {"packageManager": {"name": "pnpm", "version": "^9"}}}`)
	write("bad/package.json", `{`)
	write("env/package.json", `{"packageManager": "pnpm@9.1.0"}`)
	write("env/.corepack.env", "COREPACK_NPM_REGISTRY=https://cp.example\n")
	write("none/x", "")
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	shim := filepath.Join(ws, "bin", "pnpm")
	for _, tc := range []struct {
		name string
		ev   sandbox.ExecEvent
		want []string
	}{
		{"the pnpm link through its shebang", sandbox.ExecEvent{Exe: "/usr/bin/env", Argv: []string{"/usr/bin/env", "node", shim, "install"}, ExecPath: shim, Cwd: ws + "/p"},
			[]string{"pnpm@9.1.0 registry.npmjs.org", "(package.json) registry.npmjs.org"}},
		{"node running it", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", shim, "--version"}, ExecPath: "/usr/bin/node", Cwd: ws + "/p/node_modules/dep"},
			[]string{"pnpm@9.1.0 registry.npmjs.org"}},
		{"node's options first", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", "--no-warnings", "-r", "./hook.js", filepath.Join(dist, "yarn.js"), "add", "x"}, ExecPath: "/usr/bin/node", Cwd: ws + "/y"},
			[]string{"yarn@4.1.0 repo.yarnpkg.com", "x registry.yarnpkg.com"}},
		{"npx's shim fetches npm", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", filepath.Join(dist, "npx.js"), "--version"}, ExecPath: "/usr/bin/node", Cwd: ws + "/none"},
			[]string{"npm registry.npmjs.org"}},
		{"another manager's project: the default", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", shim, "--version"}, ExecPath: "/usr/bin/node", Cwd: ws + "/y"},
			[]string{"pnpm registry.npmjs.org"}},
		{"devEngines", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", shim, "--version"}, ExecPath: "/usr/bin/node", Cwd: ws + "/dev"},
			[]string{"pnpm@^9 registry.npmjs.org"}},
		{"a package.json that is not JSON", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", shim, "--version"}, ExecPath: "/usr/bin/node", Cwd: ws + "/bad"},
			[]string{"pnpm@<dynamic> registry.npmjs.org"}},
		{"the project's .corepack.env", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", shim, "--version"}, ExecPath: "/usr/bin/node", Cwd: ws + "/env"},
			[]string{"pnpm@9.1.0 registry.npmjs.org", "pnpm@9.1.0 cp.example"}},
		{"corepack.js", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", filepath.Join(dist, "corepack.js"), "pnpm@8.15.0", "i"}, ExecPath: "/usr/bin/node", Cwd: ws + "/none"},
			[]string{"pnpm@8.15.0 registry.npmjs.org", "(package.json) registry.npmjs.org"}},
		{"node running another script", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", "x.js", shim}, ExecPath: "/usr/bin/node", Cwd: ws + "/p"}, nil},
		{"a pnpm.js not corepack's", sandbox.ExecEvent{Exe: "/usr/bin/node", Argv: []string{"node", filepath.Join(ws, "other", "dist", "pnpm.js")}, ExecPath: "/usr/bin/node", Cwd: ws + "/p"}, nil},
		{"cat of the shim", sandbox.ExecEvent{Exe: "/usr/bin/cat", Argv: []string{"cat", shim}, ExecPath: "/usr/bin/cat", Cwd: ws + "/p"}, nil},
	} {
		a, err := shimInstalls(p, tc.ev)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		reqs, _, err := installRequests(p, a, tc.ev.Cwd, grants.SurfaceSandbox, installsAt{exec: true})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []string
		for _, r := range reqs {
			got = append(got, r.Target.Resource+" "+r.Target.Host)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: installs %q, want %q", tc.name, got, tc.want)
		}
	}
	// This machine's corepack, where node ships it.
	if real, err := filepath.EvalSymlinks("/usr/lib/node_modules/corepack/dist/pnpm.js"); err == nil {
		if m, ok := corepackEntry(real, "/"); !ok || m != "pnpm" {
			t.Errorf("corepackEntry(%s) = %q %v, want pnpm", real, m, ok)
		}
	}
	if m, ok := corepackEntry(filepath.Join(ws, "bin", "pnpm"), "/"); !ok || !strings.HasPrefix(m, "pnpm") {
		t.Errorf("the link to the shim: %q %v", m, ok)
	}
}

// TestLineCorepackShims: a line running a corepack shim (by its name on
// PATH, or a path) is asked about the manager's fetch the exec gate will
// decide, in the folder the line runs it in; a pnpm that is no shim adds
// nothing.
func TestLineCorepackShims(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	dist := filepath.Join(ws, "lib", "node_modules", "corepack", "dist")
	writeTree(t, ws, map[string]string{
		"lib/node_modules/corepack/dist/pnpm.js": "#!/usr/bin/env node\n",
		"plain/yarn":                             "#!/bin/sh\n",
		"p/package.json":                         `{"packageManager": "pnpm@9.1.0"}`,
		"p/sub/x":                                "",
		"other/package.json":                     `{}`,
		"bin/pnpm":                               "->" + filepath.Join(dist, "pnpm.js"),
	})
	t.Setenv("PATH", filepath.Join(ws, "bin")+":"+filepath.Join(ws, "plain")+":"+os.Getenv("PATH"))
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	for _, tc := range []struct {
		surface         grants.Surface
		dir, line, want string
	}{
		{grants.SurfaceSandbox, "p", "pnpm install", "pnpm@9.1.0 registry.npmjs.org"},
		{grants.SurfaceHost, "p/sub", "pnpm --version", "pnpm@9.1.0 registry.npmjs.org"},
		{grants.SurfaceSandbox, "", "cd p && ./../bin/pnpm --version", "pnpm@9.1.0 registry.npmjs.org"},
		{grants.SurfaceSandbox, "other", "pnpm --version", "pnpm registry.npmjs.org"},
		{grants.SurfaceSandbox, "p", "yarn --version", ""},
		{grants.SurfaceSandbox, "p", "cd \"$D\" && pnpm --version", "pnpm@<dynamic> registry.npmjs.org"},
	} {
		reqs, err := LineRequests(p, tc.line, filepath.Join(ws, tc.dir), tc.surface)
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		var got []string
		for _, r := range reqs {
			if r.Capability == grants.CapPackageInstall && strings.HasPrefix(r.Target.Resource, "pnpm") {
				got = append(got, r.Target.Resource+" "+r.Target.Host)
			}
		}
		if strings.Join(got, ", ") != tc.want {
			t.Errorf("%s %q: pnpm installs %q, want %q", tc.dir, tc.line, got, tc.want)
		}
	}
}
