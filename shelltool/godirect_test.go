package shelltool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
)

func TestGoDirect(t *testing.T) {
	dir := t.TempDir()
	envFile := func(body string) string {
		p := filepath.Join(t.TempDir(), "env")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unreadable := filepath.Join(dir, "folder")
	if err := os.Mkdir(unreadable, 0o700); err != nil {
		t.Fatal(err)
	}
	noFile := filepath.Join(dir, "absent")
	for _, tc := range []struct {
		name    string
		surface grants.Surface
		pinned  bool
		byLine  bool
		env     map[string]string
		want    bool
	}{
		{"pinned sandbox", grants.SurfaceSandbox, true, false, nil, false},
		{"sandbox without toolchains: go's defaults", grants.SurfaceSandbox, false, false, nil, true},
		{"host default", grants.SurfaceHost, false, false, map[string]string{"GOENV": noFile}, true},
		{"host proxy only", grants.SurfaceHost, false, false, map[string]string{"GOENV": noFile, "GOPROXY": "https://proxy.golang.org"}, false},
		{"host proxy, direct after |", grants.SurfaceHost, false, false, map[string]string{"GOENV": noFile, "GOPROXY": "https://a|direct"}, true},
		{"host GOPRIVATE", grants.SurfaceHost, false, false, map[string]string{"GOENV": noFile, "GOPROXY": "https://a", "GOPRIVATE": "x.org"}, true},
		{"line names GOPROXY, env GONOPROXY", grants.SurfaceHost, false, true, map[string]string{"GOENV": noFile, "GONOPROXY": "*"}, true},
		{"line names GOPROXY, nothing else", grants.SurfaceHost, false, true, map[string]string{"GOENV": noFile}, false},
		{"go env file sets direct", grants.SurfaceHost, false, false, map[string]string{"GOENV": envFile("GOPROXY=https://a,direct\n")}, true},
		{"go env file sets proxy only", grants.SurfaceHost, false, false, map[string]string{"GOENV": envFile("GOPROXY=https://a\n")}, false},
		{"go env file sets GOPRIVATE", grants.SurfaceHost, false, false, map[string]string{"GOENV": envFile("GOPRIVATE=corp.example\n"), "GOPROXY": "https://a"}, true},
		{"environment wins over the file", grants.SurfaceHost, false, false, map[string]string{"GOENV": envFile("GOPROXY=direct\n"), "GOPROXY": "https://a"}, false},
		{"unreadable go env file", grants.SurfaceHost, false, false, map[string]string{"GOENV": unreadable, "GOPROXY": "https://a"}, true},
		{"no HOME: go's defaults unknown", grants.SurfaceHost, false, false, map[string]string{"GOPROXY": "https://a"}, true},
		{"GOENV=off", grants.SurfaceHost, false, false, map[string]string{"GOENV": "off", "GOPROXY": "https://a"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := goDirect(tc.surface, tc.pinned, tc.byLine, func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("goDirect = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProjectIndexesAddDirectHosts: on the host, where the command's go
// may fall back to direct, a go install names the module's own host
// (Package.DirectHosts); in the sandbox, whose GOPROXY is pinned without
// direct, it does not.
func TestProjectIndexesAddDirectHosts(t *testing.T) {
	ws := t.TempDir()
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	pk := cmdline.Package{Manager: "go", Name: "example.com/m@v1", Host: "proxy.golang.org", Command: 0,
		DirectHosts: []string{"example.com", cmdline.Dynamic}}
	hosts := func(surface grants.Surface) []string {
		out, _ := projectIndexes(p, ws, surface, []cmdline.Package{pk}, nil, true)
		var hs []string
		for _, o := range out {
			hs = append(hs, o.Host)
		}
		return hs
	}
	if got, want := hosts(grants.SurfaceHost), []string{"proxy.golang.org", "example.com", cmdline.Dynamic}; !slices.Equal(got, want) {
		t.Errorf("host surface: hosts %q, want %q", got, want)
	}
	if len(p.Sandbox.Toolchains) > 0 {
		if got, want := hosts(grants.SurfaceSandbox), []string{"proxy.golang.org"}; !slices.Equal(got, want) {
			t.Errorf("sandbox: hosts %q, want %q", got, want)
		}
	}
}
