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
// only known fields, spelled exactly and once (re-encoding and decoding
// again gives the same value), and what it refuses is an *ArgError.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{}`, `{"path":"a"}`, `{"path":1}`, `{"extra":1}`, `[]`, `null`, `{"path":"a"} {}`, `{"names":["a",2]}`, `{"offset":1e999}`, `{"path":"\u0000"}`, `{"Path":"a"}`, `{"path":"a","path":"b"}`, `{"offset":1.5}`} {
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
		// Accepted keys are exactly the known ones, each at most once.
		dec := json.NewDecoder(strings.NewReader(raw))
		if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
			seen := map[string]bool{}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					break
				}
				k, _ := tok.(string)
				if !map[string]bool{"path": true, "offset": true, "names": true, "flag": true}[k] || seen[k] {
					t.Fatalf("Decode(%q) accepted key %q (unknown, a case variant or repeated)", raw, k)
				}
				seen[k] = true
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
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

func TestDecodeStrict(t *testing.T) {
	type edit struct {
		Path string `json:"path"`
	}
	type callArgs struct {
		Command string `json:"command"`
		Offset  int    `json:"offset,omitempty"`
		Edits   []edit `json:"edits,omitempty"`
	}
	for _, tc := range []struct{ raw, want string }{
		{`{"command":"ls"}`, ""},
		{`{"Command":"ls"}`, `argument "Command": keys are case-sensitive: did you mean "command"?`},
		{`{"command":"a","COMMAND":"b"}`, `argument "COMMAND": keys are case-sensitive`},
		{`{"command":"a","command":"b"}`, `argument "command" is given more than once`},
		{`{"command":"a","comm\u0061nd":"b"}`, `argument "command" is given more than once`},
		{`{"command":"a","offset":1e400}`, `argument "offset": number 1e400 is out of range: expected an integer`},
		{`{"command":"a","offset":2.5}`, `argument "offset": number 2.5 is out of range`},
		{`{"edits":[{"path":"a"},{"PATH":"b"}]}`, `argument "edits[1].PATH": keys are case-sensitive`},
		{`{"edits":[{"path":"a","path":"b"}]}`, `argument "edits[0].path" is given more than once`},
		{`{"mode":"x"}`, `unknown argument "mode"; accepted: command, edits, offset`},
		{`{"command":1}`, `argument "command": expected a string`},
	} {
		var a callArgs
		err := Decode(json.RawMessage(tc.raw), &a)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.raw, err)
			}
			continue
		}
		if _, ok := err.(*ArgError); !ok || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an *ArgError containing %q", tc.raw, err, tc.want)
		}
	}
}
