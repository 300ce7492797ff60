package shelltool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRootMoves(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{"dir", "new", ".t", "x/y"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link in the workspace that leads out of it (review rev20g F5).
	out := t.TempDir()
	if err := os.Symlink(out, filepath.Join(ws, "l")); err != nil {
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
		{[]string{"mv", "a", "l/"}, ws, nil}, // out through the link: lost
		{[]string{"mv", "a", "l"}, ws, nil},
		// GNU's option forms (review rev20f M2).
		{[]string{"mv", "-t.t", "a", "b"}, ws, []rootMove{{"a", ".t"}, {"b", ".t"}}},
		{[]string{"mv", "--target=.t", "a"}, ws, []rootMove{{"a", ".t"}}},
		{[]string{"mv", "--targ", ".t", "a"}, ws, []rootMove{{"a", ".t"}}},
		{[]string{"mv", "-ft", ".t", "a"}, ws, []rootMove{{"a", ".t"}}},
		{[]string{"mv", "-vt", ".t", "a"}, ws, []rootMove{{"a", ".t"}}},
		{[]string{"mv", "-S", "~", "a", "b"}, ws, []rootMove{{"a", "b"}}},
		{[]string{"mv", "--backup=numbered", "a", "b"}, ws, []rootMove{{"a", "b"}}},
	}
	for _, tt := range tests {
		if got, _ := rootMoves(tt.words, tt.cwd, ws); !slices.Equal(got, tt.want) {
			t.Errorf("rootMoves(%q) = %v, want %v", tt.words, got, tt.want)
		}
	}
}

// TestRootMovesUnreadable: an mv whose options cannot be read loses its
// root operands (taken as removed: fail closed).
func TestRootMovesUnreadable(t *testing.T) {
	ws := t.TempDir()
	for _, words := range [][]string{{"mv", "-X", "a", "b"}, {"mv", "--no", "a", "b"}, {"mv", "--bogus", "a", "b"}, {"mv", "a", "b", "-t"}} {
		if moves, lost := rootMoves(words, ws, ws); len(moves) != 0 || !slices.Contains(lost, "a") {
			t.Errorf("rootMoves(%q) = %v, lost %v; want a lost", words, moves, lost)
		}
	}
}

// TestRootMovesOutThroughALink: a move through a link that leads out of
// the workspace, or into a folder that cannot be resolved, loses the entry.
func TestRootMovesOutThroughALink(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	if err := os.Symlink(out, filepath.Join(ws, "l")); err != nil {
		t.Fatal(err)
	}
	for _, words := range [][]string{{"mv", "a", "l/"}, {"mv", "a", "l"}, {"mv", "a", "nowhere/"}, {"mv", "-t", "l", "a"}} {
		if moves, lost := rootMoves(words, ws, ws); len(moves) != 0 || !slices.Contains(lost, "a") {
			t.Errorf("rootMoves(%q) = %v, lost %v; want a lost", words, moves, lost)
		}
	}
}
