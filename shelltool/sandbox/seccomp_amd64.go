//go:build linux && amd64

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A tiny classic-BPF assembler with labels for the seccomp filter.

type bpfInsn struct {
	code   uint16
	k      uint32
	jt, jf string // jump labels ("" = next instruction)
	label  string // a label marking this instruction
}

const (
	bpfLdW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfAnd  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K

	offNr   = 0
	offArch = 4
	// offArg is the low 32 bits of argument i (little endian).
	offArg0 = 16

	retAllow  = unix.SECCOMP_RET_ALLOW
	retEperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retEnosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retKill   = unix.SECCOMP_RET_KILL_PROCESS

	// Namespace flags refused in clone(2) (CSIGNAL, the low byte, excluded),
	// and CLONE_UNTRACED, which would start a child the exec gate never sees.
	cloneNSMask = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
		unix.CLONE_UNTRACED
)

func offArg(i int) uint32 { return uint32(offArg0 + 8*i) }

// deniedSyscalls return EPERM.
func deniedSyscalls() []uint32 {
	return []uint32{
		unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
		unix.SYS_UNSHARE, unix.SYS_SETNS,
		unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
		unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
		unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE,
		unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_REBOOT,
		unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_OPEN_BY_HANDLE_AT,
		unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME,
		unix.SYS_CLOCK_ADJTIME, unix.SYS_ADJTIMEX, unix.SYS_SYSLOG,
	}
}

// seccompProgram builds the filter:
//   - any architecture but x86_64 (including the i386 int 0x80 entry) is
//     killed; x32 system calls get EPERM;
//   - deniedSyscalls get EPERM, ptrace too but for PTRACE_TRACEME and
//     PTRACE_DETACH (see the ptrace label); clone3 gets ENOSYS (so libc falls back to
//     clone, whose flags can be inspected) and clone with a namespace flag
//     gets EPERM;
//   - socket: only AF_INET/AF_INET6 (stream or datagram, protocol 0, TCP,
//     UDP, ICMP, ICMPv6: no MPTCP, SCTP, raw) and AF_NETLINK; AF_UNIX, vsock
//     and the rest get EPERM (socketpair stays allowed);
//   - ioctl TIOCSTI (terminal input injection) gets EPERM;
//   - a mode with S_ISUID or S_ISGID gets EPERM, openat2 ENOSYS (suid_amd64.go).
func seccompProgram() ([]unix.SockFilter, error) {
	p := []bpfInsn{
		{code: bpfLdW, k: offArch},
		{code: bpfJeq, k: unix.AUDIT_ARCH_X86_64, jf: "kill"},
		{code: bpfLdW, k: offNr},
		{code: bpfJge, k: 0x40000000, jt: "eperm"},
	}
	for _, nr := range deniedSyscalls() {
		p = append(p, bpfInsn{code: bpfJeq, k: nr, jt: "eperm"})
	}
	p = append(p, suidDispatch()...)
	p = append(p,
		bpfInsn{code: bpfJeq, k: unix.SYS_CLONE3, jt: "enosys"},
		bpfInsn{code: bpfJeq, k: unix.SYS_SOCKET, jt: "socket"},
		bpfInsn{code: bpfJeq, k: unix.SYS_CLONE, jt: "clone"},
		bpfInsn{code: bpfJeq, k: unix.SYS_IOCTL, jt: "ioctl"},
		bpfInsn{code: bpfJeq, k: unix.SYS_PTRACE, jt: "ptrace"},
		bpfInsn{code: bpfRet, k: retAllow},

		// ptrace: only TRACEME and DETACH (the exec gate's hand-over of the
		// shell). Every gated process is traced from birth, so TRACEME
		// fails, and one that traces nothing has nothing to detach.
		bpfInsn{label: "ptrace", code: bpfLdW, k: offArg(0) + 4}, // high word of the request
		bpfInsn{code: bpfJeq, k: 0, jf: "eperm"},
		bpfInsn{code: bpfLdW, k: offArg(0)},
		bpfInsn{code: bpfJeq, k: unix.PTRACE_TRACEME, jt: "allow"},
		bpfInsn{code: bpfJeq, k: unix.PTRACE_DETACH, jt: "allow"},
		bpfInsn{code: bpfRet, k: retEperm},

		bpfInsn{label: "socket", code: bpfLdW, k: offArg(0)},
		bpfInsn{code: bpfJeq, k: unix.AF_INET, jt: "inet"},
		bpfInsn{code: bpfJeq, k: unix.AF_INET6, jt: "inet"},
		bpfInsn{code: bpfJeq, k: unix.AF_NETLINK, jt: "allow"},
		bpfInsn{code: bpfRet, k: retEperm},
		bpfInsn{label: "inet", code: bpfLdW, k: offArg(1)},
		bpfInsn{code: bpfAnd, k: 0xf}, // SOCK_TYPE_MASK
		bpfInsn{code: bpfJeq, k: unix.SOCK_STREAM, jt: "proto"},
		bpfInsn{code: bpfJeq, k: unix.SOCK_DGRAM, jt: "proto"},
		bpfInsn{code: bpfRet, k: retEperm},
		bpfInsn{label: "proto", code: bpfLdW, k: offArg(2)},
		bpfInsn{code: bpfJeq, k: 0, jt: "allow"},
		bpfInsn{code: bpfJeq, k: unix.IPPROTO_TCP, jt: "allow"},
		bpfInsn{code: bpfJeq, k: unix.IPPROTO_UDP, jt: "allow"},
		bpfInsn{code: bpfJeq, k: unix.IPPROTO_ICMP, jt: "allow"},
		bpfInsn{code: bpfJeq, k: unix.IPPROTO_ICMPV6, jt: "allow"},
		bpfInsn{code: bpfRet, k: retEperm},

		// clone: no namespace and no untraced child; and no process that
		// shares its parent's cwd and root (CLONE_FS without
		// CLONE_THREAD): such a sibling could chdir while the exec gate
		// reads the cwd of a program that relative path was resolved in,
		// so the gate would decide a path the kernel did not run. Threads
		// (which share it by design) exec only after every other thread is
		// gone.
		bpfInsn{label: "clone", code: bpfLdW, k: offArg(0)},
		bpfInsn{code: bpfJset, k: cloneNSMask, jt: "eperm"},
		bpfInsn{code: bpfAnd, k: unix.CLONE_FS | unix.CLONE_THREAD},
		bpfInsn{code: bpfJeq, k: unix.CLONE_FS, jt: "eperm"},
		bpfInsn{code: bpfRet, k: retAllow},

		bpfInsn{label: "ioctl", code: bpfLdW, k: offArg(1)},
		bpfInsn{code: bpfJeq, k: unix.TIOCSTI, jt: "eperm"},
		bpfInsn{code: bpfRet, k: retAllow},
	)
	p = append(p, suidChecks()...)
	p = append(p,
		bpfInsn{label: "allow", code: bpfRet, k: retAllow},
		bpfInsn{label: "eperm", code: bpfRet, k: retEperm},
		bpfInsn{label: "enosys", code: bpfRet, k: retEnosys},
		bpfInsn{label: "kill", code: bpfRet, k: retKill},
	)
	labels := map[string]int{}
	for i, in := range p {
		if in.label != "" {
			labels[in.label] = i
		}
	}
	out := make([]unix.SockFilter, len(p))
	for i, in := range p {
		out[i] = unix.SockFilter{Code: in.code, K: in.k}
		for _, j := range []struct {
			label string
			dst   *uint8
		}{{in.jt, &out[i].Jt}, {in.jf, &out[i].Jf}} {
			if j.label == "" {
				continue
			}
			t, ok := labels[j.label]
			off := t - i - 1
			if !ok || off < 0 || off > 255 {
				return nil, fmt.Errorf("bpf: bad jump to %q from %d", j.label, i)
			}
			*j.dst = uint8(off)
		}
	}
	return out, nil
}

// installSeccomp installs prog on the calling thread (no TSYNC: the helper
// is locked to the thread that forks the shell). no_new_privs must be set.
func installSeccomp(prog []unix.SockFilter) error {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if e != 0 {
		return e
	}
	return nil
}
