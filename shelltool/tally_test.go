package shelltool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRootMoves(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		words []string
		cwd   string
		want  []rootMove
	}{
		{[]string{"mv", "a", "b"}, ws, []rootMove{{"a", "b"}}},
		{[]string{"mv", "a", "dir"}, ws, []rootMove{{"a", "dir"}}},
		{[]string{"mv", "a", "b", "new/"}, ws, []rootMove{{"a", "new"}, {"b", "new"}}},
		{[]string{"mv", "-t", "dir", "a", "b"}, ws, []rootMove{{"a", "dir"}, {"b", "dir"}}},
		{[]string{"mv", "--target-directory=x/y", "a"}, ws, []rootMove{{"a", "x"}}},
		{[]string{"mv", "-T", "a", "dir"}, ws, []rootMove{{"a", "dir"}}},
		{[]string{"mv", "-f", "--", "-a", "b"}, ws, []rootMove{{"-a", "b"}}},
		{[]string{"mv", "sub/a", "b"}, ws, nil},                              // not a root entry
		{[]string{"mv", "a", "/elsewhere/b"}, ws, nil},                       // out: the analyzer's
		{[]string{"mv", "../a", "x"}, ws + "/dir", []rootMove{{"a", "dir"}}}, // a root entry, into dir
		{[]string{"mv", "a"}, ws, nil},
	}
	for _, tt := range tests {
		if got := rootMoves(tt.words, tt.cwd, ws); !slices.Equal(got, tt.want) {
			t.Errorf("rootMoves(%q) = %v, want %v", tt.words, got, tt.want)
		}
	}
}
