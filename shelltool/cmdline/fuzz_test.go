package cmdline

import (
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyze checks that Analyze never panics and that, for every line that
// parses, each simple command of the syntax tree (found by an independent
// walk) is accounted for: there are at least as many Commands as CallExprs
// with words, and every CallExpr whose first word is a plain literal has a
// Command with that name or a Dynamic one whose words start with it.
// The fuzzer's lines are only parsed, never run.
func FuzzAnalyze(f *testing.F) {
	for _, tc := range append(analyzeCases, classCases...) {
		f.Add(tc.line)
	}
	for _, tc := range packageCases {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		an, err := Analyze(line)
		if err != nil {
			return
		}
		file, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
		if perr != nil {
			t.Fatalf("Analyze accepted %q but the parser fails: %v", line, perr)
		}
		calls := 0
		var names []string
		syntax.Walk(file, func(n syntax.Node) bool {
			if tc, ok := n.(*syntax.TimeClause); ok {
				skipTimeDashes(tc) // as bash does
			}
			if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				calls++
				if lit := c.Args[0].Lit(); lit != "" && !strings.ContainsAny(lit, "\\{*?[") {
					names = append(names, lit)
				}
			}
			return true
		})
		if len(an.Commands) < calls {
			t.Fatalf("%q: %d commands for %d simple commands: %+v", line, len(an.Commands), calls, an.Commands)
		}
		for _, n := range names {
			found := false
			for _, c := range an.Commands {
				if c.Name == n || (c.Name == Dynamic && len(c.Words) > 0 && c.Words[0] == n) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("%q: no command for %q: %+v", line, n, an.Commands)
			}
		}
		for _, p := range an.Packages {
			if p.Command < 0 || p.Command >= len(an.Commands) || p.Name == "" {
				t.Fatalf("%q: package %+v of %d commands", line, p, len(an.Commands))
			}
		}
		if again, _ := Analyze(line); !reflect.DeepEqual(again.Packages, an.Packages) {
			t.Fatalf("%q: packages differ between two analyses:\n%+v\n%+v", line, an.Packages, again.Packages)
		}
		for i, c := range an.Commands {
			if c.Risk < 2 || c.Risk > 4 {
				t.Fatalf("%q: command %d has risk %v", line, i, c.Risk)
			}
			if c.Wrapped != (c.Parent >= 0) || c.Parent >= i {
				t.Fatalf("%q: command %d has parent %d (wrapped %v)", line, i, c.Parent, c.Wrapped)
			}
			if c.Line != strings.Join(c.Words, " ") {
				t.Fatalf("%q: command %d line %q is not its words %q", line, i, c.Line, c.Words)
			}
		}
	})
}

// FuzzNPMSpec checks that npmSpec never panics, is deterministic, and
// that what it calls a host is one: lower case, no path, user or space;
// a local path never has one.
func FuzzNPMSpec(f *testing.F) {
	for _, s := range []string{"left-pad@1", "github:u/r", "u/r#v1", "git@h.example:u/r.git", "git+ssh://git@h.example:22/u/r",
		"x@https://h.example/x.tgz", "./x.tgz", "x@file:../y", "@s/x@gitlab:u/r", "x@npm:y@1", "foo:bar"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, word string) {
		u, host, ok := npmSpec(word)
		u2, host2, ok2 := npmSpec(word)
		if u != u2 || host != host2 || ok != ok2 {
			t.Fatalf("npmSpec(%q) not deterministic", word)
		}
		if !ok && (host != "" || u != "") {
			t.Fatalf("npmSpec(%q): registry package with host %q url %q", word, host, u)
		}
		if host != Dynamic && (host != strings.ToLower(host) || strings.ContainsAny(host, "/@ \t\n#?")) {
			t.Fatalf("npmSpec(%q): host %q", word, host)
		}
		if (strings.HasPrefix(word, "./") || strings.HasPrefix(word, "/") || strings.HasPrefix(strings.ToLower(word), "file:")) && host != "" {
			t.Fatalf("npmSpec(%q): local path with host %q", word, host)
		}
	})
}

func BenchmarkAnalyze(b *testing.B) {
	const line = `git add -A && git commit -m "x" && go test ./... | tee out.log`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(line); err != nil {
			b.Fatal(err)
		}
	}
}
