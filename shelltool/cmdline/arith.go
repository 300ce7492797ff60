package cmdline

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/onellm/onellm-mcp/grants"
)

// Arithmetic on text seen only at run time.
//
// bash evaluates as arithmetic (( )), $(( )), let, for (( )), the operands
// of [[ -eq ]] and its relatives, array subscripts, ${x:offset:length}, the
// arguments of printf's numeric formats, and — recursively — the value of
// every variable such an expression names. A subscript in that text
// (a[$(cmd)]) is expanded there, so its command substitutions run. Text the
// analyzer cannot see at that point is:
//   - quoted text ('a[$(id)]' in let or [[ -eq ]], '$(id)' in (( ))): a
//     command substitution in it makes it Dynamic; the names in it are
//     references;
//   - command output ($(( $(cat f) ))): Dynamic, unless the command is
//     known to print only numbers (numericOutput);
//   - the value of a variable the line sets from an expansion or from
//     input (x=$(cmd), read x, printf -v x, for x in $(...)): such a
//     variable is tainted, and an arithmetic reference to it is Dynamic
//     (decided after the walk, since a loop may assign after the use);
//   - ${!x}: the value of x names the variable, subscript included:
//     always Dynamic.
// A variable the line does not set comes from the environment the server
// gives the command and is not tainted.

// arithRef is a variable an arithmetic evaluation reads.
type arithRef struct {
	name   string
	text   string // what is shown as the Dynamic command's word
	parent int
}

// arith walks an arithmetic expression (or a word bash evaluates as one).
func (a *analyzer) arith(node syntax.Node) {
	if node == nil || a.err != nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			if !numericOutput(x.Stmts) {
				a.emit(Command{Name: Dynamic, Words: []string{a.print(x)}, Risk: grants.RiskHigh, Option: "arithmetic on command output"}, a.parent)
			}
			return false // its commands are walked by substs
		case *syntax.ProcSubst:
			return false
		case *syntax.SglQuoted:
			v := x.Value
			if x.Dollar {
				v = ansiC(v)
			}
			a.quotedArith(v)
		case *syntax.DblQuoted:
			var sb strings.Builder
			for _, p := range x.Parts {
				if l, ok := p.(*syntax.Lit); ok {
					sb.WriteString(unescapeDouble(l.Value, false))
				}
			}
			a.quotedArith(sb.String())
		case *syntax.ParamExp:
			a.paramRef(x)
			if x.Index != nil {
				a.arith(x.Index)
			}
			if x.Exp != nil && x.Exp.Word != nil {
				a.arith(x.Exp.Word)
			}
			return false
		case *syntax.Lit:
			if isName(x.Value) {
				a.refs = append(a.refs, arithRef{name: x.Value, text: x.Value, parent: a.parent})
			}
		}
		return true
	})
}

// quotedArith checks quoted text in arithmetic: (( )), $(( )) and an
// indexed array's subscript expand it (so '$(cmd)' runs there); let and
// [[ -eq ]] evaluate it, expanding its subscripts. Either way a command
// substitution in it may run.
func (a *analyzer) quotedArith(t string) {
	if strings.Contains(t, "$(") || strings.Contains(t, "`") {
		a.emit(Command{Name: Dynamic, Words: []string{t}, Risk: grants.RiskHigh, Option: "arithmetic on quoted text"}, a.parent)
		return
	}
	for _, n := range names(t) {
		a.refs = append(a.refs, arithRef{name: n, text: t, parent: a.parent})
	}
}

// paramRef records the variable of $x or ${x...} read in arithmetic.
func (a *analyzer) paramRef(x *syntax.ParamExp) {
	if x.Param == nil || x.Length {
		return // ${#x} is a number
	}
	a.refs = append(a.refs, arithRef{name: x.Param.Value, text: a.print(x), parent: a.parent})
}

// testArith walks the operands of the arithmetic comparisons of a [[ ]]
// expression.
func (a *analyzer) testArith(node syntax.Node) {
	syntax.Walk(node, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryTest); ok {
			switch b.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				a.arith(b.X)
				a.arith(b.Y)
				return false
			}
		}
		return true
	})
}

// printfArith walks printf's arguments after the format when the format
// may hold a numeric conversion (bash evaluates those arguments as
// arithmetic).
func (a *analyzer) printfArith(words []*syntax.Word) {
	i := 1
	for i < len(words) {
		t := words[i].Lit()
		if t == "-v" {
			i += 2
			continue
		}
		if t == "--" {
			i++
		}
		break
	}
	if i >= len(words) {
		return
	}
	if f := a.word(words[i], false); f.lit && !numericFormat(f.text) {
		return
	}
	for _, w := range words[i+1:] {
		a.arith(w)
	}
}

// numericFormat reports a printf format with a conversion whose argument
// is evaluated as a number.
func numericFormat(f string) bool {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0123456789.*'", f[j]) >= 0 {
			j++
		}
		if j < len(f) && strings.IndexByte("diouxXcaAeEfFgG", f[j]) >= 0 {
			return true
		}
		i = j
	}
	return false
}

// taintedRefs emits a Dynamic command for every arithmetic reference to a
// tainted variable.
func (a *analyzer) taintedRefs() {
	for _, r := range a.refs {
		if a.tainted[r.name] {
			a.emit(Command{Name: Dynamic, Words: []string{r.text}, Risk: grants.RiskHigh, Option: "arithmetic on assembled text"}, r.parent)
		}
	}
}

// taint marks name as holding text the analyzer cannot see.
func (a *analyzer) taint(name string) {
	if a.tainted == nil {
		a.tainted = map[string]bool{}
	}
	a.tainted[name] = true
}

// numericValue reports an assignment value that does not taint: literal
// text (checked by subscriptCode where it is written), arithmetic, and
// parameters that are numbers.
func numericValue(w *syntax.Word) bool {
	if w == nil {
		return true
	}
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted, *syntax.ArithmExp:
		case *syntax.DblQuoted:
			if !numericValue(&syntax.Word{Parts: x.Parts}) {
				return false
			}
		case *syntax.ParamExp:
			if !x.Length && (x.Param == nil || !has("? $ # ! RANDOM LINENO SECONDS BASHPID EPOCHSECONDS PPID UID EUID SRANDOM", x.Param.Value)) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// numericOutput reports a command substitution whose one command prints
// only numbers (nproc, getconf, id -u, wc reading stdin).
func numericOutput(stmts []*syntax.Stmt) bool {
	if len(stmts) != 1 {
		return false
	}
	ce, ok := stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 || len(ce.Assigns) > 0 {
		return false
	}
	var words []string
	for _, w := range ce.Args {
		l := w.Lit()
		if l == "" {
			return false
		}
		words = append(words, l)
	}
	switch words[0] {
	case "nproc", "getconf":
		return true
	case "id":
		return len(words) == 2 && has("-u -g -G -ru -rg", words[1])
	case "wc":
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") {
				return false // a file name is printed too
			}
		}
		return true
	}
	return false
}

// subscriptSubstitutes reports text with a subscript holding a command
// substitution: bash runs it when it evaluates the text as a variable name
// or arithmetically.
func subscriptSubstitutes(t string) bool {
	i := strings.IndexByte(t, '[')
	return i >= 0 && (strings.Contains(t[i:], "$(") || strings.Contains(t[i:], "`"))
}

// names returns the shell variable names in t.
func names(t string) []string {
	var out []string
	for i := 0; i < len(t); {
		c := t[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			j := i + 1
			for j < len(t) && isWordByte(t[j]) && t[j] != '$' {
				j++
			}
			if i == 0 || !(t[i-1] >= '0' && t[i-1] <= '9') {
				out = append(out, t[i:j])
			}
			i = j
			continue
		}
		i++
	}
	return out
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) || s[i] == '$' {
			return false
		}
	}
	return true
}

// print renders a node as written.
func (a *analyzer) print(n syntax.Node) string {
	a.sb.Reset()
	if err := a.printerOnce().Print(&a.sb, n); err != nil {
		return Dynamic
	}
	return a.sb.String()
}
