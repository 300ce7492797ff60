package auditlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
)

// syncBuffer collects what a Log says on stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is a key folder and a log path in a temp folder.
type env struct {
	dir, state, path string
	key              *Key
	stderr           *syncBuffer
}

func newEnv(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{dir: dir, state: filepath.Join(dir, "state"), path: filepath.Join(dir, "log", "audit.jsonl"), stderr: &syncBuffer{}}
	var err error
	if e.key, err = LoadOrCreateKey(e.state); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) open(t testing.TB, mod func(*Options)) *Log {
	t.Helper()
	opts := Options{Path: e.path, Key: e.key, StateDir: e.state, Log: log.New(e.stderr, "", 0)}
	if mod != nil {
		mod(&opts)
	}
	l, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (e *env) verify(t testing.TB, path string) Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kept, _ := os.ReadFile(KeptCheckpointFile(e.state, e.path))
	rep, err := Verify(f, VerifyOptions{Verifier: e.key.verifier(), Kept: kept})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func record(i int) []byte {
	return []byte(fmt.Sprintf(`{"event":"decision","tool":"read_file","n":%d}`, i))
}

func appendN(t testing.TB, l *Log, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if err := l.Append(record(i)); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
}

func lines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func decode(t testing.TB, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return m
}

// TestChainAcrossRestarts: seq and prev continue over a restart; every file
// starts with a checkpoint, a clean shutdown ends with one, and the whole
// log verifies.
func TestChainAcrossRestarts(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, nil)
	appendN(t, l, 0, 3)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open(t, nil)
	appendN(t, l, 3, 2)
	l.Close()
	ls := lines(t, e.path)
	// checkpoint, 3 records, checkpoint, 2 records, checkpoint
	if len(ls) != 8 {
		t.Fatalf("%d lines:\n%s", len(ls), strings.Join(ls, "\n"))
	}
	for i, line := range ls {
		m := decode(t, line)
		if m["seq"] != float64(i) {
			t.Fatalf("line %d has seq %v", i+1, m["seq"])
		}
		if want := i == 0 || i == 4 || i == 7; (m["event"] == "checkpoint") != want {
			t.Fatalf("line %d: event %v", i+1, m["event"])
		}
	}
	rep := e.verify(t, e.path)
	if rep.Bad != nil || rep.Checkpoints != 3 || rep.Unsigned != 0 || rep.Next != 8 {
		t.Fatalf("report %+v bad %v", rep, rep.Bad)
	}
}

// TestCheckpointEveryN: a checkpoint follows every N records.
func TestCheckpointEveryN(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, func(o *Options) { o.CheckpointEvery = 4 })
	appendN(t, l, 0, 9)
	rep := e.verify(t, e.path)
	// opening checkpoint, 4, cp, 4, cp, 1
	if rep.Bad != nil || rep.Checkpoints != 3 || rep.Unsigned != 1 {
		t.Fatalf("report %+v bad %v", rep, rep.Bad)
	}
	l.Close()
}

// TestLongFieldIsBounded: a record over the bound keeps a prefix of its
// longest field with the field's length and hash.
func TestLongFieldIsBounded(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, nil)
	long := strings.Repeat("a/", 2<<20)
	body, _ := json.Marshal(map[string]any{"event": "decision", "target": map[string]string{"path": long, "tool_name": "read_file"}})
	if err := l.Append(body); err != nil {
		t.Fatal(err)
	}
	l.Close()
	ls := lines(t, e.path)
	rec := ls[1]
	if len(rec) > DefaultMaxRecordBytes {
		t.Fatalf("record is %d bytes", len(rec))
	}
	m := decode(t, rec)
	path := m["target"].(map[string]any)["path"].(string)
	if !strings.HasPrefix(path, "a/a/") || !strings.Contains(path, fmt.Sprintf("[%d bytes, sha256:", len(long))) {
		t.Fatalf("bounded path %q", path)
	}
	if m["target"].(map[string]any)["tool_name"] != "read_file" {
		t.Fatalf("short field changed: %v", m["target"])
	}
	if rep := e.verify(t, e.path); rep.Bad != nil {
		t.Fatal(rep.Bad)
	}
}

// TestTwoWritersShareOneChain: two servers on one file (the default path)
// keep one chain.
func TestTwoWritersShareOneChain(t *testing.T) {
	e := newEnv(t)
	a := e.open(t, nil)
	b := e.open(t, nil)
	var wg sync.WaitGroup
	for _, l := range []*Log{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			appendN(t, l, 0, 200)
		}()
	}
	wg.Wait()
	a.Close()
	b.Close()
	rep := e.verify(t, e.path)
	if rep.Bad != nil || rep.Records != 400+3 {
		t.Fatalf("report %+v bad %v", rep, rep.Bad)
	}
}

// TestKeyFileModes: a key others may read is refused with the fix.
func TestKeyFileModes(t *testing.T) {
	e := newEnv(t)
	keyPath := filepath.Join(e.state, privateKeyFile)
	if fi, _ := os.Stat(keyPath); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v", fi.Mode())
	}
	again, err := LoadOrCreateKey(e.state)
	if err != nil || again.Verifier() != e.key.Verifier() {
		t.Fatalf("reloaded key %v: %v", again, err)
	}
	os.Chmod(keyPath, 0o644)
	if _, err := LoadOrCreateKey(e.state); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key: %v", err)
	}
	pub, err := LoadVerifier(e.state)
	if err != nil || pub != e.key.Verifier() {
		t.Fatalf("audit.pub %q: %v", pub, err)
	}
}

// TestCheckpointEveryInterval: records waiting for a checkpoint get one
// within the interval, with no further record written.
func TestCheckpointEveryInterval(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, func(o *Options) { o.CheckpointInterval = 20 * time.Millisecond })
	defer l.Close()
	appendN(t, l, 0, 2)
	deadline := time.Now().Add(5 * time.Second)
	for rep := e.verify(t, e.path); rep.Bad != nil || rep.Unsigned != 0; rep = e.verify(t, e.path) {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint within the interval: %+v", e.verify(t, e.path))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if rep := e.verify(t, e.path); rep.Checkpoints != 2 || rep.Bad != nil {
		t.Fatalf("%+v %v", rep, rep.Bad)
	}
}

// TestSnapshot: a reader sees the log as it stood when it opened it, whole
// records only, while the server goes on appending.
func TestSnapshot(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, nil)
	defer l.Close()
	appendN(t, l, 0, 3)
	snap, err := Snapshot(e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	appendN(t, l, 3, 5)
	rep, err := Verify(snap, VerifyOptions{Verifier: e.key.verifier()})
	if err != nil || rep.Bad != nil || rep.Records != 4 || rep.Unsigned != 3 {
		t.Fatalf("%+v %v %v", rep, rep.Bad, err)
	}
}

// TestFollowOtherWriters: servers taking turns on one file, with
// checkpoints among the other's records, each follow the other's records
// from where they stand and keep one chain that verifies.
func TestFollowOtherWriters(t *testing.T) {
	e := newEnv(t)
	every := func(o *Options) { o.CheckpointEvery = 3 }
	a, b := e.open(t, every), e.open(t, every)
	for i := range 20 {
		appendN(t, a, 2*i, 1)
		appendN(t, b, 2*i+1, i%3) // none, one, or two records
	}
	a.Close()
	b.Close()
	if rep := e.verify(t, e.path); rep.Bad != nil {
		t.Fatalf("report %+v bad %v", rep, rep.Bad)
	}
}

// TestFollowRefusesForeignRecords: a line another program appends that
// does not continue the chain (a record copied from earlier, one with the
// next seq but a wrong prev) is not taken for the head: the append fails,
// and nothing is written after it.
func TestFollowRefusesForeignRecords(t *testing.T) {
	for name, forge := range map[string]func(last string) string{
		"a copy of the last record": func(last string) string { return last },
		"the next seq, a wrong prev": func(last string) string {
			var m map[string]any
			json.Unmarshal([]byte(last), &m)
			return fmt.Sprintf(`{"seq":%d,"prev":"%s","event":"decision"}`, int(m["seq"].(float64))+1, strings.Repeat("0", 64))
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			a := e.open(t, nil)
			defer a.Close()
			appendN(t, a, 0, 3)
			before := lines(t, e.path)
			f, err := os.OpenFile(e.path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(forge(before[len(before)-1]) + "\n")
			f.Close()
			if err := a.Append(record(9)); err == nil {
				t.Fatalf("an append after a foreign record succeeded: %q", lines(t, e.path))
			}
			if got := lines(t, e.path); len(got) != len(before)+1 {
				t.Fatalf("the file has %d lines, want %d", len(got), len(before)+1)
			}
		})
	}
	// A checkpoint another key signed, over another file's records (so its
	// prev is wrong here): follow refuses it, and the reload of the file's
	// head must not adopt it either.
	t.Run("another key's checkpoint", func(t *testing.T) {
		e := newEnv(t)
		a := e.open(t, nil)
		defer a.Close()
		appendN(t, a, 0, 3)
		o := newEnv(t)
		b := o.open(t, nil)
		defer b.Close()
		appendN(t, b, 100, 3)
		b.mu.Lock()
		forged, err := b.signedLine()
		b.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		before := lines(t, e.path)
		f, err := os.OpenFile(e.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(append(forged, '\n'))
		f.Close()
		if err := a.Append(record(9)); err == nil {
			t.Fatalf("an append after another key's checkpoint succeeded: %d lines, %d before", len(lines(t, e.path)), len(before))
		}
	})
}

// TestHashesAreRFC6962: the log's own leaf and node hashes are the
// library's RFC 6962 hashes (verify and proofs use the library's).
func TestHashesAreRFC6962(t *testing.T) {
	for _, n := range []int{0, 1, 55, 56, 63, 64, 65, 400, 4096} {
		line := bytes.Repeat([]byte{byte(n)}, n)
		if got, want := leafHash(line), rfc6962.DefaultHasher.HashLeaf(line); !bytes.Equal(got, want) {
			t.Errorf("leaf of %d bytes: %x, want %x", n, got, want)
		}
		l, r := rfc6962.DefaultHasher.HashLeaf(line), rfc6962.DefaultHasher.HashLeaf(append(line, 'x'))
		if got, want := hashChildren(l, r), rfc6962.DefaultHasher.HashChildren(l, r); !bytes.Equal(got, want) {
			t.Errorf("node over %d bytes: %x, want %x", n, got, want)
		}
	}
}

// TestLookAhead: a writer that saw another's records walks the next ones
// before taking the lock, and takes that walk under the lock only when the
// file still holds those bytes; one changed meanwhile is checked again (and
// here refused, as it no longer continues the chain).
func TestLookAhead(t *testing.T) {
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprintf("changed=%v", changed), func(t *testing.T) {
			e := newEnv(t)
			a, b := e.open(t, nil), e.open(t, nil)
			defer a.Close()
			defer b.Close()
			appendN(t, a, 0, 1)
			appendN(t, b, 1, 1) // b sees a's record: it looks ahead from now on
			appendN(t, a, 2, 2)
			b.mu.Lock()
			defer b.mu.Unlock()
			b.lookAhead()
			if b.pre.walked != 2 {
				t.Fatalf("looked ahead over %d records, want 2", b.pre.walked)
			}
			if changed {
				// The last record, same length, its prev altered.
				data, err := os.ReadFile(e.path)
				if err != nil {
					t.Fatal(err)
				}
				last := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
				at := last + bytes.Index(data[last:], []byte(`"prev":"`)) + len(`"prev":"`)
				forged := []byte{'0'}
				if data[at] == '0' {
					forged[0] = '1'
				}
				f, err := os.OpenFile(e.path, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, err = f.WriteAt(forged, int64(at))
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			err := b.ensure()
			if err == nil {
				b.unlock()
			}
			if changed && err == nil {
				t.Fatal("the walk made before the lock was taken over bytes that changed since")
			}
			if !changed && (err != nil || b.h.seq != a.h.seq) {
				t.Fatalf("ensure: %v; head at seq %d, the other writer's at %d", err, b.h.seq, a.h.seq)
			}
		})
	}
}

// TestChainedAgainWhenTheHeadMoved: records chained before the lock
// after the head expected then are chained again when another writer
// appended while this one waited for the lock, so the chain verifies.
func TestChainedAgainWhenTheHeadMoved(t *testing.T) {
	e := newEnv(t)
	a, b := e.open(t, nil), e.open(t, nil)
	appendN(t, a, 0, 1)
	appendN(t, b, 1, 1)
	a.mu.Lock()
	if err := a.ensure(); err != nil { // a holds the file lock
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Append(record(2)) }() // chains after a's head of now, then waits
	time.Sleep(50 * time.Millisecond)
	err := a.append([][]byte{record(3)}) // moves the head, and unlocks
	a.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a.Close()
	b.Close()
	if rep := e.verify(t, e.path); rep.Bad != nil || rep.Records != 4+3 {
		t.Fatalf("report %+v bad %v", rep, rep.Bad)
	}
}

// TestKeyMadeOnceAtOnce: servers starting together on a fresh state folder
// all get the one key (none reads a key file still being written), and no
// temporary file is left.
func TestKeyMadeOnceAtOnce(t *testing.T) {
	for range 30 {
		dir := filepath.Join(t.TempDir(), "state")
		const n = 6
		keys, errs := make([]string, n), make([]error, n)
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				k, err := LoadOrCreateKey(dir)
				if errs[i] = err; err == nil {
					keys[i] = k.Verifier()
				}
			}()
		}
		start.Done()
		wg.Wait()
		for i := range n {
			if errs[i] != nil || keys[i] != keys[0] {
				t.Fatalf("server %d: key %q (the first got %q): %v", i, keys[i], keys[0], errs[i])
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != privateKeyFile && e.Name() != publicKeyFile {
				t.Fatalf("left in the state folder: %s", e.Name())
			}
		}
	}
}
