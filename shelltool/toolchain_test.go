package shelltool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
	got := shallowCredentialPaths([]string{root})
	want := []string{filepath.Join(root, ".env"), filepath.Join(root, "etc/.netrc")}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
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
