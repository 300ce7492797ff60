// Package imagepages hands back the pages of the running executable that
// start-up faulted into this process.
//
// The kernel maps a file's pages into a process around each page fault
// (fault-around: 64 KiB, the pages already cached), so a start-up that runs
// code in most packages (every package initialiser, the config's parsing,
// the policy's compiling, the tools' schemas) leaves most of the
// executable's code and read-only data mapped: onellm-mcp's image is ~21
// MiB, ~13 MiB of it resident after initialize, pages the calls that follow
// mostly never touch again. Release unmaps them from this process (madvise
// MADV_DONTNEED): they stay in the page cache, shared and clean, and a page
// a later call needs is mapped again by a minor fault.
//
// Only mappings of the executable's file that are read-only and private and
// hold no page of this process's own (a copy-on-write page: a relocated
// read-only segment of a dynamically linked build, a debugger's breakpoint)
// are released: for those, dropping the mapping loses nothing, since every
// page reads back from the file the process runs (the kernel keeps that
// inode while it is mapped; a file replaced at the path is not read).
package imagepages

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Release unmaps, from this process only, the resident pages of the running
// executable's read-only mappings (its code and read-only data) that hold no
// page private to this process; it returns the bytes of the mappings
// released.
func Release() (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return 0, fmt.Errorf("image pages: %w", err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("image pages: %w", err)
	}
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return 0, fmt.Errorf("image pages: %w", err)
	}
	defer pagemap.Close()
	return release(readOnlyMappings(maps, fileID{dev: st.Dev, ino: st.Ino}), pagemap)
}

// fileID names a file by device and inode, as /proc/PID/maps does.
type fileID struct{ dev, ino uint64 }

// span is one mapping's address range, [lo, hi).
type span struct{ lo, hi uintptr }

// readOnlyMappings returns the private, read-only (executable or not)
// mappings of the file f that /proc/PID/maps text lists.
func readOnlyMappings(maps []byte, f fileID) []span {
	var out []span
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		if s, ok := readOnlyMapping(sc.Text(), f); ok {
			out = append(out, s)
		}
	}
	return out
}

// readOnlyMapping parses one line of /proc/PID/maps ("lo-hi perms offset
// major:minor inode path") and reports whether it maps f private and
// read-only.
func readOnlyMapping(line string, f fileID) (span, bool) {
	fields := bytes.Fields([]byte(line))
	if len(fields) < 5 {
		return span{}, false
	}
	if perm := string(fields[1]); perm != "r-xp" && perm != "r--p" {
		return span{}, false
	}
	major, minor, ok := bytes.Cut(fields[3], []byte(":"))
	if !ok {
		return span{}, false
	}
	maj, err1 := strconv.ParseUint(string(major), 16, 32)
	mnr, err2 := strconv.ParseUint(string(minor), 16, 32)
	ino, err3 := strconv.ParseUint(string(fields[4]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || ino != f.ino || unix.Mkdev(uint32(maj), uint32(mnr)) != f.dev {
		return span{}, false
	}
	lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
	if !ok {
		return span{}, false
	}
	l, err1 := strconv.ParseUint(string(lo), 16, 64)
	h, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || h <= l {
		return span{}, false
	}
	return span{uintptr(l), uintptr(h)}, true
}

// release drops each span that holds no page private to this process
// (pagemap: /proc/self/pagemap) and returns the bytes dropped.
func release(spans []span, pagemap io.ReaderAt) (int64, error) {
	var n int64
	for _, s := range spans {
		own, err := hasOwnPage(s, pagemap)
		if err != nil {
			return n, err
		}
		if own {
			continue
		}
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, s.lo, s.hi-s.lo, unix.MADV_DONTNEED); e != 0 {
			return n, fmt.Errorf("image pages: madvise %#x-%#x: %w", s.lo, s.hi, e)
		}
		n += int64(s.hi - s.lo)
	}
	return n, nil
}

// Bits of a /proc/PID/pagemap entry (Documentation/admin-guide/mm/pagemap.rst).
const (
	pagePresent    = 1 << 63
	pageSwapped    = 1 << 62
	pageFileShared = 1 << 61 // file page or shared anonymous page
)

// hasOwnPage reports whether a page of s is this process's own: present or
// swapped and neither a file page nor shared (a copy-on-write copy, which
// dropping would lose).
func hasOwnPage(s span, pagemap io.ReaderAt) (bool, error) {
	page := uintptr(os.Getpagesize())
	buf := make([]byte, 8*512)
	for a := s.lo; a < s.hi; {
		n := min((s.hi-a)/page, uintptr(len(buf)/8))
		b := buf[:8*n]
		if _, err := pagemap.ReadAt(b, int64(a/page*8)); err != nil {
			return false, fmt.Errorf("image pages: pagemap %#x: %w", a, err)
		}
		for i := 0; i < len(b); i += 8 {
			e := binary.LittleEndian.Uint64(b[i:])
			if e&(pagePresent|pageSwapped) != 0 && e&pageFileShared == 0 {
				return true, nil
			}
		}
		a += n * page
	}
	return false, nil
}
