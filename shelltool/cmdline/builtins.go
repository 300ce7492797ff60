package cmdline

import "strings"

// Builtins that run code given as text or change what a later name runs.

func (k *call) eval() {
	k.dynamic = true
	k.raise(high, "eval")
	if len(k.args) > 0 && allLit(k.args) {
		k.scripts = append(k.scripts, script{text: strings.Join(texts(k.args), " ")})
	}
}

func (k *call) source() {
	k.dynamic = true
	k.raise(high, "source")
	if len(k.args) > 0 && (k.args[0].net || k.c.fromNet && k.args[0].lit && has("/dev/stdin /dev/fd/0", k.args[0].text)) {
		k.raise(critical, "curl | source")
	}
}

// trap: a literal action is parsed as a script.
func (k *call) trap() {
	args := k.args
	ops := operands(args, "")
	if len(ops) > 0 && !has("-l -p", args[0].text) {
		if !ops[0].lit {
			k.dynamic = true
			k.raise(high, "trap dynamic action")
		} else if ops[0].text != "-" && ops[0].text != "" && !isDigits(ops[0].text) {
			k.scripts = append(k.scripts, script{text: ops[0].text})
		}
	}
}

// alias: with expand_aliases a later name runs the alias's value.
func (k *call) alias() {
	if len(k.args) > 0 {
		k.raise(high, "alias")
	}
	for _, a := range k.args {
		if !a.lit {
			k.dynamic = true
		} else if _, v, ok := strings.Cut(a.text, "="); ok && !strings.HasPrefix(a.text, "-") {
			k.dynamic = true
			k.scripts = append(k.scripts, script{text: v})
		}
	}
}

func (k *call) enable() { k.dynIf(k.args, 'f', "enable -f", false) } // loads code

func (k *call) hash() { k.dynIf(k.args, 'p', "hash -p", false) } // a later name runs another program

// mapfile, readarray and compgen -C run a callback; mapfile and
// readarray set an array from input.
func (k *call) mapfile() {
	k.dynIf(k.args, 'C', k.name+" -C", true)
	if k.name == "compgen" {
		return
	}
	ops := operands(k.args, "-d -n -O -s -u -C -c")
	if len(ops) == 0 {
		k.sets(arg{text: "MAPFILE", lit: true})
		return
	}
	k.sets(ops[len(ops)-1])
}

// read sets its operands (or the array of -a) from input.
func (k *call) read() {
	args := k.args
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if args[i].lit && t == "--" {
			for _, a := range args[i+1:] {
				k.sets(a)
			}
			return
		}
		if !args[i].lit || len(t) < 2 || t[0] != '-' {
			k.sets(args[i])
			continue
		}
		// -a NAME, and the options with an argument: -d -i -n -N -p -t -u
		if j := strings.IndexAny(t, "adinNptu"); j > 0 {
			v := arg{text: t[j+1:], lit: true}
			if v.text == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			if t[j] == 'a' {
				k.sets(v)
			}
		}
	}
}

// printf -v NAME sets NAME.
func (k *call) printf() {
	for i, a := range k.args {
		switch {
		case a.lit && a.text == "-v" && i+1 < len(k.args):
			k.sets(k.args[i+1])
			return
		case a.lit && strings.HasPrefix(a.text, "-v"):
			k.sets(arg{text: a.text[2:], lit: true})
			return
		case a.lit && a.text == "--", !a.lit || !strings.HasPrefix(a.text, "-"):
			return
		}
	}
}

// getopts OPTSTRING NAME sets NAME.
func (k *call) getopts() {
	if len(k.args) >= 2 {
		k.sets(k.args[1])
	}
}

// unset of a variable that changes what runs: without PATH bash runs
// commands from the current directory. The variables it names leave the
// environment (k.unsets; unset -f names functions).
func (k *call) unset() {
	for _, a := range k.args {
		if a.lit && a.text == "-f" {
			break
		}
		if a.lit && !strings.HasPrefix(a.text, "-") {
			k.unsets = append(k.unsets, varName(a.text))
		}
		if !a.lit {
			k.allEnvUnset = true // it may name any variable
			k.raise(high, "unset dynamic name")
		} else if opt := riskyEnv(varName(a.text)); opt != "" && !strings.HasPrefix(a.text, "-") {
			k.raise(high, "unset "+a.text)
		}
	}
}

// sets records that the command sets the variable named by a from input:
// a name known only at run time, or one of riskyEnv, changes what later
// commands run (read PATH, printf -v 'BASH_CMDS[ls]' /bin/rm).
func (k *call) sets(a arg) {
	if !a.lit {
		k.dynamic = true
		k.raise(high, k.name+" sets a variable named at run time")
		return
	}
	name := varName(a.text)
	if opt := riskyEnv(name); opt != "" || has(homeEnvNames, name) {
		k.dynamic = true
		k.raise(high, k.name+" "+name)
	}
	k.reads = append(k.reads, name)
}

// varName is the variable of "name" or "name[subscript]".
func varName(t string) string {
	if i := strings.IndexByte(t, '['); i >= 0 {
		return t[:i]
	}
	return t
}

func (k *call) complete() { k.flagIf(k.args, "-C", k.name+" -C") }

func (k *call) fc() {
	if !anyShort(k.args, "l") {
		k.raise(high, "fc")
	}
}
