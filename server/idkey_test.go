package server

import "testing"

func TestIDKey(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`1`, "n:1"}, {`0`, "n:0"}, {`999999`, "n:999999"}, {`1000000`, "n:1e+06"},
		{`1.0`, "n:1"}, {`01`, ""}, {`-0`, "n:-0"}, {`-3`, "n:-3"}, {` 7`, "n:7"},
		{`"a"`, "s:a"}, {`""`, "s:"}, {`"\u0041"`, "s:A"}, {`"A"`, "s:A"}, {`"caf` + "\xff" + `"`, "s:caf\ufffd"},
		{`"a"b"`, ""}, {`"`, ""}, {`null`, ""}, {`true`, ""}, {`{}`, ""}, {``, ""},
	} {
		if got := idKey([]byte(tc.raw)); got != tc.want {
			t.Errorf("idKey(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// The fast path gives the decode's key for every id it takes.
func FuzzIDKey(f *testing.F) {
	for _, s := range []string{`1`, `123456`, `1234567`, `"x"`, `"\n"`, `"é"`, `0`, `00`, `"a\"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if k, ok := idKeyFast(raw); ok {
			if want := idKeyDecoded(raw); k != want {
				t.Fatalf("idKeyFast(%q) = %q, the decode gives %q", raw, k, want)
			}
		}
	})
}
