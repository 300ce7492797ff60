package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRuntime(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	os.Mkdir(state, 0o700)
	xdg := filepath.Join(base, "xdg")
	os.Mkdir(xdg, 0o700)
	wide := filepath.Join(base, "wide")
	os.Mkdir(wide, 0o777)
	os.Chmod(wide, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(xdg, link)
	// A parent that is a symlink into a readable root: the folder's real
	// path is what a tool could reach.
	ws := filepath.Join(base, "ws")
	os.MkdirAll(filepath.Join(ws, "rt"), 0o700)
	os.Chmod(filepath.Join(ws, "rt"), 0o700)
	elsewhere := filepath.Join(base, "elsewhere")
	os.Mkdir(elsewhere, 0o700)
	os.Symlink(ws, filepath.Join(elsewhere, "in-ws"))
	viaParent := filepath.Join(elsewhere, "in-ws", "rt")

	for _, tc := range []struct {
		name, xdg, want string
		roots           []string
	}{
		{"XDG_RUNTIME_DIR", xdg, filepath.Join(xdg, Name), nil},
		{"XDG_RUNTIME_DIR a tool can read", xdg, filepath.Join(state, "run"), []string{base}},
		{"unset", "", filepath.Join(state, "run"), nil},
		{"relative", "run/user", filepath.Join(state, "run"), nil},
		{"open to others", wide, filepath.Join(state, "run"), nil},
		{"a symlink", link, filepath.Join(state, "run"), nil},
		{"beneath a symlink into a readable root", viaParent, filepath.Join(state, "run"), []string{ws}},
		{"beneath a symlink elsewhere", viaParent, filepath.Join(ws, "rt", Name), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", tc.xdg)
			got, err := Runtime(state, tc.roots)
			if err != nil || got != tc.want {
				t.Fatalf("Runtime: %q %v, want %q", got, err, tc.want)
			}
			if fi, err := os.Lstat(got); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Fatalf("%s: %v %v", got, fi, err)
			}
		})
	}

	t.Run("a wider folder is tightened", func(t *testing.T) {
		t.Setenv("XDG_RUNTIME_DIR", "")
		os.Chmod(filepath.Join(state, "run"), 0o755)
		if _, err := Runtime(state, nil); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(filepath.Join(state, "run")); fi.Mode().Perm() != 0o700 {
			t.Fatalf("mode %o", fi.Mode().Perm())
		}
	})
	t.Run("a symlink in its place is refused", func(t *testing.T) {
		t.Setenv("XDG_RUNTIME_DIR", "")
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		os.Symlink(other, filepath.Join(base, "state2-run"))
		state2 := filepath.Join(base, "state2")
		os.Mkdir(state2, 0o700)
		os.Symlink(other, filepath.Join(state2, "run"))
		if _, err := Runtime(state2, nil); err == nil {
			t.Fatal("a symlinked runtime folder was accepted")
		}
	})
}

// TestCheckRuntime: the check the approval inbox repeats before it opens
// its socket accepts what Runtime makes and refuses what it would refuse.
func TestCheckRuntime(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	base := t.TempDir()
	good, err := Runtime(base, nil)
	if err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	link := filepath.Join(base, "link")
	file := filepath.Join(base, "file")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want string // "" accepted
	}{
		{good, ""},
		{open, "open to other users"},
		{link, "symlink"},
		{file, "not a folder"},
		{filepath.Join(base, "missing"), "no such file"},
	} {
		err := CheckRuntime(tc.dir)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckRuntime(%s) = %v, want %q", tc.dir, err, tc.want)
		}
	}
}
