package grants

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// Seeds live in testdata/fuzz/FuzzX/ as go fuzz corpus files.

// FuzzParseConfig: Parse never panics, and every error is a *ConfigError
// naming the file; a config that parses compiles or fails with one too.
func FuzzParseConfig(f *testing.F) {
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.toml", dir)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != "fuzz.toml" {
				t.Fatalf("error %T %v is not a *ConfigError for fuzz.toml", err, err)
			}
			if cfg != nil {
				t.Fatal("config returned with an error")
			}
			return
		}
		p, err := Compile(cfg, CompileOptions{Executable: testExecutable, Home: testHome})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("compile error %T %v is not a *ConfigError", err, err)
			}
			return
		}
		// A compiled policy decides without panicking.
		for _, c := range Capabilities() {
			p.Decide(Request{Capability: c, Target: Target{Path: p.Workspace + "/a", Host: "a.b", Resource: "x", Command: "x y"}})
			p.CanEver(c)
		}
		_ = p.Summary(Capabilities()...)
	})
}

// FuzzCommandPattern: compiling never panics; a literal pattern matches
// exactly the commands with its own words.
func FuzzCommandPattern(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, command string) {
		p, err := compileCommandPattern(pattern)
		if err != nil {
			return
		}
		got := p.match(command)
		if strings.HasPrefix(pattern, "re:") || strings.ContainsAny(pattern, "*?[\\") {
			return
		}
		want := strings.Join(strings.Fields(pattern), " ") == strings.Join(strings.Fields(command), " ")
		if got != want {
			t.Fatalf("literal %q vs %q: match %v, want %v", pattern, command, got, want)
		}
		// and its own words always match
		if !p.match(pattern) {
			t.Fatalf("literal %q does not match itself", pattern)
		}
	})
}

// FuzzHostGlob: never panics; a literal pattern matches itself in any case
// and with a trailing dot, and a "*.x" pattern never matches x itself.
func FuzzHostGlob(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, host string) {
		g, err := compileHostGlob(pattern)
		if err != nil {
			return
		}
		got := g.match(host)
		if g.literal {
			h := strings.TrimSuffix(strings.ToLower(host), ".")
			if got != (h == g.name) {
				t.Fatalf("literal %q vs %q: %v", pattern, host, got)
			}
			if !g.match(strings.ToUpper(g.name)+".") && !strings.ContainsAny(g.name, ":") {
				t.Fatalf("literal %q does not match itself", pattern)
			}
		}
		if rest, ok := strings.CutPrefix(g.name, "*."); ok && g.match(rest) && !strings.ContainsAny(rest, "*?[\\") {
			t.Fatalf("%q matches %q: '*' must take at least one label", pattern, rest)
		}
	})
}

// FuzzPathGlob: never panics; a relative pattern without ".." compiles to a
// pattern inside the workspace and never matches a path outside it.
func FuzzPathGlob(f *testing.F) {
	const ws = "/x/ws"
	f.Fuzz(func(t *testing.T, pattern, p string) {
		g, err := compilePathGlob(pattern, ws, "/home/u")
		if err != nil {
			return
		}
		got := g.match(p)
		relative := !strings.HasPrefix(pattern, "/") && !strings.HasPrefix(pattern, "~")
		if !relative || strings.Contains(pattern, "..") {
			return
		}
		if g.pattern != ws && !strings.HasPrefix(g.pattern, ws+"/") {
			t.Fatalf("relative %q compiled to %q, outside %s", pattern, g.pattern, ws)
		}
		if got && path.IsAbs(p) && path.Clean(p) == p && p != ws && !strings.HasPrefix(p, ws+"/") {
			t.Fatalf("relative %q (compiled %q) matches %q outside %s", pattern, g.pattern, p, ws)
		}
	})
}

// FuzzGlobProblem: explaining a glob never panics, and every pattern the
// glob compilers refuse gets a reason that names a character position.
func FuzzGlobProblem(f *testing.F) {
	for _, s := range []string{"src/[", "a\\", "{a,b", "[]", "[a-]", "[-a]", "x[!]", "**/*.go", "[\\]]", "a{b}c}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		for _, braces := range []bool{false, true} {
			why := globProblem(pattern, braces)
			if why != "" && !strings.Contains(why, "character ") {
				t.Fatalf("%q: reason without a position: %s", pattern, why)
			}
		}
		if _, err := path.Match(pattern, ""); err != nil && globProblem(pattern, false) == "" {
			t.Fatalf("path.Match refuses %q but no reason is found", pattern)
		}
		if !doublestar.ValidatePattern(pattern) && globProblem(pattern, true) == "" {
			t.Fatalf("doublestar refuses %q but no reason is found", pattern)
		}
	})
}
