package shelltool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/shelltool/cmdline"
)

// FuzzProjectConfig: the project-file readers never panic, and every host
// they give is <dynamic> or a lower-case host name (no path, port, user or
// space), whatever the file holds (read as each kind of file, a script's
// inline metadata too). Seeds are in testdata/fuzz.
func FuzzProjectConfig(f *testing.F) {
	f.Add([]byte("@s:registry=https://E.example/\nregistry=${R}\n"))
	f.Add([]byte("-i https://a.example/simple\n-r other.txt\nx @ git+ssh://git@h.example/r\n"))
	f.Add([]byte(`source = { registry = "https://pypi.org/simple" }` + "\n"))
	f.Add([]byte(`{"dependencies": {"x": "github:u/r", "y": "git+ssh://git@h.example:u/r"}}`))
	f.Add([]byte("# /// script\n# dependencies = ['x @ https://D.example/x.whl']\n# [[tool.uv.index]]\n# url = \"https://m.example/\"\n# ///\nurl = 'https://code.example'\n"))
	f.Add([]byte("dependencies = [\n  \"y[a,b] @ git+ssh://git@g.example:22/y\",\n]\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		req := filepath.Join(dir, "r.txt")
		if err := os.WriteFile(req, b, 0o600); err != nil {
			t.Fatal(err)
		}
		pc := &projectConfig{cwd: dir, roots: []string{dir}, hosts: map[string][]string{}}
		seen := 0
		var hosts []string
		for _, pinned := range []bool{false, true} {
			hosts = append(hosts, npmrcIndexes(b, pinned)...)
			hosts = append(hosts, npmManifestHosts(b, pinned)...)
			hosts = append(hosts, lockfileHosts(b, pinned)...)
		}
		hosts = append(hosts, tomlSourceHosts(b)...)
		hosts = append(hosts, matchedHosts(gemSource, b)...)
		hosts = append(hosts, matchedHosts(composerURL, b)...)
		hosts = append(hosts, pc.requirements(req, &seen, 0)...)
		hosts = append(hosts, pc.script(req)...)
		// The workspace readers: patterns only, never a panic.
		pnpmMembers(b)
		for _, base := range []string{"package.json", "Cargo.toml", "pyproject.toml"} {
			workspaceMembers(base, b)
		}
		for _, h := range hosts {
			if h == cmdline.Dynamic {
				continue
			}
			if h == "" || h != strings.ToLower(h) || strings.ContainsAny(h, "/@ \t\n?#") {
				t.Fatalf("%q gives host %q", b, h)
			}
		}
	})
}
