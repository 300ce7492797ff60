package cmdline

import (
	"slices"
	"strings"
)

// find runs commands with -exec and friends; parallel runs its arguments.

// find: -exec and friends run a command (its words up to ";" or "+"),
// -delete and -fprint* write.
func (k *call) find() {
	args := k.args
	var roots []arg
	for _, a := range args {
		if a.lit && (strings.HasPrefix(a.text, "-") || a.text == "(" || a.text == "!") {
			break
		}
		roots = append(roots, a)
	}
	deletes := false
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch t {
		case "-exec", "-execdir", "-ok", "-okdir":
			k.raise(high, "find "+t)
			j := i + 1
			for ; j < len(args); j++ {
				if args[j].lit && (args[j].text == ";" || args[j].text == "+" && j > i+1 && args[j-1].text == "{}") {
					break
				}
			}
			if j > i+1 {
				// {} is a found file's name: a word holding it is only
				// known when the command runs (-exec {} \; runs the files).
				argv := slices.Clone(args[i+1 : j])
				for n := range argv {
					if strings.Contains(argv[n].text, "{}") {
						argv[n].lit = false
					}
				}
				if argv[0].lit && has("rm shred unlink rmdir", baseName(argv[0].text)) {
					deletes = true
				}
				k.runs = append(k.runs, run{argv: argv, floor: riskNote{high, "find " + t}})
			}
			i = j
		case "-delete":
			deletes = true
			k.raise(high, "find -delete")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			k.raise(high, "find "+t)
		}
	}
	if emptiesRoots(args[len(roots):]) {
		k.removes = literalTrees(roots)
	}
	if deletes {
		for _, r := range roots {
			if dangerousTarget(r, false) {
				k.raise(critical, "find -delete outside")
			}
		}
	}
}

// emptiesRoots reports a find expression that deletes every file under its
// roots: -delete with nothing else but options that select no file
// (find . -mindepth 1 -delete empties the folder; -maxdepth spares what
// lies deeper, so it is no such expression).
func emptiesRoots(expr []arg) bool {
	deletes := false
	for i := 0; i < len(expr); i++ {
		switch t := expr[i].text; {
		case !expr[i].lit:
			return false
		case t == "-delete":
			deletes = true
		case t == "-mindepth":
			// spares the roots, not what is in them
			i++
		case has("-depth -xdev -mount -noleaf -ignore_readdir_race -noignore_readdir_race -nowarn -warn", t):
		default:
			return false
		}
	}
	return deletes
}

func (k *call) parallel() {
	k.raise(high, "parallel")
	if len(k.args) > 0 {
		k.runs = append(k.runs, run{argv: []arg{{text: strings.Join(texts(k.args), " ")}}, floor: riskNote{high, "parallel"}})
	}
}
