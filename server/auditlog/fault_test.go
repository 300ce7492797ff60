package auditlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// firstSeq is the seq of a file's first record.
func firstSeq(t *testing.T, path string) float64 {
	t.Helper()
	return decode(t, lines(t, path)[0])["seq"].(float64)
}

// TestRemovedRenamedReplaced: a log removed or renamed under the server is
// reopened at its path and the chain goes on in the new file; a directory
// in its place refuses every record (said once on stderr) until the path
// is a file again.
func TestRemovedRenamedReplaced(t *testing.T) {
	t.Run("removed", func(t *testing.T) {
		e := newEnv(t)
		l := e.open(t, nil)
		defer l.Close()
		appendN(t, l, 0, 2)
		os.Remove(e.path)
		appendN(t, l, 2, 1)
		ls := lines(t, e.path)
		if len(ls) != 2 || firstSeq(t, e.path) != 3 || !strings.Contains(ls[1], `"n":2`) {
			t.Fatalf("new file:\n%s", strings.Join(ls, "\n"))
		}
		if rep := e.verify(t, e.path); rep.Bad != nil {
			t.Fatal(rep.Bad)
		}
	})
	t.Run("renamed (rotation)", func(t *testing.T) {
		e := newEnv(t)
		l := e.open(t, nil)
		appendN(t, l, 0, 3)
		os.Rename(e.path, e.path+".1")
		appendN(t, l, 3, 2)
		l.Close()
		if n := len(lines(t, e.path+".1")); n != 4 {
			t.Fatalf("rotated file has %d lines", n)
		}
		if firstSeq(t, e.path) != 4 {
			t.Fatalf("new file starts at %v", firstSeq(t, e.path))
		}
		for _, p := range []string{e.path + ".1", e.path} {
			f, _ := os.Open(p)
			rep, err := Verify(f, VerifyOptions{Verifier: e.key.verifier()})
			f.Close()
			if err != nil || rep.Bad != nil {
				t.Fatalf("%s: %v %v", p, err, rep.Bad)
			}
		}
	})
	t.Run("replaced by a file renamed over it", func(t *testing.T) {
		e := newEnv(t)
		l := e.open(t, nil)
		defer l.Close()
		appendN(t, l, 0, 2)
		if err := os.WriteFile(e.path+".new", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(e.path+".new", e.path); err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 2, 1)
		ls := lines(t, e.path)
		if len(ls) != 2 || firstSeq(t, e.path) != 3 || !strings.Contains(ls[1], `"n":2`) {
			t.Fatalf("new file:\n%s", strings.Join(ls, "\n"))
		}
	})
	t.Run("reopen (SIGHUP) after a rename", func(t *testing.T) {
		e := newEnv(t)
		l := e.open(t, nil)
		defer l.Close()
		appendN(t, l, 0, 1)
		os.Rename(e.path, e.path+".1")
		if err := l.Reopen(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(e.path); err != nil {
			t.Fatalf("reopen made no new file: %v", err)
		}
	})
	t.Run("replaced by a directory", func(t *testing.T) {
		e := newEnv(t)
		l := e.open(t, nil)
		defer l.Close()
		appendN(t, l, 0, 1)
		os.Remove(e.path)
		os.Mkdir(e.path, 0o700)
		for i := 0; i < 3; i++ {
			err := l.Append(record(10 + i))
			if err == nil || !strings.Contains(err.Error(), "directory") {
				t.Fatalf("append into a directory: %v", err)
			}
		}
		if n := strings.Count(e.stderr.String(), "cannot be written"); n != 1 {
			t.Fatalf("stderr said it %d times:\n%s", n, e.stderr)
		}
		os.Remove(e.path)
		appendN(t, l, 20, 1)
		if !strings.Contains(e.stderr.String(), "written again (3 records were refused") {
			t.Fatalf("stderr: %s", e.stderr)
		}
		if rep := e.verify(t, e.path); rep.Bad != nil || firstSeq(t, e.path) != 2 {
			t.Fatalf("%v, first seq %v", rep.Bad, firstSeq(t, e.path))
		}
	})
}

// mountTiny mounts a tmpfs of size bytes at dir (unmounted at the end).
func mountTiny(t *testing.T, dir string, size string) {
	t.Helper()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and a tmpfs cannot be mounted: %v", err)
		}
		t.Skipf("cannot mount a tmpfs here (%v); run as root to test a filling disk", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// TestFullDisk: on a filesystem that fills, every record either lands
// whole or not at all (the append fails, so the action would not run), the
// file holds no torn line, and records are written again once space
// returns.
func TestFullDisk(t *testing.T) {
	e := newEnv(t)
	mnt := filepath.Join(e.dir, "tiny")
	os.Mkdir(mnt, 0o700)
	mountTiny(t, mnt, "64k")
	e.path = filepath.Join(mnt, "audit.jsonl")
	l := e.open(t, nil)
	defer l.Close()
	// Fill the rest with a file, leaving a few hundred bytes.
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 512)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	var written, refused int
	var lastErr error
	for i := 0; i < 200 && refused < 5; i++ {
		before, _ := os.Stat(e.path)
		err := l.Append([]byte(`{"event":"decision","tool":"read_file","pad":"` + strings.Repeat("p", 300) + `"}`))
		after, _ := os.Stat(e.path)
		if err != nil {
			refused++
			lastErr = err
			if after.Size() != before.Size() {
				t.Fatalf("a refused record left %d bytes", after.Size()-before.Size())
			}
			continue
		}
		written++
	}
	if refused == 0 || !errors.Is(lastErr, syscall.ENOSPC) {
		t.Fatalf("the disk never filled: %d written, last error %v", written, lastErr)
	}
	data, _ := os.ReadFile(e.path)
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("torn tail: %q", data[max(0, len(data)-40):])
	}
	if rep := e.verify(t, e.path); rep.Bad != nil {
		t.Fatalf("after the disk filled: %v", rep.Bad)
	}
	if n := strings.Count(e.stderr.String(), "cannot be written"); n != 1 {
		t.Fatalf("stderr said it %d times:\n%s", n, e.stderr)
	}
	os.Remove(filler)
	appendN(t, l, 0, 3)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := e.verify(t, e.path)
	if rep.Bad != nil || rep.Unsigned != 0 || rep.Records != written+1+3+1 {
		t.Fatalf("after space returned: %+v %v (written %d)", rep, rep.Bad, written)
	}
}

// TestUnchainedFileMovedAside: a log written before chaining (or ending in
// lines another program appended) is moved aside whole, and a new chained
// file starts; the chain continues from the kept checkpoint.
func TestUnchainedFileMovedAside(t *testing.T) {
	e := newEnv(t)
	os.MkdirAll(filepath.Dir(e.path), 0o700)
	legacy := "{\"time\":\"2026-11-30T10:00:00Z\",\"event\":\"decision\"}\n{\"event\":\"outcome\"}\n"
	os.WriteFile(e.path, []byte(legacy), 0o600)
	l := e.open(t, nil)
	appendN(t, l, 0, 2)
	matches, _ := filepath.Glob(e.path + ".unchained-*")
	if len(matches) != 1 {
		t.Fatalf("moved aside: %v", matches)
	}
	if b, _ := os.ReadFile(matches[0]); string(b) != legacy {
		t.Fatalf("the old file changed: %q", b)
	}
	if !strings.Contains(e.stderr.String(), "moved to") {
		t.Fatalf("stderr: %s", e.stderr)
	}
	// Someone appends a plain line while the server runs.
	f, _ := os.OpenFile(e.path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("{\"not\":\"chained\"}\n")
	f.Close()
	appendN(t, l, 2, 1)
	l.Close()
	if matches, _ = filepath.Glob(e.path + ".unchained-*"); len(matches) != 2 {
		t.Fatalf("moved aside: %v", matches)
	}
	rep := e.verify(t, e.path)
	if rep.Bad != nil || rep.First == 0 {
		t.Fatalf("new file: %+v %v", rep, rep.Bad)
	}
}

// TestTornTailAtStart: a last line without its newline (a crash in the
// middle of a write) is cut at start, said on stderr, and the chain goes
// on; a file that is nothing but a torn line starts over from the kept
// checkpoint.
func TestTornTailAtStart(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, nil)
	appendN(t, l, 0, 2)
	l.Close()
	f, _ := os.OpenFile(e.path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":4,"prev":"ab`)
	f.Close()
	l = e.open(t, nil)
	appendN(t, l, 2, 1)
	l.Close()
	if rep := e.verify(t, e.path); rep.Bad != nil || rep.Records != 6 {
		t.Fatalf("%+v %v", rep, rep.Bad)
	}
	if !strings.Contains(e.stderr.String(), "cut a torn last record") {
		t.Fatalf("stderr: %s", e.stderr)
	}
	os.WriteFile(e.path, []byte(`{"seq":9,"pr`), 0o600)
	l = e.open(t, nil)
	appendN(t, l, 3, 1)
	l.Close()
	if rep := e.verify(t, e.path); rep.Bad != nil || rep.First != 6 {
		t.Fatalf("%+v %v", rep, rep.Bad)
	}
}
