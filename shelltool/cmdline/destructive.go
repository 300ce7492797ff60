package cmdline

import (
	"path"
	"strings"
)

// rm: every delete is high; a recursive delete of "/", "~", an absolute,
// parent or workspace-root path, a top-level glob or a target starting with
// an expansion is critical.
func (k *call) rm() {
	recursive := false
	var targets []arg
	opts := true
	for _, a := range k.args {
		t := a.text
		switch {
		case opts && a.lit && t == "--":
			opts = false
		case opts && a.lit && strings.HasPrefix(t, "--"):
			if longIs(t, "--recursive") {
				recursive = true
			}
			if longIs(t, "--no-preserve-root") {
				k.raise(critical, "rm --no-preserve-root")
			}
		case opts && a.lit && len(t) > 1 && t[0] == '-':
			if strings.ContainsAny(t, "rR") {
				recursive = true
			}
		default:
			targets = append(targets, a)
		}
	}
	if !recursive {
		k.raise(high, "rm")
		return
	}
	k.removeOperands("rm -r", targets, false)
}

// removeOperands records that the command removes the trees targets name
// (as rm -r does; what opt says it is): high, critical for one outside the
// workspace or the whole of it (dangerousTarget) and when elsewhere (it
// takes them from a folder the classifier cannot follow), and the literal
// operands in Command.Removes and Globs, which the gate judges against the
// workspace (raiseEmptying: every entry of its root is its emptying).
func (k *call) removeOperands(opt string, targets []arg, elsewhere bool) {
	k.raise(high, opt)
	for _, t := range targets {
		if dangerousTarget(t, true) {
			k.raise(critical, opt+" outside")
		}
	}
	if elsewhere {
		k.raise(critical, opt+" in another folder")
	}
	k.removes, k.globs = append(k.removes, literalTrees(targets)...), append(k.globs, literalGlobs(targets)...)
}

// mv: moving files to a folder outside the workspace takes them out of it:
// its sources are removed from the workspace as rm -r's are (moving every
// entry of the root out empties it); a move within it loses nothing.
func (k *call) mv() {
	var ops []arg
	var dest *arg
	opts := true
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		t := a.text
		switch {
		case opts && a.lit && t == "--":
			opts = false
		case opts && a.lit && (t == "-t" || t == "--target-directory") && i+1 < len(k.args):
			i++
			dest = &k.args[i]
		case opts && a.lit && strings.HasPrefix(t, "--target-directory="):
			dest = &arg{text: strings.TrimPrefix(t, "--target-directory="), lit: true}
		case opts && a.lit && strings.HasPrefix(t, "-t") && len(t) > 2:
			dest = &arg{text: t[2:], lit: true}
		case opts && a.lit && (t == "-S" || t == "--suffix") && i+1 < len(k.args):
			i++
		case opts && a.lit && len(t) > 1 && t[0] == '-':
		default:
			ops = append(ops, a)
		}
	}
	if dest == nil && len(ops) > 1 {
		dest, ops = &ops[len(ops)-1], ops[:len(ops)-1]
	}
	if dest == nil || !dangerousTarget(*dest, false) {
		return
	}
	k.removeOperands("mv out of the workspace", ops, false)
}

// literalTrees are the texts of the literal operands without a glob (what
// Command.Removes lists: the shell already expanded a glob the program
// sees, and one on a line is judged by dangerousTarget).
func literalTrees(targets []arg) []string {
	var out []string
	for _, t := range targets {
		if t.lit && !t.glob && t.text != "" {
			out = append(out, t.text)
		}
	}
	return out
}

// literalGlobs are the texts of the literal operands with a glob.
func literalGlobs(targets []arg) []string {
	var out []string
	for _, t := range targets {
		if t.lit && t.glob {
			out = append(out, t.text)
		}
	}
	return out
}

// dangerousTarget reports whether a path operand may be outside the
// workspace or the whole of it: absolute, "~", "..", starting with an
// expansion (which may be empty or absolute) and, when dotRisky, "." and
// top-level globs.
func dangerousTarget(a arg, dotRisky bool) bool {
	t := a.text
	if !a.lit {
		return a.bare || strings.HasPrefix(t, "\"$") || strings.HasPrefix(t, "$") || strings.HasPrefix(t, "`")
	}
	if t == "" {
		return false
	}
	if t[0] == '/' || t[0] == '~' {
		return true
	}
	c := path.Clean(t)
	if c == ".." || strings.HasPrefix(c, "../") {
		return true
	}
	return dotRisky && (c == "." || strings.HasPrefix(c, "*") || strings.HasPrefix(c, ".*"))
}

// chmod, chown, chgrp: a recursive change of "/", "~" or an absolute path is critical.
func (k *call) chmod() {
	recursive := false
	ops := []arg{}
	for _, a := range k.args {
		t := a.text
		if a.lit && (t == "-R" || longIs(t, "--recursive") || shortHas(t, "R")) {
			recursive = true
			continue
		}
		if a.lit && strings.HasPrefix(t, "-") && len(t) > 1 && !isMode(t) {
			continue
		}
		ops = append(ops, a)
	}
	if len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	for _, t := range ops {
		if !dangerousTarget(t, false) {
			continue
		}
		if recursive {
			k.raise(critical, k.name+" -R outside")
		} else {
			k.raise(high, k.name+" outside")
		}
	}
}

func isMode(t string) bool { return strings.Trim(t, "-+=rwxXstugoa0123456789,") == "" }

// kill: a pid of -1 signals every process the user can reach.
func (k *call) kill() {
	args := k.args
	sig := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "-s" || t == "-n":
			i++
			sig = true
		case t == "--":
		case !sig && len(t) > 1 && t[0] == '-' && t != "-1":
			sig = true
		case !sig && t == "-1" && i+1 < len(args):
			sig = true // kill -1 PID: signal 1
		case t == "-1":
			k.raise(critical, "kill -1")
		}
	}
}

func (k *call) dd() {
	k.raise(high, "dd")
	for _, a := range k.args {
		if strings.HasPrefix(a.text, "of=") {
			k.raise(critical, "dd of=")
		}
	}
}

// fdisk and relatives: listing is high, anything else rewrites a disk.
func (k *call) fdisk() {
	if anyShort(k.args, "l") || hasWord(k.args, "--list") {
		k.raise(high, k.name)
	} else {
		k.raise(critical, k.name)
	}
}

func (k *call) telinit() {
	if len(k.args) > 0 && has("0 6", k.args[0].text) {
		k.raise(critical, k.name+" "+k.args[0].text)
	}
}

func (k *call) systemctl() {
	if sub, _ := firstOperand(k.args, ""); has("poweroff reboot halt kexec emergency rescue soft-reboot", sub) {
		k.raise(critical, "systemctl "+sub)
	}
}

func (k *call) sysctl() { k.flagIf(k.args, "-w", "sysctl -w") }

// crontab, at and batch schedule commands to run later.
func (k *call) crontab() {
	if !anyShort(k.args, "l") {
		k.raise(high, k.name)
	}
}
