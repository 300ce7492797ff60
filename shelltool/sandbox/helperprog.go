//go:build linux

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// helperSHA256 is the SHA-256 (hex) of the helper binary built with this
// server (cmd/onellm-sandbox), set only by the linker:
//
//	-ldflags "-X github.com/onellm/onellm-mcp/shelltool/sandbox.helperSHA256=…"
//
// (make build does it). Nothing writes it at run time. Empty (go install,
// go test, go build without the flag): helpers are the binary itself.
var helperSHA256 string

// HelperBinaryName is the helper binary's file name, beside the server's
// executable.
const HelperBinaryName = "onellm-sandbox"

const (
	// helperMaxSize bounds the helper file copied into memory.
	helperMaxSize = 64 << 20
	// helperFDMin is the lowest descriptor the sealed copy may have: the
	// child of os.StartProcess moves descriptors up from len(Files) (8)
	// before its exec, so one below ~2×8 could be overwritten there before
	// /proc/self/fd/N is resolved.
	helperFDMin = 64
)

// HelperProgram is the program sandbox helpers are started from: either a
// sealed in-memory copy of the helper binary whose SHA-256 this server was
// built with (LoadHelperProgram), which runs none of the server's package
// initialisers, or the running binary itself, /proc/self/exe
// (SelfHelper), whose main calls MaybeRunHelper first.
//
// The helper binary lies beside the server's executable, often in the
// workspace (bin/ of the repository), where a sandboxed command can write.
// So its path is never executed: it is read once, at start, into a memfd,
// sealed against every change (F_SEAL_WRITE, F_SEAL_GROW, F_SEAL_SHRINK,
// F_SEAL_EXEC where the kernel has it, then F_SEAL_SEAL), and only when the
// SHA-256 of the sealed bytes equals the one compiled in is it used; each
// helper is then exec'd from that descriptor (/proc/self/fd/N, resolved by
// the kernel to the memfd itself). The descriptor is close-on-exec: no
// helper, and so no command, holds it. Anything else (no digest compiled
// in, the file missing, not a regular file, too large, a different digest,
// memfd_create refused, a kernel that refuses to exec a memfd) leaves the
// running binary as the helper, and Fallback says why.
type HelperProgram struct {
	path     string   // what the helper's exec names
	memfd    *os.File // the sealed copy; nil for the running binary
	file     string   // the helper binary's path, for messages
	fallback error    // why the running binary is used, when a helper binary was asked for
}

// SelfHelper is the running binary as the helper (/proc/self/exe).
func SelfHelper() *HelperProgram { return &HelperProgram{path: "/proc/self/exe"} }

// DefaultHelper is the helper this build uses: the helper binary beside the
// executable when this server was built with its digest and it matches
// (LoadHelperProgram), else the running binary with the reason (Fallback).
// It reads and hashes the file each time: call it once.
func DefaultHelper() *HelperProgram {
	if helperSHA256 == "" {
		h := SelfHelper()
		h.fallback = errors.New("this build names no helper binary digest (built without make build)")
		return h
	}
	exe, err := os.Executable()
	if err != nil {
		h := SelfHelper()
		h.fallback = fmt.Errorf("locating the executable: %w", err)
		return h
	}
	path := HelperBinaryPath(exe)
	h, err := LoadHelperProgram(path, helperSHA256)
	if err != nil {
		h = SelfHelper()
		h.fallback = err
		h.file = path
	}
	return h
}

// HelperBinaryPath is where the helper binary of the server at exe lies
// ("" when exe is "").
func HelperBinaryPath(exe string) string {
	if exe == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(exe), HelperBinaryName)
}

// LoadHelperProgram copies the file at path into a sealed memfd and returns
// it as the helper program when its SHA-256 is wantHex.
func LoadHelperProgram(path, wantHex string) (*HelperProgram, error) {
	want, err := hex.DecodeString(wantHex)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("helper binary digest %q is not a SHA-256", wantHex)
	}
	memfd, err := sealedCopy(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, io.NewSectionReader(memfd, 0, helperMaxSize+1)); err != nil {
		memfd.Close()
		return nil, fmt.Errorf("hashing the sealed copy of %s: %w", path, err)
	}
	if got := sum.Sum(nil); string(got) != string(want) {
		memfd.Close()
		// Not its digest: the path may name any file (a symlink is refused,
		// a hard link is not), whose digest is not for printing.
		return nil, fmt.Errorf("%s is not the helper binary this server was built with (its SHA-256 differs)", path)
	}
	return &HelperProgram{path: "/proc/self/fd/" + strconv.Itoa(int(memfd.Fd())), memfd: memfd, file: path}, nil
}

// sealedCopy copies the regular file at path into a memfd and seals it.
func sealedCopy(path string) (_ *os.File, err error) {
	// O_NONBLOCK: a FIFO put there opens (and is refused below) instead of
	// blocking the server's start.
	// O_NOFOLLOW: a symlink planted there is refused, not followed.
	src, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("helper binary: %w", err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return nil, fmt.Errorf("helper binary: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > helperMaxSize {
		return nil, fmt.Errorf("helper binary %s is not a regular file of at most %d bytes (%v, %d bytes)", path, helperMaxSize, fi.Mode().Type(), fi.Size())
	}
	fd, err := memfdExec(HelperBinaryName)
	if err != nil {
		return nil, err
	}
	// Well above what a child's descriptor shuffle can reach (helperFDMin).
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, helperFDMin)
	unix.Close(fd)
	if err != nil {
		return nil, fmt.Errorf("helper memfd: moving it to descriptor %d or above: %w", helperFDMin, err)
	}
	memfd := os.NewFile(uintptr(high), "memfd:"+HelperBinaryName)
	defer func() {
		if err != nil {
			memfd.Close()
		}
	}()
	n, err := io.Copy(memfd, io.LimitReader(src, helperMaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("copying %s into a memfd: %w", path, err)
	}
	if n > helperMaxSize {
		return nil, fmt.Errorf("helper binary %s grew past %d bytes while it was read", path, helperMaxSize)
	}
	if err := sealAll(memfd); err != nil {
		return nil, err
	}
	return memfd, nil
}

// memfdExec makes an executable, sealable, close-on-exec memfd. MFD_EXEC
// (Linux 6.3) keeps a vm.memfd_noexec = 1 from sealing it non-executable;
// an older kernel refuses the flag, and its memfds are executable.
func memfdExec(name string) (int, error) {
	flags := unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate(name, flags|unix.MFD_EXEC)
	if err == unix.EINVAL {
		fd, err = unix.MemfdCreate(name, flags)
	}
	if err != nil {
		return -1, fmt.Errorf("helper memfd: memfd_create: %w", err)
	}
	return fd, nil
}

// sealAll forbids every change to memfd's content, size, mode bits (where
// the kernel has F_SEAL_EXEC) and seals.
func sealAll(memfd *os.File) error {
	seals := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	_, err := unix.FcntlInt(memfd.Fd(), unix.F_ADD_SEALS, seals|unix.F_SEAL_EXEC)
	if err == unix.EINVAL { // no F_SEAL_EXEC before Linux 6.3
		_, err = unix.FcntlInt(memfd.Fd(), unix.F_ADD_SEALS, seals)
	}
	if err != nil {
		return fmt.Errorf("helper memfd: sealing: %w", err)
	}
	got, err := unix.FcntlInt(memfd.Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		return fmt.Errorf("helper memfd: reading its seals: %w", err)
	}
	if got&seals != seals {
		return fmt.Errorf("helper memfd: seals %#x, want at least %#x", got, seals)
	}
	return nil
}

// Sealed reports whether helpers start from the sealed helper binary.
func (h *HelperProgram) Sealed() bool { return h.memfd != nil }

// Fallback is why the running binary is the helper, when a helper binary
// was looked for (DefaultHelper); nil otherwise.
func (h *HelperProgram) Fallback() error { return h.fallback }

// String says which program helpers start from, for version and doctor.
func (h *HelperProgram) String() string {
	switch {
	case h.memfd != nil:
		return HelperBinaryName + " (" + h.file + ", SHA-256 verified, run from a sealed memfd)"
	case h.fallback != nil:
		return "the server binary itself (/proc/self/exe): " + h.fallback.Error()
	default:
		return "the server binary itself (/proc/self/exe)"
	}
}

// ProbeHelper is Probe with helpers started from h. When h is the sealed
// helper binary and the probe fails, the helper binary is given up (its
// memfd closed) and the running binary is probed instead: used is the
// program that passed the probe (or the last one tried), and its Fallback
// says why the binary was given up.
func ProbeHelper(h *HelperProgram) (abi int, used *HelperProgram, err error) {
	abi, err = probe(h)
	if err == nil || !h.Sealed() {
		return abi, h, err
	}
	h.memfd.Close()
	self := SelfHelper()
	self.file = h.file
	self.fallback = fmt.Errorf("the helper binary %s failed the probe: %w", h.file, err)
	abi, err = probe(self)
	return abi, self, err
}
