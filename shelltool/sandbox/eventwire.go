//go:build linux

package sandbox

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// The exec gate channel carries one frame per event, helper to server: a
// 4-byte length, then the event's fields in a fixed order (integers as
// 8 bytes, a boolean as one byte 0 or 1, each string as a 4-byte length
// and its bytes, argv, env and env_unset each as a 4-byte count and its
// strings, then the two pipes and arg_pipes as a count and its integers,
// then git_changed as a count and its strings),
// all in the
// machine's byte order (both ends are the same binary on the same
// machine). It replaced one JSON line per event: the helper encoded it
// and the server decoded it by reflection on every exec (~20 µs of CPU
// between them). The verdict comes back as "y\n" or "n\n".
//
// decodeEvent is the one reading of a frame: it refuses anything but
// exactly the fields (no bytes left over, a boolean other than 0 or 1,
// a length past the end, text that is not valid UTF-8; the helper sends
// every string through validText), and a refused frame is a refused
// program.

// appendEvent appends ev's frame to b.
func appendEvent(b []byte, ev *ExecEvent) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	for _, n := range []uint64{uint64(ev.PID), ev.Dev, ev.Ino, uint64(ev.Size), ev.InterpDev, ev.InterpIno,
		ev.Exec, ev.PrevExec, uint64(ev.PPID), ev.ParentExec} {
		b = binary.NativeEndian.AppendUint64(b, n)
	}
	if ev.WrittenExe {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	for _, s := range []string{ev.Exe, ev.ExecPath, ev.Cwd, ev.Written, ev.BuildID, ev.GoBuildID, ev.SHA256, ev.Problem, ev.ExecTarget, ev.StdinFile} {
		b = appendWireString(b, s)
	}
	for _, list := range [][]string{ev.Argv, ev.Env, ev.EnvUnset} {
		b = binary.NativeEndian.AppendUint32(b, uint32(len(list)))
		for _, a := range list {
			b = appendWireString(b, a)
		}
	}
	b = binary.NativeEndian.AppendUint64(b, ev.StdinPipe)
	b = binary.NativeEndian.AppendUint64(b, ev.StdoutPipe)
	b = binary.NativeEndian.AppendUint32(b, uint32(len(ev.ArgPipes)))
	for _, p := range ev.ArgPipes {
		b = binary.NativeEndian.AppendUint64(b, p)
	}
	b = binary.NativeEndian.AppendUint32(b, uint32(len(ev.GitChanged)))
	for _, d := range ev.GitChanged {
		b = appendWireString(b, d)
	}
	binary.NativeEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// AppendEventKey appends what identifies ev but its process, pipes and
// changed git directories (its frame, with the PID, lineage, pipes and
// those zero): two events with the same key are the same program, run
// with the same argv from the same folder, as far as the gate can tell.
func AppendEventKey(b []byte, ev *ExecEvent) []byte {
	k := *ev
	k.PID, k.Exec, k.PrevExec, k.PPID, k.ParentExec = 0, 0, 0, 0, 0
	k.StdinPipe, k.StdoutPipe, k.ArgPipes, k.GitChanged = 0, 0, nil, nil
	return appendEvent(b, &k)
}

func appendWireString(b []byte, s string) []byte {
	b = binary.NativeEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

var errFrameTooLong = errors.New("sandbox: gate event too long")

// readFrame reads one frame's payload (of at most max bytes) into buf
// (reused when large enough). A longer frame is skipped whole and reported
// as errFrameTooLong, so the next one is read in step.
func readFrame(r *bufio.Reader, max int, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.NativeEndian.Uint32(hdr[:]))
	if n > max {
		if _, err := r.Discard(n); err != nil {
			return nil, err
		}
		return nil, errFrameTooLong
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// decodeEvent reads a frame's payload (see appendEvent).
func decodeEvent(p []byte) (ExecEvent, error) {
	var ev ExecEvent
	d := wireDecoder{p: p}
	ev.PID = int(int64(d.uint64()))
	ev.Dev, ev.Ino = d.uint64(), d.uint64()
	ev.Size = int64(d.uint64())
	ev.InterpDev, ev.InterpIno = d.uint64(), d.uint64()
	ev.Exec, ev.PrevExec = d.uint64(), d.uint64()
	ev.PPID = int(int64(d.uint64()))
	ev.ParentExec = d.uint64()
	switch d.byte() {
	case 0:
	case 1:
		ev.WrittenExe = true
	default:
		d.fail("written_exe is not 0 or 1")
	}
	for _, s := range []*string{&ev.Exe, &ev.ExecPath, &ev.Cwd, &ev.Written, &ev.BuildID, &ev.GoBuildID, &ev.SHA256, &ev.Problem, &ev.ExecTarget, &ev.StdinFile} {
		*s = d.string()
	}
	ev.Argv, ev.Env, ev.EnvUnset = d.strings("argv"), d.strings("env"), d.strings("env_unset")
	ev.StdinPipe, ev.StdoutPipe = d.uint64(), d.uint64()
	ev.ArgPipes = d.uint64s("arg_pipes")
	ev.GitChanged = d.strings("git_changed")
	if d.err == nil && len(d.p) > 0 {
		d.fail("bytes after the event")
	}
	if d.err != nil {
		return ExecEvent{}, d.err
	}
	return ev, nil
}

// wireDecoder takes fields off the front of p; after the first error every
// field is zero and err says what was wrong.
type wireDecoder struct {
	p   []byte
	err error
}

func (d *wireDecoder) fail(msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("sandbox: gate event: %s", msg)
	}
	d.p = nil
}

func (d *wireDecoder) take(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.p)) {
		d.fail("field past the end")
		return nil
	}
	b := d.p[:n]
	d.p = d.p[n:]
	return b
}

func (d *wireDecoder) uint64() uint64 {
	if b := d.take(8); b != nil {
		return binary.NativeEndian.Uint64(b)
	}
	return 0
}

func (d *wireDecoder) uint32() uint32 {
	if b := d.take(4); b != nil {
		return binary.NativeEndian.Uint32(b)
	}
	return 0
}

func (d *wireDecoder) byte() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

// strings reads a count and that many strings (nil for none).
func (d *wireDecoder) strings(what string) []string {
	n := d.uint32()
	if n == 0 || d.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(d.p)/4) { // each takes 4 bytes at least
		d.fail(what + " count past the end")
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string()
	}
	return out
}

// uint64s reads a count and that many integers (nil for none).
func (d *wireDecoder) uint64s(what string) []uint64 {
	n := d.uint32()
	if n == 0 || d.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(d.p)/8) {
		d.fail(what + " count past the end")
		return nil
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = d.uint64()
	}
	return out
}

func (d *wireDecoder) string() string {
	n := d.uint32()
	b := d.take(uint64(n))
	if !utf8.Valid(b) {
		d.fail("text is not valid UTF-8")
		return ""
	}
	return string(b)
}
