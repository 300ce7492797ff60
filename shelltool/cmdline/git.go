package cmdline

import "strings"

// git: options that run programs or read foreign configuration, config
// writes, destructive history and work-tree operations. The subcommands
// are dispatched by gitSubcommands (tables.go).
func (k *call) git() {
	args := k.args
	i := k.gitGlobals()
	for _, a := range args {
		if longIs(a.text, "--ext-diff") {
			k.raise(high, "git --ext-diff")
		}
		if longIs(a.text, "--upload-pack") || longIs(a.text, "--receive-pack") || a.text == "--exec" || strings.HasPrefix(a.text, "--exec=") && i < len(args) && args[i].text != "rebase" {
			k.raise(high, "git "+strings.SplitN(a.text, "=", 2)[0])
		}
	}
	if i >= len(args) || !args[i].lit {
		return
	}
	if analyse, ok := gitSubcommands[args[i].text]; ok {
		analyse(k, args[i].text, args[i+1:])
	}
}

// gitGlobals parses git's options before the subcommand and returns the
// subcommand's index.
func (k *call) gitGlobals() int {
	args := k.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.lit || len(t) < 2 || t[0] != '-' {
			break
		}
		name, _, hasVal := strings.Cut(t, "=")
		switch {
		case t == "-c" || strings.HasPrefix(t, "-c"):
			k.raise(high, "git -c")
			if t == "-c" {
				i++
			}
		case t == "-C":
			i++
		case name == "--config-env":
			k.raise(high, "git --config-env")
			if !hasVal {
				i++
			}
		case name == "--exec-path":
			if hasVal {
				k.raise(high, "git --exec-path")
			}
		case name == "--git-dir":
			k.raise(high, "git --git-dir")
			if !hasVal {
				i++
			}
		case has("--work-tree --namespace --super-prefix --list-cmds --attr-source", name):
			if !hasVal {
				i++
			}
		}
	}
	return i
}

// gitRiskySub raises the risk of a subcommand that is always high.
func gitRiskySub(k *call, sub string, _ []arg) { k.raise(high, "git "+sub) }

func gitSubmodule(k *call, _ string, rest []arg) {
	if hasWord(rest, "foreach") {
		k.raise(high, "git submodule foreach")
	}
}

func gitPush(k *call, _ string, rest []arg) {
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

func gitClean(k *call, _ string, rest []arg) {
	for _, a := range rest {
		if longIs(a.text, "--force") || shortHas(a.text, "f") {
			k.raise(high, "git clean -f")
		}
	}
}

func gitCheckout(k *call, sub string, rest []arg) {
	for _, a := range rest {
		if longIs(a.text, "--force") || a.text == "-f" || longIs(a.text, "--discard-changes") {
			k.raise(high, "git "+sub+" --force")
		}
	}
}

func gitRebase(k *call, _ string, rest []arg) {
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
