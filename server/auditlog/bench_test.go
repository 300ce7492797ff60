package auditlog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// decisionBody is a typical decision record (~330 bytes).
var decisionBody = []byte(`{"time":"2026-12-01T14:00:00.123456789Z","event":"decision","call":"c12","session":"stdio","tool":"read_file","capability":"workspace.files.read","target":{"tool_name":"read_file","path":"/home/me/project/src/server/handler.go"},"risk_level":"low","effect":"allow","reason_code":"matched_allow","rule_id":"interactive-dev/workspace-read"}`)

// BenchmarkChainAndCheckpoint is what chaining and checkpointing add to one
// record: seq and prev, the two hashes, the tree, and a signed checkpoint
// every DefaultCheckpointEvery records (amortised). No I/O.
func BenchmarkChainAndCheckpoint(b *testing.B) {
	e := newEnv(b)
	l := &Log{opts: Options{Key: e.key}, h: newHead()}
	bodies := [][]byte{decisionBody}
	for b.Loop() {
		_, leaves, next := build(l.h.seq, l.h.prev, bodies)
		l.advance(leaves, next)
		if l.unsigned++; l.unsigned >= DefaultCheckpointEvery {
			line, err := l.signedLine()
			if err != nil {
				b.Fatal(err)
			}
			l.advance([][]byte{leafHash(line)}, [32]byte{})
			l.unsigned = 0
		}
	}
}

// BenchmarkAppend is one whole record: the path check, the lock, the write,
// chaining and checkpoints.
func BenchmarkAppend(b *testing.B) {
	e := newEnv(b)
	l := e.open(b, nil)
	defer l.Close()
	for b.Loop() {
		if err := l.Append(decisionBody); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlainWrite is the write alone, as the log was before chaining.
func BenchmarkPlainWrite(b *testing.B) {
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "plain.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := append(append([]byte(nil), decisionBody...), '\n')
	for b.Loop() {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify100k verifies an untouched log of 100,000 records (the
// target is under 2 s).
func BenchmarkVerify100k(b *testing.B) {
	e := newEnv(b)
	l := e.open(b, nil)
	for i := 0; i < 100_000; i++ {
		if err := l.Append(decisionBody); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	data, err := os.ReadFile(e.path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		rep, err := Verify(bytes.NewReader(data), VerifyOptions{Verifier: e.key.verifier()})
		if err != nil || rep.Bad != nil || rep.Records < 100_000 {
			b.Fatalf("%+v %v %v", rep, rep.Bad, err)
		}
	}
}

// BenchmarkAppendTwoWriters is one append when another server appended to
// the same file just before: the other's record is followed, not the
// records since the last checkpoint read again.
func BenchmarkAppendTwoWriters(b *testing.B) {
	e := newEnv(b)
	ls := [2]*Log{e.open(b, nil), e.open(b, nil)}
	defer ls[0].Close()
	defer ls[1].Close()
	body := record(1)
	i := 0
	for b.Loop() {
		if err := ls[i%2].Append(body); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
