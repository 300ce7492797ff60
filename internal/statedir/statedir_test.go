package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpen(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	home := filepath.Join(base, "home")
	link := filepath.Join(base, "link")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(home, ".local", "state", Name)
	tests := []struct {
		name      string
		roots     []string
		reachable bool
	}{
		{"no roots", nil, false},
		{"sibling root", []string{filepath.Join(base, "ws")}, false},
		{"prefix sibling", []string{filepath.Join(home, ".local", "state", Name+"x")}, false},
		{"home is a root", []string{home}, true},
		{"the folder itself", []string{state}, true},
		{"root inside it", []string{filepath.Join(state, "sub")}, true},
		{"root through a symlink", []string{link}, true},
		{"slash", []string{"/"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", "")
			got, err := Open(home, tc.roots)
			if tc.reachable {
				if !errors.Is(err, ErrReachable) {
					t.Fatalf("Open = %q, %v; want ErrReachable", got, err)
				}
				return
			}
			if err != nil || got != state {
				t.Fatalf("Open = %q, %v; want %q", got, err, state)
			}
			fi, err := os.Stat(got)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("mode %v, %v; want 0700", fi.Mode(), err)
			}
		})
	}
}

func TestOpenTightensAndRefuses(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_STATE_HOME", base)
	dir := filepath.Join(base, Name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("", nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("mode %v not tightened to 0700", fi.Mode())
	}
	// A symlink in place of the folder is refused (it could point anywhere).
	os.Remove(dir)
	if err := os.Symlink(t.TempDir(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("", nil); err == nil {
		t.Fatal("a symlinked state folder was accepted")
	}
	os.Remove(dir)
	if _, err := Open("", []string{"relative"}); err == nil {
		t.Fatal("a relative root was accepted")
	}
}
