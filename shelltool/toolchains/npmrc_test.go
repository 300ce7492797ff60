package toolchains

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

func TestParseNpmCAFile(t *testing.T) {
	tests := []struct{ in, want string }{
		{"cafile=/etc/ssl/certs/ca-certificates.crt\n", "/etc/ssl/certs/ca-certificates.crt"},
		{"  cafile = \"/etc/corp/ca.pem\"  \n", "/etc/corp/ca.pem"},
		{"cafile=/a.pem\ncafile=/b.pem\n", "/b.pem"},
		{"//registry.npmjs.org/:_authToken=npm_SECRET\ncafile=/etc/ca.pem\n", "/etc/ca.pem"},
		{"cafile=relative/ca.pem\n", ""},
		{"cafile=${HOME}/ca.pem\n", ""},
		{"cafile=/etc/../root/ca.pem\n", ""},
		{"; cafile=/commented.pem\n# cafile=/also.pem\n", ""},
		{"[section]\ncafile=/in-section.pem\n", ""},
		{"ca=-----BEGIN CERTIFICATE-----\n", ""},
		{"cafile=/a\rb\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := parseNpmCAFile([]byte(tt.in)); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNpmCAFileOutsideHomeOnly(t *testing.T) {
	home := t.TempDir()
	h := Host{Home: home, Getenv: func(string) string { return "" }}
	rc := filepath.Join(t.TempDir(), "npmrc")
	os.WriteFile(rc, []byte("cafile="+filepath.Join(home, "ca.pem")+"\n"), 0o644)
	if got := npmCAFile(h, rc); got != "" {
		t.Errorf("a cafile in the home folder (unreadable by commands) was kept: %q", got)
	}
	os.WriteFile(rc, []byte("cafile=/etc/ssl/certs/ca-certificates.crt\n"), 0o644)
	if got := npmCAFile(h, rc); got != "/etc/ssl/certs/ca-certificates.crt" {
		t.Errorf("got %q", got)
	}
	if got := npmCAFile(h, filepath.Join(home, "missing")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

// FuzzParseNpmCAFile: whatever the text, the value kept is empty or a
// clean absolute path on one line.
func FuzzParseNpmCAFile(f *testing.F) {
	f.Fuzz(func(t *testing.T, in string) {
		v := parseNpmCAFile([]byte(in))
		if v != "" && (!filepath.IsAbs(v) || filepath.Clean(v) != v || strings.ContainsFunc(v, unicode.IsControl) || strings.Contains(v, "${")) {
			t.Fatalf("%q kept %q", in, v)
		}
	})
}
