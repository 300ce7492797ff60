package shelltool

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// TestShallowCredentialPaths: credential-looking files near the top of a
// toolchain folder are candidates to hide; one deep inside an installation
// (a CA bundle, a test key) is not.
func TestShallowCredentialPaths(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{".env", "bin/tool", "etc/.netrc", "lib/python3/site-packages/certifi/cacert.pem", "lib/deep/key.pem"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	got, listed := shallowCredentialPaths([]string{root})
	want := []string{filepath.Join(root, ".env"), filepath.Join(root, "etc/.netrc")}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A credential file the person writes later near the top, where the
	// scan looked, changes a folder it listed: the cache detects again.
	if !unchanged(listed) {
		t.Fatal("nothing changed, and the stamps say it did")
	}
	for _, f := range []string{"lib/.env", ".npmrc"} {
		os.WriteFile(filepath.Join(root, f), []byte("token"), 0o600)
		if unchanged(listed) {
			t.Errorf("%s was written and the stamps say nothing changed", f)
		}
		if got, listed = shallowCredentialPaths([]string{root}); !slices.Contains(got, filepath.Join(root, f)) {
			t.Errorf("%s is not found again: %v", f, got)
		}
	}
	// A root that appears later counts too.
	later := filepath.Join(t.TempDir(), "later")
	_, listed = shallowCredentialPaths([]string{later})
	os.Mkdir(later, 0o755)
	if unchanged(listed) {
		t.Error("a root that appeared is not a change")
	}
}

func TestOverrideEnv(t *testing.T) {
	got := overrideEnv([]string{"PATH=/bin", "HOME=/root", "LANG=C"}, []string{"HOME=/tmp/h", "GOCACHE=/c"})
	want := []string{"PATH=/bin", "LANG=C", "HOME=/tmp/h", "GOCACHE=/c"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if v := envValue(got, "HOME"); v != "/tmp/h" {
		t.Fatalf("envValue HOME = %q", v)
	}
}

// TestNpmRegistryIsTheDecidedIndex: the registry npm is pointed at in the
// sandbox is the index package.install decides for an npm install whose
// line names none, so what is decided is what is fetched.
func TestNpmRegistryIsTheDecidedIndex(t *testing.T) {
	u, err := url.Parse(toolchains.NpmRegistry)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"npm ci", "npm install left-pad"} {
		a, err := cmdline.Analyze(line)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Packages) != 1 || a.Packages[0].Host != u.Hostname() {
			t.Errorf("%s: packages %+v, want the index %s", line, a.Packages, u.Hostname())
		}
	}
}

// BenchmarkToolchainDetect: what the first command pays for toolchains on
// this machine: detection, the credential scan near the top of their
// folders and the config files deep inside them (target < 5 ms).
func BenchmarkToolchainDetect(b *testing.B) {
	for b.Loop() {
		var c toolchainCache
		c.detect(toolchains.Known)
	}
}

// BenchmarkToolchainDetectCached: what every later command pays: the
// folders the result came from are stat'ed again.
func BenchmarkToolchainDetectCached(b *testing.B) {
	var c toolchainCache
	d := c.detect(toolchains.Known)
	b.ReportMetric(float64(len(d.watched)), "folders")
	for b.Loop() {
		c.detect(toolchains.Known)
	}
}
