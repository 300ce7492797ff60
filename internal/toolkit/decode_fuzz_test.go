package toolkit

import (
	"encoding/json"
	"strings"
	"testing"
)

type fuzzArgs struct {
	Path   string   `json:"path"`
	Offset int      `json:"offset,omitempty"`
	Names  []string `json:"names,omitempty"`
	Flag   bool     `json:"flag,omitempty"`
}

// FuzzDecode: arbitrary arguments never panic; what Decode accepts holds
// only known fields (re-encoding and decoding again gives the same value),
// and what it refuses is an *ArgError.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{}`, `{"path":"a"}`, `{"path":1}`, `{"extra":1}`, `[]`, `null`, `{"path":"a"} {}`, `{"names":["a",2]}`, `{"offset":1e999}`, `{"path":"\u0000"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var a fuzzArgs
		err := Decode(json.RawMessage(raw), &a)
		if err != nil {
			if _, ok := err.(*ArgError); !ok {
				t.Fatalf("Decode(%q) returned %T, want *ArgError", raw, err)
			}
			return
		}
		var m map[string]any
		if json.Unmarshal([]byte(raw), &m) == nil {
			for k := range m {
				if !strings.Contains(`path offset names flag`, k) && !strings.EqualFold(k, "path") && !strings.EqualFold(k, "offset") && !strings.EqualFold(k, "names") && !strings.EqualFold(k, "flag") {
					t.Fatalf("Decode(%q) accepted unknown field %q", raw, k)
				}
			}
		}
		again, _ := json.Marshal(a)
		var b fuzzArgs
		if err := Decode(again, &b); err != nil {
			t.Fatalf("re-decoding %s: %v", again, err)
		}
	})
}
