package cmdline

import (
	"strings"
	"testing"
)

// FuzzPackageSpec: reading a package word as npm does (npmSpec) or as a
// URL (packageURL) never panics, and a host found is a plain lower-case
// host name, "" or Dynamic, never part of a scheme or path.
func FuzzPackageSpec(f *testing.F) {
	for _, s := range []string{"ssh://git@host.example:2222/o/r", "git+ssh://git@h.example:o/r.git", "git@h.example:o/r",
		"git+https://u:p@h.example:8443/o/r", "x@git+ssh://git@[::1]:o/r", "pkg @ git+ssh://git@h:o", "git+ssh://", "a@b.c:",
		"file:../x", "./local", "u/r", "@s/x@1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, word string) {
		for _, read := range []func(string) (string, string, bool){npmSpec, packageURL, NPMDependencyHost} {
			_, host, _ := read(word)
			if host != "" && host != Dynamic && (strings.ContainsAny(host, "/?#@ ") || strings.ToLower(host) != host) {
				t.Fatalf("%q: host %q", word, host)
			}
		}
	})
}
