package cmdline

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// TestGitSubcommands: every global option form of git 2.39's
// handle_options (and a later git's), with or without a separate value;
// an option git does not know is read both ways.
func TestGitSubcommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []int // indices into the words after "git"
	}{
		{"push", []int{0}},
		{"-C . push", []int{2}},
		{"-C '' push", []int{2}},
		{"-c x=y push", []int{2}},
		{"-cx=y push", []int{1}}, // 2.39 rejects it: read both ways
		{"--config-env a=B push", []int{2}},
		{"--config-env=a=B push", []int{1}},
		{"--git-dir .git push", []int{2}},
		{"--git-dir=.git push", []int{1}},
		{"--work-tree w push", []int{2}},
		{"--work-tree=w push", []int{1}},
		{"--namespace n push", []int{2}},
		{"--namespace=n push", []int{1}},
		{"--super-prefix p/ push", []int{2}},
		{"--super-prefix=p/ push", []int{1}},
		{"--attr-source HEAD push", []int{2}},
		{"--attr-source=HEAD push", []int{1}},
		{"--shallow-file x push", []int{2}},
		{"--shallow-file /dev/null push origin main", []int{2}},
		{"--exec-path=/usr/lib/git-core push", []int{1}},
		{"--exec-path push", nil},
		{"--exec-pathX push", nil},
		{"--html-path push", nil},
		{"--man-path push", nil},
		{"--info-path push", nil},
		{"--list-cmds=builtins push", nil},
		{"-p -P --paginate --no-pager --bare --no-replace-objects --no-lazy-fetch --no-advice push", []int{8}},
		{"--literal-pathspecs --no-literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks push", []int{6}},
		{"--help push", []int{0}},
		{"-h push", []int{0}},
		{"--version", []int{0}},
		{"-v", []int{0}},
		{"--unknown x push", []int{1, 2}},
		{"--unknown push", []int{1}},
		{"-- push", []int{1}},
		{"--unknown -C x push", []int{2, 3}},
		{"--a --b x push", []int{2, 3}},
		{"-C", nil},
		{"", nil},
	} {
		got := GitSubcommands(strings.Fields(tc.line))
		if !slices.Equal(got, tc.want) {
			t.Errorf("git %s: subcommands at %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestGitGlobalsLine: the line's analysis reads the same subcommand (git
// --shallow-file x push --force is a forced push) and bounds the readings.
func TestGitGlobalsLine(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"git --shallow-file x push --force origin main", "critical"},
		{"git --unknown x push -f origin", "critical"},
		{"git --unknown push -f origin", "critical"},
		{"git psuh -f origin", "critical"},
		{"git send-pack --force ../r.git main", "critical"},
		{"git --exec-path push --force", "medium"}, // prints the exec path and exits
		{"git " + strings.Repeat("--x ", 20) + "status", "medium"},
		{"git " + strings.Repeat("--x a ", 20) + "status", "critical"},
		{"git status", "medium"},
	} {
		a, err := Analyze(tc.line)
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := a.Commands[0].Risk.String(); got != tc.want {
			t.Errorf("%s: risk %s (%s), want %s", tc.line, got, a.Commands[0].Option, tc.want)
		}
	}
}

func TestGitNames(t *testing.T) {
	for _, tc := range []struct {
		w    string
		want []string
	}{
		{"push", []string{"push"}},
		{"psuh", []string{"psuh", "push"}},
		{"statsu", []string{"statsu", "status"}},
		{"send-pack", []string{"send-pack", "push"}},
		{"receive-pack", []string{"receive-pack", "push"}},
		{"http-push", []string{"http-push", "push"}},
		{"--help", []string{"help"}},
		{"-v", []string{"version"}},
		{"xyzzyplugh-frobnicate", []string{"xyzzyplugh-frobnicate"}},
		{strings.Repeat("push", 1<<18), []string{strings.Repeat("push", 1<<18)}},
	} {
		if got := GitNames(tc.w); !slices.Equal(got, tc.want) {
			t.Errorf("GitNames(%q) = %v, want %v", tc.w, got, tc.want)
		}
	}
}

// TestGitLevenshtein: git's weights (swap 0, substitution 2, insertion 1,
// deletion 3), and the length bound gitAutocorrect skips by agrees with
// the full distance for every builtin.
func TestGitLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"psuh", "push", 0}, {"pus", "push", 1}, {"pushh", "push", 3}, {"pash", "push", 2},
		{"", "add", 3}, {"add", "", 9}, {"lfs", "log", 4}, {"same", "same", 0},
	} {
		if got := gitLevenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("gitLevenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	for _, w := range []string{"x", "ps", "psuh", "commmit", "cherry-pikc", "ls-remote-x", "submodule--helperr"} {
		for _, b := range gitBuiltins {
			if (len(w) > len(b)+1 || len(b) > len(w)+5) && gitLevenshtein(w, b) < 6 {
				t.Errorf("%q to %q is %d, under the bound's 6", w, b, gitLevenshtein(w, b))
			}
		}
	}
}

// TestGitBuiltinsCurrent: the table holds every builtin of the git here.
func TestGitBuiltinsCurrent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testkit.Missing(t, "git: %v", err)
		return
	}
	out, err := exec.Command("git", "--list-cmds=builtins").Output()
	if err != nil {
		t.Fatalf("git --list-cmds=builtins: %v", err)
	}
	if !slices.IsSorted(gitBuiltins) {
		t.Fatal("gitBuiltins is not sorted")
	}
	for _, b := range strings.Fields(string(out)) {
		if _, ok := slices.BinarySearch(gitBuiltins, b); !ok {
			t.Errorf("builtin %q of the installed git is missing from gitBuiltins: regenerate gitbuiltins.go", b)
		}
	}
}

// TestGitAutocorrectReal: whenever the real git's help.autocorrect runs
// a builtin for a mistyped name, gitAutocorrect names that builtin. The
// builtin runs with -h (usage only), in an empty repository with no
// configuration but the autocorrect setting.
func TestGitAutocorrectReal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testkit.Missing(t, "git: %v", err)
		return
	}
	dir := t.TempDir()
	assumed := regexp.MustCompile(`you meant '([^']+)'`)
	names := []string{"psuh", "pus", "puhs", "comit", "statsu", "stauts", "chekcout", "brnach", "fetc", "lgo",
		"rebsae", "sned-pack", "send-pakc", "confgi", "remtoe", "lfs", "x", "ad", "clon", "mrege", "tga", "pul",
		"stash-", "gerp", "shwo", "diff-tre", "update-rf", "cat-fiel", "hlep", "ammend", "bisetc", "wroktree"}
	ran := 0
	for _, n := range names {
		cmd := exec.Command("git", n, "-h")
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=help.autocorrect", "GIT_CONFIG_VALUE_0=-1", "GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir)}
		out, _ := cmd.CombinedOutput()
		m := assumed.FindSubmatch(out)
		if m == nil {
			continue
		}
		real := string(m[1])
		if _, ok := slices.BinarySearch(gitBuiltins, real); !ok {
			continue // a program or alias: its exec is decided
		}
		ran++
		if got := gitAutocorrect(n); got != real {
			t.Errorf("git %s: git runs builtin %q, gitAutocorrect says %q", n, real, got)
		}
	}
	if ran < len(names)/3 {
		t.Errorf("git autocorrected only %d of %d names to a builtin: is help.autocorrect read?", ran, len(names))
	}
}
