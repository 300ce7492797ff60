//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ProgramFile is what the exec gate's server side knows of one host
// program file, to recognise it (or a copy of it) when a command runs it.
type ProgramFile struct {
	Path     string // real path (symlinks resolved)
	Dev, Ino uint64
	Size     int64
	// Exec is set for a regular file with an execute bit.
	Exec bool
	// ELF is its build-id and interpreter (zero when it is not ELF, or its
	// headers make no sense: its content still identifies it).
	ELF ELFIdent
}

// ReadProgramFile resolves path and reads the identity of the file it
// leads to.
func ReadProgramFile(path string) (ProgramFile, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ProgramFile{}, err
	}
	f, err := openProgramFile(real)
	if err != nil {
		return ProgramFile{}, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return ProgramFile{}, fmt.Errorf("stat %s: %w", real, err)
	}
	p := ProgramFile{Path: real, Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		Exec: st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o111 != 0}
	if p.Exec {
		p.ELF, _ = ReadELFIdent(f)
	}
	return p, nil
}

// openProgramFile opens path for reading without blocking: a FIFO or a
// device a command planted in a PATH folder it can write must not hang the
// server (what is not a regular file is never read: Exec stays false).
func openProgramFile(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// SHA256 hashes the file, checking first that it is still the one read.
func (p ProgramFile) SHA256() (string, error) {
	f, err := openProgramFile(p.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Dev != p.Dev || st.Ino != p.Ino || st.Size != p.Size {
		return "", fmt.Errorf("%s changed since it was found", p.Path)
	}
	return FileSHA256(f)
}
