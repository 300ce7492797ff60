package cmdline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/onellm/onellm-mcp/grants"
)

// Dynamic is the Name of a command whose program cannot be known before the
// line runs, and the Path of a redirection whose target cannot be known.
const Dynamic = "<dynamic>"

// Limits on the work Analyze does.
const (
	MaxLineBytes = 64 << 10 // longer lines are refused
	MaxDepth     = 64       // deeper nesting of lists, substitutions and nested scripts is refused
	maxBraceArgs = 1024     // brace expansion beyond this keeps the word as written
)

// Command is one program the line can run.
type Command struct {
	// Name is the command name as written, after quote removal ("/bin/rm",
	// "rm"), or Dynamic when the program cannot be known before running.
	Name string
	// Program is the program named, as written, when Name is Dynamic
	// because what it runs is known only when run (perl reading its script
	// from stdin, python3 -c "$code", bash -c without a script): a rule on
	// that program still holds for it. Empty otherwise (a command name that
	// is itself an expansion names no program).
	Program string
	// Words is the argv: literal words after quote removal and brace
	// expansion; a word that is not literal is rendered as written
	// ("$HOME", "$(date)", "\"$x\"/y").
	Words []string
	// Line is Words joined by single spaces (the request's command target).
	Line string
	// Risk is medium for a plain command, high or critical when a pattern in
	// the tables says so. Never low.
	Risk grants.Risk
	// Option names the option or pattern that set Risk ("find -exec",
	// "sed -i", "rm -r outside", "curl | sh"); empty for a plain command.
	Option string
	// Wrapped is true when this command is run by another command of the
	// line (a wrapper such as sudo or timeout, find -exec, sh -c, eval, ...)
	// rather than by the line's shell; Parent is then that command's index
	// in Analysis.Commands. Parent is -1 when Wrapped is false.
	Wrapped bool
	Parent  int
	// Script is the file the command runs as a program's code when it is
	// a shell or interpreter given one (sh deploy.sh, python3 x.py, make
	// -f build.mk): as written, literal; "" otherwise. A rule naming that
	// file holds for it, as for ./deploy.sh.
	Script string
	// Network is a best guess that the command talks to the network (see
	// network in tables.go).
	Network bool
	// Dir is the folder the line's shell is in when it runs the command,
	// as far as literal cd, pushd and popd commands before it say (cd.go):
	// "" for the line's own folder, else a clean path, absolute or relative
	// to the line's folder, or Dynamic when it cannot be known (cd "$d", a
	// cd in a loop, cd -). The caller takes relative operands from there.
	Dir string
	// DirOrLine: the command may run in the line's own folder instead of
	// Dir (a cd from there may have failed: cd d; …, cd d || true, ! cd d;
	// or cd may not be the builtin: a function cd, alias, enable -n cd).
	// The caller checks that folder too.
	DirOrLine bool
	// Removes are the literal operands of a recursive removal, each a tree
	// the command removes whole (rm -r/-R/--recursive; find ROOTS -delete
	// with no test that selects files), as written: the caller resolves
	// them and raises the risk when together they are every entry of a
	// folder that is critical to remove (the workspace root: rm -rf *
	// after the shell expanded the glob). Nil for any other command.
	Removes []string
	// Globs are the glob operands of that removal, as written (rm -rf *):
	// the shell expands them before the program runs, so the caller
	// expands them against the folder to ask the question the program's
	// exec will ask.
	Globs []string
}

// Redirect is a shell redirection from or into a file.
type Redirect struct {
	// Path is the target as written after quote removal, "~" not expanded;
	// Dynamic when it is not literal (expansions, unquoted globs).
	Path   string
	Write  bool // >, >>, >|, &>, &>>, <>, >&file
	Read   bool // <, <>
	Append bool // >>, &>>
	// Risk is medium for a literal file (the caller raises it for paths
	// outside the workspace), high for a Dynamic target, critical for a
	// write to a disk device.
	Risk   grants.Risk
	Option string
}

// Analysis is everything a line can run or touch through redirections,
// in source order (a command's substitutions come before the command).
type Analysis struct {
	Commands  []Command
	Redirects []Redirect
	Packages  []Package // packages installed, one per package and index (packages.go)
}

// Risk is the highest risk of the analysis (medium when it is empty).
func (a Analysis) Risk() grants.Risk {
	r := grants.RiskMedium
	for _, c := range a.Commands {
		r = max(r, c.Risk)
	}
	for _, d := range a.Redirects {
		r = max(r, d.Risk)
	}
	return r
}

// Analyze parses line as bash and lists its commands and redirections.
// An empty line, a line that does not parse, a line longer than
// MaxLineBytes or nested deeper than MaxDepth is an error.
func Analyze(line string) (Analysis, error) {
	return AnalyzeIn(line, ProgramEnv{})
}

// AnalyzeIn is Analyze for a line run with env besides the sandbox's own
// settings (the variables [sandbox] env passes from the server's
// environment): an installer's index is the one its environment names, as
// when the line assigned them first.
func AnalyzeIn(line string, env ProgramEnv) (Analysis, error) {
	if len(line) > MaxLineBytes {
		return Analysis{}, fmt.Errorf("command line is %d bytes, over the %d-byte limit", len(line), MaxLineBytes)
	}
	if strings.IndexByte(line, 0) >= 0 {
		return Analysis{}, errors.New("command line contains a NUL byte")
	}
	f, err := parse(line)
	if err != nil {
		return Analysis{}, err
	}
	if len(f.Stmts) == 0 {
		return Analysis{}, errors.New("empty command line")
	}
	a := &analyzer{parent: -1, src: line}
	a.withEnv(env)
	a.cdInLine, a.cdableVars, a.mayStayHome = scanDirs(f)
	a.stmts(f.Stmts, ctx{})
	if a.err != nil {
		return Analysis{}, a.err
	}
	a.taintedRefs()
	a.noteRedirectWrites()
	a.packages()
	if a.configMoved {
		// HOME= or XDG_CONFIG_HOME= anywhere in the line (a loop or a
		// function may run it first) moves the configuration these read.
		for _, i := range a.homeReaders {
			c := &a.out.Commands[i]
			raise(&c.Risk, &c.Option, grants.RiskHigh, "HOME= before "+baseName(c.Name))
		}
	}
	// A redirection written before a cd (or a HOME assignment) may run
	// after it: in a loop, a function, a trap. So any cd in the line makes
	// every relative target unknown, any HOME= every "~" target.
	for i := range a.out.Redirects {
		rd := &a.out.Redirects[i]
		if rd.Path == Dynamic {
			continue
		}
		tilde := strings.HasPrefix(rd.Path, "~")
		switch {
		case a.cwdMoved && !tilde && !strings.HasPrefix(rd.Path, "/"):
			rd.Path, rd.Risk, rd.Option = Dynamic, grants.RiskHigh, "relative path after cd"
		case a.homeMoved && tilde:
			rd.Path, rd.Risk, rd.Option = Dynamic, grants.RiskHigh, "~ after HOME="
		}
	}
	return a.out, nil
}

// skipTimeDashes drops a "--" that bash's time keyword takes as the end of
// its options (time -- cmd, time -p -- cmd): cmd is the command.
func skipTimeDashes(x *syntax.TimeClause) {
	if x.Stmt == nil {
		return
	}
	if ce, ok := x.Stmt.Cmd.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == "--" {
		ce.Args = ce.Args[1:]
	}
}

// otherTilde reports a word starting with an unquoted tilde prefix other
// than "~" ("~+", "~-", "~user"): bash expands it to $PWD, $OLDPWD or a
// user's home, which the caller cannot know.
func otherTilde(w *syntax.Word) bool {
	if w == nil || len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || !strings.HasPrefix(l.Value, "~") {
		return false
	}
	prefix, _, _ := strings.Cut(l.Value, "/")
	return prefix != "~" || (len(w.Parts) > 1 && !strings.Contains(l.Value, "/"))
}

// braceExpands reports a word that bash brace-expands ("deplo{y..y}"):
// as a redirection target it may still be one word, not the one written.
func braceExpands(w *syntax.Word) bool {
	if w == nil || !hasBrace(w) {
		return false
	}
	return syntax.SplitBraces(&syntax.Word{Parts: slices.Clone(w.Parts)})
}

func parse(src string) (*syntax.File, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("line %d, column %d: %s", pe.Pos.Line(), pe.Pos.Col(), pe.Text)
		}
		return nil, err
	}
	return f, nil
}

// ctx is what a statement inherits from where it sits.
type ctx struct {
	piped     bool   // stdin is a pipe from another command
	fromNet   bool   // a command upstream in the pipe talks to the network
	stdinFile bool   // stdin is redirected from a file
	script    string // literal here-document or here-string on stdin
	hasScript bool
	pipeline  bool // part of a pipeline
	bg        bool // run in the background
}

type analyzer struct {
	out       Analysis
	printer   *syntax.Printer // made on first use (printerOnce): most argvs never print
	sb        strings.Builder
	depth     int
	err       error
	parent    int       // index of the command running the current statements, -1 for the line's shell
	src       string    // source of the statements being walked (the line or a nested script)
	funcs     []string  // names of the functions whose bodies are being walked
	cwdMoved  bool      // the line has a cd, pushd or popd: relative redirect paths are unknown
	aliases   AliasFunc // reads an installer's aliases (ProgramEnv.Aliases), nil for none
	homeMoved bool      // the line assigns HOME: "~" redirect paths are unknown
	// configMoved: the line assigns HOME or XDG_CONFIG_HOME; homeReaders
	// are the indexes of the commands that read configuration there.
	configMoved bool
	homeReaders []int
	refs        []arithRef      // variables read by arithmetic evaluation (arith.go)
	tainted     map[string]bool // variables set from text the analyzer cannot see
	inSubst     int             // depth of $( ), ` ` and <( ) being walked
	// env holds every value assigned to a name anywhere in the line
	// (Dynamic when not literal); unsets the names the line removes from
	// the environment (unset, env -u, export -n), allEnvUnset that some
	// command drops the whole environment (env -i).
	env         map[string][]string
	unsets      []string
	allEnvUnset bool
	installs    []*install // package installs, resolved to Packages after the walk
	// cfgWritten are the installer families whose configuration the line
	// may write ("*": any), cfgWords the words and write targets that may
	// name a configuration file (pkgconfig.go).
	cfgWritten map[string]int
	cfgWords   []string
	// dirMoved: a wrapper runs its command in another folder (env -C).
	dirMoved bool
	// dir is the folder the shell being walked is in (Command.Dir);
	// cdInLine: the line has a cd, pushd, popd or eval anywhere (a
	// function's body then runs in a folder unknown where it is defined);
	// dirFuncs: the functions whose bodies move the folder.
	dir      string
	cdInLine bool
	dirFuncs []string
	cds      int // cd, pushd and popd commands walked
	// cdableVars: the line may turn on shopt cdable_vars (scanDirs);
	// reached are the cd statements that have succeeded for what follows
	// them (cd d && …, cd d || exit); cdReached: the one being walked is.
	cdableVars bool
	reached    []*syntax.Stmt
	cdReached  bool
	// mayStayHome: a cd from the line's folder may not have moved the
	// shell (it may have failed, or cd may not be the builtin: a function,
	// alias or enable in the line), so what follows may run there.
	mayStayHome bool
}

// printerOnce returns the analyzer's printer, made on first use (a new
// one allocates a 4 KiB buffer: most of what the exec gate's AnalyzeArgv
// of a plain argv cost).
func (a *analyzer) printerOnce() *syntax.Printer {
	if a.printer == nil {
		a.printer = syntax.NewPrinter(syntax.SingleLine(true))
	}
	return a.printer
}

// setEnv records a value assigned to name.
func (a *analyzer) setEnv(name, value string) {
	if a.env == nil {
		a.env = map[string][]string{}
	}
	a.env[name] = append(a.env[name], value)
}

// noteAssign records an assignment to name anywhere in the line.
func (a *analyzer) noteAssign(name string) {
	a.homeMoved = a.homeMoved || name == "HOME"
	a.configMoved = a.configMoved || has(homeEnvNames, name)
}

func (a *analyzer) enter() bool {
	a.depth++
	if a.depth > MaxDepth && a.err == nil {
		a.err = fmt.Errorf("command line nests deeper than %d levels", MaxDepth)
	}
	return a.err == nil
}

func (a *analyzer) leave() { a.depth-- }

func (a *analyzer) stmts(list []*syntax.Stmt, c ctx) {
	if !a.enter() {
		return
	}
	defer a.leave()
	for _, s := range list {
		a.stmt(s, c)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt, c ctx) {
	if a.err != nil || s == nil {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		c.bg = true
		defer a.keepDir()() // run in a subshell
	}
	a.cdReached = slices.Contains(a.reached, s)
	for _, r := range s.Redirs {
		a.redirect(r, &c)
	}
	if s.Cmd != nil {
		a.command(s.Cmd, c)
	}
}

// redirect records a file redirection, walks its substitutions and notes
// what the command's stdin becomes.
func (a *analyzer) redirect(r *syntax.Redirect, c *ctx) {
	if r.Word != nil {
		a.substs(r.Word, ctx{})
	}
	if r.Hdoc != nil {
		a.substs(r.Hdoc, ctx{})
	}
	fd0 := r.N == nil || r.N.Value == "0"
	var rd Redirect
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		a.hdocInSubst(r)
		if fd0 {
			*c = ctx{pipeline: c.pipeline, bg: c.bg}
			if r.Hdoc == nil {
				c.script, c.hasScript = "", true
			} else if w := a.word(r.Hdoc, true); w.lit {
				c.script, c.hasScript = w.text, true
			} else {
				c.stdinFile = true
			}
		}
		return
	case syntax.WordHdoc:
		if fd0 {
			*c = ctx{pipeline: c.pipeline, bg: c.bg}
			if w := a.word(r.Word, false); w.lit {
				c.script, c.hasScript = w.text+"\n", true
			} else {
				c.stdinFile = true
			}
		}
		return
	case syntax.DplIn:
		return
	case syntax.DplOut:
		w := a.word(r.Word, false)
		if w.lit && (w.text == "-" || isDigits(w.text)) {
			return
		}
		rd.Write = true // >&file is &>file
	case syntax.RdrIn:
		rd.Read = true
		if fd0 {
			*c = ctx{pipeline: c.pipeline, bg: c.bg, stdinFile: true}
		}
	case syntax.RdrInOut:
		rd.Read, rd.Write = true, true
	case syntax.AppOut, syntax.AppAll, syntax.AppClob, syntax.AppAllClob:
		rd.Write, rd.Append = true, true
	default: // >, >|, &>, &>|
		rd.Write = true
	}
	w := a.word(r.Word, false)
	rd.Risk = grants.RiskMedium
	if !w.lit || w.glob || otherTilde(r.Word) || braceExpands(r.Word) {
		rd.Path, rd.Risk, rd.Option = Dynamic, grants.RiskHigh, "dynamic redirect target"
	} else {
		rd.Path = w.text
		if harmlessDevice(rd.Path) {
			return
		}
		if rd.Write && diskDevice(rd.Path) {
			rd.Risk, rd.Option = grants.RiskCritical, "> "+rd.Path
		}
	}
	a.out.Redirects = append(a.out.Redirects, rd)
}

// hdocInSubst refuses a here-document inside $( ), backquotes or <( )
// with a body line that begins with its delimiter: bash ends the document
// there (and runs the rest of the line as commands), mvdan.cc/sh does not.
func (a *analyzer) hdocInSubst(r *syntax.Redirect) {
	if a.inSubst == 0 || r.Hdoc == nil || a.err != nil {
		return
	}
	delim := a.word(r.Word, false).text
	start, end := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
	if delim == "" || start >= end || end > len(a.src) {
		return
	}
	for _, l := range strings.Split(a.src[start:end], "\n") {
		if r.Op == syntax.DashHdoc {
			l = strings.TrimLeft(l, "\t")
		}
		if strings.HasPrefix(l, delim) && l != delim {
			a.err = fmt.Errorf("a here-document inside a command substitution has a line beginning with its delimiter %q: bash and this analyzer read it differently", delim)
			return
		}
	}
}

func (a *analyzer) command(cmd syntax.Command, c ctx) {
	if a.err != nil {
		return
	}
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		a.call(x, c)
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			c.pipeline = true
			start := len(a.out.Commands)
			restore := a.keepDir() // each part is a subshell
			a.stmt(x.X, c)
			restore()
			net := c.fromNet
			for _, cm := range a.out.Commands[start:] {
				net = net || cm.Network
			}
			a.stmt(x.Y, ctx{piped: true, fromNet: net, pipeline: true, bg: c.bg})
			a.lastPart(restore)
			return
		}
		if x.Op == syntax.OrStmt {
			a.orList(x, c)
			return
		}
		a.reachedCd(x.X, true) // Y runs only once X's last command succeeded
		a.stmt(x.X, c)
		a.stmt(x.Y, c)
	case *syntax.Subshell:
		restore := a.keepDir()
		a.stmts(x.Stmts, c)
		restore()
	case *syntax.Block:
		a.stmts(x.Stmts, c)
	case *syntax.IfClause:
		var ends []string
		for ic := x; ic != nil && a.err == nil; ic = ic.Else {
			a.stmts(ic.Cond, c)
			start := a.dir
			a.stmts(ic.Then, c)
			ends = append(ends, a.dir)
			a.dir = start // the next branch runs when this one's condition failed
			if ic.Else == nil && len(ic.Cond) > 0 {
				ends = append(ends, start) // no branch ran (there is no else)
			}
		}
		a.joinDirs(ends)
	case *syntax.WhileClause:
		start, first := a.dir, len(a.out.Commands)
		a.stmts(x.Cond, c)
		a.stmts(x.Do, c)
		a.loopDir(start, first)
	case *syntax.ForClause:
		a.substs(x.Loop, ctx{})
		a.loopVar(x.Loop)
		start, first := a.dir, len(a.out.Commands)
		a.stmts(x.Do, c)
		a.loopDir(start, first)
	case *syntax.CaseClause:
		a.substs(x.Word, ctx{})
		start := a.dir
		ends := []string{start} // no pattern matched
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				a.substs(p, ctx{})
			}
			a.stmts(it.Stmts, c)
			ends = append(ends, a.dir)
			a.dir = start
		}
		a.joinDirs(ends)
	case *syntax.FuncDecl:
		names := x.Names
		if x.Name != nil {
			names = append([]*syntax.Lit{x.Name}, names...)
		}
		n := len(a.funcs)
		for _, l := range names {
			a.funcs = append(a.funcs, l.Value)
		}
		// The body's commands do not inherit the declaration's stdin, nor
		// its folder: the body runs where the function is called.
		at := a.dir
		if a.cdInLine {
			a.dir = Dynamic
		}
		cds := a.cds
		a.stmt(x.Body, ctx{})
		if a.cds != cds {
			for _, l := range names {
				a.dirFuncs = append(a.dirFuncs, l.Value)
			}
		}
		a.dir = at
		a.funcs = a.funcs[:n]
	case *syntax.ArithmCmd:
		a.substs(x.X, ctx{})
		a.arith(x.X)
	case *syntax.TestClause:
		a.substs(x.X, ctx{})
		a.testArith(x.X)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			a.substs(e, ctx{})
			a.arith(e)
		}
	case *syntax.DeclClause:
		a.decl(x)
	case *syntax.TimeClause:
		// bash's time keyword skips a "--" after it or after -p.
		skipTimeDashes(x)
		a.stmt(x.Stmt, c)
	case *syntax.CoprocClause:
		if x.Name != nil {
			a.substs(x.Name, ctx{})
		}
		c.bg = true
		a.stmt(x.Stmt, c)
	case *syntax.TestDecl:
		a.substs(x.Description, ctx{})
		a.stmt(x.Body, ctx{})
	default:
		a.err = fmt.Errorf("unsupported shell construct %T", cmd)
	}
}

// substs finds the command and process substitutions in node (a word, an
// assignment, an arithmetic or test expression, a loop header) and walks
// their statements. out is the context a >(…) substitution's stdin gets.
func (a *analyzer) substs(node syntax.Node, out ctx) {
	if node == nil || a.err != nil {
		return
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		if a.err != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.ParamExp:
			a.paramExp(x)
		case *syntax.ArithmExp:
			a.arith(x.X)
		case *syntax.CmdSubst:
			a.inSubst++
			restore := a.keepDir() // a subshell
			a.stmts(x.Stmts, ctx{})
			restore()
			a.inSubst--
			return false
		case *syntax.ProcSubst:
			a.inSubst++
			restore := a.keepDir()     // a subshell
			if x.Op == syntax.CmdOut { // >(cmd): reads what the command writes
				a.stmts(x.Stmts, ctx{piped: true, fromNet: out.fromNet, pipeline: true})
			} else {
				a.stmts(x.Stmts, ctx{})
			}
			restore()
			a.inSubst--
			return false
		}
		return true
	})
}

// paramExp checks a parameter expansion: ${x@P} runs the value's
// substitutions as a prompt; ${!x} takes a variable name (with a
// subscript, evaluated) from x's value; subscripts and substring offsets
// are arithmetic; ${x:=v} assigns.
func (a *analyzer) paramExp(x *syntax.ParamExp) {
	if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && x.Exp.Word.Lit() == "P" {
		a.emit(Command{Name: Dynamic, Words: []string{a.print(x)}, Risk: grants.RiskHigh, Option: "${x@P}"}, a.parent)
	}
	iw, _ := x.Index.(*syntax.Word)
	allIndex := iw != nil && (iw.Lit() == "@" || iw.Lit() == "*")
	if x.Excl && x.Names == 0 && !allIndex {
		a.emit(Command{Name: Dynamic, Words: []string{a.print(x)}, Risk: grants.RiskHigh, Option: "${!x}"}, a.parent)
	}
	if x.Index != nil && !allIndex {
		a.arith(x.Index)
	}
	if x.Slice != nil {
		a.arith(x.Slice.Offset)
		a.arith(x.Slice.Length)
	}
	if x.Exp != nil && x.Param != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) {
		a.assigned(x.Param.Value, x.Exp.Word, a.print(x))
	}
}

// assigned records an assignment of value to name (text is how it is
// shown): a risky name makes a Dynamic command, a value the analyzer
// cannot see taints name.
func (a *analyzer) assigned(name string, value *syntax.Word, text string) {
	a.noteAssign(name)
	if !numericValue(value) {
		a.taint(name)
	}
	if opt := riskyEnv(name); opt != "" {
		a.emit(Command{Name: Dynamic, Words: []string{text}, Risk: grants.RiskHigh, Option: opt}, a.parent)
	}
}

// loopVar taints a for or select variable whose words the analyzer cannot
// see, and walks a C-style loop's arithmetic.
func (a *analyzer) loopVar(l syntax.Loop) {
	switch x := l.(type) {
	case *syntax.CStyleLoop:
		a.arith(x)
	case *syntax.WordIter:
		if x.Name == nil {
			return
		}
		a.noteAssign(x.Name.Value)
		if !x.InPos.IsValid() {
			a.taint(x.Name.Value) // the positional parameters
		}
		for _, w := range x.Items {
			if !numericValue(w) {
				a.taint(x.Name.Value)
			}
		}
	}
}

func (a *analyzer) call(x *syntax.CallExpr, c ctx) {
	var envRisk riskNote
	for _, as := range x.Assigns {
		if opt := a.assignment(as); opt != "" {
			envRisk = riskNote{grants.RiskHigh, opt}
		}
	}
	if len(x.Args) == 0 {
		if envRisk.risk != 0 {
			// An assignment that changes how later commands are found or
			// run (PATH=, LD_PRELOAD=, ...): the programs are no longer known.
			words := make([]string, 0, len(x.Assigns))
			for _, as := range x.Assigns {
				words = append(words, a.assign(as))
			}
			a.emit(Command{Name: Dynamic, Words: words, Risk: envRisk.risk, Option: envRisk.opt}, a.parent)
		}
		return
	}
	args, src := a.argv(x.Args)
	for _, w := range args {
		if w.lit {
			a.subscriptCode(w.text)
		}
	}
	net := c.fromNet
	if len(args) > 0 && args[0].lit {
		net = net || isNetwork(args[0].text, args[1:])
	}
	netWord := make([]bool, len(x.Args))
	for i, w := range x.Args {
		start := len(a.out.Commands)
		a.substs(w, ctx{fromNet: net})
		for _, cm := range a.out.Commands[start:] {
			netWord[i] = netWord[i] || cm.Network
		}
	}
	for i := range args {
		args[i].net = netWord[src[i]]
	}
	if len(args) == 0 { // every word expanded to nothing (e.g. {,})
		return
	}
	if args[0].lit && args[0].text == "printf" {
		a.printfArith(x.Args)
	}
	a.simple(args, c, a.parent, envRisk)
}

// assignment walks one assignment (NAME=value, NAME[i]=value, NAME=(...))
// and returns the option that makes it risky, "" if none.
func (a *analyzer) assignment(as *syntax.Assign) string {
	a.substs(as, ctx{})
	if as.Value != nil {
		if w := a.word(as.Value, false); w.lit {
			a.subscriptCode(w.text)
		}
	}
	if as.Name == nil {
		return ""
	}
	if as.Index != nil {
		a.arith(as.Index)
	}
	a.noteAssign(as.Name.Value)
	if v := a.word(as.Value, false); v.lit && !as.Append { // NAME+=v appends to a value not seen
		a.setEnv(as.Name.Value, v.text)
	} else {
		a.setEnv(as.Name.Value, Dynamic)
	}
	if !numericValue(as.Value) || as.Array != nil && !arrayLiteral(as.Array) {
		a.taint(as.Name.Value)
	}
	return riskyEnv(as.Name.Value)
}

// arrayLiteral reports an array value whose elements do not taint.
func arrayLiteral(arr *syntax.ArrayExpr) bool {
	for _, e := range arr.Elems {
		if !numericValue(e.Value) {
			return false
		}
	}
	return true
}

// decl handles declare, local, export, readonly, typeset and nameref: a
// builtin command whose arguments are assignments. -n makes a name a
// reference to the variable its value names: an assignment to it is one to
// that variable.
func (a *analyzer) decl(x *syntax.DeclClause) {
	words := []string{x.Variant.Value}
	cmd := Command{Name: x.Variant.Value, Risk: grants.RiskMedium}
	nameref := x.Variant.Value == "nameref"
	unexports := false // export -n, declare +x: what it names leaves the environment
	for _, as := range x.Args {
		if as.Naked && as.Value != nil {
			t := a.word(as.Value, false).text
			if strings.HasPrefix(t, "-") && strings.Contains(t, "n") {
				nameref = true
				unexports = true
			}
			unexports = unexports || strings.HasPrefix(t, "+")
		}
	}
	for _, as := range x.Args {
		words = append(words, a.assign(as))
		if unexports && as.Name != nil {
			a.unsets = append(a.unsets, as.Name.Value)
		}
		if as.Naked {
			a.substs(as, ctx{})
			continue
		}
		if opt := a.assignment(as); opt != "" {
			raise(&cmd.Risk, &cmd.Option, grants.RiskHigh, opt)
		}
		if nameref && as.Value != nil {
			if v := a.word(as.Value, false); !v.lit || riskyEnv(v.text) != "" || has(homeEnvNames, v.text) {
				cmd.Name = Dynamic
				raise(&cmd.Risk, &cmd.Option, grants.RiskHigh, "declare -n")
			}
		}
	}
	cmd.Words = words
	a.emit(cmd, a.parent)
}

// assign renders an assignment as written (values unquoted when literal).
func (a *analyzer) assign(as *syntax.Assign) string {
	if as.Naked {
		if as.Value != nil {
			return a.word(as.Value, false).text
		}
		if as.Name != nil {
			return as.Name.Value
		}
		return ""
	}
	if as.Index != nil || as.Array != nil {
		a.sb.Reset()
		_ = a.printerOnce().Print(&a.sb, as)
		return a.sb.String()
	}
	op := "="
	if as.Append {
		op = "+="
	}
	val := ""
	if as.Value != nil {
		val = a.word(as.Value, false).text
	}
	return as.Name.Value + op + val
}

// subscriptCode checks a literal value shaped like an array subscript
// ('a[$(cmd)]', 'a[$i]'): bash expands the subscript when such a string
// is later used as a variable name or evaluated arithmetically (printf -v,
// read, test -v, unset, $((x)), ...). A command substitution there is a
// Dynamic command; a variable there is an arithmetic reference.
func (a *analyzer) subscriptCode(t string) {
	i := strings.IndexByte(t, '[')
	if i < 0 {
		return
	}
	if subscriptSubstitutes(t) {
		a.emit(Command{Name: Dynamic, Words: []string{t}, Risk: grants.RiskHigh, Option: "command substitution in a subscript"}, a.parent)
		return
	}
	for j := strings.IndexByte(t[i:], '$'); j >= 0 && strings.IndexByte(t[i+j:], ']') > 0; j = strings.IndexByte(t[i:], '$') {
		i += j + 1
		for _, n := range names(strings.TrimPrefix(t[i:], "{")) {
			a.refs = append(a.refs, arithRef{name: n, text: t, parent: a.parent})
			break
		}
	}
}

// emit appends cmd run by parent and returns its index.
func (a *analyzer) emit(cmd Command, parent int) int {
	cmd.Line = strings.Join(cmd.Words, " ")
	cmd.Dir = a.dir
	cmd.DirOrLine = a.mayStayHome && a.dir != ""
	cmd.Parent = parent
	cmd.Wrapped = parent >= 0
	if has("cd pushd popd", baseName(cmd.Name)) {
		a.cwdMoved = true
	}
	if cmd.Risk == 0 {
		cmd.Risk = grants.RiskMedium
	}
	a.out.Commands = append(a.out.Commands, cmd)
	return len(a.out.Commands) - 1
}

// nested parses script (sh -c 'script', eval, a here-document fed to a
// shell...) and walks it as run by the command at index parent. A script
// that does not parse leaves the parent dynamic.
func (a *analyzer) nested(script string, parent int, c ctx) {
	if !a.enter() {
		return
	}
	defer a.leave()
	f, err := parse(script)
	if err != nil {
		p := &a.out.Commands[parent]
		p.Name = Dynamic
		raise(&p.Risk, &p.Option, grants.RiskHigh, "unparsable script")
		return
	}
	saved, savedFuncs, savedSrc, savedDir := a.parent, a.funcs, a.src, a.dir
	a.parent, a.funcs, a.src = parent, nil, script
	for _, s := range f.Stmts {
		a.stmt(s, c)
	}
	a.parent, a.funcs, a.src = saved, savedFuncs, savedSrc
	a.nestedDir(savedDir, parent)
}

// arg is one word of a command.
type arg struct {
	text string // value after quote removal if lit, else the word as written
	lit  bool   // no expansion: the value is known
	glob bool   // has an unquoted glob character
	// bare is true for a non-literal word with an unquoted expansion at its
	// start: it may expand to nothing or to several words.
	bare bool
	net  bool // its substitutions talk to the network (bash <(curl ...))
}

func texts(args []arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.text
	}
	return out
}

// argv turns words into args, doing brace expansion as bash would; src
// is the index of the word each arg comes from.
func (a *analyzer) argv(words []*syntax.Word) (out []arg, src []int) {
	out = make([]arg, 0, len(words))
	for i, w := range words {
		for len(src) < len(out) {
			src = append(src, i-1)
		}
		if !hasBrace(w) {
			out = append(out, a.word(w, false))
			continue
		}
		cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
		if !syntax.SplitBraces(cp) {
			out = append(out, a.word(w, false))
			continue
		}
		var exp []arg
		for ew, err := range expand.BracesSeq(nil, cp) {
			if err != nil || len(exp) >= maxBraceArgs {
				exp = nil
				break
			}
			if len(ew.Parts) == 0 {
				continue // {,} expands to empty words, which bash drops
			}
			exp = append(exp, a.wordFrom(ew, false, true))
		}
		if exp == nil {
			aw := a.word(w, false)
			aw.lit, aw.bare = false, true // unknown number of words
			out = append(out, aw)
			continue
		}
		out = append(out, exp...)
	}
	for len(src) < len(out) {
		src = append(src, len(words)-1)
	}
	return out, src
}

func hasBrace(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// word computes a word's value when it is literal. heredoc selects
// here-document unescaping (only \$ \` \\ and line continuations).
func (a *analyzer) word(w *syntax.Word, heredoc bool) arg {
	return a.wordFrom(w, heredoc, false)
}

// wordFrom is word; synth words (from brace expansion) are not in the source.
func (a *analyzer) wordFrom(w *syntax.Word, heredoc, synth bool) arg {
	if w == nil || len(w.Parts) == 0 {
		return arg{lit: true}
	}
	var sb strings.Builder
	r := arg{lit: true}
	for i, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if heredoc {
				sb.WriteString(unescapeDouble(x.Value, true))
			} else if unescapeUnquoted(&sb, x.Value) {
				r.glob = true
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				sb.WriteString(ansiC(x.Value))
			} else {
				sb.WriteString(x.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					sb.WriteString(unescapeDouble(l.Value, false))
				} else {
					r.lit = false
				}
			}
		default:
			r.lit = false
			if i == 0 {
				r.bare = true
			}
		}
	}
	if r.lit {
		r.text = sb.String()
		return r
	}
	r.glob = false
	if start, end := int(w.Pos().Offset()), int(w.End().Offset()); !synth && start < end && end <= len(a.src) {
		r.text = a.src[start:end] // as written
		return r
	}
	a.sb.Reset()
	if err := a.printerOnce().Print(&a.sb, w); err != nil {
		r.text = Dynamic
	} else {
		r.text = a.sb.String()
	}
	return r
}

// unescapeUnquoted writes an unquoted literal with backslash escapes removed
// and reports whether it has an unescaped glob character.
func unescapeUnquoted(sb *strings.Builder, s string) (glob bool) {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			sb.WriteByte(s[i])
			continue
		case ch == '*' || ch == '?' || ch == '[' && strings.IndexByte(s[i+1:], ']') >= 0:
			// A '[' without a closing ']' matches only itself ("[" is test).
			glob = true
		}
		sb.WriteByte(ch)
	}
	return glob
}

// unescapeDouble removes the backslashes that are escapes inside double
// quotes (before $ ` " \ and newline; in a here-document not before ").
func unescapeDouble(s string, heredoc bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch n := s[i+1]; {
			case n == '$' || n == '`' || n == '\\' || (n == '"' && !heredoc):
				sb.WriteByte(n)
				i++
				continue
			case n == '\n':
				i++
				continue
			}
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// ansiC decodes the body of a $'...' string.
func ansiC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			sb.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a':
			sb.WriteByte('\a')
		case 'b':
			sb.WriteByte('\b')
		case 'e', 'E':
			sb.WriteByte(0x1b)
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case '\\', '\'', '"', '?':
			sb.WriteByte(c)
		case 'c':
			if i+1 < len(s) {
				i++
				sb.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			n := 2
			if c == 'u' {
				n = 4
			} else if c == 'U' {
				n = 8
			}
			v, j := 0, i+1
			for ; j < len(s) && j <= i+n && isHex(s[j]); j++ {
				v = v*16 + hexVal(s[j])
			}
			if j == i+1 {
				sb.WriteByte('\\')
				sb.WriteByte(c)
				continue
			}
			if c == 'x' {
				sb.WriteByte(byte(v))
			} else {
				sb.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, j := 0, i
			for ; j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7'; j++ {
				v = v*8 + int(s[j]-'0')
			}
			sb.WriteByte(byte(v))
			i = j - 1
		default:
			sb.WriteByte('\\')
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// raise sets *r/*opt to risk/o when risk is higher than *r.
func raise(r *grants.Risk, opt *string, risk grants.Risk, o string) {
	if risk > *r {
		*r, *opt = risk, o
	}
}

type riskNote struct {
	risk grants.Risk
	opt  string
}
