package cmdline

import (
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
