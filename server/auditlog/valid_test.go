package auditlog

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzQuickJSON: quickJSON never vouches for what json.Valid refuses, so
// validJSON is json.Valid.
func FuzzQuickJSON(f *testing.F) {
	for _, tc := range quickCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if quickJSON(b) && !json.Valid(b) {
			t.Fatalf("quickJSON vouches for %q, which json.Valid refuses", b)
		}
		if validJSON(b) != json.Valid(b) {
			t.Fatalf("validJSON(%q) = %v", b, !json.Valid(b))
		}
	})
}

// quickCases: quick is whether quickJSON must vouch (the records the log
// writes, and plain JSON); every input's validity is json.Valid's.
var quickCases = []struct {
	in    string
	quick bool
}{
	{`{}`, true},
	{` [ ] `, true},
	{`{"seq":12,"prev":"` + strings.Repeat("ab", 32) + `","time":"2026-12-02T03:49:14.123Z","event":"decision","target":{"path":"/w/a b.txt"},"effect":"allow"}`, true},
	{`{"a":[1,-2,0.5,1e9,-0E+3,true,false,null,{"b":{}}],"c":"\u00e9\n\t\"\\\/","d":"é` + "\xff" + `"}`, true},
	{"\t{\"a\" :\r\n1 }\n", true},
	{`"x"`, true},
	{`0`, true},
	{`-`, false},
	{`01`, false},
	{`1.`, false},
	{`1e`, false},
	{`.5`, false},
	{`{"a":1,}`, false},
	{`[1,]`, false},
	{`{"a" 1}`, false},
	{`{1:2}`, false},
	{`{"a":1]`, false},
	{`[1}`, false},
	{`"\x"`, false},
	{`"\u12G4"`, false},
	{"\"a\x01\"", false},
	{`"abc`, false},
	{`tru`, false},
	{`nul`, false},
	{`{} {}`, false},
	{`[`, false},
	{``, false},
	{` `, false},
	{strings.Repeat("[", quickMaxDepth) + strings.Repeat("]", quickMaxDepth), true},
	{strings.Repeat("[", quickMaxDepth+1) + strings.Repeat("]", quickMaxDepth+1), false}, // json.Valid's, not quick's
}

func TestQuickJSON(t *testing.T) {
	for _, tc := range quickCases {
		if got := quickJSON([]byte(tc.in)); got != tc.quick {
			t.Errorf("quickJSON(%q) = %v, want %v", tc.in, got, tc.quick)
		}
		if got, want := validJSON([]byte(tc.in)), json.Valid([]byte(tc.in)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid %v", tc.in, got, want)
		}
	}
}

// TestQuickJSONVouchesForRecords: every record the log writes takes the
// quick path (else following a shared log is as slow as before).
func TestQuickJSONVouchesForRecords(t *testing.T) {
	e := newEnv(t)
	l := e.open(t, nil)
	defer l.Close()
	for range 3 {
		if err := l.Append([]byte(`{"event":"decision","tool":"read_file","target":{"path":"/a/\"b\"\u0001"}}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	for _, line := range lines(t, e.path) {
		if !quickJSON([]byte(line)) {
			t.Errorf("quickJSON does not vouch for a record the log wrote: %s", line)
		}
	}
}

func BenchmarkValidRecord(b *testing.B) {
	line := []byte(quickCases[2].in)
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			json.Valid(line)
		}
	})
	b.Run("validJSON", func(b *testing.B) {
		for b.Loop() {
			validJSON(line)
		}
	})
}
