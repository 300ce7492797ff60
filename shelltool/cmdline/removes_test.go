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
		{"find . -name '*.o' -type f -delete", nil},
		{"find . -quit -delete", nil},
		{"find . -print", nil},
		{"find . -exec echo {} +", nil},
		// find forms that delete every entry of their roots (fail closed:
		// nothing proves the expression selects fewer)
		{"find . -maxdepth 1 -delete", []string{"."}},
		{"find . -mindepth 1 -maxdepth 99 -delete", []string{"."}},
		{"find -P . -delete", []string{"."}},
		{"find -H -L . -delete", []string{"."}},
		{"find -O1 . -delete", []string{"."}},
		{"find -D exec . -delete", []string{"."}},
		{"find -- . -delete", []string{"."}},
		{"find . -true -delete", []string{"."}},
		{"find . -delete -print", []string{"."}},
		{"find . -name '*' -delete", []string{"."}},
		{"find . -path './*' -delete", []string{"."}},
		{"find . -delete -name x", []string{"."}},
		{"find . -name x -o -delete", []string{"."}},
		{"find . ! -name x -delete", []string{"."}},
		{"find . -name \"$p\" -delete", []string{"."}},
		{"find . -printf %p -delete", []string{"."}},
		{"find . -exec rm -rf {} +", []string{"."}},
		{"find . -mindepth 1 -exec rm -r {} \\;", []string{"."}},
		{"find . -maxdepth 1 -mindepth 1 -execdir /bin/rm -rf {} +", []string{"."}},
		{"find . -exec \"$x\" {} +", []string{"."}},
		{"ls a b", nil},
		{"sudo rm -rf a b", []string{"a", "b"}}, // the wrapped rm (second command)
		// Other programs that remove what they name (review rev20 M2).
		{"tar --remove-files -cf /tmp/a.tar a b", []string{"a", "b"}},
		{"tar -c --remove-files -f /tmp/a.tar -- a b", []string{"a", "b"}},
		{"tar cf x.tar --remove-files a", []string{"a"}},
		{"tar -cvf x.tar --exclude y --remove-files a", []string{"a"}},
		{"tar -cfx.tar --remove-files a", []string{"a"}},
		{"tar --remove-files --file=x.tar -c a", []string{"a"}},
		{"tar -cf /tmp/a.tar a b", nil},
		{"zip -rm x.zip a b", []string{"a", "b"}},
		{"zip --move -r x.zip a", []string{"a"}},
		{"zip -r x.zip a", nil},
		{"git clean -fdx", []string{"."}},
		{"git clean -ffdX -e keep", []string{"."}},
		{"git clean -f -d -- src lib", []string{"src", "lib"}},
		{"git -C sub clean -fd", []string{"sub"}},
		{"git clean -fx", nil},  // files only
		{"git clean -ndx", nil}, // a dry run
		{"mv a b /tmp/x", []string{"a", "b"}},
		{"mv -t /tmp/x a b", []string{"a", "b"}},
		{"mv --target-directory=../up a", []string{"a"}},
		{"mv a b sub", nil}, // within the workspace: nothing leaves it
		{"toybox rm -rf a", []string{"a"}},
		{"rsync -a --delete empty/ .", []string{"."}},
		{"rsync -av --exclude .git --delete-after e/ dest --exclude x", []string{"dest"}},
		{"rsync -a -e ssh --del e/ dest", []string{"dest"}},
		{"rsync -a --remove-source-files a b /tmp/x/", []string{"a", "b"}},
		{"rsync -a --remove-source-files a b host:x/", []string{"a", "b"}},
		{"rsync -a --remove-source-files a sub", nil}, // within the workspace
		{"rsync -a a b /tmp/x", nil},
	} {
		an, err := Analyze(tc.line)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		c := an.Commands[len(an.Commands)-1]
		for _, o := range an.Commands {
			if o.Removes != nil {
				c = o // find's own, not what its -exec runs
				break
			}
		}
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
		{[]string{"tar", "--remove-files", "-cf", "/tmp/a.tar", "a", "b"}, []string{"a", "b"}},
		{[]string{"git", "clean", "-fdx"}, []string{"."}},
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
