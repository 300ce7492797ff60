package cmdline

import (
	"path"
	"strings"

	"github.com/onellm/onellm-mcp/grants"
)

// This file holds the tables: wrappers, shells and interpreters, risky
// options and destructive patterns (classify), network programs, risky
// environment variables and devices. Option lists are space-separated.

const (
	high     = grants.RiskHigh
	critical = grants.RiskCritical
)

// wrapperSpec describes a program that runs another command given as its
// remaining words.
type wrapperSpec struct {
	risk         grants.Risk // the wrapper's own risk when it runs a command
	idle         grants.Risk // its risk when it runs none
	argOpts      string      // options taking an argument (attached or the next word)
	optArgs      string      // options with an optional attached argument only
	flags        string      // options without argument; any other option is high (the command may be misread)
	positional   int         // operands before the command (timeout DURATION, chroot DIR)
	assigns      bool        // NAME=value words before the command are skipped (env)
	numFlags     bool        // -N is a flag (nice -10)
	noRun        string      // options after which no command is run (command -v)
	shellOpts    string      // options that run an interactive shell when no command is given (sudo -s)
	shellIfNoCmd bool        // with no command it runs a shell reading stdin (chroot, su)
	strOpts      string      // options whose argument is a shell command line (flock -c)
	dynOpts      string      // options whose argument is a command we cannot know (env -S)
	shellJoin    bool        // the command words are joined and run by sh -c (watch)
	joinOff      string      // options turning shellJoin off (watch -x)
	dropStdin    bool        // the command does not get the wrapper's stdin (xargs)
	runFloor     riskNote    // minimum risk of the command it runs
}

// wrappers maps a base name to how it runs its command.
var wrappers = map[string]*wrapperSpec{
	"timeout": {argOpts: "-s --signal -k --kill-after", flags: "--preserve-status --foreground -v --verbose", noRun: "--help --version", positional: 1},
	"nice":    {argOpts: "-n --adjustment", numFlags: true, noRun: "--help --version"},
	"nohup":   {noRun: "--help --version"},
	"env": {argOpts: "-u --unset -C --chdir", flags: "-i --ignore-environment -0 --null -v --debug",
		optArgs: "--ignore-signal --default-signal --block-signal --list-signal-handling", dynOpts: "-S --split-string",
		assigns: true, noRun: "--help --version"},
	"command": {flags: "-p", noRun: "-v -V"},
	"builtin": {},
	"time": {argOpts: "-f --format -o --output", flags: "-p --portability -v --verbose -a --append -q --quiet",
		noRun: "--help -V --version"},
	"stdbuf": {argOpts: "-i -o -e --input --output --error", noRun: "--help --version"},
	"xargs": {risk: high, idle: high, runFloor: riskNote{high, "xargs"}, dropStdin: true,
		argOpts: "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars --process-slot-var",
		flags:   "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit --show-limits",
		optArgs: "-e --eof -i --replace -l --max-lines", noRun: "--help --version"},
	"sudo": {risk: high, idle: high,
		argOpts: "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t --type -T --command-timeout -U --other-user -R --chroot",
		flags:   "-A --askpass -b --background -B --bell -E -H --set-home -k --reset-timestamp -n --non-interactive -P --preserve-groups -S --stdin -N --no-update",
		optArgs: "--preserve-env", noRun: "-e --edit -l --list -v --validate -K --remove-timestamp -V --version --help",
		shellOpts: "-i --login -s --shell"},
	"doas":    {risk: high, idle: high, argOpts: "-u -a", flags: "-n -L", noRun: "-C", shellOpts: "-s"},
	"pkexec":  {risk: high, idle: high, argOpts: "--user", flags: "--keep-cwd --disable-internal-agent", noRun: "--version --help"},
	"runuser": {risk: high, idle: high, argOpts: "-u --user -g --group -G --supp-group -s --shell -w --whitelist-environment", flags: "-l --login -m -p --preserve-environment -P --pty", strOpts: "-c --command --session-command", shellIfNoCmd: true},
	"watch": {argOpts: "-n --interval -q --equexit", optArgs: "-d --differences",
		flags:   "-b --beep -c --color -C --no-color -e --errexit -g --chgexit -t --no-title -w --no-wrap -p --precise -r --no-rerun",
		joinOff: "-x --exec", shellJoin: true, dropStdin: true, noRun: "-h --help -v --version"},
	"setsid": {flags: "-c --ctty -f --fork -w --wait", noRun: "--help --version"},
	"flock": {argOpts: "-w --timeout -E --conflict-exit-code", strOpts: "-c --command", positional: 1,
		flags: "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close --verbose -F --no-fork", noRun: "--help --version"},
	"chroot": {risk: high, idle: high, argOpts: "--userspec --groups", flags: "--skip-chdir", positional: 1, shellIfNoCmd: true},
	"nsenter": {risk: high, idle: high, argOpts: "-t --target -S --setuid -G --setgid",
		optArgs: "-m -u -i -n -p -U -C -T -r -w --mount --uts --ipc --net --pid --user --cgroup --time --root --wd",
		flags:   "-a --all -F --no-fork -Z --follow-context --preserve-credentials", shellIfNoCmd: true},
	"unshare": {argOpts: "-S --setuid -G --setgid -R --root -w --wd",
		optArgs: "-m -u -i -n -p -U -C -T --mount --uts --ipc --net --pid --user --cgroup --time --mount-proc --map-user --map-group --map-users --map-groups --propagation --setgroups --kill-child",
		flags:   "-f --fork -r --map-root-user -c --map-current-user --keep-caps --map-auto", shellIfNoCmd: true},
	"ionice":  {argOpts: "-c --class -n --classdata", flags: "-t --ignore", noRun: "-p --pid -P --pgid -u --uid"},
	"taskset": {flags: "-a --all-tasks -c --cpu-list", noRun: "-p --pid", positional: 1},
	"chrt": {flags: "-b --batch -d --deadline -f --fifo -i --idle -o --other -r --rr -R --reset-on-fork -v --verbose -a --all-tasks",
		argOpts: "-T --sched-runtime -P --sched-period -D --sched-deadline", noRun: "-p --pid -m --max", positional: 1},
	"strace": {argOpts: "-e -o -p -P -s -u -E -a -b -I -O -S -X -U",
		flags: "-f -F -c -C -d -D -h -i -k -q -r -t -T -v -V -w -x -y -z -Z -n -A -Y"},
	"ltrace":  {argOpts: "-e -o -p -s -u -a -A -D -F -l -n -w -x -L", flags: "-b -c -C -d -f -h -i -r -S -t -T -V"},
	"exec":    {risk: high, argOpts: "-a", flags: "-c -l"},
	"busybox": {noRun: "--list --help"},
}

// interpSpec describes an interpreter's options.
type interpSpec struct {
	inlineLong string // whole options whose argument is program text (node --eval)
	inline     string // short letters whose argument is program text, also inside clusters (python -c)
	module     string // short letters naming a module to run (python -m)
	argLetters string // short letters taking an argument (rest of the cluster or the next word)
	attach     string // short letters taking the rest of the cluster only
	argLong    string // long options taking the next word unless "=value"
	info       string // options that only print and exit
}

var interpreters = map[string]*interpSpec{
	"python":  {inline: "c", module: "m", argLetters: "WX", argLong: "--check-hash-based-pycs", info: "-V --version -h --help"},
	"pypy":    {inline: "c", module: "m", argLetters: "WX", info: "-V --version -h --help"},
	"perl":    {inline: "eE", attach: "MmIiDdxlC0F", info: "-v -V --version -h --help"},
	"ruby":    {inline: "e", argLetters: "IrCE", attach: "WKTx0l", info: "-v --version -h --help"},
	"node":    {inlineLong: "-e --eval -p --print", argLong: "-r --require --import --loader --experimental-loader -C --conditions --input-type", info: "-v --version -h --help"},
	"nodejs":  {inlineLong: "-e --eval -p --print", argLong: "-r --require --import --loader", info: "-v --version -h --help"},
	"bun":     {inlineLong: "-e --eval -p --print", info: "-v --version -h --help"},
	"php":     {inline: "r", argLetters: "cdz", info: "-v --version -h --help -m -i"},
	"lua":     {inline: "e", argLetters: "l", info: "-v"},
	"luajit":  {inline: "e", argLetters: "l", info: "-v"},
	"Rscript": {inlineLong: "-e", info: "--version"},
	"tclsh":   {},
	"irb":     {},
}

// bashLike shells have scripts this package can parse; otherShells cannot.
const (
	bashLike    = "sh bash dash ash ksh mksh lksh zsh rbash yash posh"
	otherShells = "fish csh tcsh pwsh nu elvish xonsh"
)

func isShell(n string) bool { return has(bashLike, n) || has(otherShells, n) }

// classify sets a command's risk and option, and what it runs. It is the
// one place where programs and their risky options are listed.
func classify(k *call) {
	n := k.name
	if sp, ok := wrappers[n]; ok {
		k.wrap(sp)
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
	if strings.HasPrefix(n, "mkfs") || n == "mke2fs" || n == "mkswap" {
		k.raise(critical, "mkfs")
		return
	}
	args := k.args
	switch n {
	// Dynamic builtins.
	case "eval":
		k.dynamic = true
		k.raise(high, "eval")
		if len(args) > 0 && allLit(args) {
			k.scripts = append(k.scripts, script{text: strings.Join(texts(args), " ")})
		}
	case "source", ".":
		k.dynamic = true
		k.raise(high, "source")
	case "trap":
		ops := operands(args, "")
		if len(ops) > 0 && !has("-l -p", args[0].text) {
			if !ops[0].lit {
				k.raise(high, "trap dynamic action")
			} else if ops[0].text != "-" && ops[0].text != "" && !isDigits(ops[0].text) {
				k.scripts = append(k.scripts, script{text: ops[0].text})
			}
		}
	case "alias":
		if len(args) > 0 {
			k.raise(high, "alias")
		}
		// An alias (with expand_aliases) makes a later name run its value.
		for _, a := range args {
			if !a.lit {
				k.dynamic = true
			} else if _, v, ok := strings.Cut(a.text, "="); ok && !strings.HasPrefix(a.text, "-") {
				k.dynamic = true
				k.scripts = append(k.scripts, script{text: v})
			}
		}
	case "enable":
		k.dynIf(args, 'f', "enable -f", false) // loads code
	case "hash":
		k.dynIf(args, 'p', "hash -p", false) // a later name runs another program
	case "mapfile", "readarray":
		k.dynIf(args, 'C', n+" -C", true)
	case "compgen":
		k.dynIf(args, 'C', n+" -C", true)
	case "complete":
		k.flagIf(args, "-C", n+" -C")
	case "fc":
		if !anyShort(args, "l") {
			k.raise(high, "fc")
		}

	// Programs that run other programs.
	case "find":
		k.find()
	case "parallel":
		k.raise(high, "parallel")
		if len(args) > 0 {
			k.runs = append(k.runs, run{argv: []arg{{text: strings.Join(texts(args), " ")}}, floor: riskNote{high, "parallel"}})
		}
	case "su":
		k.su()
	case "gdb":
		k.raise(high, "gdb")
		for i, a := range args {
			if a.lit && a.text == "--args" && i+1 < len(args) {
				k.runs = append(k.runs, run{argv: args[i+1:]})
				break
			}
		}
	case "ssh":
		k.ssh()
	case "scp", "sftp":
		for i, a := range args {
			t := a.text
			if t == "-S" || t == "-F" || (t == "-o" && i+1 < len(args) && riskySSHOpt(args[i+1].text)) ||
				(strings.HasPrefix(t, "-o") && riskySSHOpt(t[2:])) {
				k.raise(high, n+" "+t)
			}
		}
	case "awk", "gawk", "mawk", "nawk":
		k.awk()
	case "sed", "gsed":
		k.sed()
	case "rg":
		for _, a := range args {
			if name, _, _ := strings.Cut(a.text, "="); name == "--pre" || name == "--pre-glob" {
				k.raise(high, "rg --pre")
			}
		}
	case "sort":
		k.sort()
	case "git":
		k.git()
	case "tar", "gtar", "bsdtar":
		k.tar()
	case "zip":
		for _, a := range args {
			if strings.HasPrefix(a.text, "-TT") || longIs(a.text, "--unzip-command") {
				k.raise(high, "zip -TT")
			}
		}
	case "rsync":
		for _, a := range args {
			if longIs(a.text, "--rsh") || longIs(a.text, "--rsync-path") || shortHas(a.text, "e") {
				k.raise(high, "rsync -e")
			}
		}
	case "man":
		for _, a := range args {
			if a.text == "-P" || a.text == "-H" || longIs(a.text, "--pager") || longIs(a.text, "--html") || strings.HasPrefix(a.text, "-P") {
				k.raise(high, "man -P")
			}
		}
	case "vim", "vi", "nvim", "ex", "view", "gvim", "vimdiff", "rvim":
		for _, a := range args {
			t := a.text
			if t == "-c" || t == "--cmd" || t == "-S" || t == "-u" || (len(t) > 1 && t[0] == '+' && !isDigits(t[1:])) {
				k.raise(high, "vim -c")
			}
		}
	case "emacs":
		for _, a := range args {
			if has("--eval -l --load -f --funcall -x --script", strings.SplitN(a.text, "=", 2)[0]) {
				k.raise(high, "emacs --eval")
			}
		}
	case "npx", "bunx", "uvx", "pnpx":
		k.raise(high, n+" (runs a downloaded package)")
	case "npm", "pnpm":
		if sub, _ := firstOperand(args, ""); sub == "exec" || sub == "x" || sub == "dlx" {
			k.raise(high, n+" "+sub)
		}
	case "curl":
		k.curl()
	case "wget":
		for _, a := range args {
			if longIs(a.text, "--post-data") || longIs(a.text, "--post-file") || longIs(a.text, "--method") || longIs(a.text, "--body-data") || longIs(a.text, "--body-file") {
				k.raise(high, "wget --post (non-GET)")
			}
		}
	case "nc", "ncat", "netcat":
		for _, a := range args {
			if shortHas(a.text, "ec") || longIs(a.text, "--exec") || longIs(a.text, "--sh-exec") || longIs(a.text, "--lua-exec") {
				k.raise(high, n+" -e")
			}
		}
	case "socat":
		for _, a := range args {
			u := strings.ToUpper(a.text)
			if strings.HasPrefix(u, "EXEC:") || strings.HasPrefix(u, "SYSTEM:") {
				k.raise(high, "socat EXEC")
			}
		}
	case "crontab", "at", "batch":
		if !anyShort(args, "l") {
			k.raise(high, n)
		}
	case "mount", "umount", "swapon", "swapoff", "insmod", "rmmod", "modprobe", "iptables", "ip6tables", "nft",
		"useradd", "userdel", "usermod", "groupadd", "groupdel", "passwd", "chpasswd", "visudo", "setcap", "chattr":
		k.raise(high, n)
	case "sysctl":
		k.flagIf(args, "-w", "sysctl -w")
	case "pkill", "killall":
		k.raise(high, n)

	// Destructive commands.
	case "rm":
		k.rm()
	case "shred", "wipefs", "blkdiscard", "killall5":
		k.raise(critical, n)
	case "fdisk", "sfdisk", "parted", "gdisk", "sgdisk", "cfdisk":
		if anyShort(args, "l") || hasWord(args, "--list") {
			k.raise(high, n)
		} else {
			k.raise(critical, n)
		}
	case "dd":
		k.raise(high, "dd")
		for _, a := range args {
			if strings.HasPrefix(a.text, "of=") {
				k.raise(critical, "dd of=")
			}
		}
	case "chmod", "chown", "chgrp":
		k.chmod()
	case "kill":
		k.kill()
	case "shutdown", "reboot", "halt", "poweroff":
		k.raise(critical, n)
	case "init", "telinit":
		if len(args) > 0 && has("0 6", args[0].text) {
			k.raise(critical, n+" "+args[0].text)
		}
	case "systemctl":
		if sub, _ := firstOperand(args, ""); has("poweroff reboot halt kexec emergency rescue soft-reboot", sub) {
			k.raise(critical, "systemctl "+sub)
		}
	case "truncate":
		k.raise(high, "truncate")
	}
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
				argv := args[i+1 : j]
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
	if deletes {
		for _, r := range roots {
			if dangerousTarget(r, false) {
				k.raise(critical, "find -delete outside")
			}
		}
	}
}

func (k *call) su() {
	k.raise(high, "su")
	args := k.args
	for i := 0; i < len(args); i++ {
		t := args[i].text
		name, val, hasVal := strings.Cut(t, "=")
		if args[i].lit && has("-c --command --session-command", name) {
			v := arg{text: val, lit: true}
			if !hasVal {
				if i+1 >= len(args) {
					return
				}
				v = args[i+1]
			}
			if v.lit {
				k.scripts = append(k.scripts, script{text: v.text})
			} else {
				k.dynamic = true
				k.raise(high, "su -c")
			}
			return
		}
		if args[i].lit && has("-s --shell -g --group -G --supp-group -w --whitelist-environment", t) {
			i++
		}
	}
	k.stdinShell("su")
}

func riskySSHOpt(o string) bool {
	o = strings.ToLower(o)
	for _, p := range []string{"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "remotecommand", "match"} {
		if strings.HasPrefix(o, p) {
			return true
		}
	}
	return false
}

// ssh: any session runs commands on another machine.
func (k *call) ssh() {
	k.raise(high, "ssh")
	proxy := false
	args := k.args
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if !args[i].lit || len(t) < 2 || t[0] != '-' {
			break
		}
		if t == "-o" && i+1 < len(args) && riskySSHOpt(args[i+1].text) || strings.HasPrefix(t, "-o") && riskySSHOpt(t[2:]) {
			proxy = true
		}
		if last := t[len(t)-1:]; strings.Contains("BbcDEeFIiJLlmOoPpQRSWw", last) && !strings.HasPrefix(t, "--") {
			i++
		}
	}
	switch {
	case k.risk > high:
	case proxy:
		k.option = "ssh -o ProxyCommand"
	case i+1 < len(args):
		k.option = "ssh remote command"
	}
}

// awk: system(), pipes to or from commands, and programs from files.
func (k *call) awk() {
	args := k.args
	var prog []string
	fromFile := false
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if !args[i].lit {
			break
		}
		if t == "--" {
			i++
			break
		}
		if len(t) < 2 || t[0] != '-' {
			break
		}
		name, _, hasVal := strings.Cut(t, "=")
		switch {
		case t == "-f" || name == "--file" || t == "-E" || name == "--exec" || t == "-i" || name == "--include":
			fromFile = true
			if !hasVal {
				i++
			}
		case strings.HasPrefix(t, "-f") && !strings.HasPrefix(t, "--"):
			fromFile = true
		case t == "-l" || name == "--load" || strings.HasPrefix(t, "-l") && !strings.HasPrefix(t, "--"):
			k.raise(high, "awk -l")
			if t == "-l" {
				i++
			}
		case t == "-e" || name == "--source":
			if hasVal {
				prog = append(prog, strings.SplitN(t, "=", 2)[1])
			} else if i+1 < len(args) {
				i++
				prog = append(prog, args[i].text)
			}
		case t == "-F" || t == "-v" || name == "--field-separator" && !hasVal || name == "--assign" && !hasVal:
			i++
		}
	}
	if len(prog) == 0 && !fromFile && i < len(args) {
		prog = append(prog, args[i].text)
	}
	if fromFile {
		k.raise(high, "awk -f")
	}
	for _, p := range prog {
		if opt := awkRisk(p); opt != "" {
			k.raise(high, opt)
		}
	}
}

// awkRisk scans an awk program, outside strings and regex literals, for
// system(), | and |& (pipes to or from commands) and @load.
func awkRisk(p string) string {
	prev := byte(0) // previous significant character
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '"':
			for i++; i < len(p) && p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			prev = '"'
			continue
		case c == '/' && !(isWordByte(prev) || prev == ')' || prev == ']' || prev == '"'):
			for i++; i < len(p) && p[i] != '/'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			prev = '/'
			continue
		case c == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			continue
		case c == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i++
				prev = '|'
				continue
			}
			return "awk |"
		case c == '@' && strings.HasPrefix(p[i:], "@load"):
			return "awk @load"
		case c == 's' && strings.HasPrefix(p[i:], "system") && !isWordByte(prev) && (i == 0 || !isWordByte(p[i-1])):
			rest := strings.TrimLeft(p[i+len("system"):], " \t")
			if strings.HasPrefix(rest, "(") {
				return "awk system("
			}
		}
		if c != ' ' && c != '\t' && c != '\n' {
			prev = c
		}
	}
	return ""
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// sed: -i writes files; e and s///e run commands; w and s///w write files;
// -f reads a script we cannot see.
func (k *call) sed() {
	args := k.args
	var scripts []string
	sawE, sandbox := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.lit {
			if !sawE {
				k.raise(high, "sed dynamic script")
			}
			continue
		}
		if t == "--" {
			i++
			break
		}
		if len(t) < 2 || t[0] != '-' {
			if !sawE {
				scripts = append(scripts, t)
				sawE = true
			}
			continue
		}
		if strings.HasPrefix(t, "--") {
			name, val, hasVal := strings.Cut(t, "=")
			switch {
			case longIs(name, "--in-place"):
				k.raise(high, "sed -i")
			case longIs(name, "--expression"):
				sawE = true
				if hasVal {
					scripts = append(scripts, val)
				} else if i+1 < len(args) {
					i++
					scripts = append(scripts, args[i].text)
				}
			case longIs(name, "--file"):
				sawE = true
				k.raise(high, "sed -f")
				if !hasVal {
					i++
				}
			case longIs(name, "--sandbox"):
				sandbox = true
			case longIs(name, "--line-length") && !hasVal:
				i++
			}
			continue
		}
	cluster:
		for j := 1; j < len(t); j++ {
			rest := t[j+1:]
			switch t[j] {
			case 'i':
				k.raise(high, "sed -i")
				break cluster
			case 'e':
				sawE = true
				if rest != "" {
					scripts = append(scripts, rest)
				} else if i+1 < len(args) {
					i++
					scripts = append(scripts, args[i].text)
				}
				break cluster
			case 'f':
				sawE = true
				k.raise(high, "sed -f")
				if rest == "" {
					i++
				}
				break cluster
			case 'l':
				if rest == "" {
					i++
				}
				break cluster
			}
		}
	}
	if !sawE && i < len(args) {
		scripts = append(scripts, args[i].text)
	}
	if sandbox {
		return
	}
	for _, s := range scripts {
		if opt := sedRisk(s); opt != "" {
			k.raise(high, opt)
		}
	}
}

// sedRisk scans a sed script for commands that run programs (e, s///e) or
// write files (w, W, s///w). A script it cannot follow is risky.
func sedRisk(s string) string {
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// skipDelim moves past the next unescaped d.
	skipDelim := func(d byte) bool {
		for ; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == d {
				i++
				return true
			}
		}
		return false
	}
	toEOL := func() {
		for i < len(s) && s[i] != '\n' {
			i++
		}
	}
	address := func() bool {
		switch {
		case i < len(s) && s[i] >= '0' && s[i] <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < len(s) && s[i] == '$':
			i++
		case i < len(s) && s[i] == '/':
			i++
			if !skipDelim('/') {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < len(s) && s[i] == '\\':
			d := s[i+1]
			i += 2
			if !skipDelim(d) {
				return false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i < len(s) && (s[i] == '+' || s[i] == '~'):
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
		return true
	}
	for i < len(s) {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			break
		}
		if !address() {
			return "sed script"
		}
		skipSpace()
		if i < len(s) && s[i] == ',' {
			i++
			skipSpace()
			if !address() {
				return "sed script"
			}
		}
		skipSpace()
		for i < len(s) && s[i] == '!' {
			i++
			skipSpace()
		}
		if i >= len(s) {
			return "sed script"
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', 'a', 'i', 'c':
			for {
				toEOL()
				if i > 0 && i < len(s) && s[i-1] == '\\' {
					i++
					continue
				}
				break
			}
		case ':', 'b', 't', 'T', 'v':
			for i < len(s) && s[i] != '\n' && s[i] != ';' && s[i] != '}' {
				i++
			}
		case 'r', 'R':
			toEOL()
		case 'w', 'W':
			return "sed w"
		case 'e':
			return "sed e"
		case 'q', 'Q', 'l', 'L':
			skipSpace()
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case 's', 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return "sed script"
			}
			d := s[i]
			i++
			if !skipDelim(d) || !skipDelim(d) {
				return "sed script"
			}
			if c == 's' {
				for i < len(s) && strings.IndexByte(";\n} \t", s[i]) < 0 {
					switch s[i] {
					case 'e':
						return "sed s///e"
					case 'w', 'W':
						return "sed s///w"
					}
					i++
				}
			}
		default:
			return "sed script"
		}
	}
	return ""
}

// sort: --compress-program runs a program; -o writes a file.
func (k *call) sort() {
	for i, a := range k.args {
		t := a.text
		switch {
		case longIs(t, "--compress-program"):
			k.raise(high, "sort --compress-program")
		case longIs(t, "--output"):
			k.raise(high, "sort -o")
		case len(t) > 1 && t[0] == '-' && t[1] != '-':
			for j := 1; j < len(t); j++ {
				if t[j] == 'o' {
					k.raise(high, "sort -o")
				}
				if strings.IndexByte("ktST", t[j]) >= 0 {
					break
				}
			}
		}
		_ = i
	}
}

// git: options that run programs or read foreign configuration, config
// writes, destructive history and work-tree operations.
func (k *call) git() {
	args := k.args
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		if !a.lit || len(t) < 2 || t[0] != '-' {
			break
		}
		name, _, hasVal := strings.Cut(t, "=")
		switch {
		case t == "-c" || strings.HasPrefix(t, "-c"):
			k.raise(high, "git -c")
			if t == "-c" {
				i++
			}
		case t == "-C":
			i++
		case name == "--config-env":
			k.raise(high, "git --config-env")
			if !hasVal {
				i++
			}
		case name == "--exec-path":
			if hasVal {
				k.raise(high, "git --exec-path")
			}
		case name == "--git-dir":
			k.raise(high, "git --git-dir")
			if !hasVal {
				i++
			}
		case has("--work-tree --namespace --super-prefix --list-cmds --attr-source", name):
			if !hasVal {
				i++
			}
		}
	}
	for _, a := range args {
		if longIs(a.text, "--ext-diff") {
			k.raise(high, "git --ext-diff")
		}
		if longIs(a.text, "--upload-pack") || longIs(a.text, "--receive-pack") || a.text == "--exec" || strings.HasPrefix(a.text, "--exec=") && i < len(args) && args[i].text != "rebase" {
			k.raise(high, "git "+strings.SplitN(a.text, "=", 2)[0])
		}
	}
	if i >= len(args) || !args[i].lit {
		return
	}
	sub, rest := args[i].text, args[i+1:]
	switch sub {
	case "config":
		k.gitConfig(rest)
	case "submodule":
		if hasWord(rest, "foreach") {
			k.raise(high, "git submodule foreach")
		}
	case "filter-branch", "filter-repo":
		k.raise(high, "git "+sub)
	case "push":
		for _, a := range rest {
			t := a.text
			switch {
			case longIs(t, "--force") || longIs(t, "--force-with-lease") || longIs(t, "--force-if-includes") || shortHas(t, "f"):
				k.raise(critical, "git push --force")
			case longIs(t, "--mirror") || longIs(t, "--delete") || longIs(t, "--prune") || shortHas(t, "d"):
				k.raise(critical, "git push --delete")
			case a.lit && strings.HasPrefix(t, "+"):
				k.raise(critical, "git push +refspec")
			case a.lit && strings.HasPrefix(t, ":"):
				k.raise(critical, "git push :ref")
			}
		}
	case "reset":
		if hasWord(rest, "--hard") || hasWord(rest, "--merge") || hasWord(rest, "--keep") {
			k.raise(high, "git reset --hard")
		}
	case "clean":
		for _, a := range rest {
			if longIs(a.text, "--force") || shortHas(a.text, "f") {
				k.raise(high, "git clean -f")
			}
		}
	case "checkout", "restore", "switch":
		for _, a := range rest {
			if longIs(a.text, "--force") || a.text == "-f" || longIs(a.text, "--discard-changes") {
				k.raise(high, "git "+sub+" --force")
			}
		}
	case "rebase":
		for _, a := range rest {
			if a.text == "-x" || longIs(a.text, "--exec") || shortHas(a.text, "x") {
				k.raise(high, "git rebase --exec")
			}
		}
	case "bisect":
		if len(rest) > 0 && rest[0].text == "run" {
			k.raise(high, "git bisect run")
		}
	case "clone":
		for _, a := range rest {
			if a.text == "-u" || a.text == "-c" || strings.HasPrefix(a.text, "-c") && !strings.HasPrefix(a.text, "--") || longIs(a.text, "--config") || longIs(a.text, "--template") {
				k.raise(high, "git clone "+strings.SplitN(a.text, "=", 2)[0])
			}
		}
	case "grep":
		for _, a := range rest {
			if longIs(a.text, "--open-files-in-pager") || strings.HasPrefix(a.text, "-O") {
				k.raise(high, "git grep -O")
			}
		}
	case "difftool", "mergetool":
		for _, a := range rest {
			if a.text == "-x" || longIs(a.text, "--extcmd") {
				k.raise(high, "git "+sub+" --extcmd")
			}
		}
	case "credential", "credential-store", "credential-cache":
		k.raise(high, "git "+sub)
	case "branch":
		if hasWord(rest, "-D") {
			k.raise(high, "git branch -D")
		}
	case "stash":
		if len(rest) > 0 && has("drop clear", rest[0].text) {
			k.raise(high, "git stash "+rest[0].text)
		}
	}
}

// gitConfig: reading is fine; writing git configuration can make git run programs.
func (k *call) gitConfig(rest []arg) {
	var ops []arg
	for i := 0; i < len(rest); i++ {
		t := rest[i].text
		if rest[i].lit && len(t) > 1 && t[0] == '-' {
			if strings.HasPrefix(t, "--get") || t == "-l" || t == "--list" {
				return
			}
			if has("-f --file --blob --type --default --comment", t) {
				i++
			}
			continue
		}
		ops = append(ops, rest[i])
	}
	if len(ops) > 0 && has("get list", ops[0].text) {
		return
	}
	if len(ops) == 1 && !has("set unset edit rename-section remove-section", ops[0].text) {
		return // git config key: a read
	}
	k.raise(high, "git config")
}

// tar: options that run programs.
func (k *call) tar() {
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

func (k *call) curl() {
	for i, a := range k.args {
		t := a.text
		switch {
		case has("-d -F -T", t) || strings.HasPrefix(t, "-d") && len(t) > 2 && t[1] == 'd' ||
			longIs(t, "--data") || longIs(t, "--data-binary") || longIs(t, "--data-raw") || longIs(t, "--data-urlencode") ||
			longIs(t, "--form") || longIs(t, "--upload-file") || longIs(t, "--json"):
			k.raise(high, "curl upload (non-GET)")
		case t == "-X" || longIs(t, "--request"):
			if i+1 < len(k.args) && !has("GET HEAD OPTIONS", strings.ToUpper(k.args[i+1].text)) {
				k.raise(high, "curl -X (non-GET)")
			}
		case strings.HasPrefix(t, "-X") && len(t) > 2 && !has("GET HEAD OPTIONS", strings.ToUpper(t[2:])):
			k.raise(high, "curl -X (non-GET)")
		}
	}
}

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
	k.raise(high, "rm -r")
	for _, t := range targets {
		if dangerousTarget(t, true) {
			k.raise(critical, "rm -r outside")
		}
	}
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

// network lists the programs that talk to the network: "" means always,
// otherwise the subcommands that do.
var network = map[string]string{
	"curl": "", "wget": "", "ssh": "", "scp": "", "sftp": "", "nc": "", "ncat": "", "netcat": "", "socat": "",
	"telnet": "", "ftp": "", "http": "", "https": "", "xh": "", "aria2c": "", "ping": "", "dig": "", "nslookup": "",
	"host": "", "whois": "", "nmap": "", "gh": "", "npx": "", "bunx": "", "uvx": "", "pnpx": "", "lynx": "", "w3m": "",
	"links": "", "kubectl": "", "aws": "", "gcloud": "", "az": "",
	"git":      "push pull fetch clone ls-remote remote submodule send-email request-pull",
	"npm":      "install i ci add publish update upgrade exec x view info outdated audit login",
	"yarn":     "install add upgrade up dlx publish",
	"pnpm":     "install i add update up dlx publish",
	"bun":      "install i add x update",
	"pip":      "install download search",
	"pipx":     "install run",
	"uv":       "pip add sync lock run tool",
	"poetry":   "install add update lock",
	"gem":      "install update fetch push",
	"cargo":    "install fetch add update search publish login",
	"go":       "get install mod",
	"apt":      "install update upgrade download full-upgrade",
	"apt-get":  "install update upgrade download dist-upgrade source",
	"dnf":      "install update upgrade download",
	"yum":      "install update upgrade download",
	"apk":      "add update upgrade fetch",
	"brew":     "install update upgrade fetch tap",
	"docker":   "pull push login search build",
	"podman":   "pull push login search build",
	"conda":    "install update create",
	"bundle":   "install update",
	"composer": "install require update",
	"hg":       "pull push clone incoming outgoing",
	"svn":      "checkout co update up commit ci export import",
	"helm":     "install upgrade repo pull push",
}

// isNetwork is a best guess that the command talks to the network.
func isNetwork(name string, args []arg) bool {
	base := baseName(name)
	subs, ok := network[base]
	if !ok {
		subs, ok = network[trimVersion(base)]
	}
	switch {
	case !ok:
		switch trimVersion(base) {
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
	sub, _ := firstOperand(args, "-C -c --git-dir --work-tree")
	if sub == "" && base == "yarn" {
		return true
	}
	return has(subs, sub)
}

// riskyEnv names assignments that change which programs run or how
// (PATH, the dynamic loader, shell start-up files, git's programs, pagers
// and editors, interpreter start-up options); "" for others.
func riskyEnv(name string) string {
	const names = "PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV PROMPT_COMMAND PS4 SHELLOPTS BASHOPTS " +
		"GIT_DIR GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS GIT_EXEC_PATH " +
		"GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_ASKPASS GIT_PROXY_COMMAND " +
		"GIT_TEMPLATE_DIR PAGER MANPAGER EDITOR VISUAL BROWSER LESSOPEN LESSCLOSE PYTHONPATH PYTHONSTARTUP PYTHONHOME " +
		"NODE_OPTIONS NODE_PATH PERL5OPT PERL5LIB PERLLIB RUBYOPT RUBYLIB SSH_ASKPASS SUDO_ASKPASS RUSTC_WRAPPER"
	if has(names, name) || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") || strings.HasPrefix(name, "DYLD_") {
		return name + "="
	}
	return ""
}

// harmlessDevice reports redirect targets that are not files: they are
// skipped.
func harmlessDevice(p string) bool {
	return has("/dev/null /dev/stdin /dev/stdout /dev/stderr /dev/tty /dev/zero /dev/full /dev/random /dev/urandom", p) ||
		strings.HasPrefix(p, "/dev/fd/")
}

// diskDevice reports devices whose writing destroys data.
func diskDevice(p string) bool {
	for _, pre := range []string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/dm-",
		"/dev/md", "/dev/loop", "/dev/sr", "/dev/nbd", "/dev/rbd", "/dev/disk/", "/dev/mapper/", "/dev/mem", "/dev/kmem", "/dev/port"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}
