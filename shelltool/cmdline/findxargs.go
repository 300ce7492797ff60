package cmdline

import (
	"regexp"
	"slices"
	"strings"
)

// find runs commands with -exec and friends; parallel runs its arguments.

// find: -exec and friends run a command (its words up to ";" or "+"),
// -delete and -fprint* write.
func (k *call) find() {
	args := k.args
	lead := findLeadingOptions(args)
	var roots []arg
	for _, a := range args[lead:] {
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
	if emptiesRoots(args[lead+len(roots):]) {
		k.removes, k.globs = literalTrees(roots), literalGlobs(roots)
	}
	if deletes {
		for _, r := range roots {
			if dangerousTarget(r, false) {
				k.raise(critical, "find -delete outside")
			}
		}
	}
}

// findLeadingOptions is how many of find's words are the options before
// its roots (GNU find: -H -L -P, -D debugopts, -Olevel; and "--").
func findLeadingOptions(args []arg) int {
	i := 0
	for ; i < len(args) && args[i].lit; i++ {
		switch t := args[i].text; {
		case t == "-H" || t == "-L" || t == "-P" || t == "--":
		case t == "-D":
			i++
		case strings.HasPrefix(t, "-O") || strings.HasPrefix(t, "-D") && len(t) > 2:
		default:
			return i
		}
	}
	return min(i, len(args))
}

// emptiesRoots reports a find expression that may delete every entry of
// its roots: it deletes (-delete, or -exec/-execdir/-ok/-okdir of rm,
// shred, unlink or rmdir) and the analysis cannot show that a test before
// that action restricts which entries it reaches (find . -name '*.o'
// -delete does). It fails closed: an operator (-o, !, parentheses, ","),
// a word known only when run, a primary it does not know, or a pattern
// that matches every name (-name '*') restricts nothing; -maxdepth,
// -mindepth, -true, -print and the other options and actions select no
// entry; a test after the delete restricts nothing (find . -delete -name x
// deletes everything).
func emptiesRoots(expr []arg) bool {
	restricted, empties, deletes := false, false, false
	for i := 0; i < len(expr); i++ {
		t := expr[i].text
		if t == "-a" || t == "-and" {
			continue
		}
		if !expr[i].lit || has("( ) ! , -o -or -not", t) {
			empties = true // fail closed: no test is proven to restrict
			continue
		}
		switch {
		case t == "-delete":
			deletes = true
			empties = empties || !restricted
		case has("-exec -execdir -ok -okdir", t):
			j := i + 1
			for ; j < len(expr) && !(expr[j].lit && (expr[j].text == ";" || expr[j].text == "+")); j++ {
			}
			if i+1 < len(expr) && expr[i+1].lit && has("rm shred unlink rmdir", baseName(expr[i+1].text)) {
				deletes = true
				empties = empties || !restricted
			} else if i+1 < len(expr) && !expr[i+1].lit {
				deletes, empties = true, true // a program known only when run
			}
			i = j
		case has(findNoSelect, t):
		case has(findNoSelect1, t):
			i++
		case t == "-fprintf":
			i += 2
		case has(findPatterns, t):
			i++
			if i < len(expr) && expr[i].lit && strings.Trim(expr[i].text, "*?./[]!^-") != "" {
				restricted = true
			}
		case has(findTests, t) || strings.HasPrefix(t, "-newer") && len(t) == 8:
			i++
			restricted = true
		case has("-empty -false -quit -nouser -nogroup -readable -writable -executable", t):
			restricted = true
		default:
			// a primary this analysis does not know: selects nothing proven
		}
	}
	return deletes && empties
}

// find's options and actions that select no entry, bare and with one
// argument; the tests with a name pattern; the tests with one argument.
const (
	findNoSelect  = "-depth -d -xdev -mount -noleaf -ignore_readdir_race -noignore_readdir_race -nowarn -warn -daystart -follow -true -print -print0 -ls -prune -help -version"
	findNoSelect1 = "-maxdepth -mindepth -regextype -printf -fprint -fprint0 -fls -files0-from"
	findPatterns  = "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname"
	findTests     = "-type -xtype -size -newer -anewer -cnewer -mtime -atime -ctime -mmin -amin -cmin -used -user -uid -group -gid -perm -links -inum -samefile -fstype -context"
)

func (k *call) parallel() {
	k.raise(high, "parallel")
	if len(k.args) == 0 {
		return
	}
	if script, ok := parallelScript(k.args); ok {
		k.runs = append(k.runs, run{argv: []arg{{text: "sh", lit: true}, {text: "-c", lit: true}, {text: script, lit: true}}, floor: riskNote{high, "parallel"}})
		return
	}
	k.runs = append(k.runs, run{argv: []arg{{text: strings.Join(texts(k.args), " ")}}, floor: riskNote{high, "parallel"}})
}

// GNU parallel's options that take a value (the next word), and those that
// take none; any other option may take one, so the command is not known.
const (
	parallelValueOpts = "-j --jobs -P --max-procs -S --sshlogin --slf --sshloginfile -a --arg-file -C --colsep -d --delimiter " +
		"-E --eof -n --max-args -N --max-replace-args -L --max-lines --results --res --joblog --tmpdir --workdir --wd " +
		"--tag-string --tagstring --timeout --retries --delay --memfree --load --halt --halt-on-error --nice --header --env " +
		"--block --block-size --blocksize --recend --recstart --basefile --bf --transferfile --tf --return --sqlmaster --sqlworker"
	parallelFlagOpts = "-k --keep-order -v --verbose -q --quote --dry-run --dryrun -u --ungroup --group --line-buffer --lb " +
		"--tag -0 --null -X -m --xargs --progress --bar --eta --will-cite --citation -r --no-run-if-empty --shuf --gnu " +
		"--plain --bg --fg --silent --resume --resume-failed --retry-failed --noswap --nonall --onall --cleanup --trim"
)

// parallelScript is the shell script each job of GNU parallel runs: its
// command words (after its options, before ":::", "::::" or ":::+"), joined
// and run by a shell as parallel runs them, with each replacement string
// ({}, {.}, {/}, {1}, ...) or, when there is none, one word appended,
// standing for the input: "$PARALLEL_INPUT", known only at run time
// (parallel rm -rf ::: x is rm -rf of an expansion; parallel npm i ::: x
// installs any package). ok is false when the command is not known: an
// option on neither list, a word not literal, -I (its replacement string),
// or no command (the input lines are the commands).
func parallelScript(args []arg) (string, bool) {
	var words []string
	opts := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case !a.lit:
			return "", false
		case t == ":::" || t == "::::" || t == ":::+" || t == "::::+":
			i = len(args)
		case opts && t == "--":
			opts = false
		case opts && strings.HasPrefix(t, "-") && len(t) > 1:
			name, _, inline := strings.Cut(t, "=")
			switch {
			case has(parallelFlagOpts, name):
			case has(parallelValueOpts, name):
				if !inline && !(len(name) == 2 && len(t) > 2) {
					i++
				}
			default:
				if len(t) > 2 && t[1] != '-' && has(parallelValueOpts, t[:2]) {
					continue // -j4
				}
				return "", false // -I, or an option this list lacks
			}
		default:
			opts = false
			words = append(words, t)
		}
	}
	if len(words) == 0 {
		return "", false
	}
	script := strings.Join(words, " ")
	if replaced := parallelReplacement.ReplaceAllString(script, "$$PARALLEL_INPUT"); replaced != script {
		return replaced, true
	}
	return script + " $PARALLEL_INPUT", true
}

// parallelReplacement matches GNU parallel's replacement strings.
var parallelReplacement = regexp.MustCompile(`\{(\.|/|//|/\.|#|%|\d+|\d+\.|\d+/|\d+//|\d+/\.)?\}`)
