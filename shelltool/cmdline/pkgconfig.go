package cmdline

import (
	"path"
	"slices"
	"strings"
)

// Configuration written before an install (package.install).
//
// An installer reads configuration files the line does not show (a
// project's .npmrc, pip.conf, uv.toml, .cargo/config.toml, git's
// url.*.insteadOf), and the line itself may write one before the install
// runs: `echo '@s:registry=https://e/' >> .npmrc && npm i @s/x`. What such
// a file will hold cannot be known here, so an install whose
// configuration the line may write has the index Dynamic. The line may
// write it (anywhere in the line: a loop may run a later command first)
// when:
//
//   - a write redirection's target is not literal, or names one of the
//     family's configFiles (or git's);
//   - a word of a command other than the install and configReaders names
//     one (cp x .npmrc, tee pip.conf, sed -i … uv.toml, python -c
//     "open('.npmrc','w')"), or names a file the install reads options
//     from (pip -r reqs.txt, -c constraints.txt);
//   - a pathWriter has a word that is not literal or a glob (cp $F .),
//     a treeWriter runs (tar x, unzip, git checkout, cp -r, curl -J), or
//     a command's name is not literal;
//   - an installer's configuration subcommand runs (npm config set, pip
//     config set, go env -w, poetry source add, git config other than a
//     read: configSetter).
//
// A write of only what the sandbox's pins make the tool ignore
// (pinnedConfigFiles, pip config set, go env -w) is Dynamic with
// Package.PinnedHost, the index where the pins hold.
//
// A program's own writes (a script, make, node -e with a computed name)
// are not seen: what the sandbox pins (toolchains.IndexPins) and the
// egress proxy, which lets a fetch reach only a host a rule allows, hold
// there. Config files written by an earlier call are the caller's to read
// (Package.Files, Package.Elsewhere).

// allFamilies marks a write that may reach any family's configuration.
const allFamilies = "*"

// noteConfigWrites records what command k may write of the installers'
// configuration.
func (a *analyzer) noteConfigWrites(k *call) {
	if has(chdirWrappers, k.name) && (k.name == "chroot" || slices.ContainsFunc(k.args, func(w arg) bool {
		name, _, _ := strings.Cut(w.text, "=")
		return w.lit && has(chdirOpts, name)
	})) {
		a.dirMoved = true
	}
	if len(k.pkgs) > 0 {
		return // the install itself (its own config options are read by parse)
	}
	if f, pinned := k.configSetter(); f != "" {
		a.configWrite(f, pinned)
	}
	if k.writesTree() {
		a.configWrite(allFamilies, false)
	}
	if has(configReaders, k.name) {
		return
	}
	pw := has(pathWriters, k.norm) && (!has("sed gsed perl", k.norm) || anyShort(k.args, "i") || hasWordPrefix(k.args, "--in-place"))
	for _, w := range k.args {
		if pw && (!w.lit || w.glob) {
			a.configWrite(allFamilies, false)
		}
		a.cfgWords = append(a.cfgWords, strings.ToLower(w.text))
	}
}

// Levels of what the line may write of an install's configuration.
const (
	cfgNone     = iota
	cfgPinned   // only files the sandbox's pins make the tool ignore
	cfgUnpinned // anything else
)

// configWrite records a write that may reach family's configuration
// (pinned: only what the sandbox's pins make the tool ignore).
func (a *analyzer) configWrite(family string, pinned bool) {
	if a.cfgWritten == nil {
		a.cfgWritten = map[string]int{}
	}
	level := cfgUnpinned
	if pinned {
		level = cfgPinned
	}
	a.cfgWritten[family] = max(a.cfgWritten[family], level)
}

// noteRedirectWrites records the write redirections as configuration
// writes: a target not literal may be any file.
func (a *analyzer) noteRedirectWrites() {
	for _, r := range a.out.Redirects {
		switch {
		case !r.Write:
		case r.Path == Dynamic:
			a.configWrite(allFamilies, false)
		default:
			a.cfgWords = append(a.cfgWords, strings.ToLower(r.Path))
		}
	}
}

// configWritten is what the line may write of the configuration the
// install reads before it runs (cfgNone, cfgPinned, cfgUnpinned).
func (a *analyzer) configWritten(in *install) int {
	fam := in.family
	if fam == "" {
		return cfgNone // the system's package managers: the host is its sources
	}
	level := max(a.cfgWritten[allFamilies], a.cfgWritten[fam])
	for _, c := range a.out.Commands {
		if c.Name == Dynamic {
			return cfgUnpinned // an unknown program may write any file
		}
	}
	names := strings.Fields(configFiles[fam] + " " + gitConfigFiles)
	for _, f := range in.files {
		if b := strings.ToLower(path.Base(f)); f != Dynamic && b != "." && b != "/" {
			names = append(names, b)
		}
	}
	pinned := strings.Fields(pinnedConfigFiles[fam])
	for _, w := range a.cfgWords {
		if slices.ContainsFunc(names, func(n string) bool { return strings.Contains(w, n) }) {
			return cfgUnpinned
		}
		if slices.ContainsFunc(pinned, func(n string) bool { return strings.Contains(w, n) }) {
			level = max(level, cfgPinned)
		}
	}
	return level
}

// configSetter is the family whose configuration the command's
// subcommand changes ("*" for git's, which every installer fetching from
// git reads), "" when it changes none; pinned when the sandbox's pins
// make the change moot (pip config writes a pip.conf pip does not read
// there; go env -w fails with GOENV=off).
func (k *call) configSetter() (family string, pinned bool) {
	name, args := k.norm, k.args
	if (name == "python" || name == "pypy") && len(args) >= 2 && args[0].text == "-m" && has("pip pip3", args[1].text) {
		name, args = "pip", args[2:]
	}
	if name == "git" {
		for _, i := range k.gitSubs() {
			if args[i].text == "config" && !gitConfigReads(args[i+1:]) {
				return allFamilies, false
			}
		}
		return "", false
	}
	sub, i := firstOperand(args, "-C --directory --prefix --cwd --dir")
	next := ""
	if rest := args[min(i+1, len(args)):]; len(rest) > 0 {
		next, _ = firstOperand(rest, "")
	}
	reads := has("get list ls debug", next) || hasWord(args, "--list") || hasWord(args, "-l")
	switch {
	case has("npm pnpm yarn", name) && (has("config c", sub) && !reads || sub == "set"):
		return "npm", false
	case name == "pip" && sub == "config" && !reads:
		return "pip", true
	case name == "go" && sub == "env" && (hasWordPrefix(args, "-w") || hasWordPrefix(args, "-u")):
		return "go", true
	case name == "poetry" && (sub == "config" && !reads || sub == "source"):
		return "poetry", false
	case name == "gem" && sub == "sources", name == "bundle" && sub == "config" && !reads:
		return "gem", false
	case has("composer conda mamba micromamba pdm rye pixi", name) && sub == "config",
		name == "pixi" && has("project workspace", sub): // pixi project channel add
		return installers[name].family, false
	}
	return "", false
}

// gitConfigReads reports whether git config's words only read.
func gitConfigReads(args []arg) bool {
	sub, _ := firstOperand(args, "")
	if has("get list", sub) {
		return true
	}
	for _, a := range args {
		if a.lit && (has("-l --list", a.text) || strings.HasPrefix(a.text, "--get")) {
			return true
		}
	}
	return false
}

// writesTree reports a command that writes files whose names its words do
// not show: treeWriters, tar extracting, a recursive cp, wget's
// recursion, curl -J.
func (k *call) writesTree() bool {
	if subs, ok := treeWriters[k.name]; ok {
		if subs == "" {
			return true
		}
		var at []int
		if k.name == "git" {
			at = k.gitSubs()
		} else if _, i := firstOperand(k.args, ""); i < len(k.args) {
			at = []int{i}
		}
		for _, i := range at {
			if !k.args[i].lit || has(subs, k.args[i].text) {
				return true
			}
		}
		return false
	}
	switch k.name {
	case "tar", "gtar", "bsdtar":
		for i, a := range k.args {
			if !a.lit || longIs(a.text, "--extract") || longIs(a.text, "--get") || shortHas(a.text, "x") ||
				i == 0 && !strings.HasPrefix(a.text, "-") && strings.Contains(a.text, "x") {
				return true
			}
		}
	case "cp":
		return anyShort(k.args, "rRa") || hasWordPrefix(k.args, "--recursive") || hasWordPrefix(k.args, "--archive")
	case "wget":
		return anyShort(k.args, "rm") || hasWordPrefix(k.args, "--recursive") || hasWordPrefix(k.args, "--mirror") ||
			hasWordPrefix(k.args, "--content-disposition") || k.outputNotLiteral("-O --output-document -P --directory-prefix")
	case "curl":
		return anyShort(k.args, "J") || hasWordPrefix(k.args, "--remote-header-name") || k.outputNotLiteral("-o --output --output-dir")
	}
	return false
}

// outputNotLiteral reports an output option (one of opts) whose value is
// not literal ("-o $F", "--output=$F").
func (k *call) outputNotLiteral(opts string) bool {
	for i, a := range k.args {
		name, _, eq := strings.Cut(a.text, "=")
		if !has(opts, name) {
			continue
		}
		if eq && !a.lit || !eq && a.lit && i+1 < len(k.args) && !k.args[i+1].lit {
			return true
		}
	}
	return false
}

// hasWordPrefix reports a literal word starting with p (an option with
// its value attached, or a cluster).
func hasWordPrefix(args []arg, p string) bool {
	for _, a := range args {
		if a.lit && strings.HasPrefix(a.text, p) {
			return true
		}
	}
	return false
}
