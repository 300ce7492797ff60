package cmdline

import (
	"cmp"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
)

// Package installs (package.install requests).
//
// A command that installs packages (npm install X, pip install X, go get X,
// cargo add X, apt-get install X, ...; the forms are in installers,
// tables.go) yields one Package per package and per index, besides its
// Command. So does one that fetches packages from an index under another
// name: npm/pnpm/yarn/bun update, pnpm fetch, uv lock/remove/tree/export,
// uv pip sync/compile, go mod download/tidy/vendor, go work sync, cargo
// fetch/update/generate-lockfile/vendor, poetry lock/update/sync, bundle
// update/lock, and uv run, which locks and syncs the project before it
// runs its command (not with --no-sync, unless the command is a script,
// whose own dependencies uv fetches). A build or test (go build, go test,
// cargo build, npm test, npm run X) is no install, though go and cargo
// fetch a module or crate the cache lacks: the sandbox points them at the
// decided index and the egress proxy lets such a fetch reach only a host
// a rule allows.
//
// The subcommand is found as the tool finds it (installerSpec.subcommand):
// past the value options before it and cargo's +toolchain, npm's word read
// against npm's command table (abbreviations, aliases, camelCase). An
// option the table does not know may take the next word as its value:
// every reading counts, one that installs only after such a value makes
// the index Dynamic, two that install make the install Dynamic; in uv run,
// the word after such an option may be the command or a value, and the
// options after it are still read (the index Dynamic). A cargo subcommand
// that is none of cargo's own may be an alias cargo expands in its own
// process: its expansion (the line's CARGO_ALIAS_NAME=, else what the
// caller reads of the project's configuration: ProgramEnv.Aliases) is
// read as cargo's words instead (expandAlias).
//
// The index is the one its options name (--registry, --index-url,
// -i, --extra-index-url: one Package per index), else one an assignment
// in the line names (npm_config_registry=, PIP_INDEX_URL=, GOPROXY=, ...),
// else the tool's default index. An install from the project's manifest
// (npm ci, npm install with no names, go mod download, uv sync, pip
// install -r f, uv pip sync f) names the manifest in parentheses:
// "(package.json)", "(go.mod)", "(requirements.txt)". The
// index is Dynamic when the line may write the configuration the tool
// reads first (pkgconfig.go), or names a configuration file the tool reads
// (uv --config-file, read even under UV_NO_CONFIG). What the project's files already name is
// the caller's to add (Package.Files, Package.Elsewhere): this package
// reads no file.

// Package is one package a command installs from one index.
type Package struct {
	// Name is the package as written, version included ("left-pad@1.3.0",
	// "requests==2.31.0", "golang.org/x/tools/gopls@v0.16.0"), a manifest
	// in parentheses, or Dynamic when the word is not literal.
	Name string
	// Host is the index's host name ("registry.npmjs.org", "pypi.org"),
	// Dynamic when an option or assignment names it with an expansion,
	// and empty when the tool takes it from the system's configuration
	// (apt's sources) or from no network at all (a local path, --no-index).
	Host string
	// Manager is the program that installs it ("npm", "pip", "go", ...).
	Manager string
	// URL is set for a package named by its URL ("https://h/x.tgz",
	// "x@https://h/x.tgz", "x @ https://h/x.whl", "git+https://h/r"): the
	// tool fetches it from that URL's host, which is then Host, whatever
	// index the line names; Index is that index's origin
	// ("https://registry.npmjs.org", Dynamic when not literal): an
	// installer held to its index, as npm is in the sandbox, fetches the
	// URL's path there instead (TarballElsewhere).
	URL, Index string
	// Command is the index of the installing command in Analysis.Commands.
	Command int
	// Files are the files the line names that the tool reads options
	// from, as written (pip -r requirements.txt, -c constraints.txt: they
	// may name indexes), but those named by a URL, each a Package of its
	// own from that URL's host; Elsewhere is true when the tool may run in
	// another folder than the line's (the line changes folder, or an
	// option names one: npm --prefix, uv --directory), whose project
	// configuration it then reads. The caller reads the project's
	// configuration files (pkgconfig.go says what the line may write).
	Files     []string
	Elsewhere bool
	// Scripts are the Python scripts whose inline metadata (PEP 723: a
	// "# /// script" block) names the dependencies uv fetches for them,
	// and may name indexes (uv run x.py, --script x.py), as written;
	// Dynamic for one read from stdin or fetched from a URL.
	Scripts []string
	// PinnedHost is set when Host is Dynamic only because the line may
	// write configuration the sandbox's pins make the tool ignore
	// (pip.conf, uv.toml, pip config set, go env -w): where the pins hold
	// (toolchains.IndexPins), the index is PinnedHost.
	PinnedHost string
	// DirByVariable is set when the folder the tool works in is named by
	// a variable the line assigns (UV_PROJECT=, BUNDLE_GEMFILE=): its
	// value is not among the command's words, so the caller cannot read
	// that folder's configuration.
	DirByVariable bool
	// DirectHosts are, for a go install whose hosts do not include the
	// module's own (the line names no direct fallback), the hosts go
	// fetches it from when the environment the command runs in does:
	// GOPROXY with "direct" (go's default, "https://proxy.golang.org,direct")
	// or GONOPROXY/GOPRIVATE matching it (directHosts). The line cannot
	// show that environment: the caller adds them where it holds (the
	// host surface; not the sandbox, whose GOPROXY is pinned without
	// direct). ProxyByLine: the line names GOPROXY, so only GONOPROXY and
	// GOPRIVATE of that environment lead to direct.
	DirectHosts []string
	ProxyByLine bool
	// LocalBin is, for a package npm exec names by the command it runs
	// (npx tsc, npm exec jest: not -p/--package), that command: npm runs
	// the project's own node_modules/.bin/LocalBin, fetching nothing, when
	// it is there (the caller looks).
	LocalBin string
}

// install is what an installing command asked for, resolved to Packages
// after the walk (an assignment later in the line may name the index).
type install struct {
	manager string
	spec    *installerSpec
	names   []string // the packages as written
	hosts   []string // indexes the options named (replacing the default)
	extra   []string // indexes added to the default or named one
	cmd     int
	// anyHost: an option lets the tool fetch from hosts the line does not
	// name (anyHostOpts); offline: it uses no index (--no-index).
	anyHost, offline bool
	links            bool     // a linkOpts URL: Dynamic besides the index, offline too
	files            []string // manifestOpts' and fileOpts' files, as written
	fetched          []string // those named by a URL (file)
	elsewhere        bool     // a dirOpts option names the folder it works in
	family           string   // the configuration it reads (configFiles): the spec's, uv's for uv pip
	// needVersion: only operands with @version are packages (go install
	// X@V; without a version it builds a local package).
	needVersion bool
	// exec: it fetches one package to run it (npx X, npm exec X, uvx X,
	// pipx run X): the first operand is the package, or the values of
	// execPkgOpts; stopAtFirst: what follows the package is its own
	// arguments (npx, uvx, and npm exec after "--").
	exec, stopAtFirst, execNamed bool
	sub                          string // the subcommand ("group:sub" for two words)
	// runs: it syncs the manifest, then runs the command its first
	// operand starts (uv run, cmdSubs); noFetch: an option says it
	// fetches no manifest (noFetchOpts); script: the command may be a
	// script with its own dependencies (uv run x.py, --script), which
	// uv run fetches even with --no-sync.
	runs, noFetch, script bool
	scripts               []string // those scripts, as written (Package.Scripts)
	// reqFiles: its operands are requirement files (fileSubs).
	reqFiles bool
	// byBin is the package word of an exec named by the command it runs
	// (Package.LocalBin).
	byBin string
	// version and manifests: what versionOpts and manifestOpts named
	// (settle adds them to names).
	version   string
	manifests []string
	// alias holds the words of a subcommand word that may be an alias,
	// the word at aliasAt (aliasUse): expandAlias resolves it.
	alias   []arg
	aliasAt int
}

// installs records the packages the command installs, if it is a package
// manager's install.
func (k *call) installs() {
	if in := corepackRun(k.norm, k.args); in != nil {
		k.pkgs = append(k.pkgs, in)
	}
	name, args, family, stop, dynamic := installerCall(k.norm, k.args)
	if in := newInstall(name, args, family, stop, dynamic); in != nil {
		k.pkgs = append(k.pkgs, in)
	}
}

// newInstall is the install a package manager's words ask for (nil for
// none): its subcommand, then what it installs; for a subcommand word
// that may be an alias (installerSpec.builtins), an install to expand
// once the line is known (expandAlias).
func newInstall(name string, args []arg, family string, stop, dynamic bool) *install {
	sp, ok := installers[name]
	if !ok {
		return nil
	}
	sub, rest, n, how := sp.subcommand(args)
	if dynamic {
		how = subDynamic
	}
	if sp.handOff != "" && sub == sp.handOff && how != subNone {
		// uv pip is pip, after uv's own options too (uv --color never pip
		// install x), which count as pip's.
		name, sp, family = sub, installers[sub], name
		pipSub, pipRest, _, pipHow := sp.subcommand(rest[n:])
		sub, rest, how = pipSub, slices.Concat(rest[:n], pipRest), max(how, pipHow)
		if pipHow == subNone {
			how = subNone
		}
	}
	switch how {
	case subNone:
		return aliasUse(name, sp, args)
	case subDynamic:
		// npm $X y, npm -reg URL i x, two readings that both install,
		// python options not read before -m pip: it may install anything
		// from anywhere.
		return &install{manager: name, spec: sp, names: []string{Dynamic}, hosts: []string{Dynamic}}
	}
	in := &install{manager: name, spec: sp, sub: sub, needVersion: has(sp.versionSubs, sub), family: cmp.Or(family, sp.family),
		exec: has(sp.execSubs, sub), stopAtFirst: stop || has(sp.stopSubs, sub), runs: has(sp.cmdSubs, sub), reqFiles: has(sp.fileSubs, sub),
		// An option the spec does not know took the word before the
		// subcommand as its value: it may name any index.
		anyHost: how == subAfterValue}
	// A relay runs the install in other folders (yarn workspace NAME).
	in.elsewhere = sp.relays != "" && slices.ContainsFunc(args, func(a arg) bool {
		return slices.ContainsFunc(strings.Fields(sp.relays), func(r string) bool { w, _, _ := strings.Cut(r, ":"); return a.text == w })
	})
	in.parse(rest, has(sp.manifestSubs, sub))
	if len(in.names) == 0 {
		return nil
	}
	return in
}

// aliasUse is, for a tool that expands aliases (cargo), the words with a
// subcommand word that is none of its own (builtins): an install to
// expand (expandAlias). nil when the word is the tool's own or there is
// none (a word not literal is subDynamic already).
func aliasUse(name string, sp *installerSpec, args []arg) *install {
	if sp.builtins == "" {
		return nil
	}
	skip := 0
	if sp.plusToolchain && len(args) > 0 && args[0].lit && strings.HasPrefix(args[0].text, "+") {
		skip = 1 // cargo +nightly i
	}
	word, j := firstOperand(args[skip:], sp.valueOpts())
	if j += skip; j >= len(args) || word == "" || has(sp.builtins, word) {
		return nil
	}
	return &install{manager: name, spec: sp, family: sp.family, alias: args, aliasAt: j}
}

// maxAliasDepth bounds the aliases expanded one into the next.
const maxAliasDepth = 16

// expandAlias is the install an alias use (aliasUse) expands to, once
// the line's assignments are known: the alias's words put in the place
// of its name (the words before and after stay: cargo keeps the global
// options before it and appends the words after), read again as the
// tool's words, and so on while the next subcommand is an alias too
// (cargo refuses one that comes back to itself: nil, nothing runs). nil
// when the word names no alias; Dynamic (any package from any index)
// when what it expands to cannot be known (aliasWords), or past
// maxAliasDepth.
func (a *analyzer) expandAlias(in *install) *install {
	var seen []string
	for depth := 0; in.alias != nil; depth++ {
		args, j := in.alias, in.aliasAt
		name := args[j].text
		if slices.Contains(seen, name) {
			return nil // cargo: "alias has unresolvable recursive definition"
		}
		seen = append(seen, name)
		words, dynamic := a.aliasWords(in.spec, args, name)
		if dynamic || depth == maxAliasDepth {
			return &install{manager: in.manager, spec: in.spec, cmd: in.cmd, names: []string{Dynamic}, hosts: []string{Dynamic}}
		}
		if words == nil {
			return nil
		}
		next := newInstall(in.manager, slices.Concat(args[:j], litArgs(words), args[j+1:]), "", false, false)
		if next == nil {
			return nil
		}
		next.cmd = in.cmd
		in = next
	}
	return in
}

// aliasWords are the words alias name expands to for the words args: the
// line's (or the environment's) aliasEnv+NAME assignment, which outranks
// configuration files, else what the caller reads (ProgramEnv.Aliases:
// nil, none read). dynamic when it cannot be known: the assignment is
// not literal, or differs between two; a --config option may set an
// alias (its value not literal, a file, or naming alias.*); CARGO_HOME
// (configEnv) is assigned or removed, moving the configuration read; or
// the caller says so. The line's own writes of a configuration file are
// read where the tool runs (the exec gate decides the program again).
func (a *analyzer) aliasWords(sp *installerSpec, args []arg, name string) (words []string, dynamic bool) {
	envName := sp.aliasEnv + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
	if vals := a.lookupEnv(envName); len(vals) > 0 {
		if slices.Contains(vals, Dynamic) || slices.ContainsFunc(vals, func(v string) bool { return v != vals[0] }) {
			return nil, true
		}
		return strings.Fields(vals[0]), false
	}
	for i, w := range args {
		opt, val, eq := strings.Cut(w.text, "=")
		if !w.lit || opt != "--config" {
			continue
		}
		if !eq && i+1 < len(args) {
			val, w = args[i+1].text, args[i+1]
		}
		if !w.lit || !strings.Contains(val, "=") || strings.Contains(val, "alias") {
			return nil, true
		}
	}
	if a.pinMoved(&installerSpec{configEnv: sp.configEnv}) {
		return nil, true
	}
	if a.aliases == nil {
		return nil, false
	}
	elsewhere := a.cwdMoved || a.dirMoved || slices.ContainsFunc(args, func(w arg) bool { return strings.HasPrefix(w.text, "-C") })
	return a.aliases(sp.family, name, elsewhere)
}

// litArgs are words as literal args.
func litArgs(words []string) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = arg{text: w, lit: true}
	}
	return out
}

// corepackRun is the install of the package manager corepack runs
// (corepack pnpm@9 install, corepack yarn add x): corepack fetches that
// manager (the version named, else the project's packageManager or its
// own default) from its registry before it runs it, unless its cache
// holds it; the words after are the manager's own (installerCall). nil
// when the command is no such run.
func corepackRun(name string, args []arg) *install {
	if name != "corepack" || len(args) == 0 || !args[0].lit {
		return nil
	}
	if pm, _, _ := strings.Cut(args[0].text, "@"); !corepackManagers[pm] {
		return nil
	}
	sp := installers["corepack"]
	spec := args[0].text
	for bin, pkg := range map[string]string{"npx": "npm", "pnpx": "pnpm", "yarnpkg": "yarn"} {
		if rest, ok := strings.CutPrefix(spec, bin); ok && (rest == "" || rest[0] == '@') {
			spec = pkg + rest // the package that has the bin
		}
	}
	return &install{manager: name, spec: sp, sub: args[0].text, names: []string{spec}, family: sp.family}
}

// installerCall is the package manager a command runs, and its words:
// python -m pip is pip (python -m uv, pipx, poetry: that program);
// corepack pnpm is pnpm; npx X is npm exec X, whose words after X are X's
// own (stop). dynamic: python's options could not be read, and a word
// after them names an installer's module: it may run it, with any words.
func installerCall(name string, args []arg) (manager string, words []arg, family string, stop, dynamic bool) {
	switch {
	case name == "python" || name == "pypy":
		module, rest, how := pythonModule(args)
		if m := pythonModules[strings.TrimSuffix(module, ".__main__")]; m != "" {
			if how == subDynamic {
				return m, nil, "", false, true
			}
			return installerCall(m, rest)
		}
	case name == "corepack" && len(args) > 0:
		// corepack NAME[@VERSION] ARGS runs that package manager.
		if !args[0].lit {
			return "npm", nil, "", false, true
		}
		if pm, _, _ := strings.Cut(args[0].text, "@"); corepackManagers[pm] {
			return installerCall(pm, args[1:])
		}
	case execRunners[name] != "":
		name = execRunners[name]
		sub, _, _ := strings.Cut(installers[name].execSubs, " ")
		return name, slices.Concat([]arg{{text: sub, lit: true}}, args), "", true, false
	}
	return name, args, "", false, false
}

// pythonModule finds the module of python's -m past the interpreter's own
// options, as CPython's parser (Python/getopt.c, pythonFlags) reads them:
// flags alone or clustered (-I -u, -IBm), -W and -X with their value
// (attached or next), --check-hash-based-pycs with the next word, the
// module attached (-mpip) or next. -c, a script, "-" or "--" end the
// search (subNone), as do the options that print and exit (-h, -V,
// --help-all). An option the parser does not know, or a word not literal,
// is read no further: subDynamic with the first later word naming an
// installer's module (pythonModules) as module, which it may run.
func pythonModule(args []arg) (module string, rest []arg, how subHow) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.lit:
			return laterModule(args[i+1:])
		case len(a.text) < 2 || a.text[0] != '-' || a.text == "--":
			return "", nil, subNone // a script, "-" (stdin), "--" then a script
		case strings.HasPrefix(a.text, "--"):
			switch {
			case has(pythonExitLong, a.text):
				return "", nil, subNone
			case has(pythonArgLong, a.text):
				i++
				continue
			}
			return laterModule(args[i+1:])
		}
		for j := 1; j < len(a.text); j++ {
			switch c := a.text[j]; {
			case strings.IndexByte(pythonExitFlags, c) >= 0:
				return "", nil, subNone
			case strings.IndexByte(pythonFlags, c) >= 0:
			case c == 'W' || c == 'X':
				if j == len(a.text)-1 {
					i++ // the value is the next word
				}
				j = len(a.text)
			case c == 'c':
				return "", nil, subNone
			case c == 'm' && j < len(a.text)-1:
				return a.text[j+1:], args[i+1:], subFound
			case c == 'm' && i+1 < len(args) && args[i+1].lit:
				return args[i+1].text, args[i+2:], subFound
			case c == 'm':
				return "", nil, subNone // a module known only when run, as a command's name
			default:
				return laterModule(args[i+1:])
			}
		}
	}
	return "", nil, subNone
}

// laterModule is the first of words that names an installer's module,
// alone or after an "m" in an option word (-m pip, -Impip): python may run
// it after options that could not be read.
func laterModule(words []arg) (string, []arg, subHow) {
	for _, w := range words {
		if !w.lit {
			continue
		}
		for t := w.text; ; {
			if pythonModules[strings.TrimSuffix(t, ".__main__")] != "" {
				return t, nil, subDynamic
			}
			_, after, ok := strings.Cut(t, "m")
			if !ok || !strings.HasPrefix(w.text, "-") {
				break
			}
			t = after
		}
	}
	return "", nil, subNone
}

// subHow is how surely subcommand found the subcommand.
type subHow int

const (
	subNone       subHow = iota // no install
	subFound                    // the subcommand
	subAfterValue               // the subcommand, if the words before it were an unknown option's value
	subDynamic                  // not known: it may install anything from anywhere
)

// subReading is one reading of where the subcommand is.
type subReading struct {
	sub  string
	skip []int // the words that are not options for parse: the subcommand's, and values before it
	// afterValue: the reading takes words before it as the values of
	// options the spec does not know.
	afterValue bool
}

// subcommand finds the subcommand among a manager's words: the first
// operand, past the listed value options' values and cargo's +toolchain.
// An option the spec does not know (mayTakeValue) may take that operand as
// its value, and then the next operand is the subcommand: each reading that
// names an install counts (npm --color always update: "always" is
// --color's). It returns the install subcommand ("group:sub" for two
// words), the other words (options before it count as after it; the
// first n were before it), and how sure it is: one reading, or one after such values (the option may name
// any index), or several (npm --heading x i y: exec x or install y).
func (sp *installerSpec) subcommand(args []arg) (sub string, rest []arg, n int, how subHow) {
	if sp.plusToolchain && len(args) > 0 && args[0].lit && strings.HasPrefix(args[0].text, "+") {
		args = args[1:]
	}
	valueOpts := sp.valueOpts()
	var readings []subReading
	var values []int  // operands an unknown option may have taken so far
	var relayed []int // the words of relays (yarn workspace NAME)
	pending, abbrev, ended := false, false, true
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.lit {
			return "", nil, 0, subDynamic // $X: any subcommand, or any option
		}
		if len(a.text) > 1 && a.text[0] == '-' {
			switch {
			case sp.abbrevOf(a):
				abbrev, pending = true, true // npm -reg URL i x
			case has(valueOpts, a.text), sp.boolValues && i+1 < len(args) && has("true false", args[i+1].text):
				i++ // npm --usage false i x: nopt reads a flag's true or false
				pending = false
			default:
				pending = sp.mayTakeValue(a.text, valueOpts)
			}
			continue
		}
		if n, ok := sp.relay(args, i); ok {
			if pending || n < 0 {
				return "", nil, 0, subDynamic // a value, or a relay of a word known only when run
			}
			for j := range n {
				relayed = append(relayed, i+j) // not options: skipped as values are
			}
			i += n - 1
			continue
		}
		r, how := sp.reading(args, i)
		if how == subDynamic {
			return "", nil, 0, subDynamic
		}
		if how == subFound {
			r.skip, r.afterValue = slices.Concat(r.skip, values, relayed), len(values) > 0
			readings = append(readings, r)
		}
		if !pending {
			ended = false
			break
		}
		values, pending = append(values, i), false
	}
	exits := slices.ContainsFunc(args, func(a arg) bool { return a.lit && has(sp.exitOpts, a.text) })
	if sp.bareInstall && ended && !exits {
		// yarn: no subcommand installs (all operands maybe values).
		readings = append(readings, subReading{skip: slices.Concat(values, relayed), afterValue: len(values) > 0})
	}
	switch {
	case len(readings) == 0:
		return "", nil, 0, subNone
	case len(readings) > 1 || abbrev:
		return "", nil, 0, subDynamic
	}
	r := readings[0]
	for i, a := range args {
		if !slices.Contains(r.skip, i) {
			rest = append(rest, a)
			if len(r.skip) > 0 && i < r.skip[0] {
				n++
			}
		}
	}
	if r.afterValue {
		return r.sub, rest, n, subAfterValue
	}
	return r.sub, rest, n, subFound
}

// relay reports whether args[i] starts one of the spec's relays, and how
// many words it is (-1 when a word of it is not literal).
func (sp *installerSpec) relay(args []arg, i int) (n int, ok bool) {
	for _, r := range strings.Fields(sp.relays) {
		word, next, _ := strings.Cut(r, ":")
		if args[i].text != word || i+1 >= len(args) {
			continue
		}
		switch {
		case !args[i+1].lit:
			return -1, true
		case next == "*" || args[i+1].text == next:
			return 2, true
		}
	}
	return 0, false
}

// reading reads args[i] as the subcommand: subFound with its words when it
// is an install (or the tool's handOff), subDynamic when it is a group
// whose second word is not literal (go mod $X), subNone otherwise.
func (sp *installerSpec) reading(args []arg, i int) (subReading, subHow) {
	sub := sp.command(args[i].text)
	if sp.groups(sub) {
		// go mod download, uv tool run: the subcommand is two words.
		next, j := firstOperand(args[i+1:], sp.valueOpts())
		switch {
		case i+1+j < len(args) && sp.listed(sub+":"+next):
			return subReading{sub: sub + ":" + next, skip: []int{i, i + 1 + j}}, subFound
		case i+1+j < len(args) && next == "":
			return subReading{}, subDynamic // known only when run
		}
	}
	if sp.listed(sub) || sub == sp.handOff && sub != "" {
		return subReading{sub: sub, skip: []int{i}}, subFound
	}
	return subReading{}, subNone
}

// command is the subcommand a word names: the word, or for a tool with
// its own command table the command npm's deref (lib/utils/cmd-list.js)
// finds: camelCase as kebab-case, then the command, an alias's command,
// or the one command or alias the word is a unique prefix of (abbrev), ""
// for none.
func (sp *installerSpec) command(word string) string {
	if sp.commands == "" {
		return word
	}
	var b strings.Builder
	for _, c := range []byte(word) {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('-')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	w := b.String()
	if has(sp.commands, w) {
		return w
	}
	if c, ok := sp.cmdAliases[w]; ok {
		return c
	}
	match := ""
	for _, c := range slices.Concat(strings.Fields(sp.commands), slices.Collect(maps.Keys(sp.cmdAliases))) {
		if w != "" && strings.HasPrefix(c, w) {
			if match != "" {
				return ""
			}
			match = c
		}
	}
	for range len(sp.cmdAliases) { // an alias of an alias, bounded
		c, ok := sp.cmdAliases[match]
		if !ok {
			break
		}
		match = c
	}
	return match
}

// mayTakeValue reports whether opt is an option the spec does not know
// (neither one of valueOpts, the spec's, nor flagOpts, offlineOpts),
// which may take the next word as its value.
func (sp *installerSpec) mayTakeValue(opt, valueOpts string) bool {
	if sp.boolValues && strings.HasPrefix(opt, "--no-") {
		return false // nopt: --no-X sets X false
	}
	return len(opt) > 1 && opt[0] == '-' && opt != "--" && !strings.Contains(opt, "=") && !has(valueOpts, opt) &&
		!has(sp.flagOpts, opt) && !has(sp.offlineOpts, opt) && !has(sp.dirFlags, opt)
}

// dropOpts is the option list opts without the options drop lists (a
// relative's list less the options it reads otherwise: yarn -C is
// --caret, not npm's folder).
func dropOpts(opts, drop string) string {
	return strings.Join(slices.DeleteFunc(strings.Fields(opts), func(o string) bool { return has(drop, o) }), " ")
}

// parse reads an install subcommand's words (word), then settles what it
// installs (settle).
func (in *install) parse(args []arg, manifestOnly bool) {
	valueOpts := in.spec.valueOpts()
	if in.exec {
		valueOpts += " " + in.spec.execPkgOpts
	}
	pending := false
	for i := 0; i < len(args); i++ {
		if in.exec && in.stopAtFirst && in.execNamed {
			break // the package's own arguments
		}
		var stop bool
		if stop, pending = in.word(args, &i, valueOpts, pending); stop {
			break
		}
	}
	in.settle(manifestOnly)
}

// word reads args[*i], and an option's value after it (moving *i);
// pending: the word before is an option the spec does not know, which may
// take this one as its value. It reports whether the words after are no
// longer the install's (a command's, a package's own), and whether this
// word is such an option.
func (in *install) word(args []arg, i *int, valueOpts string, pending bool) (stop, unknownOpt bool) {
	a, sp := args[*i], in.spec
	t := a.text
	switch name, _, eq := strings.Cut(t, "="); {
	case a.lit && t == "--":
		in.stopAtFirst = in.stopAtFirst || in.exec
		if in.exec && *i+1 < len(args) {
			in.operand(args[*i+1])
			return true, false
		}
	case !a.lit && eq && (has(valueOpts, name) || sp.scoped && scopedRegistry(name)):
		in.option(name, Dynamic) // --registry=$R
	case !a.lit:
		// "$X": it may be any option, one naming the index too.
		in.names = append(in.names, Dynamic)
		in.hosts = append(in.hosts, Dynamic)
	case len(t) < 2 || t[0] != '-':
		return in.operandWord(a, pending), false
	case sp.abbrevOf(a):
		in.hosts = append(in.hosts, Dynamic)
	default:
		opt, val := optionValue(args, i, valueOpts)
		in.option(opt, val)
		if val == "" && sp.boolValues && *i+1 < len(args) && has("true false", args[*i+1].text) {
			*i++ // a flag's value
			return false, false
		}
		return false, val == "" && sp.mayTakeValue(opt, valueOpts)
	}
	return false, false
}

// operandWord reads an operand: uv run's command, whose words after it
// are its own (stop); a requirement file (uv pip sync f); or a package.
func (in *install) operandWord(a arg, pending bool) (stop bool) {
	t := a.text
	switch {
	case in.runs && pending:
		// The value of an option the spec does not know, or the command:
		// the words after it may be uv's options, and that option may name
		// any index (uv run --future-opt v --index URL pytest).
		in.anyHost = true
		in.command(t)
	case in.runs:
		in.command(t) // uv run pytest --index-url x: pytest's own words
		return true
	case in.exec && pending && len(in.names) == 0:
		// The package to run, or an unknown option's value: the package
		// and its index are any (uvx --future v ruff).
		in.anyHost, in.execNamed = true, true
		in.names = append(in.names, Dynamic)
	case in.reqFiles:
		in.file(t, true)
	default:
		in.operand(a)
	}
	return false
}

// command notes uv run's command when it is a script, whose own
// dependencies uv fetches: "-" (stdin) or a URL (fetched), the value of
// --script, or a .py or .pyw file.
func (in *install) command(t string) {
	switch {
	case t == "-" || strings.Contains(t, "://"):
		in.script, in.scripts = true, append(in.scripts, Dynamic)
	case in.script && len(in.scripts) == 0 || isPythonScript(t):
		in.script, in.scripts = true, append(in.scripts, t)
	}
}

// isPythonScript: a name uv runs as a script by its extension, .py or
// .pyw in any case (uv compares them without case).
func isPythonScript(name string) bool {
	ext := strings.ToLower(name[strings.LastIndexByte(name, '.')+1:])
	return strings.Contains(name, ".") && (ext == "py" || ext == "pyw")
}

// option applies an option and its value ("" for a flag, Dynamic when not
// literal).
func (in *install) option(opt, val string) {
	sp := in.spec
	switch {
	case sp.scoped && scopedRegistry(opt):
		if val != "" { // npm reads "--@s:registry URL" as a flag and a package
			in.extra = append(in.extra, val)
		}
	case has(sp.anyHostOpts, opt), has(sp.configOpts, opt):
		in.anyHost = true
	case has(sp.hostOpts, opt):
		in.hosts = append(in.hosts, val)
	case has(sp.extraOpts, opt):
		if sp.channelHost != "" && val != Dynamic && !strings.Contains(val, ":") {
			val = sp.channelHost // a channel's name
		}
		in.extra = append(in.extra, val)
	case sp.altIndex != "" && opt == strings.Split(sp.altIndex, ":")[0]:
		in.hosts = append(in.hosts, strings.Split(sp.altIndex, ":")[1])
	case has(sp.versionOpts, opt):
		in.version = val
	case has(sp.manifestOpts, opt):
		in.file(val, true)
	case has(sp.fileOpts, opt):
		in.file(val, false)
	case has(sp.dirOpts, opt), has(sp.dirFlags, opt):
		in.elsewhere = true
	case has(sp.pkgOpts, opt), in.exec && has(sp.execPkgOpts, opt):
		in.names = append(in.names, cmp.Or(val, Dynamic))
		in.execNamed = in.execNamed || has(sp.execPkgOpts, opt)
	case has(sp.offlineOpts, opt):
		in.offline = true
	case has(sp.noFetchOpts, in.sub+":"+opt):
		in.noFetch = true
	case sp.cmdSubs != "" && (opt == "--script" || opt == "-s" || opt == "--gui-script"):
		in.script = true
		if val != "" {
			in.scripts = append(in.scripts, val)
		}
	case has(sp.linkOpts, opt):
		if val == Dynamic || strings.Contains(val, "://") && !strings.HasPrefix(strings.ToLower(val), "file:") {
			in.links = true
		}
	}
}

// file notes a file the tool reads options or requirements from (pip -r
// F, -c F; a manifest: what it lists is installed, "(F)"). One named by a
// URL is fetched from that URL's host: a package of its own, the URL as
// written (pip install -r https://h/r.txt), and not a file the caller can
// read.
func (in *install) file(name string, manifest bool) {
	if manifest {
		in.manifests = append(in.manifests, "("+name+")")
	}
	if _, host, ok := packageURL(name); ok && host != "" {
		in.fetched = append(in.fetched, name)
		return
	}
	in.files = append(in.files, name)
}

// settle turns what the words named into the install's packages: the
// version on the one package, the manifests; uv run's manifest unless
// --no-sync (but a script's own dependencies are fetched all the same);
// the manifest when no package is named or the subcommand installs only
// it.
func (in *install) settle(manifestOnly bool) {
	sp := in.spec
	if in.version != "" && len(in.names) == 1 {
		in.names[0] += "@" + in.version
	}
	in.names = append(in.names, in.manifests...)
	switch {
	case in.runs:
		if !in.noFetch || in.script {
			in.names = append(in.names, sp.manifest)
		}
	case in.noFetch:
		in.names = nil // uv tree --frozen: it reads the lockfile only
	case len(in.names) == 0 && (in.needVersion || in.exec || has(sp.namedSubs, in.sub)):
		// go install ./cmd/x builds a local package; an exec runs
		// nothing it fetches; npm pack packs the local package.
	case len(in.names) == 0 || manifestOnly:
		in.names = nil
		if sp.manifest != "" { // gem install with no gem installs nothing
			in.names = []string{sp.manifest}
		}
	}
	in.names = append(in.names, in.fetched...)
}

// operand adds a package word, unless the subcommand installs only words
// of a certain shape (go install X@V: without a version it builds a local
// package).
func (in *install) operand(a arg) {
	if in.needVersion && a.text != "" && !strings.Contains(a.text, "@") {
		return
	}
	if in.exec && in.execNamed {
		return // a command of the package named, or the package's arguments
	}
	name := cmp.Or(a.text, Dynamic) // what a tool makes of an empty word is its own
	if in.exec && !in.execNamed && has(in.spec.createSubs, in.sub) {
		name = createName(name, in.spec.createKeeps)
	}
	in.names = append(in.names, name)
	if in.exec && !in.execNamed && a.lit && plainBinName(name) {
		in.byBin = name
	}
	in.execNamed = in.exec
}

// createName is the package an initializer word runs (npm's init,
// lib/commands/init.js; pnpm's, yarn's and bun's create alike): "@s" is
// "@s/create", a registry name gets "create-" before its name
// ("vite@5": "create-vite@5", "@s/x": "@s/create-x"; one already so named
// is kept when keep); another spec (git, a path, a URL) is as written.
func createName(word string, keep bool) string {
	if strings.HasPrefix(word, "@") && !strings.Contains(word, "/") {
		return word + "/create"
	}
	if _, _, ok := npmSpec(word); ok || word == Dynamic {
		return word
	}
	scope, name := "", word
	if i := strings.IndexByte(word, '/'); i >= 0 {
		scope, name = word[:i+1], word[i+1:]
	}
	if keep && strings.HasPrefix(name, "create-") {
		return word
	}
	return scope + "create-" + name
}

// plainBinName reports whether w is a bare command name (no version, scope
// or path): npm exec takes such a word as a bin of the local project first.
func plainBinName(w string) bool {
	return w != "" && w[0] != '.' && w[0] != '-' && !strings.ContainsAny(w, "@/:\\") && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz0123456789._-") == ""
}

// abbrevOf reports whether a is an index option the tool reads under a
// spelling the line does not write out: a prefix of one of abbrevOpts
// (or, with abbrevDashes, the name after other than two dashes). A
// spelling the spec lists itself is read as listed.
func (sp *installerSpec) abbrevOf(a arg) bool {
	if sp.abbrevOpts == "" || !a.lit {
		return false
	}
	name, _, _ := strings.Cut(a.text, "=")
	if has(sp.valueOpts(), name) {
		return false
	}
	bare, ok := strings.CutPrefix(name, "--")
	if sp.abbrevDashes {
		bare, ok = strings.TrimLeft(name, "-"), strings.HasPrefix(name, "-")
	}
	if !ok || len(bare) < 2 || has(sp.abbrevOwn, bare) {
		return false
	}
	for _, o := range strings.Fields(sp.abbrevOpts) {
		if strings.HasPrefix(o, bare) {
			return true
		}
	}
	return false
}

// scopedRegistry reports whether opt is npm's --@scope:registry (its
// value, after "=", is an index for the scope's packages).
func scopedRegistry(opt string) bool {
	scope, ok := strings.CutSuffix(opt, ":registry")
	return ok && strings.HasPrefix(scope, "--@") && len(scope) > 3
}

// optionValue returns the option at args[*i] and, when valueOpts lists
// it, its value: after "=", attached to a short option ("-iURL"), or the
// next word (moving *i). Other options are flags.
func optionValue(args []arg, i *int, valueOpts string) (opt, val string) {
	t := args[*i].text
	switch name, v, ok := strings.Cut(t, "="); {
	case has(valueOpts, t):
		if *i+1 >= len(args) {
			return t, ""
		}
		*i++
		if !args[*i].lit {
			return t, Dynamic
		}
		return t, args[*i].text
	case ok && (has(valueOpts, name) || scopedRegistry(name)):
		return name, v
	case len(t) > 2 && t[1] != '-' && has(valueOpts, t[:2]):
		return t[:2], t[2:]
	}
	return t, ""
}

// listed reports whether sub is one of the spec's subcommands.
func (sp *installerSpec) listed(sub string) bool {
	return has(sp.subs, sub) || has(sp.execSubs, sub)
}

// groups reports whether word starts two-word subcommands of the spec
// (go mod, uv tool).
func (sp *installerSpec) groups(word string) bool {
	for _, list := range []string{sp.subs, sp.execSubs} {
		for rest := list; rest != ""; {
			var f string
			f, rest, _ = strings.Cut(rest, " ")
			if len(f) > len(word) && f[len(word)] == ':' && strings.HasPrefix(f, word) {
				return true
			}
		}
	}
	return false
}

// valueOpts lists every option of the spec that takes a value (joined
// once per table entry: the lists are long, npm's above 3 KB).
func (sp *installerSpec) valueOpts() string {
	if v, ok := installerValueOpts[sp]; ok {
		return v
	}
	return sp.joinValueOpts()
}

// installerValueOpts is valueOpts of each of installers, never written
// after init.
var installerValueOpts = func() map[*installerSpec]string {
	m := make(map[*installerSpec]string, len(installers))
	for _, sp := range installers {
		m[sp] = sp.joinValueOpts()
	}
	return m
}()

func (sp *installerSpec) joinValueOpts() string {
	return strings.Join([]string{sp.hostOpts, sp.extraOpts, sp.versionOpts, sp.manifestOpts, sp.pkgOpts, sp.argOpts, sp.anyHostOpts,
		sp.configOpts, sp.linkOpts, sp.fileOpts, sp.dirOpts}, " ")
}

// packages resolves the installs to Packages once the line's assignments
// are known: one per package and index, but one per package named by its
// URL, from that URL's host; a local path is one per index, as a name is
// (its dependencies come from there).
func (a *analyzer) packages() {
	for _, in := range a.installs {
		if in.alias != nil {
			if in = a.expandAlias(in); in == nil {
				continue
			}
		}
		hosts := a.indexes(in)
		if has(in.spec.anyHostSubs, in.sub) {
			hosts = []string{Dynamic} // yarn set version: a release, from where yarn's own code says
		}
		index := indexOrigin(hosts[0])
		moved := in.spec.anyHostOpts != "" && slices.Contains(hosts, Dynamic)
		if !in.offline {
			hosts = append(slices.Clip(hosts), in.extra...)
			hosts = append(hosts, a.envExtras(in)...)
		}
		if in.links && !slices.Contains(hosts, Dynamic) {
			hosts = append(slices.Clip(hosts), Dynamic)
		}
		written := a.configWritten(in)
		if written == cfgUnpinned {
			// What the tool will read is written by the line: any index.
			hosts, index, moved = []string{Dynamic}, Dynamic, true
		}
		byVar := a.assignsAny(in.spec.dirEnv)
		base := Package{Manager: in.manager, Command: in.cmd, Files: in.files, Scripts: in.scripts,
			Elsewhere: a.cwdMoved || a.dirMoved || in.elsewhere || byVar, DirByVariable: byVar}
		for _, n := range in.names {
			p := base
			p.Name = n
			if in.manager == "npm" && n == in.byBin {
				p.LocalBin = n
			}
			u, host, ok := packageURL(n)
			if in.spec.npmSpecs {
				u, host, ok = npmSpec(n)
			}
			// A local path or file: spec is not fetched, but its
			// dependencies are, from the index, as pip's "." is: it is
			// decided with the index's host (none when offline).
			local := ok && host == "" && u == ""
			if ok && !local {
				if moved && host != "" && (u != "" || written == cfgUnpinned) {
					host = Dynamic // the line may send it to an index it does not name
				}
				p.Host, p.URL, p.Index = host, u, index
				a.out.Packages = append(a.out.Packages, p.pinned(written))
				continue
			}
			var seen []string
			for _, h := range managerHosts(in, hosts, n) {
				for _, host := range indexHosts(h, n) {
					if !slices.Contains(seen, host) {
						seen = append(seen, host)
						p.Host = host
						a.out.Packages = append(a.out.Packages, p.pinned(written))
					}
				}
			}
			if in.spec.directEnv != "" && !slices.Contains(hosts, "direct") && !slices.Contains(hosts, Dynamic) {
				last := &a.out.Packages[len(a.out.Packages)-1]
				last.DirectHosts, last.ProxyByLine = directHosts(n), len(a.envIndexes(in)) > 0
			}
		}
	}
}

// managerHosts are the indexes corepack fetches the package manager n
// ("pnpm@9", "yarn@4.1.0", "(package.json)") from when hosts is its
// default, the npm registry (COREPACK_NPM_REGISTRY, which moves every
// fetch there, unset): corepack's own table (sources/config.json) fetches
// yarn 1 from registry.yarnpkg.com, yarn 2 and later from repo.yarnpkg.com
// (its versions too), and resolves a yarn range or tag of yarn 1 at the
// npm registry; a yarn whose version is not an exact one may be any of
// them, as may the packageManager a manifest names. Other installs keep
// hosts.
func managerHosts(in *install, hosts []string, n string) []string {
	if in.manager != "corepack" || !slices.Equal(hosts, []string{in.spec.host}) {
		return hosts
	}
	pm, version, _ := strings.Cut(n, "@")
	if pm != "yarn" && pm != "yarnpkg" && !strings.HasPrefix(n, "(") {
		return hosts // npm, pnpm: the npm registry
	}
	major, _, _ := strings.Cut(version, ".")
	exact := strings.Count(version, ".") >= 2 && strings.Trim(version, "0123456789.") == ""
	switch {
	case exact && major == "1":
		return []string{"registry.yarnpkg.com"}
	case exact && major != "0":
		return []string{"repo.yarnpkg.com"}
	}
	return []string{in.spec.host, "registry.yarnpkg.com", "repo.yarnpkg.com"}
}

// pinned is p as decided when the line may write only configuration the
// sandbox's pins make the tool ignore: Dynamic, but PinnedHost where the
// pins hold.
func (p Package) pinned(written int) Package {
	if written == cfgPinned && p.Host != "" && p.Host != Dynamic {
		p.PinnedHost, p.Host = p.Host, Dynamic
	}
	return p
}

// indexes are the install's indexes as written: its options', else the
// line's assignments', else the tool's default; Dynamic when the line
// names two different ones (npm keeps the last --registry; which of two
// spellings of npm_config_registry wins is the environment's order), an
// empty one, or removes or moves one the sandbox sets (pinMoved); and
// Dynamic besides when the line lets the tool fetch from hosts it does
// not name (anyHostOpts, anyHostEnv).
func (a *analyzer) indexes(in *install) []string {
	if in.offline {
		return []string{""}
	}
	var choices [][]string
	for _, h := range in.hosts {
		choices = append(choices, []string{h})
	}
	choices = append(choices, a.envIndexes(in)...)
	var hosts []string
	switch {
	case a.pinMoved(in.spec):
		hosts = []string{Dynamic}
	case len(choices) > 0:
		hosts = choices[0]
		for _, c := range choices[1:] {
			if !sameIndexes(c, hosts) {
				hosts = []string{Dynamic}
				break
			}
		}
	case in.anyHost || a.anyHostEnv(in.spec):
		return []string{Dynamic}
	default:
		hosts = []string{in.spec.host}
	}
	if (in.anyHost || a.anyHostEnv(in.spec)) && !slices.Contains(hosts, Dynamic) {
		hosts = append(slices.Clip(hosts), Dynamic)
	}
	if a.assignsAny(in.spec.directEnv) && !slices.Contains(hosts, "direct") && !slices.Contains(hosts, Dynamic) {
		hosts = append(slices.Clip(hosts), "direct") // GOPRIVATE=…: some modules from their own host
	}
	return hosts
}

// anyHostEnv reports an assignment in the line to one of the spec's
// anyHostEnv variables.
func (a *analyzer) anyHostEnv(sp *installerSpec) bool {
	return a.assignsAny(sp.anyHostEnv)
}

// assignsAny reports an assignment in the line to one of names (a name
// ending in "*" is a prefix).
func (a *analyzer) assignsAny(names string) bool {
	for _, name := range strings.Fields(names) {
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			for n := range a.env {
				if strings.HasPrefix(n, prefix) {
					return true
				}
			}
			continue
		}
		if len(a.lookupEnv(name)) > 0 {
			return true
		}
	}
	return false
}

// sameIndexes reports whether two lists of indexes name the same origins.
func sameIndexes(x, y []string) bool {
	return slices.EqualFunc(x, y, func(a, b string) bool { return indexOrigin(a) == indexOrigin(b) })
}

// pinMoved reports that the line removes a variable the install's index
// depends on from the environment (unset, env -u, export -n, env -i: the
// sandbox sets them, toolchains.IndexPins), or assigns one that hands the
// index to a file the line does not show (configEnv): what the tool then
// fetches from is its configuration's, unknown here.
func (a *analyzer) pinMoved(sp *installerSpec) bool {
	watched := strings.Fields(sp.env + " " + sp.anyHostEnv + " " + sp.configEnv)
	if len(watched) > 0 && a.allEnvUnset {
		return true
	}
	for _, name := range watched {
		prefix, isPrefix := strings.CutSuffix(name, "*")
		for _, u := range a.unsets {
			if sameEnvName(u, name) || isPrefix && strings.HasPrefix(u, prefix) {
				return true
			}
		}
	}
	return a.assignsAny(sp.configEnv)
}

// envIndexes returns the index lists the line's assignments name for the
// install, one per assignment (GOPROXY=a,b|direct: one entry per index,
// "off" none; an empty value, which the tool reads as unset, Dynamic).
func (a *analyzer) envIndexes(in *install) [][]string {
	var out [][]string
	for _, name := range strings.Fields(in.spec.env) {
		for _, v := range a.lookupEnv(name) {
			out = append(out, envIndexList(v))
		}
	}
	return out
}

// envIndexList is the indexes one assignment's value names.
func envIndexList(v string) []string {
	if v == Dynamic || strings.TrimSpace(v) == "" {
		return []string{Dynamic}
	}
	var out []string
	for _, e := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
		if e != "off" {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		out = []string{""}
	}
	return out
}

// envExtras are the indexes the line's assignments add (extraEnv, and
// npm's npm_config_@scope:registry as its --@scope:registry option does).
func (a *analyzer) envExtras(in *install) []string {
	var out []string
	for _, name := range strings.Fields(in.spec.extraEnv) {
		for _, v := range a.lookupEnv(name) {
			if v == Dynamic {
				out = append(out, Dynamic)
				continue
			}
			out = append(out, strings.Fields(v)...)
		}
	}
	if !in.spec.scoped {
		return out
	}
	names := slices.Sorted(maps.Keys(a.env))
	for _, n := range names {
		if k, ok := npmConfigKey(n); ok && scopedRegistry("--"+k) {
			for _, v := range a.env[n] {
				if strings.TrimSpace(v) == "" {
					v = Dynamic
				}
				out = append(out, v)
			}
		}
	}
	return out
}

// lookupEnv is every value the line assigns to name. npm reads its
// npm_config_* variables in any case and with "-" for "_"
// (Npm_Config_Registry, `env npm_config_replace-registry-host=…`), so such
// a name matches every assignment npm reads as the same setting.
func (a *analyzer) lookupEnv(name string) []string {
	if _, npm := npmConfigKey(name); !npm {
		return a.env[name]
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(a.env)) {
		if sameEnvName(n, name) {
			out = append(out, a.env[n]...)
		}
	}
	return out
}

// sameEnvName reports whether two variable names are the same setting:
// equal, or npm_config_* names npm reads as one.
func sameEnvName(x, y string) bool {
	kx, okx := npmConfigKey(x)
	ky, oky := npmConfigKey(y)
	if okx && oky {
		return kx == ky
	}
	return x == y
}

// npmConfigKey is the setting npm reads from an npm_config_* variable (as
// @npmcli/config's loadEnv: the prefix in any case, then "_" as "-" but at
// the start, lower case).
func npmConfigKey(name string) (string, bool) {
	const prefix = "npm_config_"
	if len(name) <= len(prefix) || !strings.EqualFold(name[:len(prefix)], prefix) {
		return "", false
	}
	key := name[len(prefix):]
	if strings.HasPrefix(key, "//") {
		return key, true
	}
	return strings.ToLower(key[:1] + strings.ReplaceAll(key[1:], "_", "-")), true
}

// packageURL finds the URL a package word names it by: the whole word, or
// after "NAME@" (npm's alias@url) or "NAME @ " (a PEP 508 direct
// reference), with its scheme (git+https and the like) and host. A file:
// URL names no host: it is no network fetch.
func packageURL(word string) (u, host string, ok bool) {
	i := strings.Index(word, "://")
	if i <= 0 {
		return "", "", false
	}
	start := i
	for start > 0 && isSchemeChar(word[start-1]) {
		start--
	}
	if start == i {
		return "", "", false
	}
	if before := strings.TrimRight(word[:start], " "); before != "" && !strings.HasSuffix(before, "@") {
		return "", "", false
	}
	u = word[start:]
	parsed, err := url.Parse(u)
	if err != nil {
		if scheme := strings.ToLower(word[start:i]); scheme == "ssh" || scheme == "git+ssh" {
			// git+ssh://git@h:o/r.git: an scp-like address (poetry's
			// form; pip and uv ask ssh for that host too).
			return u, scpHost(u[i-start+3:]), true
		}
		return u, Dynamic, true
	}
	if strings.EqualFold(parsed.Scheme, "file") {
		return u, "", true
	}
	if parsed.Hostname() == "" {
		return u, Dynamic, true
	}
	return u, strings.ToLower(parsed.Hostname()), true
}

// TarballElsewhere reports whether the package is named by an http(s) URL
// whose origin is not its index's: one a tool that fetches every tarball
// from its index (npm with replace-registry-host=always) would ask of the
// index instead, where it is not.
func (p Package) TarballElsewhere() bool {
	scheme, _, _ := strings.Cut(p.URL, "://")
	if !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") || p.Host == Dynamic {
		return false
	}
	return p.Index == Dynamic || indexOrigin(p.URL) != p.Index
}

// indexOrigin is an index as written (a URL or a host) as an origin:
// scheme and host in lower case, the port only when it is not the
// scheme's default; Dynamic when it is not literal, "" when it is no
// network index (a file: URL, none).
func indexOrigin(index string) string {
	if index == "" || index == Dynamic || strings.HasPrefix(index, "file:") {
		return index
	}
	if !strings.Contains(index, "://") {
		index = "https://" + index
	}
	u, err := url.Parse(index)
	if err != nil || u.Hostname() == "" {
		return Dynamic
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	if port := u.Port(); port != "" && !(scheme == "https" && port == "443" || scheme == "http" && port == "80") {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

func isSchemeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// indexHosts are the hosts an index as written names for pkg: indexHost's,
// and for Go's direct fallback directHosts.
func indexHosts(index, pkg string) []string {
	if index == "direct" {
		return directHosts(pkg)
	}
	return []string{indexHost(index, pkg)}
}

// goCodeHosts are the path prefixes cmd/go fetches from the named host
// itself (cmd/go/internal/vcs: vcsPaths); for any other module path, go
// direct first asks https://PATH?go-get=1 and follows its go-import meta
// tag to a repository on any host.
var goCodeHosts = []string{"github.com/", "bitbucket.org/", "launchpad.net/", "hub.jazz.net/git/", "git.apache.org/",
	"git.openstack.org/", "chiselapp.com/"}

// directHosts are the hosts go's direct fallback fetches pkg from: the
// module path's host, and Dynamic besides unless it is one of
// goCodeHosts. A manifest ("(go.mod)"), a local pattern ("./...") or
// "all" is Dynamic: its modules are the whole module graph, whose paths
// the dependencies' own go.mod files name (go.mod's require lines do not
// bound them, nor their meta tags' hosts).
func directHosts(pkg string) []string {
	h := indexHost("direct", pkg)
	if h == Dynamic {
		return []string{Dynamic}
	}
	path, _, _ := strings.Cut(pkg, "@")
	path = strings.ToLower(path) + "/"
	if slices.ContainsFunc(goCodeHosts, func(p string) bool { return strings.HasPrefix(path, p) && len(path) > len(p) }) {
		return []string{h}
	}
	return []string{h, Dynamic}
}

// indexHost turns an index as written (a URL, a host, "direct" for Go's
// module host) into a host name.
func indexHost(index, pkg string) string {
	switch {
	case index == "" || index == Dynamic:
		return index
	case index == "direct":
		// The module's own host: its path's first element, which has a
		// dot. A manifest ("(go.mod)": its modules'), a local pattern
		// ("./...": its dependencies') or "all" come from any host.
		h, _, _ := strings.Cut(pkg, "/")
		h, _, _ = strings.Cut(h, "@")
		if !strings.Contains(h, ".") || strings.HasPrefix(h, ".") || strings.HasPrefix(h, "(") {
			return Dynamic
		}
		return strings.ToLower(h)
	case strings.HasPrefix(index, "file:"):
		return ""
	}
	if !strings.Contains(index, "://") {
		index = "https://" + index
	}
	u, err := url.Parse(index)
	if err != nil || u.Hostname() == "" {
		return Dynamic
	}
	return strings.ToLower(u.Hostname())
}
