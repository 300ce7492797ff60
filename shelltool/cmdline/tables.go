package cmdline

import "github.com/onellm/onellm-mcp/grants"

// This file holds the tables, and only data: wrappers, shells and
// interpreters, programs whose risk is fixed, the dispatch map to the
// per-program analyses (one file per program family: git.go, sedawk.go,
// findxargs.go, archive.go, network.go, destructive.go, builtins.go,
// tools.go, wrappers.go, interpreters.go), network programs, risky
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
	optsAfter    bool        // options may follow the positional operands too (setarch ARCH -R cmd)
	argOpts2     string      // options taking the next two words (bwrap --bind SRC DEST)
	eqLong       bool        // any --option=value is accepted (valgrind --tool=memcheck)
	replace      string      // options setting a string replaced by input in the command (xargs -I)
	appendsInput bool        // without a replace option, words read from input are appended to the command (xargs)
	unsetOpts    string      // argOpts whose value is a variable removed from the command's environment (env -u)
	clearOpts    string      // flags dropping the whole environment (env -i)
	resetsEnv    bool        // it runs the command in an environment of its own making (sudo's env_reset)
}

// wrappers maps a base name to how it runs its command.
var wrappers = map[string]*wrapperSpec{
	"timeout": {argOpts: "-s --signal -k --kill-after", flags: "--preserve-status --foreground -v --verbose", noRun: "--help --version", positional: 1},
	"nice":    {argOpts: "-n --adjustment", numFlags: true, noRun: "--help --version"},
	"nohup":   {noRun: "--help --version"},
	"env": {argOpts: "-u --unset -C --chdir", flags: "-i --ignore-environment -0 --null -v --debug",
		optArgs: "--ignore-signal --default-signal --block-signal --list-signal-handling", dynOpts: "-S --split-string",
		assigns: true, noRun: "--help --version", unsetOpts: "-u --unset", clearOpts: "-i --ignore-environment"},
	"command": {flags: "-p", noRun: "-v -V"},
	"builtin": {},
	"time": {argOpts: "-f --format -o --output", flags: "-p --portability -v --verbose -a --append -q --quiet",
		noRun: "--help -V --version"},
	"stdbuf": {argOpts: "-i -o -e --input --output --error", noRun: "--help --version"},
	"xargs": {risk: high, idle: high, runFloor: riskNote{high, "xargs"}, dropStdin: true, appendsInput: true, replace: "-I -i --replace",
		argOpts: "-a --arg-file -d --delimiter -E -L -n --max-args -P --max-procs -s --max-chars --process-slot-var",
		flags:   "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit --show-limits",
		optArgs: "-e --eof -l --max-lines", noRun: "--help --version"},
	"sudo": {risk: high, idle: high, resetsEnv: true,
		argOpts: "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t --type -T --command-timeout -U --other-user -R --chroot",
		flags:   "-A --askpass -b --background -B --bell -E -H --set-home -k --reset-timestamp -n --non-interactive -P --preserve-groups -S --stdin -N --no-update",
		optArgs: "--preserve-env", noRun: "-e --edit -l --list -v --validate -K --remove-timestamp -V --version --help",
		shellOpts: "-i --login -s --shell"},
	"doas":    {risk: high, idle: high, resetsEnv: true, argOpts: "-u -a", flags: "-n -L", noRun: "-C", shellOpts: "-s"},
	"pkexec":  {risk: high, idle: high, resetsEnv: true, argOpts: "--user", flags: "--keep-cwd --disable-internal-agent", noRun: "--version --help"},
	"runuser": {risk: high, idle: high, resetsEnv: true, argOpts: "-u --user -g --group -G --supp-group -s --shell -w --whitelist-environment", flags: "-l --login -m -p --preserve-environment -P --pty", strOpts: "-c --command --session-command", shellIfNoCmd: true},
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
	"ltrace": {argOpts: "-e -o -p -s -u -a -A -D -F -l -n -w -x -L", flags: "-b -c -C -d -f -h -i -r -S -t -T -V"},
	// Wrappers that set limits, personalities, privileges or an
	// environment, then run their command.
	"prlimit": {argOpts: "-o --output", flags: "--noheadings --raw --verbose", noRun: "-p --pid -h --help -V --version",
		optArgs: "-c -d -e -f -i -l -m -n -q -r -s -t -u -v -x -y --core --data --nice --fsize --sigpending --memlock " +
			"--rss --nofile --msgqueue --rtprio --stack --cpu --nproc --as --locks --rttime"},
	"setarch": {positional: 1, optsAfter: true, shellIfNoCmd: true, noRun: "--list -h --help -V --version", flags: setarchFlags},
	"linux32": {shellIfNoCmd: true, flags: setarchFlags}, "linux64": {shellIfNoCmd: true, flags: setarchFlags},
	"i386": {shellIfNoCmd: true, flags: setarchFlags}, "x86_64": {shellIfNoCmd: true, flags: setarchFlags},
	"uname26": {shellIfNoCmd: true, flags: setarchFlags},
	"setpriv": {risk: high, idle: high, noRun: "-d --dump -h --help -V --version",
		argOpts: "--ruid --euid --reuid --rgid --egid --regid --groups --inh-caps --ambient-caps --bounding-set " +
			"--securebits --pdeathsig --selinux-label --apparmor-profile --landlock-access --landlock-rule --seccomp-filter",
		flags: "--clear-groups --keep-groups --init-groups --nnp --no-new-privs --reset-env"},
	"run0": {risk: high, idle: high, shellIfNoCmd: true, argOpts: "-u --user -g --group -D --chdir --setenv --unit --property --description --slice --nice --machine --background",
		flags: "--no-ask-password", noRun: "-h --help --version"},
	"numactl": {argOpts: "-i --interleave -p --preferred -m --membind -N --cpunodebind -C --physcpubind -w --weighted-interleave",
		flags: "-l --localalloc -a --all -b --balancing", noRun: "-s --show -H --hardware -h --help -V --version"},
	"cgexec":   {argOpts: "-g", flags: "--sticky -r"},
	"choom":    {argOpts: "-n --adjust", noRun: "-p --pid -h --help -V --version"},
	"sg":       {positional: 1, strOpts: "-c", shellJoin: true, shellIfNoCmd: true, flags: "-"},
	"unbuffer": {flags: "-p"}, "eatmydata": {}, "nocache": {}, "catchsegv": {}, "chronic": {flags: "-e -v"},
	"ifne":        {flags: "-n"},
	"faketime":    {positional: 1, flags: "-f --exclude-monotonic", argOpts: "-m", noRun: "-h --help -v --version"},
	"fakeroot":    {argOpts: "-l --lib --faked -s -i -b", flags: "-u --unknown-is-real", noRun: "-h --help -v --version"},
	"torsocks":    {argOpts: "-u --user -p --pass -a --address -P --port", flags: "-i --isolate -d --debug -q --quiet -6 --ipv6", noRun: "-h --help --version", shellOpts: "--shell"},
	"proxychains": {argOpts: "-f", flags: "-q"}, "proxychains4": {argOpts: "-f", flags: "-q"},
	"dbus-run-session": {argOpts: "--config-file --dbus-daemon", noRun: "--help --version"},
	"ssh-agent":        {argOpts: "-a -E -O -P -t", flags: "-c -s -D -d", noRun: "-k"},
	"xvfb-run": {argOpts: "-n --server-num -e --error-file -f --auth-file -p --xauth-protocol -s --server-args -w --wait",
		flags: "-a --auto-servernum -l --listen-tcp", noRun: "-h --help"},
	"valgrind": {eqLong: true, flags: "-q --quiet -v --verbose", noRun: "-h --help --version"},
	// qemu's user-mode emulators (qemu-x86_64, …: inProcessLoader) and
	// box64/box86 run the program they are given in their own process.
	"qemu-user": {argOpts: "-L -s -cpu -E -U -0 -g -B -R -d -D -p -seed -trace -plugin -dfilter",
		flags: "-strace -singlestep -one-insn-per-tb -nx", noRun: "-h -help -version"},
	"box64": {noRun: "-h --help -v --version"}, "box86": {noRun: "-h --help -v --version"},
	"firejail": {risk: high, idle: high, eqLong: true, shellIfNoCmd: true, flags: "--quiet --noprofile --private --net=none",
		noRun: "--help --version --list --tree"},
	"bwrap": {argOpts: "--args --userns --userns2 --pidns --uid --gid --hostname --chdir --unsetenv --lock-file --sync-fd " +
		"--remount-ro --exec-label --file-label --proc --dev --tmpfs --mqueue --dir --seccomp --add-seccomp-fd --block-fd " +
		"--userns-block-fd --info-fd --json-status-fd --cap-add --cap-drop --perms --size --argv0",
		argOpts2: "--setenv --bind --bind-try --dev-bind --dev-bind-try --ro-bind --ro-bind-try --file --bind-data " +
			"--ro-bind-data --symlink --chmod --overlay-src",
		flags: "--unshare-all --share-net --unshare-user --unshare-user-try --unshare-ipc --unshare-pid --unshare-net " +
			"--unshare-uts --unshare-cgroup --unshare-cgroup-try --die-with-parent --as-pid-1 --new-session --clearenv --disable-userns --assert-userns-disabled",
		noRun: "--help --version", unsetOpts: "--unsetenv", clearOpts: "--clearenv"},
	"systemd-run": {risk: high, idle: high, shellOpts: "-S --shell",
		argOpts: "-u --unit -p --property --description --slice -E --setenv -M --machine -H --host --uid --gid --nice " +
			"--working-directory --on-active --on-boot --on-startup --on-unit-active --on-unit-inactive --on-calendar --timer-property --path-property --socket-property --service-type",
		flags: "--user --system --scope -r --remain-after-exit -t --pty -P --pipe -q --quiet --wait -G --collect --no-block --no-ask-password --same-dir -d",
		noRun: "-h --help --version"},
	"ld.so": ldso, "ld-linux.so.2": ldso, "ld-linux-x86-64.so.2": ldso, "ld-linux-aarch64.so.1": ldso,
	"ld-linux-armhf.so.3": ldso, "ld-musl-x86_64.so.1": ldso, "ld-musl-aarch64.so.1": ldso,
	"exec":    {risk: high, argOpts: "-a", flags: "-c -l"},
	"busybox": {noRun: "--list --help"},
	"toybox":  {noRun: "--help --version --long"},
}

// setarchFlags are setarch's personality flags.
const setarchFlags = "-v --verbose -3 --3gb -B --32bit -F --fdpic-funcptrs -I --short-inode -L --addr-compat-layout " +
	"-R --addr-no-randomize -S --whole-seconds -T --sticky-timeouts -Z --read-implies-exec -X --read-implies-exec --4gb --uname-2.6"

// ldso is the dynamic loader run directly: it runs the program it is given.
var ldso = &wrapperSpec{risk: high, argOpts: "--library-path --inhibit-rpath --audit --preload --argv0 --glibc-hwcaps-mask --glibc-hwcaps-prepend",
	flags: "--inhibit-cache", noRun: "--list --verify --help --version --list-tunables --list-diagnostics"}

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

// fixedRisk lists programs whose risk does not depend on their arguments.
var fixedRisk = map[string]riskNote{
	"mke2fs": {critical, "mkfs"}, "mkswap": {critical, "mkfs"},
	"npx": {high, "npx (runs a downloaded package)"}, "bunx": {high, "bunx (runs a downloaded package)"},
	"uvx": {high, "uvx (runs a downloaded package)"}, "pnpx": {high, "pnpx (runs a downloaded package)"},
	"mount": {high, "mount"}, "umount": {high, "umount"}, "swapon": {high, "swapon"}, "swapoff": {high, "swapoff"},
	"insmod": {high, "insmod"}, "rmmod": {high, "rmmod"}, "modprobe": {high, "modprobe"},
	"iptables": {high, "iptables"}, "ip6tables": {high, "ip6tables"}, "nft": {high, "nft"},
	"useradd": {high, "useradd"}, "userdel": {high, "userdel"}, "usermod": {high, "usermod"},
	"groupadd": {high, "groupadd"}, "groupdel": {high, "groupdel"}, "passwd": {high, "passwd"},
	"chpasswd": {high, "chpasswd"}, "visudo": {high, "visudo"}, "setcap": {high, "setcap"}, "chattr": {high, "chattr"},
	"pkill": {high, "pkill"}, "killall": {high, "killall"}, "truncate": {high, "truncate"},
	"shred": {critical, "shred"}, "wipefs": {critical, "wipefs"}, "blkdiscard": {critical, "blkdiscard"},
	"killall5": {critical, "killall5"},
	// (rev20d L2) they write a block device's file system; -w or not, a
	// read-only run is rare enough to be asked.
	"debugfs": {critical, "debugfs"}, "badblocks": {critical, "badblocks"},
	"shutdown": {critical, "shutdown"}, "reboot": {critical, "reboot"}, "halt": {critical, "halt"}, "poweroff": {critical, "poweroff"},
}

// programs maps a base name to the analysis of its arguments (after
// wrappers, shells, interpreters and fixedRisk).
var programs = map[string]func(*call){
	// Builtins that run code or change what a later name runs (builtins.go).
	"eval": (*call).eval, "source": (*call).source, ".": (*call).source, "trap": (*call).trap,
	"alias": (*call).alias, "enable": (*call).enable, "hash": (*call).hash,
	"mapfile": (*call).mapfile, "readarray": (*call).mapfile, "compgen": (*call).mapfile,
	"complete": (*call).complete, "fc": (*call).fc,
	"read": (*call).read, "printf": (*call).printf, "getopts": (*call).getopts, "unset": (*call).unset,
	// Programs that run other programs (findxargs.go, wrappers.go).
	"find": (*call).find, "parallel": (*call).parallel, "su": (*call).su, "gdb": (*call).gdb,
	"capsh": (*call).capsh, "script": (*call).script, "pee": (*call).pee, "make": (*call).make, "gmake": (*call).make,
	// Text tools with a program language (sedawk.go) and others (tools.go).
	"awk": (*call).awk, "gawk": (*call).awk, "mawk": (*call).awk, "nawk": (*call).awk,
	"sed": (*call).sed, "gsed": (*call).sed,
	"rg": (*call).rg, "sort": (*call).sort, "man": (*call).man, "emacs": (*call).emacs,
	"vim": (*call).vim, "vi": (*call).vim, "nvim": (*call).vim, "ex": (*call).vim, "view": (*call).vim,
	"gvim": (*call).vim, "vimdiff": (*call).vim, "rvim": (*call).vim,
	// Version control (git.go) and archives (archive.go).
	"git": (*call).git, "tar": (*call).tar, "gtar": (*call).tar, "bsdtar": (*call).tar, "zip": (*call).zip,
	// Network programs (network.go).
	"ssh": (*call).ssh, "scp": (*call).scp, "sftp": (*call).scp, "rsync": (*call).rsync,
	"curl": (*call).curl, "wget": (*call).wget, "nc": (*call).nc, "ncat": (*call).nc, "netcat": (*call).nc,
	"socat": (*call).socat, "npm": (*call).npm, "pnpm": (*call).npm,
	// System and destructive commands (destructive.go).
	"crontab": (*call).crontab, "at": (*call).crontab, "batch": (*call).crontab, "sysctl": (*call).sysctl,
	"rm": (*call).rm, "mv": (*call).mv, "dd": (*call).dd, "chmod": (*call).chmod, "chown": (*call).chmod, "chgrp": (*call).chmod,
	"kill": (*call).kill, "init": (*call).telinit, "telinit": (*call).telinit, "systemctl": (*call).systemctl,
	"fdisk": (*call).fdisk, "sfdisk": (*call).fdisk, "parted": (*call).fdisk, "gdisk": (*call).fdisk,
	"sgdisk": (*call).fdisk, "cfdisk": (*call).fdisk,
}

// gitSubcommands maps a git subcommand to the analysis of its arguments (git.go).
var gitSubcommands = map[string]func(k *call, sub string, rest []arg){
	"config": gitConfig, "submodule": gitSubmodule, "push": gitPush, "reset": gitReset, "clean": gitClean,
	"checkout": gitCheckout, "restore": gitCheckout, "switch": gitCheckout, "rebase": gitRebase,
	"bisect": gitBisect, "clone": gitClone, "grep": gitGrep, "difftool": gitDifftool, "mergetool": gitDifftool,
	"branch": gitBranch, "stash": gitStash, "rm": gitRm,
	"read-tree": gitDiscards, "checkout-index": gitDiscards, "worktree": gitDiscards, "merge": gitDiscards,
	"cherry-pick": gitDiscards, "revert": gitDiscards, "am": gitDiscards,
	"filter-branch": gitRiskySub, "filter-repo": gitRiskySub,
	"credential": gitRiskySub, "credential-store": gitRiskySub, "credential-cache": gitRiskySub,
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

// installerSpec describes a package manager's install subcommands
// (packages.go). Option lists are space-separated; an option not listed is
// a flag.
type installerSpec struct {
	subs         string // subcommands that install
	manifestSubs string // those that install only what the manifest lists (npm ci)
	namedSubs    string // those that fetch only the packages they name (npm pack X; alone: the local one, nothing)
	exitOpts     string // options after which a bare install prints and exits instead (yarn --version)
	anyHostSubs  string // those that fetch from a host no index option names (yarn set version): Dynamic
	bareInstall  bool   // the program with no subcommand installs (yarn)
	versionSubs  string // subcommands whose operands are packages only with @version (go install X@V)
	manifest     string // the resource when no package is named
	host         string // the default index ("" when the system's configuration names it)
	hostOpts     string // options whose value is the index (replacing the default)
	extraOpts    string // options adding an index: one request per index
	offlineOpts  string // options after which no index is used (--no-index)
	// linkOpts name a folder or a page of links (pip --find-links): a
	// page's links may lead to any host, so a URL there adds Dynamic.
	linkOpts     string
	versionOpts  string // options whose value is the version of the package (cargo install X --version V)
	manifestOpts string // options naming a manifest (pip -r requirements.txt)
	pkgOpts      string // options whose value is a package (pip -e PATH)
	argOpts      string // other options taking a value
	env          string // variables naming the index (two different values: Dynamic)
	extraEnv     string // variables adding indexes (space-separated URLs)
	// configEnv are variables whose assignment or removal hands the index
	// to configuration the line does not show (npm_config_userconfig,
	// PIP_CONFIG_FILE): the index is Dynamic. Removing one of env or
	// anyHostEnv does the same (the sandbox sets them: toolchains.IndexPins).
	configEnv string
	// npmSpecs: operands are read as npm-package-arg reads them (npmSpec).
	npmSpecs bool
	// anyHostOpts take a value after which the tool may fetch from hosts
	// the line does not name (npm --replace-registry-host never: a
	// lockfile's own URLs): the index is Dynamic. anyHostEnv are the
	// variables that do the same.
	anyHostOpts string
	anyHostEnv  string
	// configOpts name a configuration file the tool reads even where the
	// sandbox pins its configuration off (uv --config-file, read before
	// UV_NO_CONFIG): it may name any index (but moves no URL package).
	configOpts string
	// builtins are the subcommands the tool runs as its own; any other
	// word there may be an alias it expands from its configuration
	// (cargo's [alias], read by the caller: ProgramEnv.Aliases) or from
	// aliasEnv+NAME (CARGO_ALIAS_NAME), whose expansion it runs instead.
	builtins, aliasEnv string
	// directEnv are variables after whose assignment the tool fetches
	// some packages from their own host (Go's GOPRIVATE, GONOPROXY: the
	// "direct" index). A name ending in "*" in anyHostEnv or configEnv
	// is a prefix (CARGO_REGISTRIES_*).
	directEnv string
	// scoped: --@scope:registry=URL adds an index (npm and relatives).
	scoped bool
	// abbrevOpts are long options (without dashes) naming or moving the
	// index that the tool also takes under an unambiguous prefix (pip's
	// optparse: --index-u; npm's nopt: --reg, and with any number of
	// leading dashes, abbrevDashes: -reg). A spelling the line does not
	// write out is Dynamic (abbrevOf). abbrevOwn are the parser's own
	// options that look like such prefixes (npm's --global).
	abbrevOpts   string
	abbrevOwn    string
	abbrevDashes bool
	// family names the configuration the tool reads (configFiles,
	// configSetters): a line that may write it makes the index Dynamic
	// (pkgconfig.go). Empty for the system's package managers.
	family string
	// fileOpts name a file the tool reads options from (pip -c
	// constraints.txt, as manifestOpts' -r): one the line may write is
	// configuration too.
	fileOpts string
	// dirOpts name the folder the tool works in (npm --prefix, uv
	// --directory): the project configuration it reads is that folder's.
	dirOpts string
	// execSubs fetch one package to run it (npm exec, pnpm dlx, pipx
	// run): the first operand is the package, unless an execPkgOpts
	// option names it (npx -p X cmd); execRunners are the programs that
	// are such a subcommand (npx is npm exec). stopSubs are those whose
	// package's own arguments follow it (uv tool run X ARGS).
	execSubs, execPkgOpts, stopSubs string
	// A subcommand written "group:sub" in subs, manifestSubs or execSubs
	// is two words (go mod download, uv tool run).
	//
	// cmdSubs run a command of the project after bringing its
	// environment up to date from the index (uv run syncs the project
	// first): they install the manifest (and pkgOpts' packages), the first
	// operand and what follows being the command's own words.
	cmdSubs string
	// fileSubs take requirement files as operands (uv pip sync r.txt,
	// uv pip compile r.in): each is a manifest, read as -r's.
	fileSubs string
	// noFetchOpts are options after which a subcommand fetches no
	// manifest, as "SUB:OPT" (uv run --no-sync, uv tree --frozen);
	// pkgOpts' packages are still fetched.
	noFetchOpts string
	// flagOpts are options known to take no value. An option in neither
	// these nor the value options may take the next word as its value:
	// where that word would be the subcommand (or uv run's command), the
	// word after it may be instead, and the option may name any index
	// (installs, parse).
	flagOpts string
	// plusToolchain: a first word "+NAME" picks a toolchain (cargo
	// +stable fetch): no subcommand.
	plusToolchain bool
	// commands and cmdAliases are the tool's own command table, which it
	// reads a subcommand word against as npm's deref does: camelCase as
	// kebab-case, an alias, else a unique prefix of a command or an alias
	// (npmCommand); subs then list the commands. Empty: the word as written.
	commands   string
	cmdAliases map[string]string
	// dirEnv are variables naming the folder (or the manifest) the tool
	// works in (UV_PROJECT, BUNDLE_GEMFILE), as dirOpts do.
	dirEnv string
	// boolValues: a flag takes a next word "true" or "false" as its value
	// (npm's nopt).
	boolValues bool
	// handOff is a subcommand that is another spec's program, whose
	// subcommand follows (uv pip: pip's).
	handOff string
	// dirFlags are flags after which the tool works in other folders of
	// the project too (pnpm -r, -w), as dirOpts do.
	dirFlags string
	// relays run the subcommand that follows them in other folders (yarn
	// workspace NAME add x, yarn workspaces foreach add x): "WORD:*" is
	// WORD and any one word, "WORD:NEXT" the two words.
	relays string
	// createSubs are execSubs whose operand names an initializer: npm
	// init X, pnpm/yarn/bun create X run the package create-X (@s/x:
	// @s/create-x, @s: @s/create; createName); createKeeps: a name
	// already create-… is kept (pnpm).
	createSubs  string
	createKeeps bool
	// channelHost: an extraOpts value that is a name, not a URL, is a
	// channel of this host (conda -c conda-forge).
	channelHost string
	// altIndex is "FLAG:HOST": after FLAG the packages come from HOST
	// (pixi add --pypi).
	altIndex string
}

// execRunners maps a program that fetches a package to run it to the
// package manager whose execSubs it is.
var execRunners = map[string]string{"npx": "npm", "pnpx": "pnpm", "bunx": "bun", "uvx": "uv"}

const (
	npmArgOpts = "--prefix --tag --workspace --omit --include --install-strategy --cache --filter -C --dir --cwd " +
		"--loglevel --logs-dir --logs-max --scope --otp --auth-type --before --fetch-retries --fetch-retry-factor --fetch-retry-mintimeout " +
		"--fetch-retry-maxtimeout --fetch-timeout --maxsockets --proxy --https-proxy --noproxy --cafile --ca --cert --key " +
		"--script-shell --node-options --umask --location --access --os --cpu --libc --lockfile-version"
	pipArgOpts = "-c --constraint -t --target --prefix --root --platform --python-version --implementation --abi " +
		"--src --upgrade-strategy --progress-bar --trusted-host --cache-dir --log --timeout --retries --proxy --cert --client-cert " +
		"--python -p --only-binary --no-binary --config-settings -C --report --group"
	pipEnv       = "PIP_INDEX_URL UV_INDEX_URL UV_DEFAULT_INDEX"
	pipExtraEnv  = "PIP_EXTRA_INDEX_URL UV_EXTRA_INDEX_URL"
	pipConfigEnv = "PIP_CONFIG_FILE PIP_FIND_LINKS UV_CONFIG_FILE UV_FIND_LINKS UV_INDEX UV_NO_CONFIG"
	npmConfigEnv = "npm_config_userconfig npm_config_globalconfig"
	// npmAbbrevOpts and pipAbbrevOpts: the index options those parsers
	// also take abbreviated (installerSpec.abbrevOpts).
	npmAbbrevOpts = "registry userconfig globalconfig replace-registry-host"
	pipAbbrevOpts = "index-url extra-index-url find-links"
	// npmConfigOpts name a config file, which may name a scope's registry
	// (the sandbox's environment outranks it only for the registry).
	npmConfigOpts = "--userconfig --globalconfig"
	// npmDirOpts name the folder whose project .npmrc npm and its
	// relatives read.
	npmDirOpts = "--prefix -C --dir --cwd"
)

// npmCommands and npmAliases are npm 11's command table
// (lib/utils/cmd-list.js: commands, aliases), which its deref reads the
// command word against (npmCommand).
const npmCommands = "access adduser approve-scripts audit bugs cache ci completion config dedupe deny-scripts deprecate diff " +
	"dist-tag docs doctor edit exec explain explore find-dupes fund get help help-search init install install-ci-test " +
	"install-scripts install-test link ll login logout ls org outdated owner pack ping pkg prefix profile prune publish " +
	"query rebuild repo restart root run sbom search set shrinkwrap stage star stars start stop team test token trust " +
	"undeprecate uninstall unpublish unstar update version view whoami"

var npmAliases = map[string]string{
	"author": "owner", "home": "docs", "issues": "bugs", "info": "view", "show": "view", "find": "search", "add": "install",
	"unlink": "uninstall", "remove": "uninstall", "rm": "uninstall", "r": "uninstall", "un": "uninstall", "rb": "rebuild",
	"list": "ls", "ln": "link", "create": "init", "i": "install", "it": "install-test", "cit": "install-ci-test", "u": "update",
	"up": "update", "c": "config", "s": "search", "se": "search", "tst": "test", "t": "test", "ddp": "dedupe", "v": "view",
	"run-script": "run", "clean-install": "ci", "clean-install-test": "install-ci-test", "x": "exec", "why": "explain",
	"la": "ll", "verison": "version", "ic": "ci", "innit": "init", "in": "install", "ins": "install", "inst": "install",
	"insta": "install", "instal": "install", "isnt": "install", "isnta": "install", "isntal": "install", "isntall": "install",
	"install-clean": "ci", "isntall-clean": "ci", "hlep": "help", "dist-tags": "dist-tag", "upgrade": "update",
	"udpate": "update", "rum": "run", "sit": "install-ci-test", "urn": "run", "ogr": "org", "add-user": "adduser",
}

// npmValueOpts are the options npm 11's config definitions
// (@npmcli/config definitions) type as taking a value, never a bare
// flag. npm reads any other option as a flag, but for those whose type
// also allows a value ("--color always"): installs reads such an option
// as one that may take the next word.
const npmValueOpts = "--_auth --access --allow-directory --allow-file --allow-git --allow-remote --allow-scripts --also " +
	"--audit-level --auth-type --before --ca --cache --cache-max --cache-min --cafile --call -c --cert --cidr --cpu --depth " +
	"--diff --diff-dst-prefix --diff-src-prefix --diff-unified --editor --expect-result-count --expires --fetch-retries " +
	"--fetch-retry-factor --fetch-retry-maxtimeout --fetch-retry-mintimeout --fetch-timeout --git --globalconfig --heading " +
	"--https-proxy --include --init-author-email --init-author-name --init-author-url --init-license --init-module " +
	"--init-type --init-version --init.author.email --init.author.name --init.author.url --init.license --init.module " +
	"--init.version --install-strategy --key --libc --local-address --location -L --lockfile-version --loglevel --logs-dir " +
	"--logs-max --name --maxsockets --message -m --min-release-age --min-release-age-exclude --node-gyp --node-options " +
	"--noproxy --omit --only --orgs --os --otp --package --pack-destination --packages --prefix -C --preid " +
	"--provenance-file --proxy --registry --replace-registry-host --save-prefix --sbom-format --sbom-type --scope --scopes " +
	"--packages-and-scopes-permission --orgs-permission --password --token-description --script-shell --searchexclude " +
	"--searchlimit --searchopts --searchstaleness --shell --tag --tag-version-prefix --umask --user-agent --userconfig " +
	"--viewer --which --workspace -w"

// npmFlagOpts are npm 11's options typed as booleans only (and the
// shorthands that expand to them): npm reads them, and any option it does
// not define, as flags; those it types as a boolean or a value (--color,
// --yes) are in neither list.
const npmFlagOpts = "--all -a --allow-same-version --audit --bin-links --bypass-2fa --commit-hooks " +
	"--dangerously-allow-all-scripts --description --dev --diff-ignore-all-space --diff-name-only --diff-no-prefix " +
	"--diff-text --dry-run --engine-strict --expect-results --force -f --foreground-scripts --format-package-lock --fund " +
	"--git-tag-version --global -g --global-style --if-present --ignore-scripts --include-staged --include-workspace-root " +
	"--include-attestations --init-private --install-links --json --legacy-bundling --legacy-peer-deps --link --long -l " +
	"--offline --omit-lockfile-registry-resolved --optional --package-lock --package-lock-only --parseable -p " +
	"--allow-scripts-pending --allow-scripts-pin --prefer-dedupe --prefer-offline --prefer-online --production --progress " +
	"--provenance --read-only --rebuild-bundle --save -S --save-bundle -B --save-dev -D --save-exact -E --save-optional -O " +
	"--save-peer --save-prod -P --packages-all --shrinkwrap --sign-git-commit --sign-git-tag --strict-peer-deps " +
	"--strict-allow-scripts --strict-ssl --timing --unicode --update-notifier --usage -? -H -h --version -v --versions " +
	"--workspaces --workspaces-update --yes -y --desc --help --local -n --no --porcelain --readonly --iwr --ws"

// uvValueOpts and uvFlagOpts are uv's options that take a value and
// those that take none, for uv run and before the subcommand (uv-cli:
// RunArgs with what it flattens, and the global TopLevelArgs, whose value
// options are uvGlobalValueOpts: uv pip takes them too), besides those
// the uv spec lists by their effect (--index, --with, --directory,
// --config-file, ...).
const (
	uvValueOpts = "--extra --no-extra --no-editable-package --env-file --with-editable --package --python -p " +
		"--max-recursion-depth --python-platform --group --no-group --only-group --upgrade-package -P --upgrade-group " +
		"--config-setting --config-settings -C --config-settings-package --link-mode --reinstall-package --index-strategy " +
		"--keyring-provider --resolution --prerelease --prerelease-package --fork-strategy --no-build-isolation-package " +
		"--exclude-newer-package --exclude-newer --no-sources-package --no-build-package --no-binary-package --refresh-package " +
		uvGlobalValueOpts
	uvGlobalValueOpts = "--cache-dir --python-preference --python-fetch --color --allow-insecure-host --trusted-host --preview-features --preview-feature"
	uvFlagOpts        = "--all-extras --no-all-extras --module -m --editable --no-editable --inexact --no-exact --exact --no-env-file " +
		"--isolated --active --no-active --no-sync --locked --frozen --gui-script --all-packages --no-project " +
		"--show-resolution --dev --no-dev --only-dev --no-default-groups --all-groups --upgrade -U --no-upgrade --no-index " +
		"--reinstall --force-reinstall --no-reinstall --pre --no-build-isolation --build-isolation --compile-bytecode --compile " +
		"--no-compile-bytecode --no-compile --no-sources --no-build --build --no-binary --binary --refresh --no-refresh " +
		"--no-config --no-cache --no-cache-dir -n --managed-python --no-managed-python --allow-python-downloads " +
		"--no-python-downloads --quiet -q --verbose -v --no-color --native-tls --no-native-tls --system-certs --no-system-certs " +
		"--offline --no-offline --preview --no-preview --show-settings --no-progress --no-installer-metadata"
)

// yarnValueOpts and yarnFlagOpts are yarn's options that take a value
// and those that take none: yarn classic's global options
// (src/cli/index.js) and its install, add and upgrade flags, and berry's
// (clipanion: add, install, up, dlx, workspaces foreach). The program
// alone installs, so an option not known before no subcommand makes the
// index any. Classic's --prod, --production, --emoji and
// --scripts-prepend-node-path take the next word when it is no option
// (commander's optional value: firstNonFlagIndex skips a word bound to
// one), berry's do not exist: they are in neither list (both readings).
const (
	yarnValueOpts = "--modules-folder --network-timeout --network-concurrency --mutex --cache-folder --preferred-cache-folder " +
		"--global-folder --link-folder --https-proxy --proxy --otp --mode --from --include --exclude -j --jobs"
	yarnFlagOpts = "-s --silent --verbose --offline --prefer-offline --frozen-lockfile --pure-lockfile " +
		"--json --no-progress --non-interactive --ignore-scripts --ignore-engines --ignore-optional --ignore-platform --no-lockfile " +
		"--immutable --immutable-cache --check-cache --check-resolutions --refresh-lockfile --inline-builds --check-files --flat --force " +
		"--har --no-default-rc --no-bin-links --link-duplicates --skip-integrity-check --strict-semver " +
		"--update-checksums --no-node-version-check --no-emoji -D --dev -P --peer -O --optional -E --exact -T --tilde -C --caret " +
		"-F --fixed -i --interactive --cached --prefer-dev -W --ignore-workspace-root-check --audit -R --recursive --latest -L " +
		"-q --quiet -A --all --worktree --since -v --parallel --interlaced -t --topological --topological-dev --no-private -n --dry-run"
)

// pnpmValueOpts and pnpmFlagOpts are pnpm's options that take a value
// and those that take none (config/config/src/types.ts, the install
// commands' cliOptionsTypes and the universal ones: --filter, --reporter,
// --loglevel, --dir), besides those pnpm's spec lists by their effect.
const (
	pnpmValueOpts = "--reporter --workspace-concurrency --changed-files-ignore-pattern --test-pattern --resume-from " +
		"--store-dir --virtual-store-dir --modules-dir --global-dir --global-bin-dir --child-concurrency --network-concurrency " +
		"--node-linker --package-import-method --resolution-mode --hoist-pattern --public-hoist-pattern --use-node-version " +
		"--allow-build --config-dir --state-dir --cache-dir --virtual-store-dir-max-length --save-catalog-name --catalog-mode --depth"
	pnpmFlagOpts = "-D --save-dev -P --save-prod -O --save-optional -E --save-exact --save-peer --save-catalog -g --global " +
		"--frozen-lockfile --no-frozen-lockfile --prefer-frozen-lockfile --offline --prefer-offline --silent -s --stream " +
		"--aggregate-output --parallel --sort --no-sort --reverse --use-stderr --fail-if-no-match --include-workspace-root " +
		"--ignore-workspace --ignore-workspace-root-check --no-optional --prod --dev --lockfile-only --fix-lockfile --force " +
		"--ignore-scripts --ignore-pnpmfile --shamefully-hoist --strict-peer-dependencies --side-effects-cache " +
		"--no-side-effects-cache --color --no-color --report-summary --latest -L --interactive -i --no-save " +
		"--workspace --dangerously-allow-all-builds --verify-store-integrity --no-verify-store-integrity --json --help -h"
)

// bunValueOpts and bunFlagOpts are bun's options that take a value and
// those that take none (src/cli/Arguments.zig: the runtime's and
// install_params).
const (
	bunValueOpts = "--backend --concurrent-scripts --network-concurrency --cache-dir --ca --cafile --omit --linker " +
		"--minimum-release-age --elide-lines --env-file --preload -r --require --import --install --tsconfig-override " +
		"--define --loader -l --main-fields --conditions --port --inspect-wait --trust-policy"
	bunFlagOpts = "-y --yarn -p --production -d --no-save --save --dry-run --frozen-lockfile -f --force --no-cache --silent " +
		"--verbose --no-progress --no-summary --no-verify --ignore-scripts --trust -g --global -D --dev --development " +
		"--optional --peer -E --exact -a --analyze --only-missing --save-text-lockfile --lockfile-only --bun -b --smol " +
		"--no-install -i --prefer-offline --prefer-latest --hot --watch --no-clear-screen --latest --help -h"
)

// goBuildValueOpts and goBuildFlagOpts are cmd/go's build flags (go help
// build), which go get, go install and go run accept, with go get's,
// go run's and go mod download's own (go help get, run, mod download),
// written with one dash or two as the flag package reads them. -C (only
// first), -modfile and -overlay name another go.mod or folder (dirOpts).
const (
	goBuildValueOpts = "-o -p -covermode -coverpkg -asmflags -buildmode -compiler -gccgoflags -gcflags -installsuffix " +
		"-ldflags -mod -pgo -pkgdir -tags -toolexec -exec -reuse " +
		"--o --p --covermode --coverpkg --asmflags --buildmode --compiler --gccgoflags --gcflags --installsuffix " +
		"--ldflags --mod --pgo --pkgdir --tags --toolexec --exec --reuse"
	goBuildFlagOpts = "-a -n -race -msan -asan -cover -v -work -x -buildvcs -json -linkshared -modcacherw -trimpath -t -u -tool -d -insecure " +
		"--a --n --race --msan --asan --cover --v --work --x --buildvcs --json --linkshared --modcacherw --trimpath --t --u --tool --d --insecure"
)

// poetryValueOpts and poetryFlagOpts are poetry's options that take a
// value and those that take none: the application's global ones (cleo:
// -P/--project and -C/--directory name the project, dirOpts) and those of
// add, install, lock, update, sync and remove.
const (
	poetryValueOpts = "-G --group --source --python -E --extras --with --without --only --platform --markers"
	poetryFlagOpts  = "-h --help -q --quiet -V --version --ansi --no-ansi -n --no-interaction -v -vv -vvv --verbose " +
		"--no-plugins --no-cache -D --dev -e --editable --allow-prereleases --dry-run --lock --sync --no-root " +
		"--no-directory --only-root --all-extras --all-groups --compile --no-update --regenerate --check --no-dev"
)

// bundleValueOpts and bundleFlagOpts are bundler's options that take a
// value and those that take none (bundler/lib/bundler/cli.rb: the global
// ones and install's, add's, update's and lock's).
const (
	bundleValueOpts = "--path --jobs -j --retry -r --without --with --group -g --shebang --trust-policy --target-rbconfig " +
		"--require --branch -b --ref --glob --lockfile --add-platform --remove-platform --bundler"
	bundleFlagOpts = "--no-color -V --verbose --clean --deployment --redownload --force --frozen --full-index --local " +
		"--prefer-local --no-cache --no-prune --quiet --system --skip-install --strict --optimistic --conservative " +
		"--patch --minor --major --pre --all --print --normalize-platforms --binstubs --standalone --update"
)

// cargoBuiltins are cargo's own commands (cargo --list, but its aliases
// b c d r t rm and the removed git-checkout): an [alias] of one of these
// names is ignored (cargo warns that the built-in shadows it); every other
// word, its own aliases and external subcommands (fmt, clippy) included,
// is looked up as an alias first.
const cargoBuiltins = "add bench build check clean config doc fetch fix generate-lockfile help info init install " +
	"locate-project login logout metadata new owner package pkgid publish read-manifest remove report run rustc " +
	"rustdoc search test tree uninstall update vendor verify-project version yank"

// pythonModules maps a module python -m runs (without ".__main__") to
// the installer it is; corepackManagers are the package managers corepack
// runs (corepack pnpm add x is pnpm add x).
var (
	pythonModules = map[string]string{"pip": "pip", "pip3": "pip", "pip._internal": "pip", "pip._internal.cli.main": "pip",
		"pip._internal.main": "pip", "uv": "uv", "pipx": "pipx", "poetry": "poetry", "pdm": "pdm", "conda": "conda"}
	corepackManagers = map[string]bool{"npm": true, "npx": true, "pnpm": true, "pnpx": true, "yarn": true}
)

// CPython's options (Python/getopt.c SHORT_OPTS and longopts) as
// pythonModule reads them: flags, those that print and exit, and the long
// ones; -W and -X take a value, -c and -m end the options.
const (
	pythonFlags     = "bBdEiIOPqRsStuvx"
	pythonExitFlags = "hV?"
	pythonArgLong   = "--check-hash-based-pycs"
	pythonExitLong  = "--help --version --help-all --help-env --help-xoptions"
)

// conda is conda's, mamba's and micromamba's: -c adds a channel (a name
// is one of conda.anaconda.org's, the default channel alias; a URL its
// host) to the configured ones.
var conda = &installerSpec{subs: "install create update", host: "conda.anaconda.org", channelHost: "conda.anaconda.org", extraOpts: "-c --channel",
	argOpts: "-n --name -p --prefix --file", family: "conda"}

// installers maps a package manager (base name without version) to its
// install forms. "python -m pip" and "uv pip" are pip.
var installers = map[string]*installerSpec{
	// npm update (up, upgrade, udpate) fetches the named packages, or every
	// dependency of the manifest; dedupe (ddp) may fetch to rearrange them.
	// The subcommands are npm's commands: npm reads the word as npmCommand
	// does (add, i, in, isntall, upd, cleanInstall: install, ci, update).
	"npm": {subs: "install ci install-test install-ci-test update dedupe audit:fix link pack cache:add", namedSubs: "pack cache:add", commands: npmCommands, cmdAliases: npmAliases,
		manifestSubs: "ci install-ci-test dedupe audit:fix", manifest: "(package.json)", host: "registry.npmjs.org",
		hostOpts: "--registry", argOpts: npmArgOpts + " " + npmValueOpts, env: "npm_config_registry NPM_CONFIG_REGISTRY",
		anyHostOpts: "--replace-registry-host " + npmConfigOpts, anyHostEnv: "npm_config_replace_registry_host", scoped: true,
		configEnv: npmConfigEnv, npmSpecs: true, abbrevOpts: npmAbbrevOpts, abbrevOwn: "global", abbrevDashes: true,
		family: "npm", dirOpts: npmDirOpts, execSubs: "exec init", createSubs: "init", execPkgOpts: "-p --package", flagOpts: npmFlagOpts, boolValues: true},
	// pnpm fetch: the lockfile's packages into the store. pnpm's options
	// (config/config/src/types.ts and the install commands' rcOptionsTypes)
	// are pnpmValueOpts and pnpmFlagOpts; --filter, -r and -w select other
	// folders of the workspace (their .npmrc too: dirFlags), --lockfile-dir
	// another lockfile, --pnpmfile hooks that may rewrite any resolution.
	"pnpm": {subs: "install i add update up upgrade fetch dedupe install-test it patch", namedSubs: "patch", manifestSubs: "fetch dedupe install-test it", manifest: "(package.json)", host: "registry.npmjs.org", hostOpts: "--registry",
		argOpts: dropOpts(npmArgOpts, "--workspace") + " " + pnpmValueOpts, env: "npm_config_registry NPM_CONFIG_REGISTRY", scoped: true, configEnv: npmConfigEnv, npmSpecs: true,
		anyHostOpts: npmConfigOpts + " --pnpmfile --global-pnpmfile", abbrevOpts: npmAbbrevOpts, abbrevOwn: "global", abbrevDashes: true, family: "npm",
		dirOpts: npmDirOpts + " --lockfile-dir --filter -F --filter-prod --workspace-dir", dirFlags: "-r --recursive -w --workspace-root",
		execSubs: "dlx create", createSubs: "create", createKeeps: true, execPkgOpts: "--package", flagOpts: pnpmFlagOpts},
	// yarn upgrade (classic) and up (berry) fetch the named packages or
	// the manifest's. yarn workspace NAME CMD and yarn workspaces foreach
	// CMD run CMD in other folders (relays). --use-yarnrc (classic) and
	// YARN_RC_FILENAME (berry) name the configuration, which names the
	// registry.
	"yarn": {subs: "install add upgrade up global:add global:upgrade workspaces:focus set:version policies:set-version plugin:import",
		anyHostSubs: "set:version policies:set-version plugin:import", bareInstall: true, exitOpts: "-v --version -h --help", manifest: "(package.json)", host: "registry.yarnpkg.com", hostOpts: "--registry",
		argOpts: dropOpts(npmArgOpts, "-C --prefix --dir") + " " + yarnValueOpts, env: "YARN_REGISTRY YARN_NPM_REGISTRY_SERVER npm_config_registry",
		configEnv: npmConfigEnv + " YARN_RC_FILENAME", npmSpecs: true, anyHostOpts: npmConfigOpts + " --use-yarnrc", family: "npm", dirOpts: "--cwd",
		execSubs: "dlx create", createSubs: "create", execPkgOpts: "-p --package", flagOpts: yarnFlagOpts, relays: "workspace:* workspaces:foreach"},
	// bun's options (src/cli/Arguments.zig: the runtime's, shared by every
	// command, and install_params): -c/--config names the bunfig.toml,
	// which names the registry; --filter selects workspace folders.
	"bun": {subs: "install i add a update link", manifest: "(package.json)", host: "registry.npmjs.org", hostOpts: "--registry",
		argOpts: dropOpts(npmArgOpts, "-C --prefix --dir") + " " + bunValueOpts, env: "BUN_CONFIG_REGISTRY NPM_CONFIG_REGISTRY npm_config_registry",
		configEnv: npmConfigEnv, npmSpecs: true, anyHostOpts: npmConfigOpts + " -c --config", family: "npm",
		dirOpts: "--cwd --filter -F", execSubs: "x create", createSubs: "create", execPkgOpts: "-p --package", flagOpts: bunFlagOpts},
	"pip": {subs: "install download wheel sync compile lock", manifest: "(requirements)", host: "pypi.org",
		hostOpts: "-i --index-url --default-index", extraOpts: "--extra-index-url --index", offlineOpts: "--no-index",
		manifestOpts: "-r --requirement", pkgOpts: "-e --editable", linkOpts: "-f --find-links", argOpts: pipArgOpts + " -d --dest -w --wheel-dir -o --output-file " + uvGlobalValueOpts, env: pipEnv,
		extraEnv: pipExtraEnv, configEnv: pipConfigEnv, abbrevOpts: pipAbbrevOpts, family: "pip", fileOpts: "-c --constraint",
		// uv pip reads a --config-file even under UV_NO_CONFIG (pip has none).
		configOpts: "--config-file",
		// uv pip sync and compile (pip has neither: it fails) resolve their
		// requirement files against the index.
		fileSubs: "sync compile"},
	// pipx --pip-args hands pip options the line shows only as one word
	// (--index-url among them): the index is Dynamic.
	// corepack fetches the package managers it prepares from the npm
	// registry (COREPACK_NPM_REGISTRY moves it): prepare/install/use/up
	// of NAME@VERSION, or with none the package.json's packageManager.
	// COREPACK_ENV_FILE names the env file that may name the registry.
	"corepack": {subs: "prepare install use up", manifest: "(package.json)", host: "registry.npmjs.org", env: "COREPACK_NPM_REGISTRY", configEnv: "COREPACK_ENV_FILE",
		flagOpts: "--activate -g --global --all --json", argOpts: "-o --output", family: "npm"},
	"pipx": {subs: "install inject", host: "pypi.org", hostOpts: "-i --index-url", argOpts: "--python --suffix --spec", env: "PIP_INDEX_URL",
		anyHostOpts: "--pip-args", abbrevOpts: "index-url pip-args", family: "pip", execSubs: "run", execPkgOpts: "--spec"},
	// uv locks and syncs the project before uv run runs its command (and
	// after uv add and uv remove); uv lock resolves against the index; uv
	// tree and uv export lock first, unless --frozen (the uv docs,
	// "Locking and syncing"). uv run --no-sync neither locks nor syncs,
	// uv run --frozen still syncs from the lockfile; --offline fetches
	// nothing.
	// uv reads --config-file before it checks UV_NO_CONFIG (the sandbox's
	// pin): the index is any. UV_PROJECT and UV_WORKING_DIR are
	// --project's and --directory's variables.
	"uv": {subs: "add sync lock remove tree export run tool:install tool:upgrade build python:install", anyHostSubs: "python:install", execSubs: "tool:run", stopSubs: "tool:run", execPkgOpts: "--from",
		pkgOpts: "--with -w", configOpts: "--config-file", flagOpts: uvFlagOpts, handOff: "pip", dirEnv: "UV_PROJECT UV_WORKING_DIR UV_WORKING_DIRECTORY", manifestOpts: "--with-requirements", manifestSubs: "sync lock remove tree export build", cmdSubs: "run", noFetchOpts: "run:--no-sync tree:--frozen export:--frozen",
		manifest: "(pyproject.toml)", host: "pypi.org",
		hostOpts: "-i --index-url --default-index", extraOpts: "--extra-index-url --index", offlineOpts: "--no-index --offline",
		argOpts: pipArgOpts + " " + uvValueOpts + " --package --extra --optional --dev-group --branch --tag --rev --script -s --directory --project --with-editable " +
			"--upgrade-package -P --format -o --output-file --depth -d --prune --invert --python-platform --env-file --group --only-group --no-group", env: pipEnv,
		linkOpts: "-f --find-links", extraEnv: pipExtraEnv, configEnv: pipConfigEnv, family: "uv", dirOpts: "--directory --project",
		fileOpts: "-r --requirements -c --constraints --constraint"},
	// poetry lock resolves against the sources, update the named packages
	// or all, sync (poetry 2) and remove re-lock and install.
	"poetry": {subs: "add install lock update sync remove", manifestSubs: "install lock sync remove", manifest: "(pyproject.toml)", host: "pypi.org",
		argOpts: poetryValueOpts, flagOpts: poetryFlagOpts, family: "poetry", dirOpts: "--directory -C --project -P"},
	// go mod download fetches the modules named, or every module of the
	// build list; go mod tidy and vendor, go work sync and vendor fetch
	// what the build list lacks. go build, test and the like fetch a
	// missing module implicitly: no install is decided for them (the
	// egress proxy's rules bound it).
	"go": {subs: "get install run list mod:download mod:tidy mod:vendor work:sync work:vendor", versionSubs: "install run list",
		manifestSubs: "mod:tidy mod:vendor work:sync work:vendor", manifest: "(go.mod)", host: "proxy.golang.org",
		argOpts: goBuildValueOpts, flagOpts: goBuildFlagOpts, env: "GOPROXY",
		directEnv: "GOPRIVATE GONOPROXY", configEnv: "GOENV GOROOT", family: "go", dirOpts: "-C --C -modfile --modfile -overlay --overlay"},
	// cargo fetch, update, generate-lockfile and vendor fetch the
	// manifest's dependencies (their index, or at least the lock's);
	// --offline and --frozen fetch nothing. cargo build and the like
	// fetch implicitly, bounded by the egress proxy.
	"cargo": {subs: "add install fetch update generate-lockfile vendor", manifestSubs: "fetch update generate-lockfile vendor",
		manifest: "(Cargo.toml)", host: "index.crates.io", hostOpts: "--index --git", offlineOpts: "--offline --frozen",
		versionOpts: "--version --vers", pkgOpts: "--path", argOpts: "--branch --tag --rev --features -F --target --root -j --jobs --profile --package -p --rename --bin --example --target-dir -Z --precise -s --sync --color",
		anyHostOpts: "--config --registry", anyHostEnv: "CARGO_REGISTRY_DEFAULT CARGO_REGISTRIES_*", configEnv: "CARGO_HOME", family: "cargo",
		dirOpts: "--manifest-path -C", plusToolchain: true, builtins: cargoBuiltins, aliasEnv: "CARGO_ALIAS_"},
	"gem": {subs: "install i", host: "rubygems.org", hostOpts: "-s --source", versionOpts: "-v --version", argOpts: "-i --install-dir -n --bindir --platform -g --file", family: "gem"},
	"bundle": {subs: "install add update lock", manifestSubs: "install lock", manifest: "(Gemfile)", host: "rubygems.org", hostOpts: "--source -s --git",
		versionOpts: "--version -v", argOpts: bundleValueOpts, flagOpts: bundleFlagOpts, family: "gem",
		// bundle add --git URL fetches the gem from that URL's host;
		// --github names a repository there, --source (and -s) a gem
		// source. A mirror (BUNDLE_MIRROR__*) moves every source, a
		// configuration folder names mirrors and sources.
		anyHostOpts: "--github", anyHostEnv: "BUNDLE_MIRROR__*",
		configEnv: "BUNDLE_APP_CONFIG BUNDLE_USER_CONFIG BUNDLE_USER_HOME",
		dirOpts:   "--gemfile", dirEnv: "BUNDLE_GEMFILE"},
	// composer global CMD runs CMD in composer's home project;
	// create-project fetches the package it names (and its dependencies).
	"composer": {subs: "require install update global:require global:install global:update", manifestSubs: "install update global:install global:update",
		execSubs: "create-project", manifest: "(composer.json)", host: "repo.packagist.org", family: "composer", dirOpts: "-d --working-dir"},
	"conda": conda, "mamba": conda, "micromamba": conda,
	// pdm and rye resolve against the project's sources (pyproject.toml,
	// read by the caller), PyPI by default; pdm add, rye add and update
	// lock and sync the project.
	"pdm": {subs: "add install sync update lock remove", manifestSubs: "install sync lock remove", manifest: "(pyproject.toml)", host: "pypi.org",
		env: "PDM_PYPI_URL", pkgOpts: "-e --editable", argOpts: "-G --group -L --lockfile --venv -k --skip --config-setting -C",
		family: "pdm", dirOpts: "-p --project"},
	"rye": {subs: "add sync lock install remove", manifestSubs: "sync lock remove", manifest: "(pyproject.toml)", host: "pypi.org",
		hostOpts: "--index-url", extraOpts: "--git --url --extra-index-url", argOpts: "--path --features --optional --pin --python -p --extra-requirement --include-dep",
		family: "rye", dirOpts: "--pyproject"},
	// pixi's packages come from the manifest's conda channels (pixi.toml,
	// read by the caller), with --pypi from PyPI; pixi exec fetches one
	// to run it; pixi global installs a tool.
	"pixi": {subs: "add install update upgrade lock global:install global:add global:upgrade", manifestSubs: "install lock", manifest: "(pixi.toml)",
		host: "conda.anaconda.org", channelHost: "conda.anaconda.org", extraOpts: "-c --channel", altIndex: "--pypi:pypi.org",
		execSubs: "exec", execPkgOpts: "-s --spec", argOpts: "-e --environment -p --platform -f --feature --revision --branch --tag --rev",
		family: "pixi", dirOpts: "--manifest-path"},
	"apt-get":  {subs: "install reinstall build-dep source download", argOpts: "-o --option -t --target-release --default-release -c --config-file"},
	"apt":      {subs: "install reinstall build-dep source download", argOpts: "-o --option -t --target-release --default-release -c --config-file"},
	"aptitude": {subs: "install reinstall", argOpts: "-o -t --target-release"},
	"dnf":      {subs: "install reinstall download", argOpts: "--repo --enablerepo --disablerepo --setopt --installroot --releasever -c --config"},
	"yum":      {subs: "install reinstall", argOpts: "--enablerepo --disablerepo --setopt --installroot --releasever -c --config"},
	"apk":      {subs: "add", host: "dl-cdn.alpinelinux.org", hostOpts: "-X --repository", argOpts: "-t --virtual -p --root --arch --cache-dir", family: "apk"},
	"brew":     {subs: "install reinstall", host: "formulae.brew.sh", family: "brew"},
}

// configFiles are, per installerSpec.family, the names (matched in any
// case, anywhere in a word) of the configuration files the tool reads
// that can move its index: a line with a word naming one, or a write
// redirection into one, may write it before the install reads it
// (pkgconfig.go). gitConfigFiles are git's, which every family fetching
// from git hosts reads (url.*.insteadOf).
var configFiles = map[string]string{
	"npm":      "npmrc yarnrc bunfig.toml .pnpmfile pnpm-workspace.yaml",
	"pip":      "",
	"uv":       "pyproject.toml",
	"poetry":   "poetry.toml pyproject.toml",
	"go":       "go.env",
	"cargo":    ".cargo/config config.toml cargo_home",
	"gem":      "gemrc .bundle/config",
	"composer": "auth.json composer/config.json",
	"conda":    "condarc mambarc",
	"pdm":      "pdm.toml pyproject.toml",
	"rye":      "pyproject.toml rye/config.toml",
	"pixi":     "pixi.toml pyproject.toml pixi/config.toml",
	"apk":      "apk/repositories",
	"brew":     "",
}

const gitConfigFiles = "gitconfig .git/config"

// pinnedConfigFiles are configuration files the sandbox's pins make the
// tool ignore (toolchains.IndexPins: PIP_CONFIG_FILE=/dev/null,
// UV_NO_CONFIG=1): a write of one leaves the index where the pins hold
// (Package.PinnedHost), and makes it Dynamic elsewhere.
var pinnedConfigFiles = map[string]string{
	"pip": "pip.conf pip.ini",
	"uv":  "uv.toml",
}

// configReaders are programs that only read the files their words name:
// a config file's name there is no write.
const configReaders = "cat head tail less more grep egrep fgrep rg ls stat wc diff cmp file test [ echo printf md5sum sha256sum sha1sum which type realpath readlink basename dirname"

// treeWriters are programs (and subcommands) that write files whose names
// the line does not show (an archive's members, a checkout, a recursive
// copy): any configuration file may be among them.
var treeWriters = map[string]string{
	"unzip": "", "7z": "x e", "7za": "x e", "unrar": "x e", "cpio": "", "patch": "", "rsync": "", "ditto": "", "pax": "",
	"git": "clone checkout switch pull merge rebase reset restore apply am stash cherry-pick revert submodule worktree read-tree checkout-index",
}

// pathWriters write the files their words name: one that is not literal
// or a glob may be a configuration file (sed and perl with -i; curl and
// wget are read in pkgconfig.go).
const pathWriters = "cp mv ln install tee dd sed gsed perl rsync"

// chdirWrappers run their command in another folder when given one of
// chdirOpts (env -C, sudo -D, bwrap --chdir, unshare --wd; chroot always):
// an install there reads that folder's project configuration.
const (
	chdirWrappers = "env sudo run0 bwrap unshare nsenter chroot"
	chdirOpts     = "-C --chdir -D --wd -w"
)

// riskyEnvNames are assignments that change which programs run or how:
// PATH and the dynamic loader; bash's own (BASH_CMDS is the command hash
// table, BASH_ALIASES the aliases, which POSIXLY_CORRECT or posix mode
// expands in scripts; BASH_ENV and ENV are start-up files; EXECIGNORE
// changes which files PATH lookup finds; the prompts and PROMPT_COMMAND
// run command substitutions; TEXTDOMAIN* make $"..." strings come from a
// catalog, expanded); git's programs and configuration; pagers and
// editors; interpreter start-up options; programs' option variables that
// can make them run a program (TAR_OPTIONS --to-command, ZIPOPT -TT,
// RSYNC_RSH); SHELL and CONFIG_SHELL (the shell script, watch or configure
// run), start-up files of zsh, Lua, PHP, R and Python's user site, cargo's
// configuration; GOTOOLCHAIN (go downloads the toolchain it names through
// GOPROXY and runs it: the sandbox's GOTOOLCHAIN=local is the line's to
// override) and GOFLAGS (-toolexec, -exec run a program). riskyEnvPrefixes are families of them (BASH_FUNC_name%% is
// a function a child bash imports; LD_ the loader's).
const riskyEnvNames = "PATH GCONV_PATH GLIBC_TUNABLES BASH_ENV ENV PROMPT_COMMAND PS0 PS1 PS2 PS3 PS4 SHELLOPTS BASHOPTS " +
	"BASH_CMDS BASH_ALIASES POSIXLY_CORRECT EXECIGNORE BASH_LOADABLES_PATH TEXTDOMAIN TEXTDOMAINDIR " +
	"GIT_DIR GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS GIT_EXEC_PATH " +
	"GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_ASKPASS GIT_PROXY_COMMAND " +
	"GIT_TEMPLATE_DIR PAGER MANPAGER EDITOR VISUAL BROWSER LESSOPEN LESSCLOSE PYTHONPATH PYTHONSTARTUP PYTHONHOME " +
	"PYTHONBREAKPOINT NODE_OPTIONS NODE_PATH PERL5OPT PERL5LIB PERLLIB PERL5DB RUBYOPT RUBYLIB SSH_ASKPASS SUDO_ASKPASS " +
	"RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER JAVA_TOOL_OPTIONS _JAVA_OPTIONS TAR_OPTIONS ZIPOPT RSYNC_RSH " +
	"RSYNC_CONNECT_PROG CVS_RSH MAKEFILES npm_config_script_shell NPM_CONFIG_SCRIPT_SHELL " +
	"SHELL CONFIG_SHELL ZDOTDIR PYTHONUSERBASE LUA_INIT PHPRC PHP_INI_SCAN_DIR R_PROFILE_USER CARGO_HOME RUSTC " +
	"GOTOOLCHAIN GOFLAGS"

var riskyEnvPrefixes = []string{"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "DYLD_", "LD_", "BASH_FUNC_"}

// homeEnvNames are assignments that move the configuration the programs
// of homeReaders read (~/.gitconfig, ~/.bashrc, ~/.ssh/config, ~/.npmrc,
// Python's user site-packages, ...), where an entry can make them run a
// program: high when the line runs one of them.
const homeEnvNames = "HOME XDG_CONFIG_HOME"

// homeReaders are the programs (base names without version) that run
// what their configuration under $HOME says; a shell is one when it is a
// login or interactive shell (interpreters.go).
const homeReaders = "git ssh scp sftp npm npx pnpm yarn pip pipx python pypy node"

// harmlessDevices are redirect targets that are not files (skipped), as are
// paths under harmlessDevicePrefix.
const (
	harmlessDevices      = "/dev/null /dev/stdin /dev/stdout /dev/stderr /dev/tty /dev/zero /dev/full /dev/random /dev/urandom"
	harmlessDevicePrefix = "/dev/fd/"
)

// diskDevices are path prefixes of devices whose writing destroys data.
var diskDevices = []string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/dm-",
	"/dev/md", "/dev/loop", "/dev/sr", "/dev/nbd", "/dev/rbd", "/dev/disk/", "/dev/mapper/", "/dev/mem", "/dev/kmem", "/dev/port"}
