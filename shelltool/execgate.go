package shelltool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/fstools"
	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
	"github.com/onellm/onellm-mcp/shelltool/cmdline"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
	"github.com/onellm/onellm-mcp/webtools"
)

// OptionUnverifiable is the Option of an exec-time request for a program
// the gate cannot verify (a memfd or deleted executable, one renamed while
// it was exec'd, the dynamic loader run as a program, unreadable facts): it
// is critical risk, so it is refused unless approved in the call, which no
// command line can ask for.
const OptionUnverifiable = "exec gate: unverifiable program"

// execRequests are the process.exec requests for one program the sandbox is
// about to run. The resource is a base name: the executable's (as the kernel
// loaded it); when argv[0] names something else (a multi-call binary, a
// hashed command, exec -a), argv[0]'s too; and when the path it was exec'd
// by names something else again (a script through its shebang, a symlink),
// that one too, with the words after the script's path. Each is classified
// like a simple command of a line with that name as its first word. The
// host programs the file is (id: the same file, or for a written one the
// same build-id or content) add their names, with the same words. A git
// program is decided by its subcommand too, as git finds it (gitForms). All
// are decided and the stricter answer wins. A program the command may have
// written carries its path (Target.Exe), so no approval given for the
// program a line names holds for it; a dynamic loader (however it is
// called) and a program that cannot be identified are unverifiable.
//
// ws is the workspace: a program whose working folder lies outside it
// (cd /tmp; rm -r x) is classified with its relative operands made
// absolute too, since the classifier takes a relative path to lie inside
// the workspace (what a line starting there means); a critical answer
// then holds. A recursive removal of every entry of the workspace root is
// as critical as removing the root (raiseEmptying: a script's rm -rf *
// reaches the gate with its glob expanded). An empty ws skips both (tests
// of the rest).
func execRequests(ev sandbox.ExecEvent, id identity, ws string) []grants.Request {
	return execAnalyze(ev, id, ws).reqs
}

// execAnalysis is what the gate decides of one exec event (execAnalyze).
type execAnalysis struct {
	reqs []grants.Request
	// twins index in reqs the own-words requests of a removal named by
	// the folder it empties: decided at high risk, unless a rule decides
	// them at the emptying's critical risk (raiseTwins).
	twins []int
	// listed: they depend on a listing of the workspace (raiseEmptying),
	// not on the event alone.
	listed bool
	// role is what the program is to the call's pipe flow (pipeFlow).
	role pipeRole
	// rootRemoved are the entries of the workspace root its programs
	// remove (rootRemovals), which the call's tally adds up
	// (emptyingTally).
	rootRemoved []string
	// rootMoves are the entries of the root its mv moves within the
	// workspace, by the root entry each lands in.
	rootMoves []rootMove
	// childRemoved are the entries of root entries it removes (rm -rf
	// a/*), which empty a root entry one program at a time too.
	childRemoved []rootMove
	// installs holds the packages the program installs by any of its
	// names (Analysis.Packages, with the Commands they index), whose
	// package.install requests execGate builds with the project's
	// configuration, as the line's are (installRequests).
	installs cmdline.Analysis
}

// execAnalyze is execRequests with what the gate needs besides.
func execAnalyze(ev sandbox.ExecEvent, id identity, ws string) execAnalysis {
	return execAnalyzeIn(ev, id, ws, nil)
}

// execAnalyzeIn is execAnalyze reading an installer's aliases with
// aliases (cargo's, in the folder the program runs in: cmdline.AliasFunc).
func execAnalyzeIn(ev sandbox.ExecEvent, id identity, ws string, aliases cmdline.AliasFunc) (an execAnalysis) {
	// Argv and Cwd make the request's identity exact, as the line's are
	// (an approval given for the line's `git push origin main` holds for
	// the same words run by the program in that folder).
	base := func(r grants.Request) grants.Request {
		r.Capability, r.Surface, r.Cwd = grants.CapProcessExec, grants.SurfaceSandbox, ev.Cwd
		r.Target.ToolName, r.Target.Exe = Name, ev.Written
		r.Risk = max(r.Risk, grants.BaseRisk(grants.CapProcessExec, grants.SurfaceSandbox))
		return r
	}
	exeName := filepath.Base(ev.Exe)
	rest := []string{}
	if len(ev.Argv) > 1 {
		rest = ev.Argv[1:]
	}
	switch {
	case ev.Problem != "":
	case id.problem != "":
		ev.Problem = id.problem
	case id.loader:
		ev.Problem = "the dynamic loader run as a program (a copy or link of it)"
	}
	if ev.Problem != "" || ev.Exe == "" {
		words := append([]string{ev.Exe}, rest...)
		an.reqs = []grants.Request{base(grants.Request{
			Target: grants.Target{Resource: exeName, Command: joinWords(words),
				Option: OptionUnverifiable + " (" + ev.Problem + ")"},
			Risk: grants.RiskCritical, Argv: words,
		})}
		return an
	}
	var names []named
	add := func(p string, rest []string) {
		n := filepath.Base(p)
		if p == "" || n == "." || n == "/" {
			return
		}
		// A versioned or triplet-named program is its family too
		// (perl5.36-x86_64-linux-gnu is perl): a rule on perl holds.
		for _, f := range append([]string{n}, cmdline.ProgramFamilies(n)...) {
			names = addNamed(names, named{name: f, rest: rest})
		}
	}
	add(ev.Exe, rest)
	if len(ev.Argv) > 0 {
		add(ev.Argv[0], rest)
	}
	scriptRest := rest
	for i := 1; i < len(ev.Argv); i++ {
		if ev.Argv[i] == ev.ExecPath {
			scriptRest = ev.Argv[i+1:]
			break
		}
	}
	add(ev.ExecPath, scriptRest)
	// Where a symlink it was exec'd by leads (ln -s deploy.sh go.sh;
	// ./go.sh is deploy.sh: review rev20e M2).
	add(ev.ExecTarget, scriptRest)
	for _, n := range id.names {
		add(n, rest)
	}
	for _, n := range names {
		for _, g := range gitForms(n) {
			names = addNamed(names, g)
		}
	}
	seen := map[string]bool{}
	for _, nr := range names {
		n, rest := nr.name, nr.rest
		words := append([]string{n}, rest...)
		prog, err := cmdline.AnalyzeProgramIn(words, cmdline.ProgramEnv{Set: ev.Env, Unset: ev.EnvUnset, Aliases: aliases})
		if err != nil {
			an.reqs = append(an.reqs, base(grants.Request{
				Target: grants.Target{Resource: n, Command: joinWords(words),
					Option: OptionUnverifiable + " (" + err.Error() + ")"},
				Risk: grants.RiskCritical, Argv: words,
			}))
			continue
		}
		addInstalls(&an.installs, prog)
		for _, c := range prog.Commands {
			// A script operand that lies in /dev or /proc from where the
			// program runs (cd /dev/fd && sh ./3) is a descriptor: its
			// code is read at run time (review rev20g F6).
			if c.Script == "" || !filepath.IsAbs(ev.Cwd) {
				continue
			}
			if p := resolveIn(ev.Cwd, c.Script); strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") {
				an.role.readsCode = true
			}
		}
		if r := roleOf(prog.Commands); r != (pipeRole{}) {
			an.role.downloads = an.role.downloads || r.downloads
			an.role.readsCode = an.role.readsCode || r.readsCode
		}
		for _, c := range prog.Commands {
			// A removal is judged through the symlinks on its way
			// (raiseThroughLinks, raiseEmptying), which may change by the
			// next exec of the same words: not kept.
			an.listed = an.listed || len(c.Removes)+len(c.Globs) > 0
			if nr.elsewhere && c.Name == "git" {
				c.Removes, c.Globs = nil, nil // judged with -C's folder by git's own request
			}
			own := c
			if ev.Cwd != "" {
				// A folder known only when run (sh -c 'cd "$d" && rm -r x'):
				// that program is decided at its own exec, where it runs.
				dir, l := raiseByFolder(&c, ev.Cwd, ws, false)
				an.listed = an.listed || l
				if ws != "" && len(c.Removes) > 0 {
					gone, _ := rootRemovals(&c, dir, ws)
					for name := range gone {
						an.rootRemoved = append(an.rootRemoved, name)
					}
					an.childRemoved = append(an.childRemoved, childRemovals(c.Removes, dir, ws)...)
				}
				if ws != "" && programName(c.Name) == "mv" {
					moved, lost := rootMoves(c.Words, dir, ws)
					an.rootMoves = append(an.rootMoves, moved...)
					an.rootRemoved = append(an.rootRemoved, lost...)
					an.listed = an.listed || len(moved)+len(lost) > 0
				}
			}
			toDecide, twin := []cmdline.Command{c}, -1
			if emptyingNamed(c) {
				// Named by the folder it empties (the approval's key): its
				// own words are decided too, so a deny or ask rule on them
				// holds. Its risk is the words' own, at most high: the
				// emptying's critical risk is the named request's, which
				// the line's approval settles (review rev20 H1); a rule
				// that decides it at critical sees it so (raiseTwins).
				own.Risk = min(own.Risk, grants.RiskHigh)
				twin = len(toDecide)
				toDecide = append(toDecide, own)
			}
			if c.Program != "" {
				// What it runs is known only when run (perl reading its
				// script from stdin): it is still the program it is, so a
				// rule on that program holds.
				prog := c
				prog.Name = c.Program
				toDecide = append(toDecide, prog)
			}
			if sc, ok := scriptCommand(c); ok {
				// sh deploy.sh runs deploy.sh as ./deploy.sh does: a rule
				// naming it holds (review rev20e M2).
				toDecide = append(toDecide, sc)
			}
			for i, c := range toDecide {
				words := append([]string{programName(c.Name)}, c.Words[1:]...)
				r := base(grants.Request{
					Target: grants.Target{Resource: programName(c.Name), Command: joinWords(words), Option: c.Option},
					Risk:   c.Risk, Argv: words,
				})
				if nr.orig != nil && programName(c.Name) == "git" {
					r.Argv = nr.orig // a git form: the program's own words (named.orig)
				}
				if k := r.Key(); !seen[k] {
					seen[k] = true
					if i == twin {
						an.twins = append(an.twins, len(an.reqs))
					}
					an.reqs = append(an.reqs, r)
				}
			}
		}
	}
	if an.role.readsCode && ev.StdinFile != "" && len(an.reqs) > 0 {
		// A program reading its code from the file on its stdin (bash <
		// deploy.sh) runs that file: a rule naming it holds.
		r := an.reqs[0]
		name := filepath.Base(ev.StdinFile)
		r.Target.Resource, r.Target.Command, r.Argv, r.Target.Option = name, name, []string{name}, "its code from stdin"
		an.reqs = append(an.reqs, r)
	}
	return an
}

// raiseTwins decides an emptying's own-words request (execAnalysis.twins)
// at the emptying's critical risk where a rule does so at that risk (a
// deny rule, or an ask rule naming the program, that needs critical risk
// and matches only the expanded operands: review rev20 H1): the line's
// approval of the named removal does not settle such a rule. Where only
// the built-in exec_critical_risk would ask, it stays high, so the
// approval holds. The check (grants.RuleDecidesExec) decides nothing.
func raiseTwins(p *grants.Policy, an *execAnalysis) {
	for _, i := range an.twins {
		r := an.reqs[i]
		r.Risk = grants.RiskCritical
		if p.RuleDecidesExec(r) {
			an.reqs[i].Risk = grants.RiskCritical
		}
	}
}

// appendNew appends to reqs each of more whose key it does not hold yet
// (a multi-call binary's names give the same install twice).
func appendNew(reqs, more []grants.Request) []grants.Request {
	for _, r := range more {
		if !slices.ContainsFunc(reqs, func(o grants.Request) bool { return o.Key() == r.Key() }) {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// addInstalls appends an's packages, and the commands they index, to all.
func addInstalls(all *cmdline.Analysis, an cmdline.Analysis) {
	if len(an.Packages) == 0 {
		return
	}
	off := len(all.Commands)
	all.Commands = append(all.Commands, an.Commands...)
	for _, pk := range an.Packages {
		pk.Command += off
		all.Packages = append(all.Packages, pk)
	}
}

// named is one name a program is decided by, with the words after it.
type named struct {
	name string
	rest []string
	// elsewhere: a git form made by dropping global options that move
	// the folder it works in (git -C sub clean -fdx): its removals are the
	// program's own request's, which reads them with the folder.
	elsewhere bool
	// orig, for a git form, is the words of the program it was made from
	// (git -c remote.origin.pushurl=X push origin main): the form's
	// request has them as its argv, so an approval of `git push origin
	// main` (its key has the argv) is not this one's (review rev20d H2),
	// while its command, the form, is what rules match.
	orig []string
}

// addNamed appends n unless names holds the same name and words.
func addNamed(names []named, n named) []named {
	for _, o := range names {
		if o.name == n.name && slices.Equal(o.rest, n.rest) {
			return names
		}
	}
	return append(names, n)
}

// gitForms are the other forms n is git by: git runs the builtin its
// argv[0] names after "git-" (git's dashed programs such as
// /usr/lib/git-core/git-push, or exec -a git-push git) and reads its
// subcommand after its global options (git -C dir push, git --no-pager
// push, every reading of an option it does not know: cmdline.GitSubcommands);
// a subcommand that is no builtin is also the builtin help.autocorrect
// would run in git's own process (git psuh is git push), and the plumbing
// that pushes (send-pack, http-push) is git push too (cmdline.GitNames).
// Each form is "git SUB …", so a rule on `git push*` holds for all of
// them. (An alias, given with -c or in a configuration file, git runs by
// executing itself again with the alias expanded: that exec is decided as
// any other.)
func gitForms(n named) []named {
	var out []named
	orig := n.orig
	if orig == nil {
		orig = append([]string{n.name}, n.rest...)
	}
	if sub, ok := strings.CutPrefix(n.name, "git-"); ok && sub != "" {
		n = named{name: "git", rest: append([]string{sub}, n.rest...), orig: orig}
		out = append(out, n)
	}
	if n.name != "git" {
		return out
	}
	for _, i := range cmdline.GitSubcommands(n.rest) {
		for _, sub := range cmdline.GitNames(n.rest[i]) {
			if i > 0 || sub != n.rest[0] {
				moved := sub == n.rest[i] && slices.ContainsFunc(n.rest[:i], func(w string) bool { return strings.HasPrefix(w, "-C") })
				out = append(out, named{name: "git", rest: append([]string{sub}, n.rest[i+1:]...), elsewhere: moved, orig: orig})
			}
		}
	}
	return out
}

// gitLineRequests are the requests of the other forms a git command of a
// line is git by (gitForms: git -C . push is git push), made as the exec
// gate makes them, when a deny or ask rule names git: such a rule then
// holds before the line runs, on the host too (where no gate runs), and
// an approval given for the line holds for the program. (Only then, as for
// base names: any other rule decides every form alike.)
//
// A removal named by the folder it empties (emptyingWords: rm -rf
// <every entry of WS>) is decided by its own operands too, as the exec
// gate decides it, when a deny or ask rule can name the program: such a
// rule on the words (re:.*\.git.*) then holds for the line (review rev20
// H1), with its operands where the folder's name stood (emptyingOwnWords).
func gitLineRequests(p *grants.Policy, c cmdline.Command, cwd string, surface grants.Surface) []grants.Request {
	base := programName(c.Name)
	var reqs []grants.Request
	if emptyingNamed(c) && p.NamesProgram(base) {
		words := emptyingOwnWords(c)
		reqs = append(reqs, grants.Request{
			Capability: grants.CapProcessExec, Surface: surface, Argv: words, Cwd: cwd,
			Target: grants.Target{ToolName: Name, Resource: c.Name, Command: joinWords(words), Option: c.Option},
			Risk:   max(c.Risk, grants.BaseRisk(grants.CapProcessExec, surface)),
		})
	}
	if len(c.Words) == 0 || base != "git" && !strings.HasPrefix(base, "git-") || !p.NamesProgram("git") {
		return reqs
	}
	for _, f := range gitForms(named{name: base, rest: c.Words[1:]}) {
		words := append([]string{"git"}, f.rest...)
		r := grants.Request{
			Capability: grants.CapProcessExec, Surface: surface, Argv: f.orig, Cwd: cwd,
			Target: grants.Target{ToolName: Name, Resource: "git", Command: joinWords(words)},
			Risk:   grants.RiskCritical,
		}
		if cmds, err := cmdline.AnalyzeArgv(words); err != nil || len(cmds) == 0 {
			r.Target.Option = fmt.Sprintf("git form not analysed: %v", err)
		} else {
			fc := cmds[0] // git itself: what it runs is the line's own analysis
			if !inWorkspace(cwd, p.Workspace) {
				raiseOutside(&fc, cwd)
			}
			r.Risk, r.Target.Option = max(fc.Risk, grants.BaseRisk(grants.CapProcessExec, surface)), fc.Option
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// unknownDir stands for a folder known only when the command runs: an
// absolute path, so raiseOutside takes every relative operand from it as
// outside the workspace.
const unknownDir = grants.CwdKnownWhenRun

// raiseByFolder raises c (a command of a line, or one a program's argv
// runs, started from cwd) as the folder it runs in says, and returns that
// folder: cwd, or where the cd commands before it lead (c.Dir). From a
// folder outside the workspace ws, or the line's own when a cd may not
// have been reached, raiseOutside; from a folder known only when run
// (cd "$d"), when unknownOutside, raiseOutside from unknownDir (every
// relative operand is outside); and raiseEmptying, from the line's folder
// too when the cd may not have moved the shell (c.DirOrLine), reporting
// whether it listed ws. An empty ws skips all of it (tests of the rest).
func raiseByFolder(c *cmdline.Command, cwd, ws string, unknownOutside bool) (dir string, listed bool) {
	if ws == "" {
		return cwd, false
	}
	if !inWorkspace(cwd, ws) {
		raiseOutside(c, cwd)
	}
	switch {
	case c.Dir == cmdline.Dynamic:
		if unknownOutside {
			raiseOutside(c, unknownDir)
		}
		return cwd, false
	case c.Dir == "":
		dir = cwd
	case filepath.IsAbs(c.Dir):
		dir = c.Dir
	default:
		dir = filepath.Join(cwd, c.Dir)
	}
	if dir != cwd && !inWorkspace(dir, ws) {
		raiseOutside(c, dir)
	}
	raiseThroughLinks(c, dir, ws)
	listed = raiseEmptying(c, dir, ws)
	if c.DirOrLine && dir != cwd {
		// The cd may not have moved the shell: the stricter of the two.
		home := *c
		raiseThroughLinks(&home, cwd, ws)
		listed = raiseEmptying(&home, cwd, ws) || listed
		if home.Risk > c.Risk {
			*c = home
		}
	}
	return dir, listed
}

// raiseOutside raises c (a simple command run from cwd, a folder outside
// the workspace) to critical when it is critical with its relative
// operands taken from cwd: rm -r x there removes cwd/x. Only a critical
// answer is taken (it is what refuses a program at exec time); an option
// word (starting with "-") is left as it is, unless it follows "--"
// (rm -r -- -x/../victim: every word after "--" is an operand). The line's requests (tool.go)
// and the exec gate's go through it alike, so an approval given for the
// line holds for the program.
func raiseOutside(c *cmdline.Command, cwd string) {
	if c.Risk >= grants.RiskCritical || len(c.Words) < 2 {
		return
	}
	abs := make([]string, len(c.Words))
	changed, operands := false, false
	for i, w := range c.Words {
		abs[i] = w
		if i > 0 && w != "" && (operands || w[0] != '-') && !filepath.IsAbs(w) {
			abs[i], changed = cwd+"/"+w, true
		}
		operands = operands || i > 0 && w == "--"
	}
	if !changed {
		return
	}
	// The command itself is the analysis's first (what a wrapper runs
	// comes after, with words of its own).
	if alt, err := cmdline.AnalyzeArgv(abs); err == nil && len(alt) > 0 && alt[0].Risk >= grants.RiskCritical {
		c.Risk, c.Option = grants.RiskCritical, alt[0].Option
	}
}

// raiseThroughLinks raises c (a recursive removal run from cwd) to
// critical when an operand leads, through a symlink on its way, outside
// the workspace ws or to ws itself or above: rm -rf link/ and rm -rf
// link/* with link -> a writable root elsewhere remove there, whatever
// the text says. Each operand is resolved as the kernel takes it now
// (filepath.EvalSymlinks from cwd, the real folder at exec): its last
// name only when it ends in "/", "." or ".." (rm removes a symlink
// itself, not its target), a glob's folder part. An operand that is not
// there removes nothing; any other failure to resolve is critical (fail
// closed).
func raiseThroughLinks(c *cmdline.Command, cwd, ws string) {
	if c.Risk >= grants.RiskCritical || len(c.Removes)+len(c.Globs) == 0 || ws == "" || !filepath.IsAbs(cwd) {
		return
	}
	roots := []string{ws}
	if r, err := filepath.EvalSymlinks(ws); err == nil && r != ws {
		roots = append(roots, r)
	}
	judge := func(target string, linked bool) string {
		how := ""
		if linked {
			how = " (through a symlink)"
		}
		for _, r := range roots {
			if target == r || strings.HasPrefix(r, target+"/") || target == "/" {
				return "rm -r of the workspace" + how
			}
		}
		for _, r := range roots {
			if inWorkspace(target, r) {
				return ""
			}
		}
		return "rm -r outside the workspace" + how
	}
	resolve := func(raw string, follow bool) string {
		if !filepath.IsAbs(raw) {
			raw = cwd + "/" + raw
		}
		base := ""
		if !follow {
			raw, base = raw[:strings.LastIndex(raw, "/")], raw[strings.LastIndex(raw, "/")+1:]
			if raw == "" {
				raw = "/"
			}
		}
		p, err := filepath.EvalSymlinks(raw)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return ""
		case err != nil:
			return "rm -r through a path that cannot be resolved (" + err.Error() + ")"
		}
		return judge(filepath.Join(p, base), p != filepath.Clean(raw))
	}
	for _, op := range c.Removes {
		t := strings.TrimRight(op, "/")
		follow := t != op || t == "." || t == ".." || strings.HasSuffix(t, "/.") || strings.HasSuffix(t, "/..")
		if t == "" {
			t = "/"
		}
		if why := resolve(t, follow); why != "" {
			c.Risk, c.Option = grants.RiskCritical, why
			return
		}
	}
	for _, g := range c.Globs {
		i := strings.LastIndex(g, "/")
		if i < 0 {
			continue // in cwd: the folder the command runs in
		}
		dir := g[:i]
		if strings.ContainsAny(dir, "*?[") {
			continue // a folder the glob chooses: the exec's operands are judged
		}
		if dir == "" {
			dir = "/"
		}
		if why := resolve(dir, true); why != "" {
			c.Risk, c.Option = grants.RiskCritical, why
			return
		}
	}
}

// sparedPer: a removal may leave one of every sparedPer of the workspace
// root's non-hidden entries and still count as removing all of them
// (raiseEmptying).
const sparedPer = 16

// raiseEmptying raises c (a simple command run from cwd) to critical when
// it removes the workspace ws, or every entry of it: as removing the
// folder, so that `rm -rf *` is as critical when a script's shell expanded
// the glob (rm -rf a b c) as on a line. The rule: c is a recursive removal
// (c.Removes: rm -r, find ROOTS -delete) and either an operand resolves to
// ws or a folder above it, or at least two operands are entries of ws and
// they name all of ws's entries that do not start with "." (what * names)
// but at most ⌊n/16⌋ of those n (when there are none, every entry): a file
// created between the shell's glob and this listing does not take the
// answer down, a removal that keeps most of the root does not go up.
// A line's glob operands (c.Globs: rm -rf * before bash expands it) are
// expanded against the same listing.
//
// An emptying removal whose every operand is such an entry is named by
// the folder it empties, not by its operands (emptyingWords): the line's
// `rm -rf *` and the exec's `rm -rf a b c` are then the same request, so
// the person's approval of the line holds for the program, and only for
// the same program with the same options emptying the same folder.
//
// Only that check lists ws (one getdents), and it reports whether it did:
// the answer then depends on the folder, not the event, so the exec gate
// does not keep it. A listing that fails is critical (fail closed).
// Folders outside the workspace need no listing: an operand there is
// already outside (absolute, "..", or raiseOutside's).
func raiseEmptying(c *cmdline.Command, cwd, ws string) (listed bool) {
	if len(c.Removes)+len(c.Globs) == 0 || ws == "" || !filepath.IsAbs(cwd) {
		return false
	}
	// A command critical for its own reason keeps it, unless it is an
	// emptying that emptyingWords names (rm -rf * on a line).
	critical := c.Risk >= grants.RiskCritical
	named, whole := rootRemovals(c, cwd, ws)
	if whole {
		if !critical {
			c.Risk, c.Option = grants.RiskCritical, "rm -r of the workspace"
		}
		return false
	}
	var patterns []string
	for _, g := range c.Globs {
		if p := resolveIn(cwd, g); filepath.Dir(p) == ws {
			patterns = append(patterns, strings.ReplaceAll(filepath.Base(p), "[!", "[^"))
		}
	}
	if len(named) < 2 && len(patterns) == 0 {
		return false
	}
	entries, err := fstools.EntryNames(ws)
	if err != nil {
		if !critical {
			c.Risk, c.Option = grants.RiskCritical, "rm -r in the workspace root (unlisted: "+err.Error()+")"
		}
		return true
	}
	for _, e := range entries {
		for _, pat := range patterns {
			// bash's * and ? do not match a leading "."
			if ok, _ := filepath.Match(pat, e); ok && (pat[0] == '.' || e[0] != '.') {
				named[e] = true
			}
		}
	}
	if len(named) < 2 {
		return true
	}
	if !emptiesAll(entries, named) {
		return true
	}
	if words, ok := emptyingWords(c, cwd, ws); ok {
		c.Words, c.Line = words, joinWords(words)
	} else if critical {
		return true
	}
	c.Risk, c.Option = grants.RiskCritical, "rm -r of every entry of the workspace"
	return true
}

// rootRemovals are the names of the entries of the workspace root ws
// that c (a simple command run from cwd) removes by its operands
// (c.Removes; a folder that is ws through a symlink counts: a script's
// rm -rf link/* reaches the gate expanded); whole when one of them is ws
// itself or above it.
func rootRemovals(c *cmdline.Command, cwd, ws string) (named map[string]bool, whole bool) {
	named = map[string]bool{}
	for _, op := range c.Removes {
		p := resolveIn(cwd, op)
		if p == ws || strings.HasPrefix(ws, p+"/") || p == "/" {
			return named, true
		}
		if dir := filepath.Dir(p); dir == ws || realDir(dir) == ws {
			named[filepath.Base(p)] = true
		}
	}
	return named, false
}

// emptiesAll reports whether removing the entries named of a folder
// whose entries are those empties it: all its visible entries but at most
// one of every sparedPer (the hidden ones it spares do not count: rm -rf *
// leaves .git and empties the folder all the same), or, when it has none
// visible, every hidden one.
func emptiesAll(entries []string, named map[string]bool) bool {
	visible, spared, sparedHidden := 0, 0, 0
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e, "."):
			if !named[e] {
				sparedHidden++
			}
		case !named[e]:
			visible++
			spared++
		default:
			visible++
		}
	}
	return visible > 0 && spared <= visible/sparedPer || visible == 0 && sparedHidden == 0
}

// realDir is dir with its symlinks resolved ("" when it cannot be).
func realDir(dir string) string {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	return d
}

// emptyingPrefix starts the word emptyingWords puts in place of the operands.
const emptyingPrefix = "<every entry of "

// emptyingNamed reports whether c is a removal emptyingWords named by the
// folder it empties.
func emptyingNamed(c cmdline.Command) bool {
	return len(c.Words) > 1 && slices.ContainsFunc(c.Words[1:], func(w string) bool { return strings.HasPrefix(w, emptyingPrefix) })
}

// emptyingOwnWords are the words of a removal emptyingWords named by the
// folder it empties, with the operands that name stood for (those of
// c.Removes and c.Globs not among its other words) in its place.
func emptyingOwnWords(c cmdline.Command) []string {
	var ops, out []string
	for _, o := range slices.Concat(c.Removes, c.Globs) {
		if !slices.Contains(c.Words, o) {
			ops = append(ops, o)
		}
	}
	for _, w := range c.Words {
		if strings.HasPrefix(w, emptyingPrefix) {
			out = append(out, ops...)
		} else {
			out = append(out, w)
		}
	}
	return out
}

// resolveIn is the clean absolute path of op taken from the folder cwd.
func resolveIn(cwd, op string) string {
	if !filepath.IsAbs(op) {
		op = cwd + "/" + op
	}
	return filepath.Clean(op)
}

// emptyingWords are c's words naming the folder ws it empties in place of
// its operands that are entries of ws (c.Removes, c.Globs; plainEntry):
// "<every entry of ws>" where the first of them was, every other word (an
// option, an option's value, an operand outside, an expansion) as it is
// and in its place. So the line's `rm -rf *` or `tar --remove-files -cf
// /tmp/a.tar *` and the exec's expanded operands are the same request, and
// no other program or word is.
func emptyingWords(c *cmdline.Command, cwd, ws string) ([]string, bool) {
	if len(c.Words) == 0 {
		return nil, false
	}
	words := []string{c.Words[0]}
	opts, named := true, false
	for _, w := range c.Words[1:] {
		switch {
		case opts && w == "--":
			opts = false
			words = append(words, w)
		case opts && len(w) > 1 && w[0] == '-':
			words = append(words, w)
		case slices.Contains(c.Removes, w) && plainEntry(w, cwd, ws, false),
			slices.Contains(c.Globs, w) && plainEntry(w, cwd, ws, true):
			if !named {
				words, named = append(words, emptyingPrefix+ws+">"), true
			}
		default:
			words = append(words, w)
		}
	}
	return words, named
}

// plainEntry reports whether the operand op (from cwd) names an entry of
// ws as bash's * gives it: a name that does not start with "." (* spares
// hidden entries), written plainly (./name, ../name, ws/name: no trailing
// "/" or "/.", no "//", no ".." after a name), and, unless it is a glob,
// no symlink (Lstat now: rm -r link/ empties where it leads, and a link
// to "." is the workspace itself; an Lstat error is no plain entry). Only
// such operands let the removal be named by the folder it empties.
func plainEntry(op, cwd, ws string, glob bool) bool {
	if dotDotAfterName(op) || strings.Contains(op, "//") || filepath.Dir(resolveIn(cwd, op)) != ws {
		return false
	}
	name := op
	if filepath.IsAbs(op) {
		name = strings.TrimPrefix(op, ws+"/")
	} else {
		for strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") {
			_, name, _ = strings.Cut(name, "/")
		}
	}
	if name == "" || name[0] == '.' || strings.Contains(name, "/") {
		return false
	}
	if glob {
		return true
	}
	fi, err := os.Lstat(filepath.Join(ws, name))
	return err == nil && fi.Mode()&os.ModeSymlink == 0
}

// dotDotAfterName reports whether op has a ".." after a name (link/../x):
// the kernel takes it from where that name leads, a symlink's target too,
// not from the text, so such an operand is not known to be an entry of
// the folder its text names. Leading ".." (from the folder the command
// runs in) is taken as the kernel takes it.
func dotDotAfterName(op string) bool {
	named := false
	for _, part := range strings.Split(op, "/") {
		switch part {
		case "", ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// inWorkspace reports whether the folder dir is the workspace ws or lies
// beneath it.
func inWorkspace(dir, ws string) bool {
	return dir == ws || strings.HasPrefix(dir, ws+"/")
}

// programName is the base name a rule on programs matches (Dynamic stays).
func programName(name string) string {
	if name == cmdline.Dynamic {
		return name
	}
	if b := filepath.Base(name); b != "." && b != "/" {
		return b
	}
	return name
}

// redactEvent returns ev with the secrets' values redacted from its text.
func redactEvent(ev sandbox.ExecEvent, secrets []webtools.Secret) sandbox.ExecEvent {
	if len(secrets) == 0 {
		return ev
	}
	ev.Exe = webtools.Redact(ev.Exe, secrets)
	ev.ExecPath = webtools.Redact(ev.ExecPath, secrets)
	ev.Cwd = webtools.Redact(ev.Cwd, secrets)
	ev.Written = webtools.Redact(ev.Written, secrets)
	for _, list := range []*[]string{&ev.Argv, &ev.Env} {
		*list = slices.Clone(*list)
		for i, a := range *list {
			(*list)[i] = webtools.Redact(a, secrets)
		}
	}
	return ev
}

func joinWords(w []string) string {
	n := 0
	for _, s := range w {
		n += len(s) + 1
	}
	b := make([]byte, 0, n)
	for i, s := range w {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, s...)
	}
	return string(b)
}

// The requests execGate keeps per call: at most maxCachedEvents events,
// none whose key is over maxCachedKey bytes (an argv of megabytes is
// decided afresh each time rather than kept), and maxCachedBytes of keys
// and requests' text in all; past a bound the cache is cleared.
const (
	maxCachedEvents = 256
	maxCachedKey    = 8 << 10
	maxCachedBytes  = 2 << 20
)

// requestsSize is about the bytes reqs keep alive: their text and argv.
func requestsSize(reqs []grants.Request) int {
	n := 0
	for _, r := range reqs {
		n += len(r.Target.Command) + len(r.Target.Option) + len(r.Target.Resource) + len(r.Cwd) + 256
		for _, a := range r.Argv {
			n += len(a) + 16
		}
	}
	return n
}

// execGate is the sandbox's exec gate for one call: the program is
// identified against the host programs that matter by name (programs),
// every request of it is decided (and audited) by decideExec; the program runs only
// when every one is allowed. The values of the secrets brokered into the
// command are redacted from the event first ("[REDACTED:NAME]", as
// everywhere): what is decided, audited and listed never holds them.
//
// The requests of an event depend on nothing but the event (its PID
// aside), the call's secrets, table and workspace, so they are kept for
// the call by the event's key (maxCachedEvents of them): a loop running
// the same program with the same words skips building them again. Every
// exec is still decided and audited; a different argv, folder or file is
// a different key. Requests that depend on a listing of the workspace
// (raiseEmptying's rm -r of its entries) or on the project's files (an
// install's package.install requests, from the program's own folder, as
// the line's: installRequests) are not kept: the folder may have changed
// by the next exec. An install is decided as grants.DecideExec says: deny
// rules, the mode's deny and ask rules naming a package or index hold (an
// ask lets it run only when the person approved that package from that
// index in this call or for the session). The cache is bounded in events and bytes (an event
// with a large argv is not kept), so a loop of big argvs cannot hold
// gigabytes.
//
// The transport of a push (git's remote helpers, send-pack, receive-pack)
// is decided as part of that push, and only it (pushLineage): its
// push-form requests carry the push's, whose decision the server's gate
// then applies to them.
func execGate(ctx context.Context, env *toolkit.Env, refused *lineLog, secrets []webtools.Secret, programs *programTable, hidden []string, call callFacts) sandbox.ExecGate {
	cache := map[string]cachedExec{} // one goroutine per call calls the gate
	cached := 0                      // the bytes cache holds (requestsSize and keys)
	tally := &emptyingTally{ws: env.Policy.Workspace}
	flow := &pipeFlow{}
	var pushes pushLineage // pushes and their transport (pushplumbing.go)
	pushedAny := false     // a push was let run in this call
	var key []byte
	return func(ev sandbox.ExecEvent) bool {
		if tally.ws != "" {
			// The root as it was before the command's first program
			// ran: what that makes later (a link to move entries out
			// through) spares nothing (review rev20g F5).
			tally.list()
		}
		key = sandbox.AppendEventKey(key[:0], &ev)
		hit, ok := cache[string(key)]
		reqs, role := hit.reqs, hit.role
		var removed []string           // never cached: an event with removals is listed
		var moves, children []rootMove // nor one with moves (its folders are read)
		if !ok {
			red := redactEvent(ev, secrets)
			// An alias is read from the files as they are when the program
			// runs (a command may have written one): not kept.
			aliased := false
			read := aliasReader(env.Policy, ev.Cwd, grants.SurfaceSandbox)
			an := execAnalyzeIn(red, programs.identify(ev), env.Policy.Workspace, func(manager, name string, elsewhere bool) ([]string, bool) {
				aliased = true
				return read(manager, name, elsewhere)
			})
			an.listed = an.listed || aliased
			raiseTwins(env.Policy, &an)
			reqs, removed, role, moves, children = an.reqs, an.rootRemoved, an.role, an.rootMoves, an.childRemoved
			// A corepack shim fetches the package manager it runs.
			shim, shimErr := shimInstalls(env.Policy, red)
			addInstalls(&an.installs, shim)
			an.listed = an.listed || runsNode(ev)
			if len(an.installs.Packages) > 0 || shimErr != nil {
				more, _, err := installRequests(env.Policy, an.installs, ev.Cwd, grants.SurfaceSandbox, installsAt{exec: true, hidden: hidden})
				if err == nil {
					err = shimErr
				}
				if err != nil {
					// Decided and audited like any program that cannot be
					// verified (critical: refused), never a silent kill.
					words := red.Argv
					more = []grants.Request{{Capability: grants.CapProcessExec, Surface: grants.SurfaceSandbox, Cwd: ev.Cwd, Argv: words, Risk: grants.RiskCritical,
						Target: grants.Target{ToolName: Name, Resource: filepath.Base(ev.Exe), Command: joinWords(words),
							Option: OptionUnverifiable + " (its installs: " + err.Error() + ")"}}}
				}
				reqs = appendNew(reqs, more)
				an.listed = true // the project's files may change by the next exec
			}
			if size := len(key) + requestsSize(reqs); !an.listed && len(key) <= maxCachedKey && size <= maxCachedBytes {
				if len(cache) >= maxCachedEvents || cached+size > maxCachedBytes {
					clear(cache)
					cached = 0
				}
				cache[string(key)] = cachedExec{reqs: reqs, role: role}
				cached += size
			}
		}
		if len(reqs) == 0 {
			return false
		}
		// What the gate adds (below) is decided on the file system and
		// the call's earlier programs, never kept, and always critical as
		// it stands: a push's approval never settles it (only the
		// analyzed requests of a push's transport carry the push's).
		analyzed := len(reqs)
		raise := func(base grants.Request, why string) {
			base.Risk, base.Target.Option = grants.RiskCritical, why
			reqs = append(slices.Clip(reqs), base)
		}
		// Where a push reads its configuration (pushRepos).
		if r, own := call.repos.ownRepoPush(reqs, ev.Cwd, ev.Argv, ev.GitChanged); own {
			raise(r, optionOwnRepo)
		}
		in, out := pipesOf(&ev)
		if !call.pipedCode && flow.joins(role, in, out) {
			raise(reqs[0], optionPipedCode)
		}
		if len(removed)+len(children) > 0 {
			if why := tally.empties(removed, children); why != "" {
				raise(reqs[0], why)
			}
		}
		if pushedAny && len(ev.GitChanged) > 0 {
			// git read the repository's configuration after its exec
			// stop: what it reaches its remote through starts now, and
			// is refused when the command changed the repository in
			// between (review rev20f H2).
			raise(reqs[0], optionRepoChanged)
		}
		under, plumbing := pushes.under(ev)
		var push *grants.Request
		for i, r := range reqs {
			if plumbing && pushForm(r) && i < analyzed {
				r.Under = &under // a copy: the cached requests stay as they are
			}
			if d := decideExec(ctx, env, r); d.Effect != grants.Allow {
				refused.add(d.Explain())
				return false
			}
			if !plumbing && push == nil && pushForm(r) && i < analyzed {
				push = &r
			}
		}
		if push != nil {
			pushes.pushed(ev, *push)
			pushedAny = true
		}
		tally.add(removed, moves, children)
		flow.add(role, in, out)
		return true
	}
}

// cachedExec is what execGate keeps of an event it decided.
type cachedExec struct {
	reqs []grants.Request
	role pipeRole
}

// callFacts are what the exec gate knows of its call besides the policy:
// whose repositories a push reads (pushRepos), and whether the line's
// own decision let a download be piped into a program's code (a critical
// `curl … | sh` or `bash <(curl …)` request allowed, the person having
// approved it): the gate's pipe flow then refuses none in this call, as
// that pipeline reaches the gate with other words (bash /dev/fd/63).
type callFacts struct {
	repos     pushRepos
	pipedCode bool
}

// pipedCodeAllowed reports whether decisions (the line's) let a download
// be piped into a program that runs it.
func pipedCodeAllowed(decisions []grants.Decision) bool {
	return slices.ContainsFunc(decisions, func(d grants.Decision) bool {
		return d.Effect == grants.Allow && d.Request.Risk >= grants.RiskCritical && strings.HasPrefix(d.Request.Target.Option, "curl | ")
	})
}

// scriptCommand is c (a shell or interpreter given a script file:
// Command.Script) as the script itself, with the words after it: sh
// deploy.sh x is decided as deploy.sh x too, on the line and at exec.
func scriptCommand(c cmdline.Command) (cmdline.Command, bool) {
	if c.Script == "" || len(c.Words) < 2 {
		return c, false
	}
	i := slices.Index(c.Words[1:], c.Script)
	if i < 0 {
		return c, false
	}
	sc := c
	sc.Name, sc.Script, sc.Program = c.Script, "", ""
	sc.Words = slices.Concat([]string{c.Script}, c.Words[i+2:])
	sc.Line = joinWords(sc.Words)
	return sc, true
}
