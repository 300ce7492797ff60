package auditlog

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// FuzzParseChain: a record chained from any JSON object reads back with its
// seq and prev; any other line is refused without a panic.
func FuzzParseChain(f *testing.F) {
	f.Add([]byte(`{"event":"decision","tool":"read_file"}`), uint64(7))
	f.Add([]byte(`{}`), uint64(0))
	f.Add([]byte(`{"seq":3,"event":"checkpoint","checkpoint":"x"}`), uint64(18446744073709551615))
	f.Fuzz(func(t *testing.T, body []byte, seq uint64) {
		parseChain(body) // arbitrary bytes: no panic
		var obj map[string]any
		if json.Unmarshal(body, &obj) != nil || len(body) == 0 || body[0] != '{' {
			return
		}
		prev := [32]byte{1, 2, 3}
		line := chain(seq, prev, body)
		c, err := parseChain(line)
		if bytes.Contains(line, []byte(`"checkpoint"`)) && err != nil {
			return // a body with its own seq is refused, not misread
		}
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if *c.Seq != seq || string(c.prev) != hex.EncodeToString(prev[:]) {
			t.Fatalf("%s: seq %d prev %s", line, *c.Seq, c.prev)
		}
	})
}

// FuzzBound: a bounded record is JSON and within the bound, or an error.
func FuzzBound(f *testing.F) {
	f.Add([]byte(`{"target":{"path":"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z"}}`), 200)
	f.Add([]byte(`{"a":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9","b":["x\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""]}`), 300)
	f.Fuzz(func(t *testing.T, body []byte, limit int) {
		if limit < 0 || limit > 1<<16 || !json.Valid(body) {
			return
		}
		out, err := bound(body, limit)
		if err != nil {
			return
		}
		if len(out) > limit && len(body) > limit {
			t.Fatalf("bounded to %d bytes, limit %d", len(out), limit)
		}
		if !json.Valid(out) {
			t.Fatalf("bounded record is not JSON: %s", out)
		}
	})
}
