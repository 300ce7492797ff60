package cmdline

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The folder a command runs in (Command.Dir), followed as bash follows it:
//
//   - a literal cd DIR or pushd DIR (options -L -P -e -@, "--") run by the
//     shell being walked moves it to DIR, taken from where it is. A cd
//     that fails leaves bash where it was, so the folder after it is where
//     it leads only when it cannot have failed for what follows (cd d && …,
//     cd d || exit) or when it left the line's own folder (which the caller
//     checks too: Command.DirOrLine); else Dynamic. cd with no operand, "~…",
//     "-", several operands, a word that is not literal, a relative DIR
//     (not ./ or ../) when the line sets CDPATH or may turn on shopt
//     cdable_vars, popd, pushd +N and a cd run by another
//     command (command cd, builtin cd, sudo cd) make it Dynamic; pushd -n
//     leaves it;
//   - a subshell, a pipeline's parts, $( ), <( ) and a background command
//     keep their cd to themselves, and so does a nested shell (sh -c);
//     eval's script moves the line's shell; any other nested script (trap)
//     that moves it makes it Dynamic;
//   - after a && b it is where b left it; a || b: b runs when a failed, so
//     from where a started if a did not move it, else from Dynamic, and
//     after it, where a left it unless b moved it (then Dynamic);
//   - if and case end where every branch ends, else Dynamic; a loop whose
//     body moves it makes every command of the loop and what follows Dynamic;
//   - a function's body runs where it is called: Dynamic when the line has
//     a cd anywhere, and a call of a function whose body moves it makes
//     what follows Dynamic.
//
// A wrapper that runs its command in another folder (env -C, chroot, sudo
// -D) makes that command's folder Dynamic. CDPATH and BASHOPTS from the
// environment and a sourced file's cd are not followed: the exec gate
// decides each program in the folder it really runs in.

// scanDirs reports whether the line has a cd, pushd, popd or eval
// anywhere (the literal name of a simple command), whether it may turn
// on bash's cdable_vars (shopt with that word, or any word not literal:
// cd NAME then goes to $NAME when NAME is no folder), and whether cd may
// not be the builtin (a function named cd, pushd or popd; alias; enable).
func scanDirs(f *syntax.File) (moves, cdableVars, shadowed bool) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok {
			for _, l := range append([]*syntax.Lit{fd.Name}, fd.Names...) {
				shadowed = shadowed || l != nil && has("cd pushd popd", l.Value)
			}
			return true
		}
		x, ok := n.(*syntax.CallExpr)
		if !ok || len(x.Args) == 0 {
			return true
		}
		switch x.Args[0].Lit() {
		case "alias", "enable":
			shadowed = true
		case "cd", "pushd", "popd", "eval":
			moves = true
		case "shopt":
			for _, w := range x.Args[1:] {
				if l := w.Lit(); l == "" || l == "cdable_vars" {
					cdableVars = true
				}
			}
		}
		return true
	})
	return moves, cdableVars, shadowed
}

// keepDir returns the function that puts the folder back where it is now
// (after a subshell).
func (a *analyzer) keepDir() func() {
	d := a.dir
	return func() { a.dir = d }
}

// lastPart follows the last part of a pipeline: a subshell, unless
// shopt -s lastpipe ran it in the line's shell, so a cd there makes what
// follows Dynamic.
func (a *analyzer) lastPart(restore func()) {
	end := a.dir
	restore()
	if end != a.dir {
		a.dir = Dynamic
	}
}

// reachedCd notes the last statement of the && chain s as a cd that has
// succeeded for what follows when it is a lone cd or pushd and when is
// true.
func (a *analyzer) reachedCd(s *syntax.Stmt, when bool) {
	for {
		b, ok := s.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.AndStmt {
			break
		}
		s = b.Y
	}
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if when && ok && len(ce.Args) > 0 && has("cd pushd", ce.Args[0].Lit()) && len(s.Redirs) == 0 && !s.Background {
		a.reached = append(a.reached, s)
	}
}

// ends reports a statement that does not return: exit or return.
func ends(s *syntax.Stmt) bool {
	ce, ok := s.Cmd.(*syntax.CallExpr)
	return ok && len(ce.Args) > 0 && has("exit return", ce.Args[0].Lit())
}

// orList walks a || b.
func (a *analyzer) orList(x *syntax.BinaryCmd, c ctx) {
	start := a.dir
	a.reachedCd(x.X, ends(x.Y)) // cd d || exit
	a.stmt(x.X, c)
	end := a.dir
	if end != start {
		a.dir = Dynamic
	}
	// b moved the folder when it ran a cd, even one that left a.dir as it
	// was (a cd while the folder is <dynamic>, or one made <dynamic>).
	from, cds := a.dir, a.cds
	a.stmt(x.Y, c)
	if a.dir == from && a.cds == cds {
		a.dir = end
	} else {
		a.dir = Dynamic
	}
}

// joinDirs sets the folder after branches that end in ends.
func (a *analyzer) joinDirs(ends []string) {
	a.dir = ends[0]
	for _, e := range ends[1:] {
		if e != a.dir {
			a.dir = Dynamic
		}
	}
}

// loopDir: a loop whose body moved the folder runs its next round from
// there, so its commands (from index first) and what follows are Dynamic.
func (a *analyzer) loopDir(start string, first int) {
	if a.dir == start {
		return
	}
	for i := first; i < len(a.out.Commands); i++ {
		a.out.Commands[i].Dir = Dynamic
	}
	a.dir = Dynamic
}

// nestedDir follows a nested script run by the command at parent that
// began in start: a shell's cd is its own, eval's is the line's shell's,
// any other's (a trap's, run at a time unknown) makes the folder Dynamic.
func (a *analyzer) nestedDir(start string, parent int) {
	name := baseName(a.out.Commands[parent].Words[0])
	switch {
	case a.dir == start:
	case isShell(familyName(name)):
		a.dir = start
	case name != "eval":
		a.dir = Dynamic
	}
}

// moveDir follows the folder past the simple command k run by parent.
func (a *analyzer) moveDir(k *call, parent int) {
	if slices.Contains(a.dirFuncs, k.name) {
		a.dir = Dynamic
		return
	}
	if !has("cd pushd popd", k.name) {
		return
	}
	a.cds++
	if parent != a.parent || k.name == "popd" {
		a.dir = Dynamic // command cd, sudo cd, ...; popd's stack is not followed
		return
	}
	var ops []arg
	opts := true
	for _, w := range k.args {
		switch t := w.text; {
		case opts && w.lit && t == "--":
			opts = false
		case opts && w.lit && k.name == "pushd" && t == "-n":
			return // only the stack changes
		case opts && w.lit && len(t) > 1 && t[0] == '-' && strings.Trim(t[1:], "LPe@") == "":
		default:
			ops = append(ops, w)
		}
	}
	if len(ops) != 1 || !ops[0].lit || ops[0].glob {
		a.dir = Dynamic
		return
	}
	// A cd that may fail (cd d; …) leaves the shell where it was: when
	// that is neither the line's folder (which the caller checks too) nor
	// where the cd leads, the folder is one of two: Dynamic.
	reached := a.cdReached
	a.cdReached = false
	old := a.dir
	defer func() {
		if !reached && old != "" && old != a.dir {
			a.dir = Dynamic
		}
		// From the line's folder: the shell may still be there.
		a.mayStayHome = a.mayStayHome || !reached && old == "" && a.dir != ""
	}()
	d := ops[0].text
	cdpath := !strings.HasPrefix(d, "/") && d != "." && d != ".." && !strings.HasPrefix(d, "./") && !strings.HasPrefix(d, "../")
	stack := k.name == "pushd" && (strings.HasPrefix(d, "+") || strings.HasPrefix(d, "-"))
	switch {
	case d == "" || d == "-" || strings.HasPrefix(d, "~") || stack:
		a.dir = Dynamic
	case cdpath && (a.env["CDPATH"] != nil || a.cdableVars):
		a.dir = Dynamic
	case strings.HasPrefix(d, "/") || a.dir == "":
		a.dir = cleanDir(d)
	case a.dir == Dynamic:
	default:
		a.dir = cleanDir(a.dir + "/" + d)
	}
}

// cleanDir is d cleaned, "" for the line's own folder.
func cleanDir(d string) string {
	if d = path.Clean(d); d == "." {
		return ""
	}
	return d
}
