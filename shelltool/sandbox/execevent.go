package sandbox

// ExecEvent is one program a sandboxed command is about to run, as the
// kernel loaded it: read by the tracer at PTRACE_EVENT_EXEC, when the new
// image exists, its other threads are gone and none of its instructions has
// run.
type ExecEvent struct {
	// PID is the process in the command's pid namespace.
	PID int `json:"pid"`
	// Exec numbers this exec event among the command's (from 1). PrevExec
	// is the number of the process's image it replaces: zero when this is
	// its first exec since it was made (by fork, vfork or clone). PPID is
	// the process that made it (its maker, in the same namespace; zero
	// for the shell) and ParentExec the number of that maker's image when
	// it made it (zero when the maker had not been exec'd under the
	// tracer). A number is never reused in a command, unlike a PID: the
	// gate can tell whose code started a program (lineage).
	Exec       uint64 `json:"exec,omitempty"`
	PrevExec   uint64 `json:"prev_exec,omitempty"`
	PPID       int    `json:"ppid,omitempty"`
	ParentExec uint64 `json:"parent_exec,omitempty"`
	// Exe is the executable's real path as /proc/PID/exe names it (symlinks
	// resolved; a script's interpreter, not the script).
	Exe string `json:"exe"`
	// Dev and Ino identify the executable's file.
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
	// Argv is the argument vector the new program sees.
	Argv []string `json:"argv"`
	// ExecPath is the path the program was exec'd by (AT_EXECFN, as given
	// to execve): for a script started through its shebang, the script,
	// while Exe is its interpreter and Argv holds the script's path after
	// the interpreter's words.
	ExecPath string `json:"exec_path"`
	// Cwd is its working folder.
	Cwd string `json:"cwd"`
	// Written is set when the program may be one the command made or
	// copied: it is the real path of its executable when that lies where
	// the command can write (beneath a Writable root, /tmp or /dev/shm; or
	// on the device of one of them that no system folder shares), or else
	// the path a script (or symlink) was exec'd by when that one does. Its
	// name then means nothing; only its identity does.
	Written string `json:"written,omitempty"`
	// WrittenExe is set when the executable itself lies where the command
	// can write (Written is then its path): the helper says so, since a
	// server comparing Written with Exe would compare two texts.
	WrittenExe bool `json:"written_exe,omitempty"`
	// Size is the executable's size in bytes.
	Size int64 `json:"size"`
	// BuildID is the executable's GNU build-id (hex), read when the
	// executable itself is written (WrittenExe) (empty when it has none).
	BuildID string `json:"build_id,omitempty"`
	// GoBuildID is its Go build ID note (hex), read likewise.
	GoBuildID string `json:"go_build_id,omitempty"`
	// SHA256 is the executable's SHA-256 (hex), computed when it is
	// written and its Size is one of Spec.IdentitySizes.
	SHA256 string `json:"sha256,omitempty"`
	// InterpDev and InterpIno identify the ELF interpreter the kernel
	// loaded for a written executable that names one (it runs first, so
	// it is identified like the program itself; zero when none).
	InterpDev uint64 `json:"interp_dev,omitempty"`
	InterpIno uint64 `json:"interp_ino,omitempty"`
	// Env are the variables of the program's environment Spec.ExecEnv
	// watches ("NAME=value", in the environment's order), but for the
	// pins it holds as given; EnvUnset are the pins it lacks.
	Env      []string `json:"env,omitempty"`
	EnvUnset []string `json:"env_unset,omitempty"`
	// StdinPipe and StdoutPipe are the inodes of the pipes (or FIFOs) its
	// descriptors 0 and 1 are, zero when they are none; ArgPipes those of
	// the descriptors its argv names (/dev/fd/N, /proc/self/fd/N: bash
	// <(curl …) reads its script from one). The gate follows what flows
	// from a network program into one that reads its code from a pipe
	// (curl … | sh in a script) with them. They are not part of what the
	// program is (AppendEventKey leaves them out).
	StdinPipe  uint64   `json:"stdin_pipe,omitempty"`
	StdoutPipe uint64   `json:"stdout_pipe,omitempty"`
	ArgPipes   []uint64 `json:"arg_pipes,omitempty"`
	// ExecTarget is where the path the program was exec'd by (ExecPath)
	// leads when it is a symlink (resolved as the command sees it), and
	// StdinFile the file its descriptor 0 reads when that is a regular
	// file (bash < deploy.sh): the gate decides a script by those names
	// too (review rev20e M2). Empty otherwise.
	ExecTarget string `json:"exec_target,omitempty"`
	StdinFile  string `json:"stdin_file,omitempty"`
	// GitChanged lists the git directories of Spec.GitDirs in which the
	// command has made, while it runs, an entry git reads as the
	// repository's configuration that was not there when it started
	// (gitmeta.GuardedEntries: commondir, config.worktree, remotes/, …;
	// the existing ones are bound read-only, but a new one lands in the
	// overlay and git reads it until the command ends). The exec gate
	// takes a push from such a repository as the command's (review rev20e
	// H1). Not part of what the program is (AppendEventKey leaves it out).
	GitChanged []string `json:"git_changed,omitempty"`
	// Problem is set when what runs cannot be verified: an executable with
	// no name on disk (memfd, deleted), one whose path no longer names the
	// running file (renamed or exchanged during the exec), the dynamic
	// loader run as a program (by its name), or facts that could not be
	// read (a written executable's content included). An
	// ExecGate must refuse an event with a Problem.
	Problem string `json:"problem,omitempty"`
}

// ExecGate decides one program of a sandboxed command: true lets it run;
// false kills it (SIGKILL) before its first instruction, so its parent sees
// it die by signal 9 (exit status 137 in a shell). It is called from one
// goroutine per command, one event at a time; the command's processes wait
// while it decides. It must not block for long: no person can be asked.
type ExecGate func(ev ExecEvent) bool
