package toolchains

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// maxNpmrc bounds how much of npm's global config is read.
const maxNpmrc = 64 << 10

// npmCAFile reads the cafile setting from npm's global config at path
// (<prefix>/etc/npmrc): the CA bundle npm is told to trust (a distribution's
// or a company's TLS-inspecting proxy's). Commands get a generated global
// config carrying that path and nothing else from the real one (a token
// there never reaches a command). Only an absolute path outside the home
// folder is kept, since commands cannot read the home folder.
func npmCAFile(h Host, path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > maxNpmrc {
		return ""
	}
	v := parseNpmCAFile(b)
	if v == "" || underHome(h, v) {
		return ""
	}
	return v
}

// parseNpmCAFile finds the top-level cafile key in npmrc (ini) text; the
// last value wins. A value that is not a plain absolute path (an
// environment reference, a relative path) is ignored.
func parseNpmCAFile(b []byte) string {
	var out string
	for line := range configLines(b, maxNpmrc) {
		if line[0] == '[' {
			return out // keys in a section are not npm's top-level settings
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "cafile" {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if filepath.IsAbs(v) && !strings.Contains(v, "${") && filepath.Clean(v) == v && !hasControl(v) {
			out = v
		}
	}
	return out
}

// hasControl reports whether s holds a control character (a value that
// would not stay one line of the generated config).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}
