package cmdline

import "strings"

// tar: options that run programs; --remove-files removes what it archives
// (tarRemoves).
func (k *call) tar() {
	k.tarRemoves()
	for i, a := range k.args {
		t := a.text
		if !a.lit {
			continue
		}
		switch {
		case strings.HasPrefix(t, "--"):
			for _, o := range []string{"--to-command", "--use-compress-program", "--checkpoint-action", "--info-script", "--new-volume-script", "--rsh-command"} {
				if longIs(t, o) {
					k.raise(high, "tar "+o)
				}
			}
		case strings.HasPrefix(t, "-") && strings.ContainsAny(t, "IF"):
			k.raise(high, "tar -I")
		case i == 0 && strings.ContainsAny(t, "IF") && !strings.Contains(t, "/") && !strings.Contains(t, "."):
			k.raise(high, "tar -I")
		}
	}
}

func (k *call) zip() {
	for _, a := range k.args {
		if strings.HasPrefix(a.text, "-TT") || longIs(a.text, "--unzip-command") {
			k.raise(high, "zip -TT")
		}
	}
	k.zipRemoves()
}

// tarValueLetters are GNU tar's short options that take a value (the next
// word, in the order of the letters, or the rest of their word).
const tarValueLetters = "fCbTXKNLgVFIH"

// tarValueOpts are its long options that take the next word as their value
// when written without "=".
const tarValueOpts = "--file --directory --files-from --exclude-from --exclude --transform --xform --owner --group --mode " +
	"--mtime --newer --after-date --newer-mtime --label --tape-length --blocking-factor --record-size --format " +
	"--use-compress-program --to-command --suffix --info-script --new-volume-script --rsh-command --checkpoint-action " +
	"--index-file --level --listed-incremental --occurrence --starting-file --strip-components --volno-file --sparse-version " +
	"--exclude-tag --exclude-tag-all --exclude-tag-under --hole-detection --quoting-style --quote-chars --no-quote-chars " +
	"--pax-option --set-mtime-format --atime-preserve --owner-map --group-map --add-file"

// tarRemoves: with --remove-files tar deletes the files it archives: its
// operands are removed as rm -r's are (Command.Removes, dangerousTarget:
// outside the workspace or the whole of it is critical). Any -C moves the
// folder they are taken from, and -T (--files-from) names them in a file:
// critical, as the classifier cannot follow either.
func (k *call) tarRemoves() {
	remove, moved, listed := false, false, false
	var ops []arg
	pending := 0 // values the options before still take
	for i, a := range k.args {
		t := a.text
		switch {
		case pending > 0:
			pending--
		case a.lit && strings.HasPrefix(t, "--"):
			remove = remove || longIs(t, "--remove-files")
			moved = moved || longIs(t, "--directory")
			listed = listed || longIs(t, "--files-from")
			if !strings.Contains(t, "=") && longOneOf(t, tarValueOpts) {
				pending = 1
			}
		case a.lit && len(t) > 1 && t[0] == '-' || i == 0 && a.lit && !strings.ContainsAny(t, "/."):
			// a cluster of short options (the first word may be one
			// without its dash: tar cf x.tar *)
			letters := strings.TrimPrefix(t, "-")
			for j, c := range letters {
				if strings.ContainsRune(tarValueLetters, c) {
					moved = moved || c == 'C'
					listed = listed || c == 'T'
					if t[0] == '-' && j < len(letters)-1 {
						break // -fa.tar: the rest of the word is the value
					}
					pending++
				}
			}
		default:
			ops = append(ops, a)
		}
	}
	if !remove {
		return
	}
	k.removeOperands("tar --remove-files", ops, moved)
	if listed {
		k.raise(critical, "tar --remove-files of a list of files (-T)") // any entries
	}
}

// zipRemoves: zip -m (--move) deletes the files it stores after making the
// archive (and the folders left empty): the operands after the archive's
// name are removed as rm -r's are; with -@ the names come from stdin:
// critical.
func (k *call) zipRemoves() {
	move, listed := false, false
	var ops []arg
	for _, a := range k.args {
		t := a.text
		switch {
		case a.lit && strings.HasPrefix(t, "--"):
			move = move || longIs(t, "--move")
		case a.lit && len(t) > 1 && t[0] == '-':
			move = move || shortHas(t, "m") && !strings.HasPrefix(t, "-TT")
			listed = listed || shortHas(t, "@")
		default:
			ops = append(ops, a)
		}
	}
	if !move || len(ops) == 0 {
		return
	}
	if listed {
		k.raise(critical, "zip -m of a list of files (-@)") // names read from stdin: any entries
	}
	// The first operand is the archive; an option's value taken as an
	// operand only adds a removal to judge (never fewer).
	k.removeOperands("zip -m", ops[1:], false)
}

// longOneOf reports whether t is one of the long options in list, or an
// unambiguous abbreviation of one (as longIs reads it).
func longOneOf(t, list string) bool {
	for _, o := range strings.Fields(list) {
		if longIs(t, o) {
			return true
		}
	}
	return false
}
