//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func wireEvents() []ExecEvent {
	return []ExecEvent{
		{},
		{PID: 12, Exec: 7, PrevExec: 3, PPID: 2, ParentExec: 1 << 50, Exe: "/usr/bin/true", Dev: 2049, Ino: 1 << 40, Argv: []string{"true"}, ExecPath: "/bin/true", Cwd: "/w", Size: 30000},
		{PID: -1, Exe: "/w/x", Argv: []string{"", "a b", "", "ünï\\x00", ""}, ExecPath: "./x", Cwd: "/w", Written: "/w/x", WrittenExe: true,
			Size: -5, BuildID: "abcd", GoBuildID: "ef01", SHA256: strings.Repeat("0", 64), InterpDev: 7, InterpIno: 9, Problem: "argv unreadable: x"},
		{Exe: "/memfd:x (deleted)", Problem: "executable is a memfd (no file on disk)"},
		{Exe: "/usr/bin/npm", Argv: []string{"npm", "i", "x"}, Env: []string{"npm_config_registry=http://127.0.0.1:9/", "PIP_INDEX_URL="}, EnvUnset: []string{"PIP_CONFIG_FILE"}},
		{Exe: "/usr/bin/bash", Argv: []string{"bash", "/dev/fd/63"}, StdinPipe: 77, StdoutPipe: 1 << 50, ArgPipes: []uint64{78, 79}},
		{Argv: []string{strings.Repeat("a", 131071), strings.Repeat("b", 70000)}},
	}
}

// TestEventFrame: every event comes through the channel's frame exactly;
// any prefix of a frame, a byte more, a boolean not 0 or 1, a length past
// the end or invalid UTF-8 is an error.
func TestEventFrame(t *testing.T) {
	for i, ev := range wireEvents() {
		frame := appendEvent(nil, &ev)
		if n := binary.NativeEndian.Uint32(frame); int(n) != len(frame)-4 {
			t.Fatalf("event %d: length %d for %d bytes", i, n, len(frame)-4)
		}
		got, err := decodeEvent(frame[4:])
		if err != nil || !reflect.DeepEqual(got, ev) {
			t.Fatalf("event %d: %+v, %v; want %+v", i, got, err, ev)
		}
		step := 1
		if len(frame) > 4096 {
			step = 997 // a long one: a sample of its prefixes
		}
		for cut := 4; cut < len(frame); cut += step {
			if _, err := decodeEvent(frame[4:cut]); err == nil {
				t.Fatalf("event %d: a prefix of %d of %d bytes decoded", i, cut-4, len(frame)-4)
			}
		}
		if _, err := decodeEvent(frame[4 : len(frame)-1]); err == nil {
			t.Fatalf("event %d: all but its last byte decoded", i)
		}
		if _, err := decodeEvent(append(frame[4:len(frame):len(frame)], 0)); err == nil {
			t.Fatalf("event %d: a byte more decoded", i)
		}
	}
	ev := ExecEvent{Exe: "/x", Argv: []string{"ab"}}
	p := appendEvent(nil, &ev)[4:]
	bad := map[string][]byte{
		"boolean 2":         patch(p, 80, 2),
		"exe length huge":   patch(p, 81, 0xff, 0xff, 0xff, 0x7f),
		"argv count huge":   patch(p, 81+4+2+7*4, 0xff, 0xff, 0xff, 0xff),
		"invalid UTF-8":     patch(p, 81+4, 0xff),
		"invalid UTF-8 arg": patch(p, len(p)-1, 0xc3),
	}
	for name, b := range bad {
		if got, err := decodeEvent(b); err == nil {
			t.Errorf("%s: decoded %+v", name, got)
		}
	}
}

func patch(p []byte, at int, b ...byte) []byte {
	q := bytes.Clone(p)
	copy(q[at:], b)
	return q
}

// TestReadFrame: frames are read in step; one over the limit is skipped
// whole (errFrameTooLong) and the next is read; a cut stream is an error.
func TestReadFrame(t *testing.T) {
	evs := wireEvents()
	var stream []byte
	for i := range evs {
		stream = appendEvent(stream, &evs[i])
	}
	const limit = 100000 // the last event is over it
	r := bufio.NewReaderSize(bytes.NewReader(stream), 16)
	var buf []byte
	for i, ev := range evs {
		frame, err := readFrame(r, limit, buf)
		if i == len(evs)-1 {
			if !errors.Is(err, errFrameTooLong) {
				t.Fatalf("event %d over the limit: %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		buf = frame
		if got, err := decodeEvent(frame); err != nil || !reflect.DeepEqual(got, ev) {
			t.Fatalf("event %d: %+v, %v", i, got, err)
		}
	}
	if _, err := readFrame(r, limit, buf); err != io.EOF {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}
	r = bufio.NewReader(bytes.NewReader(stream[:len(stream)-1]))
	for range evs[:len(evs)-1] {
		if _, err := readFrame(r, maxEventBytes, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := readFrame(r, maxEventBytes, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut frame: %v, want ErrUnexpectedEOF", err)
	}
}

// FuzzDecodeEvent: the frame's reader never panics, and what it accepts is
// exactly one event's frame (encoding it again gives the same bytes); an
// event made of the fuzzer's strings comes through unchanged.
func FuzzDecodeEvent(f *testing.F) {
	for _, ev := range wireEvents() {
		f.Add(appendEvent(nil, &ev)[4:], "", "")
	}
	f.Add([]byte{}, "/usr/bin/\xff", "a\x00b")
	f.Fuzz(func(t *testing.T, p []byte, s1, s2 string) {
		if ev, err := decodeEvent(p); err == nil {
			if again := appendEvent(nil, &ev)[4:]; !bytes.Equal(again, p) {
				t.Fatalf("decoded %+v from %x, which encodes as %x", ev, p, again)
			}
		}
		ev := ExecEvent{PID: len(p), Exe: validText(s1), Argv: []string{validText(s2), validText(s1)}, Problem: validText(s2), WrittenExe: len(s1) > len(s2),
			Env: []string{validText(s1)}, EnvUnset: []string{validText(s2)}}
		got, err := decodeEvent(appendEvent(nil, &ev)[4:])
		if err != nil || !reflect.DeepEqual(got, ev) {
			t.Fatalf("%+v came back as %+v, %v", ev, got, err)
		}
	})
}

// BenchmarkEventFrame: the helper's encoding and the server's decoding of
// a usual event (JSON took ~3 µs and ~13 µs here).
func BenchmarkEventFrame(b *testing.B) {
	ev := wireEvents()[1]
	var buf []byte
	for b.Loop() {
		buf = appendEvent(buf[:0], &ev)
		if _, err := decodeEvent(buf[4:]); err != nil {
			b.Fatal(err)
		}
	}
}
