package cmdline

import (
	"slices"
	"testing"
)

// TestRemoves: the trees a recursive removal names are listed for the
// caller, as the program sees them (argv) and as the line writes them
// (globs and expansions left out: dangerousTarget judges those); any
// other command, and a find that selects what it deletes, lists none.
func TestRemoves(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"rm -rf a b c", []string{"a", "b", "c"}},
		{"rm -r -- -x ./y", []string{"-x", "./y"}},
		{"rm --recursive --force a", []string{"a"}},
		{"rm -R a", []string{"a"}},
		{"rm -f a b", nil}, // not recursive: a folder is not removed
		{"rm -rf * .[!.]* lit", []string{"lit"}},
		{`rm -rf "$x" a`, []string{"a"}},
		{"find a b -delete", []string{"a", "b"}},
		{"find . -mindepth 1 -depth -xdev -delete", []string{"."}},
		{"find . -name '*.o' -delete", nil},
		{"find . -maxdepth 1 -delete", nil},
		{"find . -print", nil},
		{"ls a b", nil},
		{"sudo rm -rf a b", []string{"a", "b"}}, // the wrapped rm (second command)
	} {
		an, err := Analyze(tc.line)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		c := an.Commands[len(an.Commands)-1]
		if !slices.Equal(c.Removes, tc.want) {
			t.Errorf("line %s: Removes %q, want %q", tc.line, c.Removes, tc.want)
		}
	}
	for _, tc := range []struct {
		argv []string
		want []string
	}{
		{[]string{"rm", "-rf", "a", "b", "*"}, []string{"a", "b", "*"}}, // a word the program sees is literal
		{[]string{"rm", "-rf", "--", "-a", ""}, []string{"-a"}},
		{[]string{"find", ".", "-delete"}, []string{"."}},
	} {
		cmds, err := AnalyzeArgv(tc.argv)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cmds[0].Removes, tc.want) {
			t.Errorf("argv %q: Removes %q, want %q", tc.argv, cmds[0].Removes, tc.want)
		}
	}
}
