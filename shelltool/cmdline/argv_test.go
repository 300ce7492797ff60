package cmdline

import (
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
)

func TestAnalyzeArgv(t *testing.T) {
	tests := []struct {
		argv []string
		want []string // "risk name: line [option]" per command
	}{
		{[]string{"rm", "-rf", "/"}, []string{"critical rm: rm -rf / [rm -r outside]"}},
		{[]string{"rm", "-f", "build/x.o"}, []string{"high rm: rm -f build/x.o [rm]"}},
		{[]string{"git", "push", "--force"}, []string{"critical git: git push --force [git push --force]"}},
		{[]string{"sh", "-c", "rm -r /tmp/x; ls"}, []string{"medium sh: sh -c rm -r /tmp/x; ls []", "critical rm: rm -r /tmp/x [rm -r outside]", "medium ls: ls []"}},
		{[]string{"timeout", "5", "dd", "of=/dev/sda"}, []string{"medium timeout: timeout 5 dd of=/dev/sda []", "critical dd: dd of=/dev/sda [dd of=]"}},
		// Words are words: no expansion, no globbing, no keywords.
		{[]string{"echo", "$(rm -rf /)", "*"}, []string{"medium echo: echo $(rm -rf /) * []"}},
		{[]string{"if"}, []string{"medium if: if []"}},
	}
	for _, tc := range tests {
		cmds, err := AnalyzeArgv(tc.argv)
		if err != nil {
			t.Errorf("%q: %v", tc.argv, err)
			continue
		}
		var got []string
		for _, c := range cmds {
			got = append(got, c.Risk.String()+" "+c.Name+": "+c.Line+" ["+c.Option+"]")
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%q:\n got %q\nwant %q", tc.argv, got, tc.want)
		}
	}
	for _, bad := range [][]string{nil, {}, {"a\x00b"}} {
		if _, err := AnalyzeArgv(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// quoteLine writes argv as a bash line of single-quoted words.
func quoteLine(argv []string) string {
	q := make([]string, len(argv))
	for i, w := range argv {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// FuzzAnalyzeArgv: AnalyzeArgv never panics, and every command it finds in
// an argv is found and classified the same by Analyze in the same words
// written as a line of quoted words (one classifier for both). The input is
// argv joined by NUL.
func FuzzAnalyzeArgv(f *testing.F) {
	for _, s := range []string{"rm\x00-rf\x00/", "git\x00push\x00--force", "sh\x00-c\x00rm -r ~; ls", "env\x00A=1\x00rm\x00x", "find\x00.\x00-delete", "curl\x00x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
		cmds, err := AnalyzeArgv(argv)
		if err != nil {
			return
		}
		if len(cmds) == 0 || cmds[0].Words[0] != argv[0] || cmds[0].Risk < grants.RiskMedium {
			t.Fatalf("%q: first command %+v", argv, cmds)
		}
		if strings.ContainsRune(joined, '\r') {
			return // the line parser drops a CR before a newline even inside quotes
		}
		line := quoteLine(argv)
		an, err := Analyze(line)
		if err != nil {
			return // over a limit
		}
		// The line may find more (bash syntax such as a subscript in a word
		// it reads as an assignment); every command of the argv must be
		// there, in order, classified the same.
		j := 0
		for _, b := range an.Commands {
			if j < len(cmds) && cmds[j].Name == b.Name && cmds[j].Risk == b.Risk && cmds[j].Option == b.Option && cmds[j].Line == b.Line {
				j++
			}
		}
		if j != len(cmds) {
			t.Fatalf("%q: command %d %+v is not classified the same in the line %q: %+v", argv, j, cmds[j], line, an.Commands)
		}
	})
}

// TestKnownProgram: the programs the analysis has rules of its own for
// (so the exec gate recognises copies of them), and not others.
func TestKnownProgram(t *testing.T) {
	for name, want := range map[string]bool{
		"rm": true, "dd": true, "git": true, "mkfs.ext4": true, "shred": true, "sudo": true, "env": true,
		"bash": true, "sh": true, "python3": true, "python3.12": true, "curl": true, "kubectl": true,
		"cc": false, "ls": false, "true": false, "mytool": false, "": false,
	} {
		if got := KnownProgram(name); got != want {
			t.Errorf("KnownProgram(%q) = %v, want %v", name, got, want)
		}
	}
}
