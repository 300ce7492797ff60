package patch

import (
	"strings"
	"testing"
)

func TestApplyEdit(t *testing.T) {
	cases := []struct {
		name           string
		orig, old, new string
		all            bool
		want           string
		wantN          int
		wantErr        []string
		nilOriginal    bool
	}{
		{name: "once", orig: "a\nfoo()\nb\n", old: "foo()", new: "bar()", want: "a\nbar()\nb\n", wantN: 1},
		{name: "multi-line", orig: "a\nb\nc\n", old: "a\nb\n", new: "x\n", want: "x\nc\n", wantN: 1},
		{name: "replace all", orig: "x y x y x\n", old: "x", new: "z", all: true, want: "z y z y z\n", wantN: 3},
		{name: "zero", orig: "alpha\nfunc handle(w http.ResponseWriter) {\nomega\n", old: "func handle(w http.Writer) {",
			wantErr: []string{"0 occurrences", "line 2", `"func handle(w http.ResponseWriter) {"`}},
		{name: "several", orig: "x\ny\nx\nx\n", old: "x", wantErr: []string{"occurs 3 times", "lines 1, 3, 4", "replace_all"}},
		{name: "many", orig: strings.Repeat("x\n", 8), old: "x", wantErr: []string{"occurs 8 times", "lines 1, 2, 3, 4, 5, …"}},
		{name: "crlf file, lf edit", orig: "a\r\nb\r\nc\r\n", old: "a\nb\n", new: "A\nB\nB2\n", want: "A\r\nB\r\nB2\r\nc\r\n", wantN: 1},
		{name: "crlf file, single line", orig: "a\r\nb\r\n", old: "b", new: "c", want: "a\r\nc\r\n", wantN: 1},
		{name: "mixed file, lf edit", orig: "a\nb\r\nc\nd\r\n", old: "b\nc", new: "B\nC", want: "a\nB\r\nC\nd\r\n", wantN: 1},
		{name: "crlf edit, lf file", orig: "a\nb\nc\n", old: "a\r\nb\r\n", new: "x\r\n", want: "x\nc\n", wantN: 1},
		{name: "crlf replace all", orig: "k\r\nv\r\nk\r\nv\r\n", old: "k\nv", new: "K\nV", all: true, want: "K\r\nV\r\nK\r\nV\r\n", wantN: 2},
		{name: "bom kept", orig: "\ufeffa\nb\n", old: "a", new: "A", want: "\ufeffA\nb\n", wantN: 1},
		{name: "empty old on content", orig: "a", old: "", wantErr: []string{"old_text is empty"}},
		{name: "empty old creates", nilOriginal: true, old: "", new: "new\n", want: "new\n", wantN: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig := []byte(tc.orig)
			if tc.nilOriginal {
				orig = nil
			}
			got, n, err := ApplyEdit(orig, tc.old, tc.new, tc.all)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("no error, content %q", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q: %v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || n != tc.wantN {
				t.Errorf("got %q (%d), want %q (%d)", got, n, tc.want, tc.wantN)
			}
		})
	}
}
