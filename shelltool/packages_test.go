package shelltool

import (
	"testing"

	"github.com/onellm/onellm-mcp/grants"
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
