package shelltool

import (
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
)

// TestPackageInstallRequests: an install is decided as its process.exec and
// one package.install per package and index, which interactive-dev asks.
func TestPackageInstallRequests(t *testing.T) {
	root := t.TempDir()
	cfg, err := grants.Parse([]byte(`profile = "interactive-dev"`), "t.toml", root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
		cfg, err := grants.Parse([]byte("profile = \"interactive-dev\"\n"+extra), "t.toml", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		p, err := grants.Compile(cfg, grants.CompileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
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
