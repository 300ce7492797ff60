// Package sandbox runs one shell command line under a Linux kernel sandbox
// (or, for sandbox.required = false, on the host) and collects its output.
//
// # How it runs
//
// Each command runs in a helper process (argv "onellm-sandbox -test.run=^$
// __onellm_sandbox_helper") started from a HelperProgram: the server's own
// binary re-executed (/proc/self/exe: Run, Probe, NewRunner; the program's
// main, and TestMain of any test binary that calls them, must call
// MaybeRunHelper first thing; a binary that does not gets ErrUnavailable,
// and the leading -test.run=^$ keeps a Go test binary from running its
// tests again inside the helper), or the helper binary cmd/onellm-sandbox
// (DefaultHelper, NewRunnerWith), which links this package alone and so
// runs none of the server's package initialisers. That binary is never run
// from its path, which a command may be able to write: it is copied once
// into a sealed, close-on-exec memfd whose SHA-256 must equal the one
// linked into the server (helperprog.go), and helpers are exec'd from the
// memfd; any failure leaves the server's own binary as the helper. The helper is cloned into fresh mount, pid and
// ipc namespaces (and a network namespace unless Network is "full"), in its
// own session, with Pdeathsig SIGKILL and an empty environment (when the
// server is not root, a user namespace mapping its own uid is added and the
// helper gets CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_SETPCAP in it as ambient
// capabilities for the setup). The spec reaches it as one line of JSON over an
// inherited pipe (fd 3; the server writes it first thing, and the newline,
// not the pipe's end, ends it, so the helper starts on it at once); it reports over a close-on-exec status pipe (fd 4) as JSON
// lines. Locked to its main OS thread (the exec gate's tracer, which is never
// restricted) it first marks every inherited descriptor above 3
// close-on-exec and makes itself non-dumpable (so the shell, which shares
// its uid, cannot open /proc/1/mem or /proc/1/fd/*), then reads its spec
// and:
//
//  1. makes the mount tree private, mounts a fresh /proc, a private tmpfs on
//     /tmp (binding back any Writable/Readable root that lives under /tmp,
//     then making Spec.Home there) and on /dev/shm, binds every Writable
//     root nosuid,nodev, overlays every git directory of GitDirs
//     (gitdirs.go; their stage is a tmpfs mounted nowhere, handed to the
//     server over fd 7), masks the secrets of /etc (shadow, gshadow,
//     sudoers, ssh host keys, ssl/private, … see etcSecrets) with a
//     read-only overlay over /etc whose top layer was made before the spec
//     arrived, binds an empty, mode 000, read-only placeholder over every
//     Spec.Hidden path, bind-mounts every ReadOnly path read-only (and
//     self-binds its ancestors inside the writable root so they cannot be
//     renamed away), and opens the mount table for PID 1's watch (see
//     "Hidden files");
//  2. has brought lo up in the new network namespace (before the spec: its
//     environment says it was cloned into one, and the spec's NewNet must
//     agree); for Network "proxy" binds
//     a TCP listener on 127.0.0.1:ProxyPort there, sends it to the server
//     over an inherited socketpair (fd 5, SCM_RIGHTS) and closes its own
//     copy: the server, not the namespace, now holds the only one;
//  3. builds a landlock ruleset pinned to the ABI found (ABI >= 1 required;
//     made, with the rules on what the set-up mounts nothing over, the
//     system folders, /sys's and /dev's, before the spec is read, so they
//     hold the inodes those paths named then;
//     refer, truncate, ioctl_dev, TCP bind/connect, signal and abstract unix
//     socket scoping are handled when the ABI has them; rights of ABIs newer
//     than 7 are not handled): read+execute beneath /usr, /bin, /sbin, /lib*,
//     /opt and Readable; read beneath /etc, /proc, a few /sys folders; read
//     and write on /dev/null, zero, full, random, urandom, tty; everything
//     beneath Writable, /tmp and /dev/shm; TCP connect only to
//     AllowTCPConnect ports (plus ProxyPort for "proxy") and no TCP bind
//     when Network is "none" or "proxy";
//  4. sets rlimits (core 0, file size, open files, CPU time: per process,
//     so the helper has them too);
//  5. on a new OS thread of its own, locked to it for its short life (made,
//     with this step and the next done, before the spec is read: they
//     depend on none): locks securebits, empties the bounding, ambient,
//     effective, permitted and inheritable capability sets (even as uid 0);
//  6. sets no_new_privs and installs a seccomp filter on that thread
//     (system calls through any other ABI than x86_64, such as int 0x80,
//     kill the process; x32 ones get EPERM);
//  7. calls landlock_restrict_self (that thread);
//  8. checks a canary (opening "/" must now fail with EACCES);
//  9. forks the shell (`SHELL -c COMMAND`) from that thread, so it has
//     exactly that thread's restrictions (with Spec.ExecGate, traced by
//     the thread until PID 1 takes it over, see "Exec gate"), and the
//     thread ends. PID 1 tells the server the
//     shell started, reaps every process of the namespace, reports the
//     shell's exit status and exits, which kills everything left in the
//     namespace (background and setsid'd children included).
//
// The shell is therefore not PID 1: signals it sends itself work, and its
// exit status (code or signal) is reported exactly. Any failure before the
// shell is started (including a Dir that does not exist or a Shell that
// cannot be executed) is reported on the status pipe (by the helper or the
// stage); Run then returns an error wrapping ErrUnavailable and nothing ran.
//
// # Exec gate
//
// With Spec.ExecGate set, the restricted thread starts the shell with
// PTRACE_TRACEME, so the kernel stops it at its exec, before its first
// instruction; the thread waits for that stop and detaches it with SIGSTOP,
// which stops it again at once, still before its first instruction. PID 1's
// main thread then attaches with PTRACE_SEIZE (TRACEEXEC|TRACEFORK|
// TRACEVFORK|TRACECLONE|EXITKILL) and sends SIGCONT, so the shell and every
// process it makes are traced from their first instruction, and all die if
// the tracer does. (Go cannot run code between fork and exec; a re-executed
// Go stage, or a /bin/sh stopper waiting on a pipe, cost ~8 ms and ~1 ms of
// CPU per command.) Seccomp lets ptrace through for PTRACE_TRACEME and
// PTRACE_DETACH only (with a request's high word zero): every process of a
// gated command is traced from birth, so TRACEME fails, and none traces
// anything, so DETACH has nothing to act on. PID 1 waits for every stop (wait4(-1, __WALL), the only
// waiter of the process, raw system calls on its locked thread, which makes
// every ptrace request; SIGCHLD is left at its default action with
// SA_NOCLDSTOP, so no stop or exit of the command signals it, wait4 alone
// learns of them): fork, vfork and clone events continue; a group-stop
// is listened to (PTRACE_LISTEN, so job control behaves as untraced); a
// signal is delivered; at every PTRACE_EVENT_EXEC (the shell's own exec
// came before the seize) it reads /proc/PID/exe (the real path), its device and inode,
// and cwd (by their paths: each exec is a new process, so each entry is a
// lookup anyway), and from the new image's stack (its stack pointer by
// PTRACE_GETREGS, then usually one process_vm_readv) argc, the argv
// pointers and strings, the environment's entries Spec.ExecEnv watches
// (the variables that move an installer's index, shown only where they
// differ from the command's own settings: ExecEvent.Env, EnvUnset) and
// the auxiliary vector's AT_EXECFN (the path given to execve), checking
// the kernel's layout (contiguous argument
// strings, every pointer inside the stack; anything else is a Problem,
// and so is a 32-bit image, which the seccomp filter would kill at its
// first system call); it sends them as an ExecEvent (one binary frame,
// eventwire.go) over a socketpair (fd 6) to the server, waits for the
// verdict and either continues the program or SIGKILLs it, which
// ends it before its first instruction. At that stop the new image exists,
// its other threads are gone and argv was copied into memory only it uses:
// a racing thread or process cannot change what was decided (nothing can
// write another process's memory: seccomp denies ptrace and
// process_vm_writev, and landlock gives /proc read-only). Reading the
// stack is no time-of-check/time-of-use gap either: it is that memory,
// nothing of the image has run (so it holds what the kernel wrote, which
// is what the program will read), and /proc/PID/cmdline, read before,
// read the same bytes at the same moment. The executable's
// name could still be renamed under it, so the path must still name the
// running file (device and inode); a memfd or deleted executable, the
// dynamic loader run as a program, and unreadable facts are Problems the
// gate refuses. Names mean nothing where the command can write (/tmp,
// /dev/shm and the Writable roots allow execution), so the tracer also
// marks an executable that lies there (ExecEvent.Written: by its real path
// beneath one of them, found at set-up after the mounts, or by the device
// of one that no system folder shares; a Writable root on the same file
// system as /usr is known by path only, and the command cannot link across
// into it, every root being a mount of its own; ExecEvent.WrittenExe says
// the executable itself is), or a script exec'd from there, or by a path
// with a ".." component (the kernel resolves a symlink before the ".."
// after it, a lexical clean would not: such a path counts as written).
// Written passes through the same \xNN treatment of invalid UTF-8 as Exe.
// For a written executable it reads, through /proc/PID/exe (the running
// file itself, which cannot be written while it runs: ETXTBSY), the GNU
// build-id and the Go build ID note, the SHA-256 when its size is one of
// Spec.IdentitySizes (so builds pay for no hashing), and the device and
// inode of whatever else the kernel mapped at the exec, which is its ELF
// interpreter whatever the header says (/proc/PID/maps; one lying in a
// writable place is a Problem). ELF headers are read as the kernel reads
// them: by the magic and e_machine (x86-64, arm64: 64-bit little-endian),
// ignoring e_ident's class and data bytes; a written ELF file of another
// machine is a Problem, and so is a written ET_DYN file with no PT_INTERP
// (what the dynamic loader is, under any name and from any folder; a
// static-pie program looks the same and is refused too, while gcc's
// default PIE and go build's output name an interpreter or are ET_EXEC).
// Besides what the program is, each event says what it is attached to,
// for decisions that span programs (also read at the exec stop, from the
// process's own /proc entries, and left out of the event's cache key):
// its lineage (ExecEvent.Exec, PrevExec, PPID, ParentExec: numbers never
// reused in a command, from the fork events; a new process is held at
// its first stop until its parent's fork event is seen, so none execs
// with its maker unknown: lineage.go), the pipes on its descriptors 0 and
// 1 and those its argv names (/dev/fd/N, /proc/X/fd/N, /dev/stdout, …:
// ExecEvent.StdinPipe, StdoutPipe, ArgPipes), where a symlinked exec path
// leads and the regular file on its descriptor 0 (ExecTarget, StdinFile),
// and, for git, git-*, ssh, shells and written programs, the protected
// git directories where the command has added an entry git reads as
// configuration or whose HEAD is no longer valid (GitChanged: the overlay
// keeps such writes until the command ends, and git reads them).
// What these facts are compared with is the
// ExecGate's business (shelltool's table of the host programs that matter
// by name); what cannot be read is a Problem. Seccomp denies clone with CLONE_UNTRACED (clone3 is ENOSYS),
// so no process escapes the tracer, and clone with CLONE_FS but not
// CLONE_THREAD, so no other process can move a program's cwd while the gate
// reads it. The tracer is outside every
// restriction it imposes and out of the command's reach: non-dumpable, not
// in the command's landlock domain (no signals with ABI >= 6; PID 1 of the
// namespace ignores SIGKILL and SIGSTOP from inside it anyway), and ptrace
// is denied to the command. SEIZE failing (Yama ptrace_scope 3, a kernel
// without ptrace) fails the setup: ErrUnavailable. Probe proves the gate by
// running a command whose exec it must see. The cost is five stops per
// fork+exec (the parent's fork event, the child's first stop, its exec,
// its exit, the parent's SIGCHLD; ptrace has no way to skip any) and one
// round trip to the server per exec, which reads the channel with raw
// calls through the runtime's poller (gate.go).
//
// # Hidden files
//
// A hidden file must stay hidden for the whole command, whatever the host
// does to it meanwhile (hidden.go). A bind mount on the host's entry does
// not do that: a host that renames a new file over it (useradd and passwd
// do so with /etc/shadow, editors with .env) or removes it makes the kernel
// detach every mount on the old entry, in every namespace.
//
// /etc is therefore masked by a read-only overlay, lowerdir=TOP:/etc, where
// TOP is a tmpfs mounted nowhere holding, for every secret name, an empty
// mode-0 file (or an opaque mode-0 folder) where the secret exists and a
// whiteout where it does not (at the first missing component of its path,
// so a folder such as /etc/wireguard made later is hidden whole), or where
// the helper cannot look (the first component in a folder its uid cannot
// search: the command, with that uid and no capabilities, could not reach
// it either): the
// overlay, not a mount on the host's entry, masks the name, so a renamed or
// newly created secret is as hidden as the one it replaced. TOP is made by
// the helper before it reads its spec (a warm helper, while it waits), so
// a name's state is read then; the masking does not depend on it. A
// symlink among the names is followed (its target is masked too: in /etc
// by the overlay, elsewhere by a placeholder bind). The overlay does not
// show the mounts beneath /etc (a container's resolv.conf, hosts and
// hostname binds), so each is cloned and bound back on top (with what is
// mounted beneath it), unless it lies at or beneath a secret name; one that
// holds a secret name is masked the same way. Folders on a secret's path
// show TOP's copy of their mode (and owner, except in a user namespace,
// where they show the helper's uid). The overlay caches: a host file in
// /etc replaced mid-command (resolv.conf renamed into place) may show its
// old content, and a name created mid-command may stay absent, until the
// next command. A failure to mount it fails the set-up (ErrUnavailable).
// Outside the initial user namespace (the server not root, or uid 0 of a
// rootless container or of `unshare -Ur`) trusted.* xattrs are not the
// helper's: TOP's opaque marks are user.overlay.opaque and the overlay is
// mounted with userxattr (the helper probes whether it may set trusted.*
// on TOP, so the mark and the option always agree). There, when /etc has
// mounts beneath it (a container), those mounts are locked and the kernel
// refuses an overlay layer holding locked mounts (clone_private_mount:
// EINVAL): each secret present gets a placeholder bind instead, guarded as
// below, and a secret created mid-command is not hidden (root-only files
// such as shadow stay unreadable by their mode: the command's uid is not
// the host's root). The helper picks binds when /proc/self/uid_map is not
// the initial namespace's identity map, and falls back to them when the
// overlay mount fails with EINVAL while mounts lie beneath.
//
// Spec.Hidden paths (credential files inside writable roots, which must
// stay writable around them) and ReadOnly paths keep their binds, and are
// guarded: PID 1 polls /proc/self/mountinfo (POLLPRI, raised on every
// change of the namespace's mount table; after the set-up, in this private
// namespace where the command cannot mount, only a mount lost to the host
// changes it) from a goroutine given a processor of its own (the helper
// runs with GOMAXPROCS=1 and its main thread blocks in raw wait4). At a
// change that lost a mount the set-up made (a guard first, by one statx of
// its path; then any other, by the table: the git overlays, the pinned
// ancestors) it kills every process of the namespace (kill(-1, SIGKILL)
// from PID 1) and reports why; a change that lost only a mount the
// namespace inherited from the server's (the host removing a container's
// folder, a test's temporary mount) hides nothing and is let pass. Once
// the shell has exited, PID 1 kills what is left and checks the table once
// more (a second descriptor) before it reports. The server then drops the command's output and sets
// Result.Stopped ("….env was replaced or removed on the host while the
// command ran; the command was killed so it could not read it"). No mount
// can keep the name masked once the host replaced the entry, and the
// kernel offers no earlier signal than the detach itself (it comes before
// the new name is linked). What remains is a window: from the host's
// rename until the watching thread runs and the SIGKILL lands (its
// wake-up: microseconds when a core is free, up to a scheduling slice on
// a loaded machine), a process of the command can open and read the new
// file and copy it to a file it may write or, with Network "full" or
// "proxy", send it out; its output is dropped, and a system call under way
// when SIGKILL arrives (a write) completes. Nothing else the command chose
// survives a stop either: what it made in a .git directory is not merged
// (Result.GitDropped stays empty), and shelltool gives the model only the
// number of its egress decisions and refused programs. When the server
// kills the helper itself (timeout, runaway output, cancel) PID 1's report
// may be lost with it, so the server looks itself: when PID 1 says the
// command started (every mount made), the server opens the namespace's
// mount table (/proc/PID/mountinfo of its still unreaped child; the open
// descriptor keeps the namespace), and after the kill polls it once. A
// change since (or a table it could not open) means a mount may have been
// lost: the command is treated as stopped, its output dropped, fail closed
// (Result.Stopped says it was killed before the sandbox could confirm);
// no change, and the result is the kill's, output kept. A gated shell
// stays stopped until PID 1 has said "started", and a kill first waits
// (briefly) until the server has looked at every status byte already
// written, so a kill on a loaded machine does not miss the table of a
// command that ran; without the gate a command may run before the line,
// and a kill then drops its output (the safe way).
//
// With Network "proxy" the server receives the listener while the helper
// sets up and runs Spec.Proxy on it in a goroutine; when the command ends
// the handler's context is cancelled and the listener closed, and Run waits
// for the handler to return. The package decides nothing about where a
// proxied connection may go: that is the handler's job (see webtools.Proxy).
// The command's environment gets HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and
// their lower-case forms) = ProxyURL and an empty NO_PROXY/no_proxy.
//
// On the server side, the timeout, ctx cancellation and runaway output kill
// the process group and the helper (PID 1 of the namespace: the kernel kills
// the rest); the leader is reaped only after the group kill, so a recycled
// pgid is never hit; the wait for end-of-file on the output pipes is bounded;
// every goroutine and descriptor is released before Run returns.
//
// A helper re-executing the server's binary runs all its package
// initialisers before MaybeRunHelper is reached (the helper binary runs
// only this package's and the standard library's): keep them cheap. A Runner takes them off the command's path: it keeps one
// helper per network mode started in advance (by the same code, with the
// same clone flags, pipes and cgroup) and blocked reading its spec, writes
// the spec only when a command arrives, and drives it exactly as Run does;
// a warm helper found dead is discarded and the command starts cold.
//
// Where /sys/fs/cgroup (or /sys/fs/cgroup/unified) is a cgroup2 mount whose
// current cgroup delegates the pids controller, each command gets its own
// cgroup (pids.max, memory.max when available) and is cloned straight into
// it; otherwise the command runs without one (no fork-bomb containment for
// uid 0, whose RLIMIT_NPROC is ignored by the kernel).
//
// # Security model
//
// Protects against a command (or a tool it runs) that tries to:
//   - write outside the Writable roots and the private /tmp and /dev/shm
//     (landlock; even as root, since capabilities are gone);
//   - read outside the system folders (/usr, /bin, /sbin, /lib*, /opt, /etc
//     minus secrets such as shadow, gshadow, sudoers, ssh host keys,
//     ssl/private, including ones the host renames into place or creates
//     while the command runs), Readable and Writable roots (a symlink or a hard link
//     made by the command does not help: landlock checks the real path, and
//     linking across into a writable root needs the refer right);
//   - modify ReadOnly carve-outs inside a writable root (read-only bind
//     mounts);
//   - make git run code on the host later: in every git directory of
//     Spec.GitDirs (the workspace's, nested repositories', submodules',
//     linked worktrees') only what records work is kept (gitdirs.go:
//     an overlay whose other changes are dropped after the command); .git
//     files are read-only;
//   - leave a setuid or setgid file behind (seccomp refuses such modes in
//     chmod, fchmod, fchmodat, fchmodat2, open, openat, creat, mkdir,
//     mkdirat, mknod and mknodat with EPERM; openat2 gets ENOSYS), or use
//     one inside (writable roots are bound nosuid, nodev);
//   - reach anything but the proxy listener when Network is "proxy" (the
//     same empty namespace and rules, one allowed port);
//   - reach the network when Network is "none" (empty network namespace,
//     landlock TCP rules, seccomp on socket families and protocols: no unix,
//     vsock, MPTCP or SCTP sockets, no io_uring);
//   - see, signal or trace host processes (pid namespace with its own /proc,
//     landlock scoping, seccomp denies ptrace and process_vm_*);
//   - escape the end of the call (every process in the pid namespace dies
//     with it; timeouts and cancellation kill the namespace);
//   - learn the server's environment (only Spec.Env is passed);
//   - regain privileges (no_new_privs, empty capability sets, locked
//     securebits) or change the sandbox (mount, unshare, setns, namespaced
//     clone, bpf, keyctl, perf_event_open are denied);
//   - with an ExecGate, run a program the gate refuses, by any path (a
//     script, make, an interpreter's exec, vfork, a thread, a hashed or
//     renamed command, a copy, link or symlink of it under another name,
//     a copied dynamic loader), or start a process the gate does not see.
//
// It does not protect against:
//   - what an allowed program does inside itself (an interpreter's own file
//     operations, code it loads as a library): the gate sees execs only,
//     and shell builtins never exec;
//   - a program that imitates another without being it: a copy whose
//     build-id and content were changed, one the command compiled, a
//     script (its interpreter reads it by name): the gate knows files, not
//     what a program does; the sandbox bounds them, and the network policy
//     (no network, or the proxy's decided hosts) bounds what they send;
//   - a foreign binary run through a binfmt_misc handler registered on the
//     host: the kernel loads the handler's interpreter, so that is the
//     executable the gate decides, not the file it was given;
//   - kernel bugs (the sandbox is only as strong as landlock, namespaces and
//     seccomp in the running kernel);
//   - reading files under the allowed roots: anything in /etc not on the
//     secret list, /usr, /opt and the Readable roots is readable, and secrets
//     inside the workspace are readable and writable (so is a hard link to a
//     secret that already exists inside a writable root);
//   - a hidden or read-only path the host replaces or removes while the
//     command runs, in the moment before PID 1 kills the command (see
//     "Hidden files": what it read then can reach a file it writes or, with
//     a network, the outside; not its output, which is dropped);
//   - /etc secrets matched by a pattern (ssh/ssh_host_*) under a name that
//     did not exist when the helper started (a host key made later), and,
//     in a user namespace whose /etc has mounts beneath it, any secret
//     created mid-command;
//   - listing names: directory listing of /dev and of PID 1's /proc entries
//     is allowed (opening them is not);
//   - UDP and other non-TCP traffic when Network is "full" (landlock ABI <= 9
//     does not cover it; only "none" removes the network entirely);
//   - exhaustion of CPU, memory or process slots when no delegated cgroup is
//     available (only rlimits apply then, and RLIMIT_NPROC is ignored for
//     uid 0);
//   - ReadOnly paths that do not exist when the command starts (nothing can be
//     mounted on them; the command may create them);
//   - git directories that do not exist when the command starts (a
//     repository the command creates is entirely its own), that FindGitDirs
//     does not find (past its bound, in skipped folders, bare repositories
//     not named .git), or symlinks inside one (a symlinked hooks/ pointing
//     into a writable root stays writable through its target);
//   - a setgid folder that already exists: folders made inside it inherit
//     the bit, as the kernel does;
//   - RunHost, which only gives the command its own process group, an exact
//     environment, a timeout and output caps: a setsid'd child escapes it, and
//     descriptors the server inherited without close-on-exec reach it;
//   - architectures other than amd64: there is no seccomp filter for them
//     yet, so Run fails closed with ErrUnavailable.
package sandbox
