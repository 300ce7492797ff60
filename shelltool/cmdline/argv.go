package cmdline

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// AnalyzeArgv classifies one program as the kernel starts it: argv is the
// argument vector the program sees, already words (no shell parsing, no
// expansion, so no differential between what is read and what runs). It
// applies the same simple-command analysis Analyze applies to each command
// of a line: the program itself comes first, then what it runs by its
// arguments (a wrapper's command, a literal sh -c script, ...), each with
// its risk and option. argv[0] is taken as the command name as given: the
// caller names the program (its base name) there.
//
// An empty argv, a word holding a NUL byte, or a nested script deeper than
// MaxDepth is an error.
func AnalyzeArgv(argv []string) ([]Command, error) {
	a, err := AnalyzeProgram(argv)
	return a.Commands, err
}

// AnalyzeProgram is AnalyzeArgv with the packages the program installs
// (Analysis.Packages, as a line's are resolved; Redirects stay empty: a
// program's argv has none), with no environment beyond the sandbox's own
// settings (AnalyzeProgramIn reads one).
func AnalyzeProgram(argv []string) (Analysis, error) {
	return AnalyzeProgramIn(argv, ProgramEnv{})
}

// ProgramEnv is what a program's environment holds of the variables
// InstallEnvNames lists, beyond the settings the sandbox gives every
// command (toolchains.IndexPins, GOPROXY, …), which the analysis assumes:
// Set are NAME=value entries that differ from them or add to them, Unset
// the names of those settings the environment lacks.
type ProgramEnv struct {
	Set, Unset []string
	// Aliases reads the aliases an installer expands from its
	// configuration (AliasFunc); nil reads none.
	Aliases AliasFunc
}

// AliasFunc is what the caller reads of an installer's configuration
// for a subcommand word that may be an alias (cargo's [alias] in the
// project's .cargo/config.toml and CARGO_HOME's): the words name expands
// to (one step: they may name another alias), nil when it is none;
// dynamic when that cannot be known (a configuration that does not
// parse, includes another, or cannot be read as the tool reads it; with
// elsewhere, the command may run in another folder, whose configuration
// may define name). The expansion is decided as the command it is.
type AliasFunc func(manager, name string, elsewhere bool) (words []string, dynamic bool)

// AnalyzeProgramIn is AnalyzeProgram for a program run with env, read as
// the assignments and removals of a line before it (`PIP_INDEX_URL=u pip
// install x`, `unset PIP_CONFIG_FILE; pip install x`): an installer's
// index is the one its environment names.
func AnalyzeProgramIn(argv []string, env ProgramEnv) (Analysis, error) {
	if len(argv) == 0 {
		return Analysis{}, errors.New("empty argv")
	}
	args := make([]arg, len(argv))
	for i, w := range argv {
		if strings.IndexByte(w, 0) >= 0 {
			return Analysis{}, errors.New("argv word holds a NUL byte")
		}
		args[i] = arg{text: w, lit: true}
	}
	a := &analyzer{parent: -1}
	a.withEnv(env)
	a.simple(args, ctx{}, -1, riskNote{})
	if a.err != nil {
		return Analysis{}, a.err
	}
	a.packages()
	return a.out, nil
}

// KnownProgram reports whether the analysis has rules of its own for a
// program of this base name (a wrapper, a shell, an interpreter, a program
// whose risk is fixed or depends on its arguments, a network program): a
// copy of it under another name would escape them, so the exec gate
// recognises it by identity and content. A name of its family
// (ProgramFamilies: perl5.36-x86_64-linux-gnu) is known as the family is.
func KnownProgram(name string) bool {
	if knownName(name) {
		return true
	}
	for _, f := range ProgramFamilies(name) {
		if knownName(f) {
			return true
		}
	}
	return false
}

// knownName is KnownProgram for the name alone.
func knownName(name string) bool {
	norm := trimVersion(name)
	if _, ok := wrappers[name]; ok {
		return true
	}
	if _, ok := interpreters[norm]; ok {
		return true
	}
	if _, ok := fixedRisk[name]; ok {
		return true
	}
	if _, ok := programs[name]; ok {
		return true
	}
	if _, ok := network[name]; ok {
		return true
	}
	return has(bashLike, norm) || has(otherShells, norm) || strings.HasPrefix(name, "mkfs")
}

// GitSubcommands returns every index in args (git's arguments after its
// name) of a word git may take as its subcommand, past its global options
// (-C dir, -c name=value, --git-dir=…, --shallow-file f, --no-pager, …),
// as the analysis reads them (an option git does not know is read both as
// taking a value and not); none when there is no subcommand. The exec
// gate uses it to decide a git program by its subcommand wherever the
// options put it.
func GitSubcommands(args []string) []int {
	k := &call{args: make([]arg, len(args))}
	for i, w := range args {
		k.args[i] = arg{text: w, lit: true}
	}
	return k.gitSubs()
}

// InstallEnvNames are the variables whose value changes where an installer
// fetches from (its index, its configuration, the folder of its project;
// a name ending in "*" is a prefix), for the exec gate to read from each
// program's environment (ProgramEnv). npm reads npm_config_* in any case.
func InstallEnvNames() []string {
	seen := map[string]bool{"npm_config_*": true}
	for _, sp := range installers {
		names := []string{sp.env, sp.extraEnv, sp.configEnv, sp.anyHostEnv, sp.directEnv, sp.dirEnv}
		if sp.aliasEnv != "" {
			names = append(names, sp.aliasEnv+"*")
		}
		for _, n := range strings.Fields(strings.Join(names, " ")) {
			if _, npm := npmConfigKey(n); !npm {
				seen[n] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// withEnv takes env as assignments and removals made before what is
// analysed.
func (a *analyzer) withEnv(env ProgramEnv) {
	for _, e := range env.Set {
		if name, value, ok := strings.Cut(e, "="); ok {
			a.setEnv(name, value)
		}
	}
	a.unsets = append(a.unsets, env.Unset...)
	a.aliases = env.Aliases
}

// ExecEnvNames are the variables the exec gate reads from a program's
// environment for its decision: InstallEnvNames and the git
// configuration a push reads (gitConfigEnv).
func ExecEnvNames() []string {
	return slices.Concat(InstallEnvNames(), GitEnvNames())
}

// InstallEnvWatched reports whether name is one of InstallEnvNames (npm's
// npm_config_* in any case).
func InstallEnvWatched(name string) bool {
	if _, npm := npmConfigKey(name); npm {
		return true
	}
	for _, n := range InstallEnvNames() {
		if p, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(name, p) || n == name {
			return true
		}
	}
	return false
}
