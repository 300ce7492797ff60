package cmdline

import (
	"path"
	"strings"
	"testing"
)

// TestDir: each command's folder, as bash's cd, pushd and popd leave it
// (cd.go): "" the line's own, a path (relative to the line's folder or
// absolute), or <dynamic>. Words name the command (its Line); a line that
// runs the same command twice lists both.
var dirCases = []struct {
	line string
	want string // "line=dir" for each command, in order, joined by " | "
}{
	{"rm -r x", "rm -r x="},
	{"cd /tmp && rm -r x", "cd /tmp= | rm -r x=/tmp"},
	{"cd /tmp; rm -r x", "cd /tmp= | rm -r x=/tmp"},
	{"cd sub && cd ../.. && rm -r x", "cd sub= | cd ../..=sub | rm -r x=.."},
	{"cd -P /a/b/../c && ls", "cd -P /a/b/../c= | ls=/a/c"},
	// A cd that may fail leaves the shell where it was.
	{"cd s; cd t; ls", "cd s= | cd t=s | ls=<dynamic>"},
	{"cd s && cd t; ls", "cd s= | cd t=s | ls=<dynamic>"},
	{"cd s && cd t && ls", "cd s= | cd t=s | ls=s/t"},
	{"cd s || exit; cd t || exit 1; ls", "cd s= | exit=<dynamic> | cd t=s | exit 1=<dynamic> | ls=s/t"},
	{"cd /tmp; cd /ws/x; rm -r y", "cd /tmp= | cd /ws/x=/tmp | rm -r y=<dynamic>"},
	{"cd -- -x && ls", "cd -- -x= | ls=-x"},
	{"cd -e -L /x && ls", "cd -e -L /x= | ls=/x"},
	{"pushd /tmp && ls", "pushd /tmp= | ls=/tmp"},
	{"pushd -n /tmp && ls", "pushd -n /tmp= | ls="},
	{"popd && ls", "popd= | ls=<dynamic>"},
	{"cd . && ls", "cd .= | ls="},
	// Unknown: not literal, HOME, OLDPWD, several operands, a wrapper's cd.
	{`cd "$d" && rm -r x`, `cd "$d"= | rm -r x=<dynamic>`},
	{"cd && ls", "cd= | ls=<dynamic>"},
	{"cd ~/p && ls", "cd ~/p= | ls=<dynamic>"},
	{"cd - && ls", "cd -= | ls=<dynamic>"},
	{"cd a b && ls", "cd a b= | ls=<dynamic>"},
	{"cd /a/* && ls", "cd /a/*= | ls=<dynamic>"},
	{"command cd /tmp && ls", "command cd /tmp= | cd /tmp= | ls=<dynamic>"},
	{"CDPATH=/tmp; cd x && ls", "cd x= | ls=<dynamic>"},
	{"CDPATH=/tmp; cd ./x && ls", "cd ./x= | ls=x"},
	{"export CDPATH=/tmp; cd x && ls", "export CDPATH=/tmp= | cd x= | ls=<dynamic>"},
	{"CDPATH=/tmp cd x && ls", "cd x= | ls=<dynamic>"},
	{"v=/tmp; shopt -s cdable_vars; cd v && ls", "shopt -s cdable_vars= | cd v= | ls=<dynamic>"},
	{`shopt -s "$o"; cd v && ls`, `shopt -s "$o"= | cd v= | ls=<dynamic>`},
	{"cd $(pwd) && ls", "pwd= | cd $(pwd)= | ls=<dynamic>"},
	{"env -C /tmp rm -r x; ls", "env -C /tmp rm -r x= | rm -r x=<dynamic> | ls="},
	{"cd /a && sudo -D /b rm -r x", "cd /a= | sudo -D /b rm -r x=/a | rm -r x=<dynamic>"},
	// Subshells keep their cd.
	{"(cd /tmp && rm -r x); rm -r y", "cd /tmp= | rm -r x=/tmp | rm -r y="},
	{"cd /tmp | rm -r x; ls", "cd /tmp= | rm -r x= | ls="},
	{"ls | cd /tmp; ls", "ls= | cd /tmp= | ls=<dynamic>"}, // lastpipe may run it in the shell
	{"echo $(cd /tmp; pwd) && ls", "cd /tmp= | pwd=/tmp | echo $(cd /tmp; pwd)= | ls="},
	{"cat <(cd /tmp; ls) && ls", "cd /tmp= | ls=/tmp | cat <(cd /tmp; ls)= | ls="},
	{"cd /tmp & ls", "cd /tmp= | ls="},
	{"sh -c 'cd /tmp && rm -r x'; ls", "sh -c cd /tmp && rm -r x= | cd /tmp= | rm -r x=/tmp | ls="},
	{"eval 'cd /tmp'; ls", "eval cd /tmp= | cd /tmp= | ls=/tmp"},
	{"trap 'cd /tmp' EXIT; ls", "trap cd /tmp EXIT= | cd /tmp= | ls=<dynamic>"},
	// Lists and branches.
	{"cd /tmp || rm -r x", "cd /tmp= | rm -r x=<dynamic>"},
	{"cd /tmp || exit 1; rm -r x", "cd /tmp= | exit 1=<dynamic> | rm -r x=/tmp"},
	{"true || cd /tmp; ls", "true= | cd /tmp= | ls=<dynamic>"},
	{"cd sub || cd /etc; rm -rf x", "cd sub= | cd /etc=<dynamic> | rm -rf x=<dynamic>"},
	{"cd sub || cd ../..; rm -rf x", "cd sub= | cd ../..=<dynamic> | rm -rf x=<dynamic>"},
	{"if true; then cd /a; fi; ls", "true= | cd /a= | ls=<dynamic>"},
	{"if true; then cd /a; else cd /a; fi; ls", "true= | cd /a= | cd /a= | ls=/a"},
	{"case x in a) cd /a;; esac; ls", "cd /a= | ls=<dynamic>"},
	{"for d in a b; do cd $d; rm -r x; done", "cd $d=<dynamic> | rm -r x=<dynamic>"},
	{"while true; do cd sub; rm -r x; done; ls", "true=<dynamic> | cd sub=<dynamic> | rm -r x=<dynamic> | ls=<dynamic>"},
	{"for d in a b; do (cd $d && make); done; ls", "cd $d= | make=<dynamic> | ls="},
	// Functions run where they are called.
	{"f() { rm -r x; }; f", "rm -r x= | f="},
	{"f() { rm -r x; }; cd /tmp; f", "rm -r x=<dynamic> | cd /tmp= | f=/tmp"},
	{"g() { cd /tmp; }; g; rm -r x", "cd /tmp=<dynamic> | g= | rm -r x=<dynamic>"},
}

func TestDir(t *testing.T) {
	for _, tc := range dirCases {
		an, err := Analyze(tc.line)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		var got []string
		for _, c := range an.Commands {
			got = append(got, c.Line+"="+c.Dir)
		}
		if g := strings.Join(got, " | "); g != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.line, g, tc.want)
		}
	}
}

// FuzzDir: after `cd /fz &&` no command of any line runs in the line's
// own folder (each is somewhere under a cd: /fz, where a later cd leads,
// or unknown), and every Dir is "", <dynamic> or a clean path.
func FuzzDir(f *testing.F) {
	for _, tc := range dirCases {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		an, err := Analyze(line)
		if err != nil {
			return
		}
		for _, c := range an.Commands {
			if c.Dir != "" && c.Dir != Dynamic && (path.Clean(c.Dir) != c.Dir || c.Dir == ".") {
				t.Fatalf("%q: %q has Dir %q", line, c.Line, c.Dir)
			}
		}
		moved, err := Analyze("cd /fz && {\n" + line + "\n}")
		if err != nil {
			return
		}
		for _, c := range moved.Commands[1:] {
			if c.Dir == "" {
				t.Fatalf("cd /fz && { %q }: %q runs in the line's folder: %+v", line, c.Line, moved.Commands)
			}
		}
	})
}
