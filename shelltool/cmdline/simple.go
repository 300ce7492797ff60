package cmdline

import (
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/grants"
)

// call is the analysis of one simple command, filled in by classify.
type call struct {
	name    string // base name (after the last '/')
	norm    string // base name without a version suffix ("python3.12" → "python")
	args    []arg  // argv[1:]
	c       ctx
	risk    grants.Risk
	option  string
	dynamic bool // the program is unknown: Name becomes Dynamic
	net     bool
	runs    []run    // commands this one runs, with their own argv
	scripts []script // shell scripts this one runs
	// readsHome: it runs what configuration under $HOME says (a login or
	// interactive shell; see homeReaders).
	readsHome bool
	envSet    []string // variables it sets in the environment of what it runs (env NAME=v)
	// unsets are variables it removes from the environment (unset NAME,
	// env -u NAME); allEnvUnset: it drops the whole environment (env -i).
	unsets      []string
	allEnvUnset bool
	reads       []string // variables it sets from input (read NAME, printf -v NAME)
	removes     []string // trees it removes whole (Command.Removes)
	globs       []string // glob operands of that removal (Command.Globs)
	pkgs        []*install
	// gitPush: a git push (gitPush); gitConfig: git's global options set
	// configuration (-c, --config-env, --git-dir: another repository's).
	gitPush, gitConfig bool
	// scriptFile is the file a shell or interpreter runs (Command.Script).
	scriptFile string
}

type run struct {
	argv  []arg
	c     ctx
	floor riskNote
}

type script struct {
	text string
	c    ctx
}

func (k *call) raise(r grants.Risk, opt string) { raise(&k.risk, &k.option, r, opt) }

// simple analyzes the argv of one simple command run by parent.
func (a *analyzer) simple(args []arg, c ctx, parent int, floor riskNote) {
	if a.err != nil || len(args) == 0 || !a.enter() {
		return
	}
	defer a.leave()
	cmd := Command{Words: texts(args), Risk: grants.RiskMedium}
	raise(&cmd.Risk, &cmd.Option, floor.risk, floor.opt)
	name := args[0]
	if !name.lit || name.glob {
		cmd.Name = Dynamic
		raise(&cmd.Risk, &cmd.Option, grants.RiskHigh, "dynamic command name")
		idx := a.emit(cmd, parent)
		if name.bare && len(args) > 1 && !strings.HasPrefix(args[1].text, "-") {
			// $SUDO rm -rf /: the expansion may be empty and the rest the command.
			a.simple(args[1:], c, idx, riskNote{})
		}
		return
	}
	cmd.Name = name.text
	k := &call{name: baseName(name.text), args: args[1:], c: c, risk: cmd.Risk, option: cmd.Option}
	k.norm = familyName(k.name)
	k.net = isNetwork(k.name, k.args)
	if slices.Contains(a.funcs, name.text) {
		if c.pipeline || c.bg {
			k.raise(grants.RiskCritical, "fork bomb")
		} else {
			k.raise(grants.RiskHigh, "recursive function")
		}
	}
	classify(k)
	if k.gitPush && a.gitConfigInEnv() {
		// A push's refspecs may come from that configuration
		// (remote.origin.push=+…, remote.origin.mirror): a force push
		// nothing on its line shows (review rev20d H3).
		k.raise(grants.RiskCritical, "git push with configuration from the environment")
	}
	// noteConfigWrites sets dirMoved for a wrapper that runs its command
	// in another folder (env -C, chroot): that command's folder is then
	// unknown.
	moved := a.dirMoved
	a.dirMoved = false
	a.noteConfigWrites(k)
	chdir := a.dirMoved
	a.dirMoved = a.dirMoved || moved
	cmd.Risk, cmd.Option, cmd.Network, cmd.Removes, cmd.Globs = k.risk, k.option, k.net, k.removes, k.globs
	cmd.Script = k.scriptFile
	if k.dynamic {
		cmd.Name, cmd.Program = Dynamic, name.text
	}
	idx := a.emit(cmd, parent)
	if k.readsHome || has(homeReaders, k.norm) {
		a.homeReaders = append(a.homeReaders, idx)
	}
	for _, n := range k.envSet {
		name, val, _ := strings.Cut(n, "=")
		a.noteAssign(name)
		a.setEnv(name, val)
	}
	a.unsets = append(a.unsets, k.unsets...)
	a.allEnvUnset = a.allEnvUnset || k.allEnvUnset
	for _, in := range k.pkgs {
		in.cmd = idx
		a.installs = append(a.installs, in)
	}
	for _, n := range k.reads {
		a.noteAssign(n)
		a.taint(n)
	}
	restore := a.keepDir()
	if chdir {
		a.dir = Dynamic
	}
	for _, s := range k.scripts {
		a.nested(s.text, idx, s.c)
	}
	for _, r := range k.runs {
		a.simple(r.argv, r.c, idx, r.floor)
	}
	if chdir {
		restore() // the command ran in its own folder, not the shell's
	}
	a.moveDir(k, parent)
}

func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i+1 < len(s) {
		return s[i+1:]
	}
	return s
}

func trimVersion(s string) string {
	t := strings.TrimRight(s, "0123456789.")
	if t == "" || t == s {
		return s
	}
	return strings.TrimSuffix(t, "-")
}

// has reports whether s is one of the space-separated words of list.
func has(list, s string) bool {
	if s == "" || strings.IndexByte(s, ' ') >= 0 {
		return false
	}
	// Find s as a whole word (the search is the fast part: the exec gate
	// asks this tens of times per program).
	for i := 0; i <= len(list)-len(s); {
		j := strings.Index(list[i:], s)
		if j < 0 {
			return false
		}
		j += i
		if end := j + len(s); (j == 0 || list[j-1] == ' ') && (end == len(list) || list[end] == ' ') {
			return true
		}
		i = j + 1
	}
	return false
}

// longIs reports whether t is the long option full or an abbreviation of it
// (GNU getopt and git accept unambiguous prefixes), with or without "=value".
func longIs(t, full string) bool {
	name, _, _ := strings.Cut(t, "=")
	return len(name) > 3 && strings.HasPrefix(name, "--") && strings.HasPrefix(full, name)
}

// shortHas reports whether t is a cluster of short options ("-rf") holding letter.
func shortHas(t string, letters string) bool {
	if len(t) < 2 || t[0] != '-' || t[1] == '-' {
		return false
	}
	return strings.ContainsAny(t[1:], letters)
}

func allLit(args []arg) bool {
	for _, a := range args {
		if !a.lit {
			return false
		}
	}
	return true
}

// operands returns the words that are not options (up to "--" everything
// starting with '-' is an option; argOpts take the next word).
func operands(args []arg, argOpts string) []arg {
	var out []arg
	opts := true
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case opts && args[i].lit && t == "--":
			opts = false
		case opts && args[i].lit && len(t) > 1 && t[0] == '-':
			if has(argOpts, t) {
				i++
			}
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// firstOperand is the first non-option word (the subcommand), "" if none or
// not literal.
func firstOperand(args []arg, argOpts string) (string, int) {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !args[i].lit {
			return "", i
		}
		if len(t) > 1 && t[0] == '-' {
			if has(argOpts, t) {
				i++
			}
			continue
		}
		return t, i
	}
	return "", len(args)
}
