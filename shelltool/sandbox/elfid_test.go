package sandbox

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os"
	"testing"
)

// testELF builds a 64-bit little-endian ELF file with the given program
// headers' contents: each note is one PT_NOTE segment, interp a PT_INTERP.
func testELF(interp string, notes ...[]byte) []byte {
	le := binary.LittleEndian
	type seg struct {
		typ  uint32
		data []byte
	}
	var segs []seg
	if interp != "" {
		segs = append(segs, seg{ptInterp, append([]byte(interp), 0)})
	}
	for _, n := range notes {
		segs = append(segs, seg{ptNote, n})
	}
	h := make([]byte, elfHeaderSize)
	copy(h, "\x7fELF\x02\x01\x01")
	le.PutUint16(h[0x12:], emX8664)
	le.PutUint64(h[0x20:], elfHeaderSize)
	le.PutUint16(h[0x36:], elfPhdrSize)
	le.PutUint16(h[0x38:], uint16(len(segs)))
	ph := make([]byte, len(segs)*elfPhdrSize)
	off := uint64(elfHeaderSize + len(ph))
	var body []byte
	for i, s := range segs {
		p := ph[i*elfPhdrSize:]
		le.PutUint32(p, s.typ)
		le.PutUint64(p[8:], off+uint64(len(body)))
		le.PutUint64(p[0x20:], uint64(len(s.data)))
		le.PutUint64(p[0x30:], 4)
		body = append(body, s.data...)
	}
	return slicesConcat(h, ph, body)
}

func slicesConcat(b ...[]byte) []byte { return bytes.Join(b, nil) }

// testNote is one ELF note (4-byte padding).
func testNote(name string, typ uint32, desc []byte) []byte {
	le := binary.LittleEndian
	pad := func(b []byte) []byte { return append(b, make([]byte, (4-len(b)%4)%4)...) }
	n := make([]byte, 12)
	le.PutUint32(n, uint32(len(name)+1))
	le.PutUint32(n[4:], uint32(len(desc)))
	le.PutUint32(n[8:], typ)
	return slicesConcat(n, pad(append([]byte(name), 0)), pad(desc))
}

func TestReadELFIdent(t *testing.T) {
	id := []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4}
	tests := []struct {
		name       string
		file       []byte
		build, itp string
		err        bool
	}{
		{"build-id and interpreter", testELF("/lib64/ld-linux-x86-64.so.2", testNote("GNU", ntGNUBuildID, id)), hex.EncodeToString(id), "/lib64/ld-linux-x86-64.so.2", false},
		{"build-id after another note", testELF("", slicesConcat(testNote("GNU", 5, []byte{1, 2, 3}), testNote("GNU", ntGNUBuildID, id))), hex.EncodeToString(id), "", false},
		{"other vendor's note", testELF("", testNote("Go", ntGNUBuildID, id)), "", "", false},
		{"no notes", testELF(""), "", "", false},
		{"script", []byte("#!/bin/sh\necho hi\n"), "", "", false},
		{"empty", nil, "", "", false},
		{"truncated note", testELF("", testNote("GNU", ntGNUBuildID, id)[:14]), "", "", false},
		{"class and data bytes patched (the kernel ignores them)", func() []byte {
			f := testELF("/lib/ld.so", testNote("GNU", ntGNUBuildID, id))
			f[4], f[5] = 7, 7
			return f
		}(), hex.EncodeToString(id), "/lib/ld.so", false},
		{"program headers past the end", testELF("", testNote("GNU", ntGNUBuildID, id))[:elfHeaderSize+10], "", "", true},
	}
	goNote := testELF("", testNote("Go\x00", ntGoBuildID, id))
	if got, err := ReadELFIdent(bytes.NewReader(goNote)); err != nil || got.GoBuildID != hex.EncodeToString(id) || got.BuildID != "" {
		t.Errorf("Go build ID: %+v %v", got, err)
	}
	other := testELF("/lib/ld.so")
	other[0x12] = 3 // EM_386
	if got, err := ReadELFIdent(bytes.NewReader(other)); err != nil || !got.Unclassified || got.Interp != "" {
		t.Errorf("another machine: %+v %v, want unclassified", got, err)
	}
	for _, tc := range tests {
		got, err := ReadELFIdent(bytes.NewReader(tc.file))
		if (err != nil) != tc.err || got.BuildID != tc.build || got.Interp != tc.itp {
			t.Errorf("%s: %+v, %v; want %q %q err %v", tc.name, got, err, tc.build, tc.itp, tc.err)
		}
	}
}

// TestReadELFIdentHost: on the host's own programs the reader agrees with
// debug/elf (the build-id note's content, the interpreter).
func TestReadELFIdentHost(t *testing.T) {
	for _, p := range []string{"/bin/sh", "/usr/bin/true", "/lib64/ld-linux-x86-64.so.2"} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got, err := ReadELFIdent(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ef, err := elf.NewFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if s := ef.Section(".note.gnu.build-id"); s != nil {
			b, _ := s.Data()
			want = hex.EncodeToString(b[16:]) // namesz, descsz, type, "GNU\0"
		}
		interp := ""
		for _, prog := range ef.Progs {
			if prog.Type == elf.PT_INTERP {
				b := make([]byte, prog.Filesz)
				_, _ = prog.ReadAt(b, 0)
				interp = string(bytes.TrimRight(b, "\x00"))
			}
		}
		if got.BuildID != want || got.Interp != interp || (p != "/lib64/ld-linux-x86-64.so.2" && (want == "" || interp == "")) {
			t.Errorf("%s: %+v, want build-id %q interp %q", p, got, want, interp)
		}
	}
}

// FuzzReadELFIdent: any bytes are read without panic and without reading
// more than the limits allow.
func FuzzReadELFIdent(f *testing.F) {
	f.Add(testELF("/lib/ld.so", testNote("GNU", ntGNUBuildID, []byte{1, 2, 3, 4})))
	f.Add(testELF("", testNote("GNU", 5, nil), testNote("GNU", ntGNUBuildID, []byte{9})))
	f.Add([]byte("\x7fELF\x02\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := ReadELFIdent(bytes.NewReader(b))
		if err == nil && len(id.BuildID) > 2*len(b) {
			t.Fatalf("build-id longer than the file: %+v", id)
		}
	})
}
