package cmdline

import (
	"slices"
	"strings"
)

// wrapParse is the state of parsing one wrapper's options.
type wrapParse struct {
	k                  *call
	sp                 *wrapperSpec
	args               []arg
	i                  int // index of the word being parsed
	noRun, shell, join bool
	dyn, hadScript     bool
	dynArg             arg
	assigned           bool   // env: a NAME=value word was seen, options are over
	repl               string // xargs -I: the string replaced by input in the command
}

// wrap parses a wrapper's options and records the command it runs.
func (k *call) wrap(sp *wrapperSpec) {
	p := &wrapParse{k: k, sp: sp, args: k.args, join: sp.shellJoin}
	k.allEnvUnset = sp.resetsEnv
	p.options()
	args, i := p.args, min(p.i, len(p.args)) // an option's missing value
	for n := 0; n < sp.positional && i < len(args); n++ {
		if !args[i].lit {
			break
		}
		i++
	}
	if sp.optsAfter {
		// setarch ARCH [options] command
		p.i = i
		p.options()
		i = min(p.i, len(args))
	}
	// flock FILE -c 'cmd'
	if i < len(args) && args[i].lit && has(sp.strOpts, args[i].text) {
		if i+1 < len(args) {
			p.addScript(args[i+1], args[i].text)
		}
		i = len(args)
	}
	p.runRest(args[i:])
}

// runRest records what the wrapper runs once its options are parsed.
func (p *wrapParse) runRest(rest []arg) {
	k, sp := p.k, p.sp
	switch {
	case p.noRun:
		k.raise(sp.idle, k.name)
		return
	case p.dyn:
		k.raise(sp.risk, k.name)
		d := p.dynArg
		d.lit = false // split into words at run time: unknown
		argv := append([]arg{d}, rest...)
		k.runs = append(k.runs, run{argv: argv, floor: riskNote{high, k.name}})
		return
	case len(rest) == 0:
		k.raise(sp.idle, k.name)
		if !p.hadScript && (p.shell || sp.shellIfNoCmd) {
			k.stdinShell(k.name)
		}
		return
	}
	k.raise(sp.risk, k.name)
	if p.join {
		// watch runs its words joined by spaces through sh -c.
		if allLit(rest) {
			k.scripts = append(k.scripts, script{text: strings.Join(texts(rest), " ")})
			return
		}
		k.raise(high, k.name+" dynamic command")
	}
	c := k.c
	if sp.dropStdin {
		c = ctx{}
	}
	switch {
	case p.repl != "":
		// xargs -I{}: words holding the replacement string are input, any
		// text at run time; one that starts with it is as an expansion at a
		// word's start (xargs -I{} rm -rf {} is as critical as rm -rf "$x",
		// review rev16c; build/{} as high as build/$x).
		rest = slices.Clone(rest)
		for i := range rest {
			if strings.Contains(rest[i].text, p.repl) {
				rest[i].lit, rest[i].bare = false, strings.HasPrefix(rest[i].text, p.repl)
			}
		}
	case sp.appendsInput:
		// xargs: the words it reads follow the command's own, any number
		// of them and any option (npm i x --registry=URL): one word known
		// only at run time, which may expand to several.
		rest = append(slices.Clip(rest), arg{text: "{xargs input}", bare: true})
	}
	k.runs = append(k.runs, run{argv: rest, c: c, floor: sp.runFloor})
}

// value returns an option's argument: the rest of the word or the next word.
func (p *wrapParse) value(rest string) arg {
	if rest != "" {
		return arg{text: rest, lit: true}
	}
	if p.i+1 < len(p.args) {
		p.i++
		return p.args[p.i]
	}
	return arg{lit: true}
}

// addScript records an option's shell command line (flock -c).
func (p *wrapParse) addScript(v arg, opt string) {
	p.hadScript = true
	if v.lit {
		p.k.scripts = append(p.k.scripts, script{text: v.text})
	} else {
		p.k.raise(high, p.k.name+" "+opt)
		p.k.runs = append(p.k.runs, run{argv: []arg{v}})
	}
}

// options parses the wrapper's options up to its command; p.i is then the
// index of the first word after them.
func (p *wrapParse) options() {
	sp := p.sp
	for ; p.i < len(p.args); p.i++ {
		w := p.args[p.i]
		if !w.lit {
			return
		}
		t := w.text
		switch {
		case t == "--":
			p.i++
			return
		case sp.assigns && t == "-" && !p.assigned: // env -: env -i
			p.k.allEnvUnset = true
			continue
		case sp.assigns && t != "" && t[0] != '-' && strings.Contains(t, "="):
			// GNU env takes every such word as an assignment, whatever
			// the name ("./x=1", "BASH_FUNC_f%%=() { ...; }").
			p.assigned = true
			name := t[:strings.IndexByte(t, '=')]
			p.k.envSet = append(p.k.envSet, t)
			if opt := riskyEnv(name); opt != "" {
				p.k.raise(high, opt)
			}
			continue
		case len(t) < 2 || t[0] != '-' || p.assigned:
			return
		case strings.HasPrefix(t, "--"):
			p.long(t)
		default:
			p.short(t)
		}
	}
}

// long handles one --option[=value].
func (p *wrapParse) long(t string) {
	sp, k := p.sp, p.k
	name, val, hasVal := strings.Cut(t, "=")
	switch {
	case has(sp.replace, name):
		p.repl = "{}"
		if hasVal {
			p.repl = val
		}
	case has(sp.noRun, name):
		p.noRun = true
	case has(sp.shellOpts, name):
		p.shell = true
	case has(sp.strOpts, name):
		if hasVal {
			p.addScript(arg{text: val, lit: true}, name)
		} else {
			p.addScript(p.value(""), name)
		}
	case has(sp.dynOpts, name):
		p.dyn = true
		k.raise(high, k.name+" "+name)
		if hasVal {
			p.dynArg = arg{text: val}
		} else {
			p.dynArg = p.value("")
		}
	case has(sp.joinOff, name):
		p.join = false
	case has(sp.argOpts, name):
		v := arg{text: val, lit: true}
		if !hasVal {
			v = p.value("")
		}
		p.unset(name, v)
	case has(sp.argOpts2, name):
		p.i += 2
	case has(sp.flags, name) || has(sp.optArgs, name) || sp.eqLong && hasVal:
		k.allEnvUnset = k.allEnvUnset || has(sp.clearOpts, name)
	default:
		k.raise(high, k.name+" "+name)
	}
}

// unset records the variable an unsetOpts option removes (env -u NAME);
// a name known only when run (env -u "$V") may be any variable, so it
// counts as removing them all.
func (p *wrapParse) unset(opt string, v arg) {
	switch {
	case !has(p.sp.unsetOpts, opt):
	case !v.lit:
		p.k.allEnvUnset = true
	default:
		p.k.unsets = append(p.k.unsets, v.text)
	}
}

// short handles a cluster of short options.
func (p *wrapParse) short(t string) {
	sp, k := p.sp, p.k
	for j := 1; j < len(t); j++ {
		o, rest := "-"+t[j:j+1], t[j+1:]
		if sp.numFlags && t[j] >= '0' && t[j] <= '9' {
			return
		}
		switch {
		case has(sp.replace, o):
			p.repl = "{}"
			if v := rest; o == "-I" || v != "" {
				p.repl = p.value(v).text
			}
			return
		case has(sp.noRun, o):
			p.noRun = true
		case has(sp.shellOpts, o):
			p.shell = true
		case has(sp.strOpts, o):
			p.addScript(p.value(rest), o)
			return
		case has(sp.dynOpts, o):
			p.dyn = true
			k.raise(high, k.name+" "+o)
			p.dynArg = p.value(rest)
			return
		case has(sp.joinOff, o):
			p.join = false
		case has(sp.argOpts, o):
			p.unset(o, p.value(rest))
			return
		case has(sp.optArgs, o):
			return
		case has(sp.flags, o):
			k.allEnvUnset = k.allEnvUnset || has(sp.clearOpts, o)
		default:
			k.raise(high, k.name+" "+o)
		}
	}
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

func (k *call) su() {
	k.raise(high, "su")
	k.allEnvUnset = true // su makes the environment of the user it runs as
	args := k.args
	for i := 0; i < len(args); i++ {
		t := args[i].text
		name, val, hasVal := strings.Cut(t, "=")
		if args[i].lit && has("-c --command --session-command", name) {
			k.scriptOption(args, i, val, hasVal, "su -c")
			return
		}
		if args[i].lit && has("-s --shell -g --group -G --supp-group -w --whitelist-environment", t) {
			i++
		}
	}
	k.stdinShell("su")
}

// scriptOption records the shell command line given to the option at
// args[i] (its "=value", or the next word): parsed when literal, else the
// command is dynamic.
func (k *call) scriptOption(args []arg, i int, val string, hasVal bool, what string) {
	v := arg{text: val, lit: true}
	if !hasVal {
		if i+1 >= len(args) {
			return
		}
		v = args[i+1]
	}
	if v.lit {
		k.scripts = append(k.scripts, script{text: v.text})
	} else {
		k.dynamic = true
		k.raise(high, what)
	}
}

func (k *call) gdb() {
	k.raise(high, "gdb")
	for i, a := range k.args {
		if a.lit && a.text == "--args" && i+1 < len(k.args) {
			k.runs = append(k.runs, run{argv: k.args[i+1:]})
			break
		}
	}
}

// capsh runs bash with the words after "--" (capsh -- -c 'cmd'); "=="
// runs capsh again; --shell= names another shell.
func (k *call) capsh() {
	k.raise(high, "capsh")
	for i, a := range k.args {
		switch {
		case a.lit && strings.HasPrefix(a.text, "--shell="):
			k.dynamic = true
			return
		case a.lit && a.text == "--":
			k.runs = append(k.runs, run{argv: append([]arg{{text: "bash", lit: true}}, k.args[i+1:]...), c: k.c})
			return
		case a.lit && a.text == "==":
			k.runs = append(k.runs, run{argv: append([]arg{{text: "capsh", lit: true}}, k.args[i+1:]...), c: k.c})
			return
		}
	}
}

// script runs its -c command through the shell, else an interactive
// shell reading stdin; its operand is the typescript file it writes.
func (k *call) script() {
	args := k.args
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i].text, "=")
		switch {
		case args[i].lit && (name == "-c" || name == "--command"):
			k.scriptOption(args, i, val, hasVal, "script -c")
			return
		case args[i].lit && has("-V --version -h --help", name):
			return
		case args[i].lit && has("-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m --logging-format -o --output-limit", name) && !hasVal:
			i++
		}
	}
	k.stdinShell("script")
}

// pee (moreutils) runs each argument as a shell command line.
func (k *call) pee() {
	for _, a := range k.args {
		switch {
		case !a.lit:
			k.dynamic = true
			k.raise(high, "pee dynamic command")
		case !strings.HasPrefix(a.text, "--"):
			k.scripts = append(k.scripts, script{text: a.text})
		}
	}
}
