package approval

import (
	"bufio"
	"bytes"
	"reflect"
	"strings"
	"testing"
)

const goodID = "AAAAAAAAAAAAAAAAAAAAAA"

// TestParseWire: the inbox protocol's one reading accepts each message
// type in its own shape and refuses every ambiguity or missing field.
func TestParseWire(t *testing.T) {
	ask := `{"kind":"approval","tool":"read_file","items":[{"what":"w","rule":"r","risk":"high","session":"once"}],"context":{"client":"c"},"deadline_ms":1}`
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`{"type":"hello","version":3,"addr":"127.0.0.1:8765","server":"x"}`, true},
		{`{"type":"hello","version":1,"addr":"127.0.0.1:8765"}`, false}, // version 1 keeps tokens on takeover
		{`{"type":"hello","version":3}`, false},
		{`{"type":"hello","version":3,"addr":"a","Addr":"b"}`, false}, // case variant
		{`{"type":"hello","version":3,"addr":"a","addr":"b"}`, false}, // duplicate
		{`{"type":"hello","version":3,"addr":"a","extra":1}`, false},  // unknown key
		{`{"type":"hello","version":3,"addr":"a"} {}`, false},         // two values
		{`{"type":"hello","version":1.5,"addr":"a"}`, false},          // not an integer
		{`{"type":"post","id":"` + goodID + `","ask":` + ask + `}`, true},
		{`{"type":"post","id":"short","ask":` + ask + `}`, false},
		{`{"type":"post","id":"` + goodID + `"}`, false},
		{`{"type":"post","id":"` + goodID + `","ask":{"kind":"approval","tool":"t","context":{},"deadline_ms":1}}`, false}, // no items
		{`{"type":"post","id":"` + goodID + `","ask":{"kind":"other","tool":"t","items":[{}],"context":{},"deadline_ms":1}}`, false},
		{`{"type":"post","id":"` + goodID + `","ask":{"kind":"approval","tool":"t","items":[{}],"context":{},"level":"critical x","deadline_ms":1}}`, false},
		{`{"type":"post","id":"` + goodID + `","ask":{"kind":"approval","tool":"t","items":[{}],"context":{},"level":"high","deadline_ms":1}}`, true},
		{`{"type":"withdraw","id":"` + goodID + `","outcome":"allow once","channel":"elicitation"}`, true},
		{`{"type":"answer","id":"` + goodID + `","action":"accept","decision":"allow_once"}`, true},
		{`{"type":"answer","id":"` + goodID + `","action":"accept","answer":"yes"}`, true},
		{`{"type":"answer","id":"` + goodID + `","action":"accept","decision":"allow_once","answer":"yes"}`, false},
		{`{"type":"answer","id":"` + goodID + `","action":"accept"}`, false},
		{`{"type":"answer","id":"` + goodID + `","action":"decline"}`, true},
		{`{"type":"answer","id":"` + goodID + `","action":"decline","decision":"deny"}`, false},
		{`{"type":"answer","id":"` + goodID + `","action":"maybe"}`, false},
		{`{"type":"hello","version":2,"addr":"127.0.0.1:8765","server":"x"}`, false}, // version 2 expects the CSRF token
		{`{"type":"welcome","version":3,"addr":"a","token":"` + goodID + `"}`, true},
		{`{"type":"welcome","version":3,"addr":"a","token":"` + goodID + `","csrf":"` + goodID + `"}`, false}, // the CSRF token stays on the hub
		{`{"type":"welcome","version":2,"addr":"a","token":"` + goodID + `","csrf":"` + goodID + `"}`, false},
		{`{"type":"welcome","version":1,"addr":"a","token":"` + goodID + `","csrf":"` + goodID + `"}`, false}, // keeps tokens on takeover
		{`{"type":"welcome","version":3,"addr":"a","token":"` + goodID + `","sessions":["` + goodID + `"]}`, false},
		{`{"type":"welcome","version":3,"addr":"a","token":"t"}`, false},
		{`{"type":"login","sid":"` + goodID + `"}`, false}, // version 1: a takeover keeps no logins
		{`{"type":"result","id":"` + goodID + `","ok":true,"outcome":"allow once"}`, true},
		{`{"type":"refused","id":"` + goodID + `","error":"full"}`, true},
		{`{"type":"shutdown"}`, false},
		{`[]`, false},
		{``, false},
		{`{"type":"hello","version":1,"addr":"` + strings.Repeat("a", maxWireMessage) + `"}`, false},
	} {
		_, err := parseWire([]byte(tc.line))
		if (err == nil) != tc.ok {
			t.Errorf("%.120s: err %v, want ok=%v", tc.line, err, tc.ok)
		}
	}
}

// TestReadWireBounds: a line longer than the bound is refused without
// being read whole, and a message cut off by the end of the stream is an
// error.
func TestReadWireBounds(t *testing.T) {
	long := strings.Repeat("x", 2*maxWireMessage) + "\n"
	if _, err := readWire(bufio.NewReaderSize(strings.NewReader(long), 4096)); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("an over-long line: %v", err)
	}
	if _, err := readWire(bufio.NewReader(strings.NewReader(`{"type":"result","id":"` + goodID + `"}`))); err == nil {
		t.Fatal("a message without its newline")
	}
	r := bufio.NewReaderSize(strings.NewReader(`{"type":"result","id":"`+goodID+`"}`+"\n"), 16)
	if m, err := readWire(r); err != nil || m.ID != goodID {
		t.Fatalf("a message longer than the buffer: %v %v", m, err)
	}
}

// FuzzParseWire: no input panics the reader; whatever it accepts it
// encodes again to a message it reads the same way, with every id well
// formed.
func FuzzParseWire(f *testing.F) {
	f.Add([]byte(`{"type":"hello","version":3,"addr":"127.0.0.1:8765","server":"x"}`))
	f.Add([]byte(`{"type":"answer","id":"` + goodID + `","action":"accept","decision":"allow_once"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := parseWire(line)
		if err != nil {
			return
		}
		for _, id := range []string{m.ID, m.Token} {
			if id != "" && !idOK(id) {
				t.Fatalf("accepted a bad id %q", id)
			}
		}
		b, err := encodeWire(m)
		if err != nil {
			t.Fatalf("encoding an accepted message: %v", err)
		}
		again, err := readWire(bufio.NewReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatalf("re-reading %q: %v", b, err)
		}
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip: %+v != %+v", m, again)
		}
	})
}
