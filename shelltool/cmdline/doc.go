// Package cmdline turns one bash command line into the list of things the
// command policy must decide: every simple command that the line can run
// (with its words, a risk level and the option that raised it) and every
// redirection into or out of a file.
//
// It owns the parsing side of execute_terminal_command's requests
// (SPEC.md: "each simple command in it ... is a process.exec request; a
// redirection into a file is a write request on that path"). It does no I/O:
// it neither resolves paths nor looks at the file system, the environment or
// $PATH; the caller turns Commands into process.exec requests, Redirects into
// file requests on resolved paths, and adjusts risk to the execution surface.
//
// # What it finds
//
// Every simple command anywhere in the line: pipelines, && || ; lists,
// subshells, { } groups, $(...) and backquotes (also inside double quotes,
// arguments, assignments, redirection targets, expanding here-documents and
// parameter expansions), process substitutions, function bodies, if / for /
// while / until / case / select, the substitutions of [[ ]] and (( )), time,
// coproc and declare / local / export. Commands run by another command are
// found too: wrappers (timeout, env, sudo, xargs, nice, ...; see wrappers),
// find -exec, sh -c 'literal' / eval 'literal' / trap 'literal' / a literal
// here-document fed to a shell (parsed recursively), and a command after an
// unquoted expansion that may vanish ($SUDO rm ...). Package installs (npm
// install X, pip install X, go get X, ...) are also listed as Packages: the
// package as written and the index it comes from (packages.go), Dynamic
// when the line may write the installer's configuration before it runs
// (pkgconfig.go), with the files it reads options from and whether it may
// run in another folder, for the caller to read the project's
// configuration.
//
// # What bash runs that the text does not name
//
// The analysis follows bash where bash runs something other than what the
// words say, and says Dynamic where it cannot know:
//
//   - assignments that change what runs are high: PATH, the loader's LD_*,
//     bash's BASH_ENV, ENV, BASH_CMDS (its command hash), BASH_ALIASES and
//     POSIXLY_CORRECT (aliases expanded in scripts), EXECIGNORE, the prompts,
//     BASH_FUNC_name%% (a function a child bash imports), programs' option
//     variables (TAR_OPTIONS, ZIPOPT, RSYNC_RSH, GIT_CONFIG_*, ...), also
//     when read, printf -v, mapfile, getopts, declare -n, ${x:=v}, unset or
//     GNU env (every word with "=") sets them; HOME and XDG_CONFIG_HOME
//     when the line runs a program that runs what its configuration there
//     says (git, ssh, npm, pip, python, a login or interactive shell);
//   - a script read at run time is Dynamic: a shell or interpreter whose
//     script operand is /dev/stdin, /dev/fd/N or <( ) (critical when the
//     substitution downloads), bash -c without a script word (xargs bash -c),
//     make -f -, find -exec {} and xargs -I words, a non-literal trap action;
//   - arithmetic evaluates text and expands the subscripts in it, so
//     arithmetic on quoted text holding a command substitution, on command
//     output, or on a variable the line sets from text it cannot see, and
//     ${!x}, are Dynamic (arith.go);
//   - a here-document inside $( ) with a body line beginning with its
//     delimiter is an error: bash ends the document there, mvdan.cc/sh does
//     not, so the two would see different commands.
//
// # Security model
//
// This package is for asking the person the right question, not for
// containment: the kernel sandbox is the security boundary. What a line will
// really do depends on things the analyzer cannot know before it runs —
// variables, command substitutions, globs, aliases, functions and scripts on
// disk, $PATH, the contents of files that programs read (Makefiles, git
// config, package.json scripts), what a program does with its arguments. So:
//
//   - whatever cannot be known is reported, never guessed away: a non-literal
//     command name, eval, source, a shell or interpreter reading its program
//     from stdin or from a non-literal string, are Name "<dynamic>" with risk
//     high; options that make a harmless-looking program run or write
//     something raise the risk to high and are named in Option;
//   - known destructive patterns (rm -r of "/", "~", absolute or parent
//     paths, git push --force, mkfs, dd of=, a download piped into a shell,
//     a write redirection to a block device, ...) are critical;
//   - a plain command is medium; this package never says low;
//   - a line that does not parse, is empty, longer than MaxLineBytes or
//     nested deeper than MaxDepth is an error (the caller refuses the call).
//
// Lists are best effort: a program not in the tables is medium, however
// dangerous it may be. The tables (wrappers, interpreters, programs of fixed
// risk, network programs, risky environment variables, devices) are data in
// tables.go, each in one place; a program whose risk depends on its
// arguments is analysed by a function in the file of its family (git.go,
// sedawk.go, findxargs.go, archive.go, network.go, destructive.go,
// builtins.go, tools.go, wrappers.go, interpreters.go), which the programs
// map in tables.go names.
//
// The folder each command runs in is followed through the line's literal
// cd, pushd and popd as bash follows it (cd.go: subshells, pipelines and
// substitutions keep theirs; lists, branches, loops, functions and eval
// are followed, and what cannot be is Dynamic): Command.Dir, from which
// the caller takes relative operands, so `cd /tmp && rm -r x` is rm -r
// outside before it runs, as the exec gate finds it then. A recursive
// removal lists its literal operands (Command.Removes: rm -r, find ROOTS
// -delete or -exec rm whose expression is not shown to restrict what it
// reaches: fail closed) and its glob operands (Command.Globs) for the
// caller to compare with the folder they are in (every entry of the
// workspace root is the root); this package does not list folders.
//
// git is read as git 2.39 reads itself (git.go): its global options by
// handle_options (an option it does not know is read both as taking the
// next word and not, each subcommand analysed; past maxGitReadings
// readings the command is critical), a subcommand that is no builtin
// (gitbuiltins.go, generated from `git --list-cmds=builtins`) also as the
// one builtin help.autocorrect could run in git's own process (computed,
// not refused: its scoring over the builtins alone), and send-pack and
// http-push (the pushing end) and receive-pack (the receiving end, which
// updates the refs of the repository it names) also as push.
// GitSubcommands and GitNames give the exec gate the same readings.
package cmdline
