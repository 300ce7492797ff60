package cmdline

import (
	"path"
	"strings"

	"github.com/onellm/onellm-mcp/grants"
)

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

// shellCmd handles sh, bash and friends: -c 'script' is parsed (when the
// shell's syntax is bash-like and the script literal); no script file means
// the program comes from stdin; a script operand that is a pipe or a
// descriptor (/dev/stdin, /dev/fd/N, <(...)) is read at run time. A login
// or interactive shell runs its start-up files from $HOME.
func (k *call) shellCmd(parsable bool) {
	args := k.args
	var o shellOpts
	i := 0
	for ; i < len(args) && !o.done; i++ {
		if !args[i].lit {
			break
		}
		i = o.parse(args, i)
	}
	if o.done {
		i-- // parse moved past the word that ended the options
	}
	if o.home {
		k.readsHome = true
	}
	rest := args[min(i, len(args)):]
	switch {
	case o.c:
		if len(rest) == 0 {
			// bash -c with its script given at run time (xargs bash -c).
			k.dynamic = true
			k.raise(grants.RiskHigh, k.name+" -c without a script")
			return
		}
		if rest[0].lit && parsable {
			k.scripts = append(k.scripts, script{text: rest[0].text})
			return
		}
		k.dynamic = true
		k.raise(grants.RiskHigh, k.name+" -c")
	case o.info:
	case o.s || len(rest) == 0:
		k.stdinShell(k.name)
	default:
		k.scriptOperand(rest[0])
	}
}

// shellOpts is what a shell's options say.
type shellOpts struct {
	c, s, info bool
	home       bool // login or interactive: start-up files from $HOME
	done       bool // the options ended (at -, -- or the first operand)
}

// parse reads the option at args[i] and returns the index of its last word.
func (o *shellOpts) parse(args []arg, i int) int {
	t := args[i].text
	switch {
	case t == "--" || t == "-":
		o.done = true
		return i + 1
	case strings.HasPrefix(t, "--"):
		switch t {
		case "--version", "--help":
			o.info = true
		case "--login", "--interactive":
			o.home = true
		case "--rcfile", "--init-file":
			return i + 1
		}
	case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'c':
				o.c = true
			case 's':
				o.s = true
			case 'l', 'i':
				o.home = o.home || t[0] == '-'
			case 'o', 'O':
				i++
			}
		}
	default:
		o.done = true
	}
	return i
}

// scriptOperand checks the script operand of a shell or interpreter: one
// read from stdin, a descriptor or a process substitution is only known
// when it runs.
func (k *call) scriptOperand(op arg) {
	t := op.text
	if op.lit && strings.HasPrefix(t, "/") {
		t = path.Clean(t) // //dev/fd/3 and /dev/fd/../fd/3 are /dev/fd/3 (rev20g F6)
	}
	if op.lit && k.scriptFile == "" && t != "" && !strings.HasPrefix(t, "/dev/") && !strings.HasPrefix(t, "/proc/") {
		k.scriptFile = t
	}
	switch {
	case op.lit && has("/dev/stdin /dev/fd/0 /proc/self/fd/0 /dev/tty", t):
		k.stdinShell(k.norm)
	case op.lit && (strings.HasPrefix(t, "/dev/fd/") || strings.HasPrefix(t, "/proc/")):
		k.dynamic = true
		k.raise(grants.RiskHigh, k.norm+" "+t)
	case !op.lit && (strings.HasPrefix(strings.TrimLeft(t, "\""), "/proc/") || strings.HasPrefix(strings.TrimLeft(t, "\""), "/dev/")):
		// /proc/$$/fd/3: a descriptor, known only when run (rev20f H3)
		k.dynamic = true
		k.raise(grants.RiskHigh, k.norm+" "+t)
	case !op.lit && (strings.HasPrefix(t, "<(") || strings.HasPrefix(t, "\"<(")):
		k.dynamic = true
		k.raise(grants.RiskHigh, k.norm+" <(...)")
		if op.net {
			k.raise(grants.RiskCritical, "curl | "+k.norm)
		}
	}
}

// entryPoint: a script that is an installer's own entry point run by its
// interpreter (node /usr/bin/npm i x, node npm-cli.js, node
// .yarn/releases/yarn-4.1.0.cjs add x, python3 /usr/bin/pip3 install x)
// runs that installer with the words after it: it is analysed as that
// program too, so its installs are decided and a rule on the installer
// holds.
func (k *call) entryPoint(script arg, rest []arg) {
	if !script.lit {
		return
	}
	name := baseName(script.text)
	for _, ext := range []string{".js", ".cjs", ".mjs", ".py"} {
		name = strings.TrimSuffix(name, ext)
	}
	name = strings.TrimSuffix(name, "-cli")
	if fam := familyName(name); installers[fam] == nil && execRunners[fam] == "" {
		return
	}
	k.runs = append(k.runs, run{argv: append([]arg{{text: name, lit: true}}, rest...), c: k.c})
}

// interp handles interpreters: inline code is high, no program means stdin.
func (k *call) interp(sp *interpSpec) {
	args := k.args
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			k.scriptOperand(w)
			return // a script path
		}
		t := w.text
		name, _, hasVal := strings.Cut(t, "=")
		switch {
		case t == "-":
			k.stdinShell(k.norm)
			return
		case t == "--":
			if i+1 < len(args) {
				k.scriptOperand(args[i+1])
				k.entryPoint(args[i+1], args[i+2:])
			}
			return
		case len(t) < 2 || t[0] != '-':
			k.scriptOperand(w)
			k.entryPoint(w, args[i+1:])
			return // the script
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

// make runs its recipes through the shell: a makefile read from stdin or
// a descriptor (-f -, -f /dev/stdin) is only known when it runs, --eval
// adds makefile text.
func (k *call) make() {
	args := k.args
	for i := 0; i < len(args); i++ {
		t := args[i].text
		name, val, hasVal := strings.Cut(t, "=")
		var file arg
		switch {
		case !args[i].lit:
			continue
		case name == "--eval" || longIs(name, "--eval"):
			k.raise(high, "make --eval")
			continue
		case t == "-f" || name == "--file" || name == "--makefile":
			if hasVal {
				file = arg{text: val, lit: true}
			} else if i+1 < len(args) {
				i++
				file = args[i]
			}
		case strings.HasPrefix(t, "-f") && len(t) > 2:
			file = arg{text: t[2:], lit: true}
		default:
			continue
		}
		if file.lit && file.text == "-" {
			k.stdinShell("make -f")
			continue
		}
		k.scriptOperand(file)
	}
}
