package cmdline

import (
	"slices"
	"strings"
)

// git: options that run programs or read foreign configuration, config
// writes, destructive history and work-tree operations. The subcommands
// are dispatched by gitSubcommands (tables.go), at every index git may
// take its subcommand at (gitSubs); a name that is no builtin is also
// analysed as the builtin help.autocorrect would run in its place.
func (k *call) git() {
	args := k.args
	subs := k.gitSubs()
	for _, a := range args {
		if longIs(a.text, "--ext-diff") {
			k.raise(high, "git --ext-diff")
		}
		if longIs(a.text, "--upload-pack") || longIs(a.text, "--receive-pack") || a.text == "--exec" || strings.HasPrefix(a.text, "--exec=") && !k.gitSubIs(subs, "rebase") {
			k.raise(high, "git "+strings.SplitN(a.text, "=", 2)[0])
		}
	}
	for _, i := range subs {
		if !args[i].lit {
			continue
		}
		for _, sub := range GitNames(args[i].text) {
			if analyse, ok := gitSubcommands[sub]; ok {
				analyse(k, sub, args[i+1:])
			}
		}
	}
}

// gitSubIs reports whether every reading of git's subcommand is sub (and
// there is one).
func (k *call) gitSubIs(subs []int, sub string) bool {
	for _, i := range subs {
		if k.args[i].text != sub {
			return false
		}
	}
	return len(subs) > 0
}

// GitNames are the subcommands git may run for the word w it reads as
// its subcommand: w itself ("--help" and "-h" are help, "--version" and
// "-v" version); for a word that is no builtin of git's, the builtin
// help.autocorrect picks in its place, run in the same process (git
// psuh); and for the plumbing of a push, push, so a rule on `git push*`
// holds for them: send-pack and http-push (which git push and its remote
// helpers run) and receive-pack (the receiving end, which updates the refs
// of the repository it names from a pack on its stdin: run by hand, it is
// a push into that repository).
func GitNames(w string) []string {
	switch w {
	case "--help", "-h":
		w = "help"
	case "--version", "-v":
		w = "version"
	}
	names := []string{w}
	if _, ok := slices.BinarySearch(gitBuiltins, w); !ok {
		if b := gitAutocorrect(w); b != "" {
			names = append(names, b)
		}
	}
	if w == "send-pack" || w == "http-push" || w == "receive-pack" {
		names = append(names, "push")
	}
	return names
}

// gitAutocorrect returns the builtin git 2.39's help.autocorrect can run
// for the unknown subcommand w, "" when none. git (help.c
// help_unknown_cmd) scores every command it knows (builtins, git-*
// programs in its exec path and PATH, aliases) by levenshtein(w, name,
// swap 0, substitution 2, insertion 1, deletion 3) + 1, a common command
// that w is a prefix of by 0, and runs the one best command when it is
// alone in its score, there is no prefix match and the score is below 7.
// A builtin it runs is then also the one best among the builtins alone,
// scored by distance (more candidates can only take the place away), so
// this returns that builtin: an over-approximation (git may run nothing,
// or a program or alias, whose exec the gate decides) that never misses
// the builtin git runs in-process.
func gitAutocorrect(w string) string {
	best, bestDist, ties := "", 0, 0
	for _, b := range gitBuiltins {
		// A deletion costs 3 and an insertion 1: a builtin shorter by 2
		// or longer by 6 is at 6 or more, never a candidate (and a
		// megabyte word costs nothing).
		if len(w) > len(b)+1 || len(b) > len(w)+5 {
			continue
		}
		d := gitLevenshtein(w, b)
		switch {
		case best == "" || d < bestDist:
			best, bestDist, ties = b, d, 1
		case d == bestDist:
			ties++
		}
	}
	if ties != 1 || bestDist+1 >= 7 {
		return ""
	}
	return best
}

// gitLevenshtein is git's weighted Damerau-Levenshtein distance from s1 to
// s2 (levenshtein.c with w=0, s=2, a=1, d=3: a swap of neighbours is free,
// a substitution costs 2, an insertion 1, a deletion 3).
func gitLevenshtein(s1, s2 string) int {
	const swap, subst, ins, del = 0, 2, 1, 3
	row0 := make([]int, len(s2)+1)
	row1 := make([]int, len(s2)+1)
	row2 := make([]int, len(s2)+1)
	for j := range row1 {
		row1[j] = j * ins
	}
	for i := 0; i < len(s1); i++ {
		row2[0] = (i + 1) * del
		for j := 0; j < len(s2); j++ {
			c := row1[j]
			if s1[i] != s2[j] {
				c += subst
			}
			if i > 0 && j > 0 && s1[i-1] == s2[j] && s1[i] == s2[j-1] {
				c = min(c, row0[j-1]+swap)
			}
			row2[j+1] = min(c, row1[j+1]+del, row2[j]+ins)
		}
		row0, row1, row2 = row1, row2, row0
	}
	return row1[len(s2)]
}

// maxGitReadings bounds the readings of git's global options an argv
// may have (each option git does not know doubles back): past it the
// command is critical, as no decision covers every reading.
const maxGitReadings = 8

// gitSubs parses git's options before its subcommand (git.c
// handle_options, git 2.39 and later) and returns every index of k.args
// git may take as its subcommand, ascending; none when git exits first
// (--exec-path, --html-path, --man-path, --info-path, --list-cmds=) or
// the words end. An option git does not know (a later git's, or one git
// 2.39 rejects) or a word known only when run is read both ways: as
// taking no value and as taking the next word as its value, so both
// subcommands are decided and the stricter wins.
func (k *call) gitSubs() []int {
	var subs []int
	todo := []int{0}
	seen := map[int]bool{0: true}
	for len(todo) > 0 {
		i := slices.Min(todo)
		todo = slices.DeleteFunc(todo, func(j int) bool { return j == i })
		j, unknown := k.gitOptions(i)
		if j < len(k.args) && !unknown {
			subs = append(subs, j)
			continue
		}
		if !unknown {
			continue
		}
		if !k.args[j].lit {
			subs = append(subs, j) // a word known only when run may be the subcommand too
		}
		for _, n := range []int{j + 1, j + 2} {
			if n < len(k.args) && !seen[n] {
				seen[n] = true
				todo = append(todo, n)
			}
		}
		if len(subs)+len(todo) > maxGitReadings {
			k.raise(critical, "git: too many unknown global options")
			break
		}
	}
	slices.Sort(subs)
	return slices.Compact(subs)
}

// gitOptions reads git's global options from index i and returns the
// index of the word after them and whether that word is an option git
// does not know (or a word known only when run); len(k.args) (not
// unknown) when git exits at an option or the words end.
func (k *call) gitOptions(i int) (int, bool) {
	args := k.args
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.lit {
			return i, true
		}
		if len(t) == 0 || t[0] != '-' || has("--help -h --version -v", t) {
			return i, false
		}
		name, _, hasVal := strings.Cut(t, "=")
		switch {
		case strings.HasPrefix(t, "--exec-path"):
			if !strings.HasPrefix(t, "--exec-path=") {
				return len(args), false // prints the exec path and exits
			}
			k.raise(high, "git --exec-path")
		case has("--html-path --man-path --info-path", t) || strings.HasPrefix(t, "--list-cmds="):
			return len(args), false // prints and exits
		case has("-p --paginate -P --no-pager --no-lazy-fetch --no-replace-objects --bare --literal-pathspecs --no-literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice", t):
		case t == "-c":
			k.raise(high, "git -c")
			k.gitConfig = true
			i++
		case t == "--config-env" || strings.HasPrefix(t, "--config-env="):
			k.raise(high, "git --config-env")
			k.gitConfig = true
			if !hasVal {
				i++
			}
		case t == "--git-dir" || strings.HasPrefix(t, "--git-dir="):
			k.raise(high, "git --git-dir")
			k.gitConfig = true
			if !hasVal {
				i++
			}
		case t == "-C" || t == "--shallow-file":
			i++
		case has("--work-tree --namespace --super-prefix --attr-source", name):
			if !hasVal {
				i++
			}
		default:
			if strings.HasPrefix(t, "-c") {
				k.raise(high, "git -c") // git 2.39 rejects -cname=value; a later one may not
				k.gitConfig = true
			}
			return i, true
		}
	}
	return len(args), false
}

// gitRiskySub raises the risk of a subcommand that is always high.
func gitRiskySub(k *call, sub string, _ []arg) { k.raise(high, "git "+sub) }

func gitSubmodule(k *call, _ string, rest []arg) {
	if hasWord(rest, "foreach") {
		k.raise(high, "git submodule foreach")
	}
}

func gitPush(k *call, _ string, rest []arg) {
	k.gitPush = true
	if k.gitConfig {
		// -c remote.origin.push=+refs/heads/*:… or mirror: a force push
		// its words do not show (review rev20d H3).
		k.raise(critical, "git push with -c")
	}
	for _, a := range rest {
		t := a.text
		switch {
		case longIs(t, "--force") || longIs(t, "--force-with-lease") || longIs(t, "--force-if-includes") || shortHas(t, "f"):
			k.raise(critical, "git push --force")
		case longIs(t, "--mirror") || longIs(t, "--delete") || longIs(t, "--prune") || shortHas(t, "d"):
			k.raise(critical, "git push --delete")
		case a.lit && strings.HasPrefix(t, "+"):
			k.raise(critical, "git push +refspec")
		case a.lit && strings.HasPrefix(t, ":"):
			k.raise(critical, "git push :ref")
		}
	}
}

func gitReset(k *call, _ string, rest []arg) {
	if hasWord(rest, "--hard") || hasWord(rest, "--merge") || hasWord(rest, "--keep") {
		k.raise(high, "git reset --hard")
	}
}

// gitClean: -f deletes untracked files (high); with -d it removes whole
// untracked folders too, from its pathspecs or else the folder it runs in:
// those are removed as rm -r's operands are, so at the workspace root it is
// the workspace's emptying (critical: with -x or -X, or nothing tracked,
// it leaves only .git). -n (--dry-run) removes nothing.
func gitClean(k *call, _ string, rest []arg) {
	force, dirs, dry := false, false, false
	var paths []arg
	opts := true
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		t := a.text
		switch {
		case opts && a.lit && t == "--":
			opts = false
		case opts && a.lit && (t == "-e" || longIs(t, "--exclude") && !strings.Contains(t, "=")) && i+1 < len(rest):
			i++
		case opts && a.lit && strings.HasPrefix(t, "--"):
			force = force || longIs(t, "--force")
			dry = dry || longIs(t, "--dry-run")
		case opts && a.lit && len(t) > 1 && t[0] == '-':
			letters, _, _ := strings.Cut(t[1:], "e") // -e's value may follow in the word
			force = force || strings.Contains(letters, "f")
			dirs = dirs || strings.Contains(letters, "d")
			dry = dry || strings.Contains(letters, "n")
			if strings.HasSuffix(t, "e") && i+1 < len(rest) {
				i++
			}
		default:
			paths = append(paths, a)
		}
	}
	if !force || dry {
		return
	}
	k.raise(high, "git clean -f")
	if !dirs {
		return
	}
	if len(paths) == 0 {
		// The folder it runs in, which the gate knows (raiseEmptying: the
		// workspace root's is its emptying; a subfolder's is not), or the
		// last -C's folder before the subcommand.
		dir := arg{text: ".", lit: true}
		if n := len(k.args) - len(rest) - 1; n > 0 {
			for i, a := range k.args[:n] {
				if a.lit && a.text == "-C" && i+1 < n {
					dir = k.args[i+1]
				}
			}
		}
		if dir.text == "." {
			k.raise(high, "git clean -fd")
			k.removes = append(k.removes, ".")
			return
		}
		paths = []arg{dir}
	}
	k.removeOperands("git clean -fd", paths, false)
}

// gitCheckout: a forced checkout or switch, and what puts files back as
// committed over uncommitted work (git restore of the worktree, git
// checkout -- paths or git checkout .: review rev20e L1), lose the edits:
// high.
func gitCheckout(k *call, sub string, rest []arg) {
	staged, worktree := false, false
	for i, a := range rest {
		switch t := a.text; {
		case longIs(t, "--force") || t == "-f" || longIs(t, "--discard-changes"):
			k.raise(high, "git "+sub+" --force")
		case sub == "checkout" && (t == "--" && i+1 < len(rest) || t == "."):
			k.raise(high, "git checkout -- paths")
		case sub == "checkout" && strings.HasPrefix(t, "--pathspec-from-file"):
			k.raise(high, "git checkout -- paths")
		case longIs(t, "--staged") || t == "-S":
			staged = true
		case longIs(t, "--worktree") || t == "-W":
			worktree = true
		}
	}
	if sub == "restore" && (!staged || worktree) {
		k.raise(high, "git restore")
	}
}

// gitDiscards: subcommands that put files back as committed, over
// uncommitted work, with these words (review rev20f L4): high.
func gitDiscards(k *call, sub string, rest []arg) {
	has := func(words ...string) bool {
		return slices.ContainsFunc(rest, func(a arg) bool {
			return slices.ContainsFunc(words, func(w string) bool { return a.text == w || len(w) > 2 && longIs(a.text, w) })
		})
	}
	switch {
	case sub == "read-tree" && has("-u") && has("--reset", "-m"),
		sub == "checkout-index" && (has("-f", "--force", "-a", "--all") || slices.ContainsFunc(rest, func(a arg) bool { return shortHas(a.text, "f") || shortHas(a.text, "a") })),
		sub == "worktree" && len(rest) > 0 && rest[0].text == "remove" && has("-f", "--force"),
		(sub == "merge" || sub == "rebase" || sub == "cherry-pick" || sub == "revert" || sub == "am") && has("--abort"):
		k.raise(high, "git "+sub+" (discards uncommitted work)")
	}
}

// gitRm: removing tracked files recursively or over uncommitted changes
// (-r, -f) is a removal of their work: high.
func gitRm(k *call, _ string, rest []arg) {
	for _, a := range rest {
		if a.text == "--" {
			return
		}
		if longIs(a.text, "--force") || shortHas(a.text, "r") || shortHas(a.text, "f") {
			k.raise(high, "git rm -r")
			return
		}
	}
}

func gitRebase(k *call, sub string, rest []arg) {
	gitDiscards(k, sub, rest)
	for _, a := range rest {
		if a.text == "-x" || longIs(a.text, "--exec") || shortHas(a.text, "x") {
			k.raise(high, "git rebase --exec")
		}
	}
}

func gitBisect(k *call, _ string, rest []arg) {
	if len(rest) > 0 && rest[0].text == "run" {
		k.raise(high, "git bisect run")
	}
}

func gitClone(k *call, _ string, rest []arg) {
	for _, a := range rest {
		if a.text == "-u" || a.text == "-c" || strings.HasPrefix(a.text, "-c") && !strings.HasPrefix(a.text, "--") || longIs(a.text, "--config") || longIs(a.text, "--template") {
			k.raise(high, "git clone "+strings.SplitN(a.text, "=", 2)[0])
		}
	}
}

func gitGrep(k *call, _ string, rest []arg) {
	for _, a := range rest {
		if longIs(a.text, "--open-files-in-pager") || strings.HasPrefix(a.text, "-O") {
			k.raise(high, "git grep -O")
		}
	}
}

func gitDifftool(k *call, sub string, rest []arg) {
	for _, a := range rest {
		if a.text == "-x" || longIs(a.text, "--extcmd") {
			k.raise(high, "git "+sub+" --extcmd")
		}
	}
}

func gitBranch(k *call, _ string, rest []arg) {
	if hasWord(rest, "-D") {
		k.raise(high, "git branch -D")
	}
}

func gitStash(k *call, _ string, rest []arg) {
	if len(rest) > 0 && has("drop clear", rest[0].text) {
		k.raise(high, "git stash "+rest[0].text)
	}
}

// gitConfig: reading is fine; writing git configuration can make git run programs.
func gitConfig(k *call, _ string, rest []arg) {
	var ops []arg
	for i := 0; i < len(rest); i++ {
		t := rest[i].text
		if rest[i].lit && len(t) > 1 && t[0] == '-' {
			if strings.HasPrefix(t, "--get") || t == "-l" || t == "--list" {
				return
			}
			if has("-f --file --blob --type --default --comment", t) {
				i++
			}
			continue
		}
		ops = append(ops, rest[i])
	}
	if len(ops) > 0 && has("get list", ops[0].text) {
		return
	}
	if len(ops) == 1 && !has("set unset edit rename-section remove-section", ops[0].text) {
		return // git config key: a read
	}
	k.raise(high, "git config")
}

// gitConfigEnv are the variables through which git reads configuration
// the command may have made (GIT_CONFIG_COUNT with its KEY_n/VALUE_n
// pairs, what -c passes to git's children, a config file of its own,
// another repository's: GIT_DIR, as --git-dir, and GIT_COMMON_DIR, whose
// config, refs and objects git takes), or connects through a
// program of the command's (GIT_SSH_COMMAND, GIT_SSH, GIT_PROXY_COMMAND:
// where the push lands is that program's to choose).
// The exec gate watches them (ExecEnvNames): the sandbox's own
// GIT_CONFIG_GLOBAL, and what the host's [sandbox] env passes, are pins,
// seen only when changed (GitEnvNames).
const gitConfigEnv = "GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_DIR GIT_COMMON_DIR GIT_SSH_COMMAND GIT_SSH GIT_PROXY_COMMAND"

// GitEnvNames are the variables a push with one of them set by the
// command is critical for (gitConfigEnv).
func GitEnvNames() []string {
	return strings.Fields(gitConfigEnv)
}

// gitConfigInEnv reports whether the analysis knows one of gitConfigEnv
// set (by the line, or in the environment of the program the gate
// decides), to anything but the empty string, or removed (unset, env -u,
// env -i; a pin the program lacks at exec): without the sandbox's
// GIT_CONFIG_GLOBAL git reads ~/.gitconfig, which is the command's to
// write (review rev20e H3).
func (a *analyzer) gitConfigInEnv() bool {
	if a.allEnvUnset || slices.ContainsFunc(a.unsets, func(u string) bool { return slices.Contains(GitEnvNames(), u) }) {
		return true
	}
	for _, n := range strings.Fields(gitConfigEnv) {
		for _, v := range a.env[n] {
			if v != "" {
				return true
			}
		}
	}
	return false
}
