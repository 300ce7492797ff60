package display

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"git push origin main", "git push origin main"},
		{`echo "a\b"`, `echo "a\b"`},
		{"rm -rf ~ \x1b[2K\rls", `rm -rf ~ \x1b[2K\rls`},
		{"ls\nrule allow-all, risk low", `ls\nrule allow-all, risk low`},
		{"a\tb\x00c\x7f", `a\tb\x00c\x7f`},
		{"evil\u202Etxt.exe", "evilU+202Etxt.exe"},
		{"x\u2066y\u2069z\u200bw\u200dv\ufeff", "xU+2066yU+2069zU+200BwU+200DvU+FEFF"},
		{"line\u2028sep\u2029para\u0085nel", "lineU+2028sepU+2029paraU+0085nel"},
		{"nb\u00a0sp", "nbU+00A0sp"},
		{"bad\xffutf8", `bad\xffutf8`},
		{"héllo wörld 日本 😀", "héllo wörld 日本 😀"},
		{"pua\ue000", "puaU+E000"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred", "a\u202eb", "\xff\xfe", "日本\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || needsEscape(r) {
				t.Fatalf("Escape(%q) = %q keeps %U", s, out, r)
			}
		}
		if isPlain(s) && out != s {
			t.Fatalf("plain %q changed to %q", s, out)
		}
		if strings.Count(out, "\n") != 0 {
			t.Fatal("a newline survived")
		}
	})
}

func BenchmarkEscapePlain(b *testing.B) {
	s := "git push --force origin main && rm -rf build/"
	for b.Loop() {
		Escape(s)
	}
}
