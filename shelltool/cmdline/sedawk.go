package cmdline

import "strings"

// awk: system(), pipes to or from commands, and programs from files.
func (k *call) awk() {
	args := k.args
	var prog []string
	fromFile := false
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if !args[i].lit {
			break
		}
		if t == "--" {
			i++
			break
		}
		if len(t) < 2 || t[0] != '-' {
			break
		}
		var file bool
		i, file = k.awkOption(args, i, &prog)
		fromFile = fromFile || file
	}
	if len(prog) == 0 && !fromFile && i < len(args) {
		prog = append(prog, args[i].text)
	}
	if fromFile {
		k.raise(high, "awk -f")
	}
	for _, p := range prog {
		if opt := awkRisk(p); opt != "" {
			k.raise(high, opt)
		}
	}
}

// awkOption parses the option at args[i], adding the program text it gives
// (-e, --source) to prog; it returns the index of its last word and whether
// it names a program file.
func (k *call) awkOption(args []arg, i int, prog *[]string) (int, bool) {
	t := args[i].text
	name, val, hasVal := strings.Cut(t, "=")
	short := !strings.HasPrefix(t, "--")
	switch {
	case t == "-f" || name == "--file" || t == "-E" || name == "--exec" || t == "-i" || name == "--include":
		if !hasVal {
			i++
		}
		return i, true
	case strings.HasPrefix(t, "-f") && short:
		return i, true
	case t == "-l" || name == "--load" || strings.HasPrefix(t, "-l") && short:
		k.raise(high, "awk -l")
		if t == "-l" {
			i++
		}
	case t == "-e" || name == "--source":
		if hasVal {
			*prog = append(*prog, val)
		} else if i+1 < len(args) {
			i++
			*prog = append(*prog, args[i].text)
		}
	case t == "-F" || t == "-v" || name == "--field-separator" && !hasVal || name == "--assign" && !hasVal:
		i++
	}
	return i, false
}

// awkRisk scans an awk program, outside strings and regex literals, for
// system(), | and |& (pipes to or from commands) and @load.
func awkRisk(p string) string {
	prev := byte(0) // previous significant character
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '"':
			i = skipQuoted(p, i, '"')
			prev = '"'
			continue
		case c == '/' && !(isWordByte(prev) || prev == ')' || prev == ']' || prev == '"'):
			i = skipQuoted(p, i, '/')
			prev = '/'
			continue
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			continue
		case c == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i++
				prev = '|'
				continue
			}
			return "awk |"
		case c == '@' && strings.HasPrefix(p[i:], "@load"):
			return "awk @load"
		case c == 's' && awkSystemCall(p, i, prev):
			return "awk system("
		}
		if c != ' ' && c != '\t' && c != '\n' {
			prev = c
		}
	}
	return ""
}

// skipQuoted returns the index of the unescaped q closing the literal
// that starts at p[i] (len(p) or more when there is none).
func skipQuoted(p string, i int, q byte) int {
	for i++; i < len(p) && p[i] != q; i++ {
		if p[i] == '\\' {
			i++
		}
	}
	return i
}

// awkSystemCall reports a call of system( starting at p[i].
func awkSystemCall(p string, i int, prev byte) bool {
	if !strings.HasPrefix(p[i:], "system") || isWordByte(prev) || i > 0 && isWordByte(p[i-1]) {
		return false
	}
	return strings.HasPrefix(strings.TrimLeft(p[i+len("system"):], " \t"), "(")
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// sedParse is the state of parsing sed's options.
type sedParse struct {
	k       *call
	args    []arg
	i       int
	scripts []string
	sawE    bool // a script was given (-e, -f, --expression, --file or the first operand)
	sandbox bool
}

// sed: -i writes files; e and s///e run commands; w and s///w write files;
// -f reads a script we cannot see.
func (k *call) sed() {
	p := &sedParse{k: k, args: k.args}
	args := p.args
	for ; p.i < len(args); p.i++ {
		a := args[p.i]
		t := a.text
		if !a.lit {
			if !p.sawE {
				k.raise(high, "sed dynamic script")
			}
			continue
		}
		if t == "--" {
			p.i++
			break
		}
		switch {
		case len(t) < 2 || t[0] != '-':
			if !p.sawE {
				p.scripts = append(p.scripts, t)
				p.sawE = true
			}
		case strings.HasPrefix(t, "--"):
			p.long(t)
		default:
			p.short(t)
		}
	}
	if !p.sawE && p.i < len(args) {
		p.scripts = append(p.scripts, args[p.i].text)
	}
	if p.sandbox {
		return
	}
	for _, s := range p.scripts {
		if opt := sedRisk(s); opt != "" {
			k.raise(high, opt)
		}
	}
}

// next returns the word after the current one and moves past it.
func (p *sedParse) next() (string, bool) {
	if p.i+1 < len(p.args) {
		p.i++
		return p.args[p.i].text, true
	}
	return "", false
}

func (p *sedParse) long(t string) {
	name, val, hasVal := strings.Cut(t, "=")
	switch {
	case longIs(name, "--in-place"):
		p.k.raise(high, "sed -i")
	case longIs(name, "--expression"):
		p.sawE = true
		if hasVal {
			p.scripts = append(p.scripts, val)
		} else if s, ok := p.next(); ok {
			p.scripts = append(p.scripts, s)
		}
	case longIs(name, "--file"):
		p.sawE = true
		p.k.raise(high, "sed -f")
		if !hasVal {
			p.i++
		}
	case longIs(name, "--sandbox"):
		p.sandbox = true
	case longIs(name, "--line-length") && !hasVal:
		p.i++
	}
}

func (p *sedParse) short(t string) {
	for j := 1; j < len(t); j++ {
		rest := t[j+1:]
		switch t[j] {
		case 'i':
			p.k.raise(high, "sed -i")
			return
		case 'e':
			p.sawE = true
			if rest != "" {
				p.scripts = append(p.scripts, rest)
			} else if s, ok := p.next(); ok {
				p.scripts = append(p.scripts, s)
			}
			return
		case 'f':
			p.sawE = true
			p.k.raise(high, "sed -f")
			if rest == "" {
				p.i++
			}
			return
		case 'l':
			if rest == "" {
				p.i++
			}
			return
		}
	}
}

// sedScan walks a sed script.
type sedScan struct {
	s string
	i int
}

func (x *sedScan) more() bool { return x.i < len(x.s) }

func (x *sedScan) skipSpace() {
	for x.more() && (x.s[x.i] == ' ' || x.s[x.i] == '\t') {
		x.i++
	}
}

func (x *sedScan) skipDigits() {
	for x.more() && x.s[x.i] >= '0' && x.s[x.i] <= '9' {
		x.i++
	}
}

// skipDelim moves past the next unescaped d.
func (x *sedScan) skipDelim(d byte) bool {
	for ; x.more(); x.i++ {
		if x.s[x.i] == '\\' {
			x.i++
			continue
		}
		if x.s[x.i] == d {
			x.i++
			return true
		}
	}
	return false
}

func (x *sedScan) toEOL() {
	for x.more() && x.s[x.i] != '\n' {
		x.i++
	}
}

// skipFlags moves past regex address flags (I, M).
func (x *sedScan) skipFlags() {
	for x.more() && (x.s[x.i] == 'I' || x.s[x.i] == 'M') {
		x.i++
	}
}

// address moves past one address; false when it does not end.
func (x *sedScan) address() bool {
	s := x.s
	switch {
	case !x.more():
	case s[x.i] >= '0' && s[x.i] <= '9':
		for x.more() && (s[x.i] >= '0' && s[x.i] <= '9' || s[x.i] == '~') {
			x.i++
		}
	case s[x.i] == '$':
		x.i++
	case s[x.i] == '/':
		x.i++
		if !x.skipDelim('/') {
			return false
		}
		x.skipFlags()
	case x.i+1 < len(s) && s[x.i] == '\\':
		d := s[x.i+1]
		x.i += 2
		if !x.skipDelim(d) {
			return false
		}
		x.skipFlags()
	case s[x.i] == '+' || s[x.i] == '~':
		x.i++
		x.skipDigits()
	}
	return true
}

// addresses moves past the addresses and "!" before a command.
func (x *sedScan) addresses() bool {
	if !x.address() {
		return false
	}
	x.skipSpace()
	if x.more() && x.s[x.i] == ',' {
		x.i++
		x.skipSpace()
		if !x.address() {
			return false
		}
	}
	x.skipSpace()
	for x.more() && x.s[x.i] == '!' {
		x.i++
		x.skipSpace()
	}
	return x.more()
}

// sedRisk scans a sed script for commands that run programs (e, s///e) or
// write files (w, W, s///w). A script it cannot follow is risky.
func sedRisk(s string) string {
	x := &sedScan{s: s}
	for x.more() {
		for x.more() && strings.IndexByte(" \t\n;", s[x.i]) >= 0 {
			x.i++
		}
		if !x.more() {
			break
		}
		if !x.addresses() {
			return "sed script"
		}
		c := s[x.i]
		x.i++
		if opt := x.command(c); opt != "" {
			return opt
		}
	}
	return ""
}

// command moves past the arguments of command c; it returns what makes
// the script risky, "" when nothing does.
func (x *sedScan) command(c byte) string {
	s := x.s
	switch c {
	case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
	case '#', 'a', 'i', 'c':
		for {
			x.toEOL()
			if x.i > 0 && x.more() && s[x.i-1] == '\\' {
				x.i++
				continue
			}
			break
		}
	case ':', 'b', 't', 'T', 'v':
		for x.more() && s[x.i] != '\n' && s[x.i] != ';' && s[x.i] != '}' {
			x.i++
		}
	case 'r', 'R':
		x.toEOL()
	case 'w', 'W':
		return "sed w"
	case 'e':
		return "sed e"
	case 'q', 'Q', 'l', 'L':
		x.skipSpace()
		x.skipDigits()
	case 's', 'y':
		return x.substitute(c)
	default:
		return "sed script"
	}
	return ""
}

// substitute moves past s/re/repl/flags or y/src/dst/.
func (x *sedScan) substitute(c byte) string {
	s := x.s
	if !x.more() || s[x.i] == '\n' || s[x.i] == '\\' {
		return "sed script"
	}
	d := s[x.i]
	x.i++
	if !x.skipDelim(d) || !x.skipDelim(d) {
		return "sed script"
	}
	if c != 's' {
		return ""
	}
	for x.more() && strings.IndexByte(";\n} \t", s[x.i]) < 0 {
		switch s[x.i] {
		case 'e':
			return "sed s///e"
		case 'w', 'W':
			return "sed s///w"
		}
		x.i++
	}
	return ""
}
