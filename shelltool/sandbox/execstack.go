//go:build linux

package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The new image's initial stack, as the kernel's ELF loader lays it out
// (create_elf_tables): at the stack pointer argc; then argc argv pointers
// and a NULL; the envp pointers and a NULL; the auxiliary vector's (type,
// value) pairs up to AT_NULL; higher up the strings they point to: the
// argument strings one after the other (what /proc/PID/cmdline reads,
// from mm->arg_start to arg_end), the environment's, and the exec path
// (AT_EXECFN), each NUL-terminated, at the top of the stack mapping.
//
// Read at PTRACE_EVENT_EXEC this is not a time-of-check/time-of-use gap:
// the memory is the new image's, which only the stopped tracee uses (the
// exec killed the process's other threads and left the old memory to the
// threads or vfork parent that shared it), and nothing of the image has
// run, so the stack holds what the kernel wrote, which is what the
// program will read. Nothing else can write it while it waits: seccomp
// denies ptrace and process_vm_writev, and landlock gives /proc (mem)
// read-only. /proc/PID/cmdline read the same memory at the same moment;
// the stack is read with a few process_vm_readv calls (usually one)
// instead of two /proc files.
const (
	// stackReadStart is the first read from the stack pointer: it holds the
	// tables and strings of any usual program (the read stops at the end of
	// the stack mapping).
	stackReadStart = 32 << 10
	// maxStackRead bounds what is read of the stack: the kernel bounds its
	// strings and pointers to 6 MiB, whatever the stack limit.
	maxStackRead = 8 << 20
	atNull       = 0
)

// errShort says the stack's tables or strings go on past what was read.
var errShort = errors.New("stack read too short")

// execStack reads the argv and the exec path (AT_EXECFN) of pid, stopped
// at its exec, from its new stack, and with env (unless nil) the watched
// variables of its environment. An error is worded as the Problem it
// gives: "argv unreadable: …", "exec path unreadable: …" or "environment
// unreadable: …".
func (rb *readBuf) execStack(pid int, env *envReport) (argv []string, execFn string, err error) {
	sp, err := stackPointer(pid)
	if err != nil {
		return nil, "", fmt.Errorf("argv unreadable: %w", err)
	}
	size := stackReadStart
	for {
		buf := rb.get(size)
		n, err := vmRead(pid, sp, buf)
		if err != nil {
			return nil, "", fmt.Errorf("argv unreadable: stack: %w", err)
		}
		argv, execFn, err = parseExecStack(buf[:n], sp, env)
		if !errors.Is(err, errShort) {
			return argv, execFn, err
		}
		if n < len(buf) { // the mapping ended first
			return nil, "", fmt.Errorf("argv unreadable: the stack ends inside its tables or strings")
		}
		if size >= maxStackRead {
			return nil, "", fmt.Errorf("argv unreadable: stack %w", errTooBig)
		}
		size = min(4*size, maxStackRead)
	}
}

// vmRead reads len(buf) bytes of pid's memory at addr, or fewer where the
// mapping ends (a partial read stops at the first page it cannot reach).
func vmRead(pid int, addr uint64, buf []byte) (int, error) {
	local := unix.Iovec{Base: &buf[0]}
	local.SetLen(len(buf))
	remote := unix.RemoteIovec{Base: uintptr(addr), Len: len(buf)}
	for {
		// Raw, like every call of the tracer's loop: it never blocks.
		n, _, e := unix.RawSyscall6(unix.SYS_PROCESS_VM_READV, uintptr(pid),
			uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		if int(n) <= 0 {
			return 0, errors.New("nothing readable")
		}
		return int(n), nil
	}
}

// parseExecStack parses mem, the stack read from the stack pointer sp up,
// into argv and AT_EXECFN. It checks what it relies on (the argument
// strings are contiguous, every pointer lies inside what was read), so a
// stack that is not the kernel's layout is an error, never another argv.
// errShort says mem ends before what it needs; argv over maxArgvBytes (its
// strings with their NULs, as /proc/PID/cmdline counts) is errTooBig, and
// an exec path without a NUL in its first PATH_MAX bytes an error, as when
// they were read from /proc. With env, each environment entry is given
// to it (env is reset first: a short read is parsed again).
func parseExecStack(mem []byte, sp uint64, env *envReport) (argv []string, execFn string, err error) {
	if env != nil {
		env.set, env.seen, env.bytes = env.set[:0], nil, 0
	}
	words := len(mem) / 8
	word := func(i uint64) uint64 { return binary.NativeEndian.Uint64(mem[8*i:]) }
	if words < 1 {
		return nil, "", errShort
	}
	argc := word(0)
	if argc > maxArgvBytes { // each argument takes a byte at least
		return nil, "", fmt.Errorf("argv unreadable: argc %d", argc)
	}
	i := 1 + argc // argv's NULL
	if i >= uint64(words) {
		return nil, "", errShort
	}
	if word(i) != 0 {
		return nil, "", errors.New("argv unreadable: argv not NULL-terminated")
	}
	envp := i + 1
	for i++; ; i++ { // envp
		if i >= uint64(words) {
			return nil, "", errShort
		}
		if word(i) == 0 {
			break
		}
	}
	envEnd := i
	var fnAddr uint64
	for i++; ; i += 2 { // auxv
		if i+1 >= uint64(words) {
			return nil, "", errShort
		}
		if word(i) == atNull {
			break
		}
		if word(i) == atExecFn {
			fnAddr = word(i + 1)
		}
	}
	tablesEnd := 8 * (i + 2)
	// offset returns where address p lies in mem: an error below the
	// strings, errShort beyond what was read.
	offset := func(p uint64) (uint64, error) {
		if p < sp || p-sp < tablesEnd {
			return 0, fmt.Errorf("pointer %#x outside the stack's strings", p)
		}
		if p-sp >= uint64(len(mem)) {
			return 0, errShort
		}
		return p - sp, nil
	}
	if argc > 0 {
		start, err := offset(word(1))
		if err != nil {
			return nil, "", argvErr(err)
		}
		end := start
		for k := uint64(0); k < argc; k++ {
			p, err := offset(word(1 + k))
			if err != nil {
				return nil, "", argvErr(err)
			}
			if p != end {
				return nil, "", errors.New("argv unreadable: argument strings not contiguous")
			}
			limit := min(uint64(len(mem)), start+maxArgvBytes)
			j := bytes.IndexByte(mem[p:limit], 0)
			switch {
			case j >= 0:
				end = p + uint64(j) + 1
			case start+maxArgvBytes <= uint64(len(mem)): // no NUL within the cap
				return nil, "", fmt.Errorf("argv unreadable: %w", errTooBig)
			default:
				return nil, "", errShort
			}
		}
		argv = strings.Split(string(mem[start:end-1]), "\x00")
	}
	if env != nil {
		for k := envp; k < envEnd; k++ {
			p, err := offset(word(k))
			if err != nil {
				return nil, "", envErr(err)
			}
			j := bytes.IndexByte(mem[p:], 0)
			if j < 0 {
				return nil, "", errShort
			}
			if err := env.add(mem[p : p+uint64(j)]); err != nil {
				return nil, "", err
			}
		}
	}
	if fnAddr == 0 {
		return nil, "", errors.New("exec path unreadable: no AT_EXECFN")
	}
	p, err := offset(fnAddr)
	if err != nil {
		if errors.Is(err, errShort) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("exec path unreadable: %w", err)
	}
	limit := min(uint64(len(mem)), p+unix.PathMax)
	j := bytes.IndexByte(mem[p:limit], 0)
	switch {
	case j >= 0:
		return argv, string(mem[p : p+uint64(j)]), nil
	case limit == p+unix.PathMax:
		return nil, "", errors.New("exec path unreadable: AT_EXECFN not terminated")
	default:
		return nil, "", errShort
	}
}

func envErr(err error) error {
	if errors.Is(err, errShort) {
		return err
	}
	return fmt.Errorf("environment unreadable: %w", err)
}

func argvErr(err error) error {
	if errors.Is(err, errShort) {
		return err
	}
	return fmt.Errorf("argv unreadable: %w", err)
}
