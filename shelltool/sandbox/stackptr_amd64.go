//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// userCS64 is x86-64's 64-bit user code segment (__USER_CS). A 32-bit
// image runs with __USER32_CS (0x23) and lays its stack out in 4-byte
// words; the seccomp filter kills every i386 system call, so no such
// program can do anything in the sandbox, and the tracer refuses it at its
// exec stop rather than read its stack as 64-bit words.
//
// An x32 program also runs with 0x33 but lays its stack out in 4-byte
// words. It is not accepted by accident: read as 8-byte words, its first
// word holds argv[0]'s pointer in its top half, so parseExecStack refuses
// the layout (argc out of range, or argv not NULL-terminated), and the
// seccomp filter refuses every x32 system call anyway. Do not "fix" the
// parse to accept it.
const userCS64 = 0x33

// stackPointer returns the stack pointer of pid, stopped at its exec: the
// new image's initial stack as the kernel laid it out (PTRACE_GETREGS,
// which gives the 64-bit register layout whatever the tracee runs).
func stackPointer(pid int) (uint64, error) {
	var regs unix.PtraceRegs
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_GETREGS, uintptr(pid), 0, uintptr(unsafe.Pointer(&regs)), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, fmt.Errorf("registers: %w", e)
		}
		break
	}
	if regs.Cs != userCS64 {
		return 0, fmt.Errorf("not a 64-bit program (code segment %#x)", regs.Cs)
	}
	return regs.Rsp, nil
}
