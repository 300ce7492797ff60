//go:build linux && amd64

package sandbox

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// No setuid or setgid file survives a command: every system call that can
// put S_ISUID or S_ISGID on a file (chmod and its relatives, and the calls
// that create a file, a folder or a node with a mode) fails with EPERM when
// the mode asks for either bit. A setuid file the command made would run
// with the server user's rights when someone else starts it on the host
// later (nosuid on the sandbox's binds protects only the sandbox itself).
//
// openat2 carries its mode inside struct open_how, which a seccomp filter
// cannot read; it gets ENOSYS, which makes programs that try it (systemd,
// some Rust and Go libraries) fall back to openat, whose mode is checked.
// glibc's open, fopen and creat use openat and never openat2.

// suidBits are the mode bits refused.
const suidBits = unix.S_ISUID | unix.S_ISGID

// createFlags are the open flags with which the mode argument counts
// (O_TMPFILE without its O_DIRECTORY part).
const createFlags = unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)

// modeCall is a system call that takes a mode: its number, the argument
// holding the mode, and the argument holding open flags (-1: none; the mode
// then always counts).
type modeCall struct {
	nr       uint32
	modeArg  int
	flagsArg int
}

func modeCalls() []modeCall {
	return []modeCall{
		{unix.SYS_CHMOD, 1, -1}, {unix.SYS_FCHMOD, 1, -1},
		{unix.SYS_FCHMODAT, 2, -1}, {unix.SYS_FCHMODAT2, 2, -1},
		{unix.SYS_OPEN, 2, 1}, {unix.SYS_OPENAT, 3, 2}, {unix.SYS_CREAT, 1, -1},
		{unix.SYS_MKDIR, 1, -1}, {unix.SYS_MKDIRAT, 2, -1},
		{unix.SYS_MKNOD, 1, -1}, {unix.SYS_MKNODAT, 2, -1},
	}
}

func modeLabel(c modeCall) string { return "mode" + strconv.Itoa(int(c.nr)) }

// suidDispatch jumps each mode call to its check (placed before the
// filter's final allow) and gives openat2 ENOSYS.
func suidDispatch() []bpfInsn {
	out := []bpfInsn{{code: bpfJeq, k: unix.SYS_OPENAT2, jt: "enosys"}}
	for _, c := range modeCalls() {
		out = append(out, bpfInsn{code: bpfJeq, k: c.nr, jt: modeLabel(c)})
	}
	return out
}

// suidChecks are the checks suidDispatch jumps to: EPERM when the mode has
// S_ISUID or S_ISGID (and, for open, the flags create a file), else allow.
// Only the low 32 bits of each argument are loaded: modes and flags fit.
func suidChecks() []bpfInsn {
	var out []bpfInsn
	for _, c := range modeCalls() {
		l := modeLabel(c)
		first := bpfInsn{label: l, code: bpfLdW, k: offArg(c.modeArg)}
		if c.flagsArg >= 0 {
			out = append(out,
				bpfInsn{label: l, code: bpfLdW, k: offArg(c.flagsArg)},
				bpfInsn{code: bpfJset, k: createFlags, jf: l + "ok"},
			)
			first.label = ""
		}
		out = append(out, first,
			bpfInsn{code: bpfJset, k: suidBits, jt: "eperm"},
			bpfInsn{label: l + "ok", code: bpfRet, k: retAllow},
		)
	}
	return out
}
