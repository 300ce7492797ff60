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

// stdinShell records that the program reads its script from stdin: it is
// dynamic, critical when the pipe comes from the network, and a literal
// here-document is parsed.
func (k *call) stdinShell(what string) {
	k.dynamic = true
	k.raise(grants.RiskHigh, what+" stdin")
	if k.risk == grants.RiskHigh {
		k.option = what + " stdin"
	}
	if k.c.fromNet {
		k.raise(grants.RiskCritical, "curl | "+what)
	}
	if k.c.hasScript && isShell(k.norm) {
		k.scripts = append(k.scripts, script{text: k.c.script})
	}
}

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
	k.norm = trimVersion(k.name)
	k.net = isNetwork(k.name, k.args)
	if slices.Contains(a.funcs, name.text) {
		if c.pipeline || c.bg {
			k.raise(grants.RiskCritical, "fork bomb")
		} else {
			k.raise(grants.RiskHigh, "recursive function")
		}
	}
	classify(k)
	cmd.Risk, cmd.Option, cmd.Network = k.risk, k.option, k.net
	if k.dynamic {
		cmd.Name = Dynamic
	}
	idx := a.emit(cmd, parent)
	for _, s := range k.scripts {
		a.nested(s.text, idx, s.c)
	}
	for _, r := range k.runs {
		a.simple(r.argv, r.c, idx, r.floor)
	}
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
	if s == "" {
		return false
	}
	for list != "" {
		var tok string
		tok, list, _ = strings.Cut(list, " ")
		if tok == s {
			return true
		}
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

// wrap parses a wrapper's options and records the command it runs.
func (k *call) wrap(sp *wrapperSpec) {
	args := k.args
	i := 0
	noRun, shell, join, dyn := false, false, sp.shellJoin, false
	var dynArg arg
	hadScript := false
	// value returns an option's argument: the rest of the word or the next word.
	value := func(rest string) arg {
		if rest != "" {
			return arg{text: rest, lit: true}
		}
		if i+1 < len(args) {
			i++
			return args[i]
		}
		return arg{lit: true}
	}
	addScript := func(v arg, opt string) {
		hadScript = true
		if v.lit {
			k.scripts = append(k.scripts, script{text: v.text})
		} else {
			k.raise(grants.RiskHigh, k.name+" "+opt)
			k.runs = append(k.runs, run{argv: []arg{v}})
		}
	}
options:
	for ; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			break
		}
		t := w.text
		switch {
		case t == "--":
			i++
			break options
		case sp.assigns && t == "-":
			continue
		case sp.assigns && isAssignWord(t):
			if opt := riskyEnv(t[:strings.IndexByte(t, '=')]); opt != "" {
				k.raise(grants.RiskHigh, opt)
			}
			continue
		case len(t) < 2 || t[0] != '-':
			break options
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t, "=")
			switch {
			case has(sp.noRun, name):
				noRun = true
			case has(sp.shellOpts, name):
				shell = true
			case has(sp.strOpts, name):
				if hasVal {
					addScript(arg{text: val, lit: true}, name)
				} else {
					addScript(value(""), name)
				}
			case has(sp.dynOpts, name):
				dyn = true
				k.raise(grants.RiskHigh, k.name+" "+name)
				if hasVal {
					dynArg = arg{text: val}
				} else {
					dynArg = value("")
				}
			case has(sp.joinOff, name):
				join = false
			case has(sp.argOpts, name):
				if !hasVal {
					i++
				}
			case has(sp.flags, name) || has(sp.optArgs, name):
			default:
				k.raise(grants.RiskHigh, k.name+" "+name)
			}
		default:
			for j := 1; j < len(t); j++ {
				o, rest := "-"+t[j:j+1], t[j+1:]
				if sp.numFlags && t[j] >= '0' && t[j] <= '9' {
					break
				}
				switch {
				case has(sp.noRun, o):
					noRun = true
				case has(sp.shellOpts, o):
					shell = true
				case has(sp.strOpts, o):
					addScript(value(rest), o)
					j = len(t)
				case has(sp.dynOpts, o):
					dyn = true
					k.raise(grants.RiskHigh, k.name+" "+o)
					dynArg = value(rest)
					j = len(t)
				case has(sp.joinOff, o):
					join = false
				case has(sp.argOpts, o):
					value(rest)
					j = len(t)
				case has(sp.optArgs, o):
					j = len(t)
				case has(sp.flags, o):
				default:
					k.raise(grants.RiskHigh, k.name+" "+o)
				}
			}
		}
	}
	for n := 0; n < sp.positional && i < len(args); n++ {
		if !args[i].lit {
			break
		}
		i++
	}
	// flock FILE -c 'cmd'
	if i < len(args) && args[i].lit && has(sp.strOpts, args[i].text) {
		if i+1 < len(args) {
			addScript(args[i+1], args[i].text)
		}
		i = len(args)
	}
	rest := args[i:]
	switch {
	case noRun:
		k.raise(sp.idle, k.name)
		return
	case dyn:
		k.raise(sp.risk, k.name)
		dynArg.lit = false // split into words at run time: unknown
		argv := append([]arg{dynArg}, rest...)
		k.runs = append(k.runs, run{argv: argv, floor: riskNote{grants.RiskHigh, k.name}})
		return
	case len(rest) == 0:
		k.raise(sp.idle, k.name)
		if !hadScript && (shell || sp.shellIfNoCmd) {
			k.stdinShell(k.name)
		}
		return
	}
	k.raise(sp.risk, k.name)
	if join {
		// watch runs its words joined by spaces through sh -c.
		if allLit(rest) {
			k.scripts = append(k.scripts, script{text: strings.Join(texts(rest), " ")})
			return
		}
		k.raise(grants.RiskHigh, k.name+" dynamic command")
	}
	c := k.c
	if sp.dropStdin {
		c = ctx{}
	}
	k.runs = append(k.runs, run{argv: rest, c: c, floor: sp.runFloor})
}

func isAssignWord(t string) bool {
	eq := strings.IndexByte(t, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := t[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// shellCmd handles sh, bash and friends: -c 'script' is parsed (when the
// shell's syntax is bash-like and the script literal); no script file means
// the program comes from stdin.
func (k *call) shellCmd(parsable bool) {
	args := k.args
	sawC, sawS, info := false, false, false
	i := 0
loop:
	for ; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			break
		}
		t := w.text
		switch {
		case t == "--" || t == "-":
			i++
			break loop
		case strings.HasPrefix(t, "--"):
			if t == "--version" || t == "--help" {
				info = true
			}
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'c':
					sawC = true
				case 's':
					sawS = true
				case 'o', 'O':
					i++
				}
			}
		default:
			break loop
		}
	}
	rest := args[min(i, len(args)):]
	switch {
	case sawC:
		if len(rest) == 0 {
			return
		}
		if rest[0].lit && parsable {
			k.scripts = append(k.scripts, script{text: rest[0].text})
			return
		}
		k.dynamic = true
		k.raise(grants.RiskHigh, k.name+" -c")
	case info:
	case sawS || len(rest) == 0:
		k.stdinShell(k.name)
	}
}

// interp handles interpreters: inline code is high, no program means stdin.
func (k *call) interp(sp *interpSpec) {
	args := k.args
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			return // a script path
		}
		t := w.text
		name, _, hasVal := strings.Cut(t, "=")
		switch {
		case t == "-":
			k.stdinShell(k.norm)
			return
		case t == "--" || len(t) < 2 || t[0] != '-':
			return // the script (or after --, the script)
		case has(sp.info, t):
			return
		case has(sp.inlineLong, name):
			k.raise(grants.RiskHigh, k.norm+" "+name)
			return
		case has(sp.argLong, name):
			if !hasVal {
				i++
			}
			continue
		case strings.HasPrefix(t, "--"):
			continue
		}
		for j := 1; j < len(t); j++ {
			ch := t[j : j+1]
			switch {
			case strings.Contains(sp.inline, ch):
				k.raise(grants.RiskHigh, k.norm+" -"+ch)
				return
			case strings.Contains(sp.module, ch):
				return
			case strings.Contains(sp.argLetters, ch):
				if j+1 == len(t) {
					i++
				}
				j = len(t)
			case strings.Contains(sp.attach, ch):
				j = len(t)
			}
		}
	}
	k.stdinShell(k.norm)
}
