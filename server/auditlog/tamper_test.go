package auditlog

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// writeLog writes n records with a checkpoint every 8 and a clean shutdown:
// lines are seq 0 (opening checkpoint) … and returns the file's lines.
func writeLog(t *testing.T, e *env, n int) []string {
	t.Helper()
	l := e.open(t, func(o *Options) { o.CheckpointEvery = 8 })
	appendN(t, l, 0, n)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return lines(t, e.path)
}

func writeLines(t *testing.T, path string, ls []string, tail string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+tail), 0o600); err != nil {
		t.Fatal(err)
	}
}

// bodyOf is a line without its seq and prev.
func bodyOf(line string) []byte {
	i := strings.Index(line, `"prev":"`) + len(`"prev":"`) + 64 + len(`",`)
	return []byte("{" + line[i:])
}

// rechain rewrites ls[from:] as a forger would: the chain made again and
// every checkpoint signed with key.
func rechain(t *testing.T, ls []string, from int, key *Key) []string {
	t.Helper()
	w := walker{}
	for _, line := range ls[:from] {
		if _, err := w.step([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	forger := &Log{opts: Options{Key: key}, h: w.h}
	out := append([]string(nil), ls[:from]...)
	for _, line := range ls[from:] {
		var next []byte
		if strings.Contains(line, `"event":"checkpoint"`) {
			var err error
			if next, err = forger.signedLine(); err != nil {
				t.Fatal(err)
			}
		} else {
			next = chain(forger.h.seq, forger.h.prev, bodyOf(line))
		}
		if _, err := w.step(next); err != nil {
			t.Fatal(err)
		}
		forger.h = w.h
		out = append(out, string(next))
	}
	return out
}

// TestVerifyNamesTheFirstBadRecord: each way of tampering is caught at the
// first record it touches.
func TestVerifyNamesTheFirstBadRecord(t *testing.T) {
	other := newEnv(t).key
	tests := []struct {
		name    string
		tamper  func(ls []string) ([]string, string) // lines and the file's tail
		keepOff bool                                 // verify without the kept checkpoint
		seq     uint64
		msg     string
	}{
		{"untouched", func(ls []string) ([]string, string) { return ls, "\n" }, false, 0, ""},
		{"one byte changed", func(ls []string) ([]string, string) {
			ls[5] = strings.Replace(ls[5], "read_file", "read_filf", 1)
			return ls, "\n"
		}, false, 5, "changed"},
		{"record deleted", func(ls []string) ([]string, string) {
			return append(ls[:5:5], ls[6:]...), "\n"
		}, false, 5, "record 5 is missing"},
		{"two reordered", func(ls []string) ([]string, string) {
			ls[5], ls[6] = ls[6], ls[5]
			return ls, "\n"
		}, false, 5, "missing"},
		{"tail cut inside a record", func(ls []string) ([]string, string) {
			last := len(ls) - 1
			ls[last] = ls[last][:len(ls[last])/2]
			return ls, ""
		}, false, 21, "torn"},
		{"tail cut at a line (the kept checkpoint shows it)", func(ls []string) ([]string, string) {
			return ls[:len(ls)-3], "\n"
		}, false, 19, "cut off"},
		{"checkpoint forged with another key", func(ls []string) ([]string, string) {
			ls[5] = strings.Replace(ls[5], "read_file", "read_filf", 1)
			return rechain(t, ls, 5, other), "\n"
		}, false, 9, "signature"},
		{"checkpoint forged, kept checkpoint not consulted", func(ls []string) ([]string, string) {
			ls[12] = strings.Replace(ls[12], "read_file", "read_filf", 1)
			return rechain(t, ls, 12, other), "\n"
		}, true, 18, "signature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			// seq 0 checkpoint, 1-8 records, 9 checkpoint, 10-17, 18
			// checkpoint, 19-20, 21 checkpoint at shutdown.
			ls := writeLog(t, e, 18)
			if got := len(ls); got != 22 {
				t.Fatalf("%d lines", got)
			}
			ls, tail := tc.tamper(append([]string(nil), ls...))
			writeLines(t, e.path, ls, tail)
			kept, _ := os.ReadFile(KeptCheckpointFile(e.state, e.path))
			if tc.keepOff {
				kept = nil
			}
			f, _ := os.Open(e.path)
			defer f.Close()
			rep, err := Verify(f, VerifyOptions{Verifier: e.key.verifier(), Kept: kept})
			if err != nil {
				t.Fatal(err)
			}
			if tc.msg == "" {
				if rep.Bad != nil {
					t.Fatalf("untouched log: %v", rep.Bad)
				}
				return
			}
			if rep.Bad == nil {
				t.Fatalf("tampering not found: %+v", rep)
			}
			if rep.Bad.Seq != tc.seq || !strings.Contains(rep.Bad.Msg, tc.msg) {
				t.Fatalf("bad = %v; want record %d, %q", rep.Bad, tc.seq, tc.msg)
			}
		})
	}
}

// TestProofAcrossRotation: a record in a rotated-to file (which starts
// from a checkpoint of the tree before it) is proved against the last
// checkpoint, and the proof checks with only the public key.
func TestProofAcrossRotation(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, func(o *Options) { o.CheckpointEvery = 5 })
	appendN(t, l, 0, 7)
	os.Rename(e.path, e.path+".1")
	appendN(t, l, 7, 11)
	l.Close()
	for _, seq := range []uint64{10, 12, 20, 22} {
		f, _ := os.Open(e.path)
		p, err := Prove(f, seq, e.key.verifier())
		f.Close()
		if err != nil {
			t.Fatalf("prove %d: %v", seq, err)
		}
		data := mustJSON(t, p)
		got, err := VerifyProof(data, e.key.verifier())
		if err != nil || got.Seq != seq {
			t.Fatalf("verify proof %d: %v", seq, err)
		}
		// A changed record, or another key, does not verify.
		forged := bytes.Replace(data, []byte("read_file"), []byte("read_filf"), 1)
		if bytes.Equal(forged, data) {
			t.Fatalf("record %d is not a decision", seq)
		}
		if _, err := VerifyProof(forged, e.key.verifier()); err == nil {
			t.Fatalf("a changed record's proof verified")
		}
		if _, err := VerifyProof(data, newEnv(t).key.verifier()); err == nil {
			t.Fatalf("a proof verified with another key")
		}
	}
	// Records of the first file are proved from it.
	f, _ := os.Open(e.path + ".1")
	defer f.Close()
	p, err := Prove(f, 3, e.key.verifier())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyProof(mustJSON(t, p), e.key.verifier()); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
