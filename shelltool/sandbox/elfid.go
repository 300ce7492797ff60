package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The identity of a program file, by content: the one reader of ELF
// headers, used by the exec gate's tracer (for an executable the command
// could have written) and by the server (for the host programs it compares
// them with).

const (
	elfHeaderSize = 64
	elfPhdrSize   = 56
	ptInterp      = 3
	ptNote        = 4
	ntGNUBuildID  = 3
	ntGoBuildID   = 4
	etDyn         = 3
	emX8664       = 62
	emAArch64     = 183
	// maxPhnum and maxNoteBytes bound what a hostile file can make the
	// reader read.
	maxPhnum     = 256
	maxNoteBytes = 64 << 10
)

// ELFIdent is what an ELF file says about itself.
type ELFIdent struct {
	// BuildID is the GNU build-id note (NT_GNU_BUILD_ID), hex; empty when
	// the file has none (or is not ELF).
	BuildID string
	// GoBuildID is the Go toolchain's build ID note (name "Go", type 4),
	// hex: what a Go program linked without a GNU build-id carries.
	GoBuildID string
	// Interp is the ELF interpreter (PT_INTERP) the file names, if any.
	Interp string
	// Dyn is set for an ELF file of type ET_DYN (a PIE program, a shared
	// object, the dynamic loader itself).
	Dyn bool
	// Unclassified is set for a file with the ELF magic whose machine is
	// not one read here (x86-64, arm64): the reader cannot tell what it
	// holds, so a written one is unverifiable.
	Unclassified bool
}

// ReadELFIdent reads the build-id and the interpreter of an ELF file the
// way the kernel loads it: by the magic and the machine (e_machine), read
// in the machine's layout (64-bit little-endian for x86-64 and arm64),
// whatever the class and data bytes of e_ident say, since the kernel
// ignores them. A file without the magic (a script, another format) has
// neither: the zero ELFIdent and no error. An error means the file could
// not be read, or its headers point outside it.
func ReadELFIdent(r io.ReaderAt) (ELFIdent, error) {
	var id ELFIdent
	var h [elfHeaderSize]byte
	if n, err := r.ReadAt(h[:], 0); n < len(h) {
		if err == io.EOF || err == nil {
			return id, nil // too short to be ELF
		}
		return id, err
	}
	if string(h[:4]) != "\x7fELF" {
		return id, nil // not ELF
	}
	le := binary.LittleEndian
	if m := le.Uint16(h[0x12:]); m != emX8664 && m != emAArch64 {
		id.Unclassified = true
		return id, nil
	}
	id.Dyn = le.Uint16(h[0x10:]) == etDyn
	phoff := le.Uint64(h[0x20:])
	phentsize, phnum := le.Uint16(h[0x36:]), le.Uint16(h[0x38:])
	if phnum == 0 {
		return id, nil
	}
	if phentsize != elfPhdrSize || phnum > maxPhnum {
		return id, fmt.Errorf("ELF program headers: %d entries of %d bytes", phnum, phentsize)
	}
	ph := make([]byte, int(phnum)*elfPhdrSize)
	if err := readFullAt(r, ph, phoff); err != nil {
		return id, fmt.Errorf("ELF program headers: %w", err)
	}
	noteBytes := 0
	for i := 0; i < int(phnum); i++ {
		p := ph[i*elfPhdrSize:]
		typ, off, size, align := le.Uint32(p), le.Uint64(p[8:]), le.Uint64(p[0x20:]), le.Uint64(p[0x30:])
		switch typ {
		case ptInterp:
			if size == 0 || size > 4096 {
				return id, fmt.Errorf("ELF interpreter of %d bytes", size)
			}
			b := make([]byte, size)
			if err := readFullAt(r, b, off); err != nil {
				return id, fmt.Errorf("ELF interpreter: %w", err)
			}
			if k := indexNUL(b); k >= 0 {
				b = b[:k]
			}
			id.Interp = string(b)
		case ptNote:
			if noteBytes += int(min(size, maxNoteBytes+1)); noteBytes > maxNoteBytes {
				return id, errors.New("ELF notes over the size limit")
			}
			b := make([]byte, size)
			if err := readFullAt(r, b, off); err != nil {
				return id, fmt.Errorf("ELF note: %w", err)
			}
			gnu, goID := buildIDNotes(b, align)
			if id.BuildID == "" {
				id.BuildID = gnu
			}
			if id.GoBuildID == "" {
				id.GoBuildID = goID
			}
		}
	}
	return id, nil
}

// buildIDNotes finds the GNU build-id and the Go build ID in the notes of
// one PT_NOTE segment (entries padded to 4 bytes, or 8 when the segment is
// 8-aligned), hex; empty when absent.
func buildIDNotes(b []byte, align uint64) (gnu, goID string) {
	pad := uint64(4)
	if align == 8 {
		pad = 8
	}
	up := func(n uint64) uint64 { return (n + pad - 1) &^ (pad - 1) }
	le := binary.LittleEndian
	for len(b) >= 12 {
		namesz, descsz, typ := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:])), le.Uint32(b[8:])
		rest := uint64(len(b) - 12)
		if up(namesz) > rest || up(namesz)+descsz > rest {
			return gnu, goID
		}
		name, desc := b[12:12+namesz], b[12+up(namesz):12+up(namesz)+descsz]
		switch {
		case descsz == 0:
		case typ == ntGNUBuildID && string(name) == "GNU\x00" && gnu == "":
			gnu = hex.EncodeToString(desc)
		case typ == ntGoBuildID && strings.TrimRight(string(name), "\x00") == "Go" && goID == "":
			goID = hex.EncodeToString(desc)
		}
		next := 12 + up(namesz) + up(descsz)
		if next > uint64(len(b)) {
			return gnu, goID
		}
		b = b[next:]
	}
	return gnu, goID
}

func readFullAt(r io.ReaderAt, b []byte, off uint64) error {
	if off > 1<<62 {
		return errors.New("offset out of range")
	}
	n, err := r.ReadAt(b, int64(off))
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// FileSHA256 is the hex SHA-256 of everything r yields.
func FileSHA256(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
