package cmdline

import (
	"slices"
	"strings"
)

// classify sets a command's risk and option, and what it runs, from the
// tables in tables.go: wrappers, shells, interpreters, programs of fixed
// risk, then the per-program analysis the programs map names.
func classify(k *call) {
	k.installs()
	if sp, ok := wrappers[k.name]; ok {
		k.wrap(sp)
		return
	}
	if loaderFamilies[k.norm] {
		// valgrind.bin, memcheck-amd64-linux, qemu-x86_64: k.norm is
		// the loader's family (inProcessLoader).
		k.wrap(wrappers[k.norm])
		return
	}
	switch {
	case has(bashLike, k.norm):
		k.shellCmd(true)
		return
	case has(otherShells, k.norm):
		k.shellCmd(false)
		return
	}
	if sp, ok := interpreters[k.norm]; ok {
		k.interp(sp)
		return
	}
	if strings.HasPrefix(k.name, "mkfs") {
		k.raise(critical, "mkfs")
		return
	}
	if r, ok := fixedRisk[k.name]; ok {
		k.raise(r.risk, r.opt)
		return
	}
	if analyse, ok := programs[k.name]; ok {
		analyse(k)
	}
}

func isShell(n string) bool { return has(bashLike, n) || has(otherShells, n) }

// riskyEnv names an assignment that changes which programs run or how
// ("NAME="), "" for others.
func riskyEnv(name string) string {
	if has(riskyEnvNames, name) || slices.ContainsFunc(riskyEnvPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
		return name + "="
	}
	return ""
}

// harmlessDevice reports redirect targets that are not files: they are
// skipped.
func harmlessDevice(p string) bool {
	return has(harmlessDevices, p) || strings.HasPrefix(p, harmlessDevicePrefix)
}

// diskDevice reports devices whose writing destroys data.
func diskDevice(p string) bool {
	return slices.ContainsFunc(diskDevices, func(pre string) bool { return strings.HasPrefix(p, pre) })
}

// isNetwork is a best guess that the command talks to the network.
func isNetwork(name string, args []arg) bool {
	base := baseName(name)
	subs, ok := network[base]
	if !ok {
		subs, ok = network[familyName(base)]
	}
	switch {
	case !ok:
		switch familyName(base) {
		case "python", "pypy":
			for i := 0; i+2 < len(args); i++ {
				if args[i].text == "-m" && args[i+1].text == "pip" && has(network["pip"], args[i+2].text) {
					return true
				}
			}
		case "rsync":
			for _, a := range args {
				if strings.Contains(a.text, ":") {
					return true
				}
			}
		}
		return false
	case subs == "":
		return true
	}
	if base == "git" {
		for _, i := range (&call{args: args}).gitSubs() {
			for _, sub := range GitNames(args[i].text) {
				if has(subs, sub) {
					return true
				}
			}
		}
		return false
	}
	sub, _ := firstOperand(args, "-C -c --git-dir --work-tree")
	if sub == "" && base == "yarn" {
		return true
	}
	return has(subs, sub)
}

func hasWord(args []arg, w string) bool {
	for _, a := range args {
		if a.lit && a.text == w {
			return true
		}
	}
	return false
}

// anyShort reports whether a short option cluster holds one of letters.
func anyShort(args []arg, letters string) bool {
	for _, a := range args {
		if a.lit && shortHas(a.text, letters) {
			return true
		}
	}
	return false
}

// dynIf makes the command dynamic (high) when the short option letter is
// given, alone or in a cluster: its argument is a program or a shell string
// the builtin runs. With script, a literal argument is parsed as a script.
func (k *call) dynIf(args []arg, letter byte, what string, isScript bool) {
	for i, a := range args {
		t := a.text
		if !a.lit {
			continue
		}
		if t == "--" {
			return
		}
		if len(t) < 2 || t[0] != '-' || t[1] == '-' {
			continue
		}
		j := strings.IndexByte(t[1:], letter)
		if j < 0 {
			continue
		}
		k.dynamic = true
		k.raise(high, what)
		v, ok := arg{text: t[j+2:], lit: true}, t[j+2:] != ""
		if !ok && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if isScript && ok && v.lit {
			k.scripts = append(k.scripts, script{text: v.text})
		}
		return
	}
}

func (k *call) flagIf(args []arg, opt, what string) {
	for _, a := range args {
		if a.lit && (a.text == opt || strings.HasPrefix(a.text, opt)) {
			k.raise(high, what)
			return
		}
	}
}
