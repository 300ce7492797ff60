package fstools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// testPolicy compiles a config over a fresh workspace under a fresh root.
func testPolicy(t testing.TB, body string) (*grants.Policy, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := grants.Parse([]byte(body), "test.toml", ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grants.Compile(cfg, grants.CompileOptions{Home: filepath.Join(root, "home")})
	if err != nil {
		t.Fatal(err)
	}
	return p, root
}

func mustWrite(t testing.TB, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	p, root := testPolicy(t, `profile = "interactive-dev"`)
	ws := p.Workspace
	mustWrite(t, filepath.Join(ws, "a/b.txt"), "x")
	mustWrite(t, filepath.Join(root, "outside/o.txt"), "o")
	mustWrite(t, filepath.Join(root, "ws_evil/e.txt"), "e")
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(ws, "inner")); err != nil {
		t.Fatal(err)
	}
	// Dangling links: a writer (`> link`) creates where they point.
	for name, target := range map[string]string{
		"dangling-out": filepath.Join(root, "outside", "new.txt"),
		"dangling-rel": "../outside/rel.txt",
		"dangling-in":  "a/made.txt",
		"dangling-2":   "dangling-out",
		"loop1":        "loop2",
		"loop2":        "loop1",
	} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		arg      string
		real     string
		exists   bool
		inWS     bool
		errMatch string
	}{
		{arg: "a/b.txt", real: ws + "/a/b.txt", exists: true, inWS: true},
		{arg: ws + "/a/b.txt", real: ws + "/a/b.txt", exists: true, inWS: true},
		{arg: "a/../a/b.txt", real: ws + "/a/b.txt", exists: true, inWS: true},
		{arg: "inner/b.txt", real: ws + "/a/b.txt", exists: true, inWS: true},
		{arg: "new/file.txt", real: ws + "/new/file.txt", inWS: true},
		{arg: ".", real: ws, exists: true, inWS: true},
		{arg: "../outside/o.txt", real: root + "/outside/o.txt", exists: true},
		{arg: "out/o.txt", real: root + "/outside/o.txt", exists: true},
		{arg: "out/new.txt", real: root + "/outside/new.txt"},
		{arg: "../ws_evil/e.txt", real: root + "/ws_evil/e.txt", exists: true},
		{arg: "a/../../ws_evil", real: root + "/ws_evil", exists: true},
		{arg: "~/x", real: root + "/home/x"},
		{arg: "dangling-out", real: root + "/outside/new.txt"},
		{arg: "dangling-rel", real: root + "/outside/rel.txt"},
		{arg: "dangling-in", real: ws + "/a/made.txt", inWS: true},
		{arg: "dangling-2", real: root + "/outside/new.txt"},
		{arg: "loop1", errMatch: "too many levels"},
		{arg: "/etc/../etc/passwd", real: "/etc/passwd", exists: true},
		{arg: "", errMatch: "empty"},
		{arg: "a\x00b", errMatch: "NUL"},
		{arg: strings.Repeat("a/", 3000), errMatch: "longer"},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := Resolve(p, tt.arg)
			if tt.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
					t.Fatalf("err = %v, want %q", err, tt.errMatch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Real != tt.real || got.Exists != tt.exists || got.InWorkspace != tt.inWS {
				t.Fatalf("Resolve(%q) = %+v, want real=%s exists=%v inWS=%v", tt.arg, got, tt.real, tt.exists, tt.inWS)
			}
		})
	}
}

func TestOpenNoSymlinksRefusesSymlinks(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	mustWrite(t, filepath.Join(root, "real/f.txt"), "inside")
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real/f.txt"), filepath.Join(root, "flink")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		ok   bool
	}{
		{root + "/real/f.txt", true},
		{root + "/link/f.txt", false}, // a folder that is a symlink
		{root + "/flink", false},      // a file that is a symlink
	} {
		for name, open := range map[string]func(string, int, uint32) (*os.File, error){
			"openat2": openNoSymlinks, "components": openByComponents,
		} {
			f, err := open(tt.path, os.O_RDONLY, 0)
			if (err == nil) != tt.ok {
				t.Errorf("%s(%s): err=%v, want ok=%v", name, tt.path, err, tt.ok)
			}
			if f != nil {
				f.Close()
			}
		}
	}
}

// TestReadFileSwapRace swaps a folder of the workspace for a symlink to an
// outside folder while read_file runs: the outside content must never come
// back, whatever the interleaving of decision and open.
func TestReadFileSwapRace(t *testing.T) {
	p, root := testPolicy(t, `profile = "strict-production"
[[rules.allow]]
rule_id = "read-ws"
capability = "workspace.files.read"
`)
	ws := p.Workspace
	mustWrite(t, filepath.Join(ws, "dir/f.txt"), "inside\n")
	mustWrite(t, filepath.Join(root, "outside/f.txt"), "OUTSIDE\n")
	dir, parked := filepath.Join(ws, "dir"), filepath.Join(ws, "parked")

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// dir → symlink to outside, then back to the real folder.
			if err := os.Rename(dir, parked); err != nil {
				continue
			}
			os.Symlink(filepath.Join(root, "outside"), dir)
			os.Remove(dir)
			os.Rename(parked, dir)
		}
	}()
	args, _ := json.Marshal(map[string]any{"path": "dir/f.txt"})
	var served, refused int
	// At least 3000 tries, and more until one read got through (on a
	// loaded machine the swapping goroutine can win 3000 times running).
	for i := 0; i < 3000 || served == 0 && i < 300_000; i++ {
		env := &toolkit.Env{Policy: p}
		plan, err := ReadFile{}.Plan(context.Background(), env, args)
		if err != nil {
			t.Fatal(err)
		}
		if p.DecideAll(plan.Requests).Effect != grants.Allow {
			refused++
			continue
		}
		res := plan.Run(context.Background(), toolkit.Grant{})
		if res.Tool.IsError {
			refused++
			continue
		}
		body := res.Tool.Content[0]
		b, _ := json.Marshal(body)
		if strings.Contains(string(b), "OUTSIDE") {
			t.Fatalf("outside content returned: %s", b)
		}
		served++
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("served %d, refused %d", served, refused)
	if served == 0 {
		t.Fatal("no read succeeded; the race did not exercise the open")
	}
}

// FuzzResolve checks that a relative path in a tree without symlinks is in
// the workspace exactly when its lexical form stays inside.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a", "../x", "a/../../b", "./a/./b", "a//b", "..", "~/x", "/etc/passwd", "a/\x00", "...", "a/.."} {
		f.Add(s)
	}
	p, _ := testPolicy(f, `profile = "interactive-dev"`)
	f.Fuzz(func(t *testing.T, arg string) {
		res, err := Resolve(p, arg)
		if err != nil {
			return
		}
		if !filepath.IsAbs(res.Real) || filepath.Clean(res.Real) != res.Real {
			t.Fatalf("Resolve(%q) = %q: not absolute and clean", arg, res.Real)
		}
		if strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, "~") {
			return
		}
		lexical := filepath.Join(p.Workspace, arg)
		inside := lexical == p.Workspace || strings.HasPrefix(lexical, p.Workspace+"/")
		if res.InWorkspace != inside {
			t.Fatalf("Resolve(%q): InWorkspace=%v but lexical path %q inside=%v", arg, res.InWorkspace, lexical, inside)
		}
	})
}

// TestNoSymlinkRealPath checks the symlink-free shortcut against the
// descriptor's name the kernel reports (/proc): it answers only for a
// path that is its own real path, and falls back for every other.
func TestNoSymlinkRealPath(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	mustWrite(t, filepath.Join(root, "d/f.txt"), "x")
	if err := os.Symlink("d", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d/f.txt", filepath.Join(root, "flink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		handled bool // the shortcut answers (no symlink, or an error as following them gives)
		errIs   error
	}{
		{path: "/", handled: true},
		{path: root, handled: true},
		{path: root + "/d", handled: true},
		{path: root + "/d/f.txt", handled: true},
		{path: root + "/d/missing", handled: true, errIs: os.ErrNotExist},
		{path: root + "/missing/f.txt", handled: true, errIs: os.ErrNotExist},
		{path: root + "/d/f.txt/x", handled: true, errIs: unix.ENOTDIR},
		{path: root + "/link/f.txt"},
		{path: root + "/link"},
		{path: root + "/flink"},
		{path: root + "/d/../d/f.txt"},
		{path: root + "//d/f.txt"},
		{path: "d/f.txt"},
		{path: "/proc/self/fd"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			real, err, ok := noSymlinkRealPath(tt.path)
			if ok != tt.handled {
				t.Fatalf("noSymlinkRealPath(%q) handled = %v, want %v (%q, %v)", tt.path, ok, tt.handled, real, err)
			}
			if !ok {
				return
			}
			if tt.errIs != nil {
				if !errors.Is(err, tt.errIs) {
					t.Fatalf("err = %v, want %v", err, tt.errIs)
				}
				if _, _, slowErr := kernelRealPathOnce(tt.path); !errors.Is(slowErr, tt.errIs) {
					t.Fatalf("the /proc way gives %v, the shortcut %v", slowErr, err)
				}
				return
			}
			slow, again, slowErr := kernelRealPathOnce(tt.path)
			if err != nil || slowErr != nil || again || real != slow {
				t.Fatalf("shortcut %q (%v), /proc %q (%v, again %v)", real, err, slow, slowErr, again)
			}
		})
	}
}

// TestOpenat2Fallback: the errors that mean "openat2 cannot answer, take
// the /proc way" (a seccomp profile that answers EPERM for system calls it
// does not know, a kernel without openat2 or its flags) against those that
// are answers about the path. (A real EPERM filter needs a seccomp'd
// process of its own: the classification is what is tested here.)
func TestOpenat2Fallback(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{unix.ELOOP, true}, {unix.EINTR, true}, {unix.EAGAIN, true}, {unix.ENOSYS, true},
		{unix.EPERM, true}, {unix.EINVAL, true}, {unix.E2BIG, true},
		{&os.PathError{Op: "openat2", Path: "/x", Err: unix.EPERM}, true},
		{unix.ENOENT, false}, {unix.ENOTDIR, false}, {unix.EACCES, false}, {unix.ENAMETOOLONG, false}, {nil, false},
	} {
		if got := openat2Fallback(tc.err); got != tc.want {
			t.Errorf("openat2Fallback(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
