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
}

// trap: a literal action is parsed as a script.
func (k *call) trap() {
	args := k.args
	ops := operands(args, "")
	if len(ops) > 0 && !has("-l -p", args[0].text) {
		if !ops[0].lit {
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

// mapfile, readarray and compgen -C run a callback.
func (k *call) mapfile() { k.dynIf(k.args, 'C', k.name+" -C", true) }

func (k *call) complete() { k.flagIf(k.args, "-C", k.name+" -C") }

func (k *call) fc() {
	if !anyShort(k.args, "l") {
		k.raise(high, "fc")
	}
}
