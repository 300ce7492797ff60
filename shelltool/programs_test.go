//go:build linux

package shelltool

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

func copyTo(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
}

// hostFacts is what the tracer would report of the file at p.
func hostFacts(t *testing.T, p string) sandbox.ExecEvent {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	id, err := sandbox.ReadELFIdent(f)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := sandbox.FileSHA256(f)
	if err != nil {
		t.Fatal(err)
	}
	return sandbox.ExecEvent{Exe: p, Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size, BuildID: id.BuildID, SHA256: sum}
}

// TestProgramTable: the identity matcher. A program is the named host
// program it is the file of (whatever it is called, written or not); a
// written one also when its build-id or its content is the same, never by
// size alone; a loader is known by identity; what cannot be compared is a
// problem, never a pass.
func TestProgramTable(t *testing.T) {
	dir := t.TempDir()
	copyTo(t, "/usr/bin/true", filepath.Join(dir, "touch"))
	copyTo(t, "/usr/bin/echo", filepath.Join(dir, "curl"))
	if err := os.WriteFile(filepath.Join(dir, "deploy"), []byte("#!/bin/sh\necho deploy\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	named := func(n string) bool { return n == "touch" || n == "curl" || n == "deploy" }
	tab := buildProgramTable([]string{dir}, named)
	if len(tab.broken) != 0 {
		t.Fatalf("broken: %q", tab.broken)
	}
	touch := hostFacts(t, filepath.Join(dir, "touch"))
	curl := hostFacts(t, filepath.Join(dir, "curl"))
	script := hostFacts(t, filepath.Join(dir, "deploy"))
	loader := hostFacts(t, "/lib64/ld-linux-x86-64.so.2")
	written := func(ev sandbox.ExecEvent, at string) sandbox.ExecEvent {
		ev.Exe, ev.Written, ev.WrittenExe, ev.Ino = at, at, true, ev.Ino+1<<40 // another file
		return ev
	}
	tests := []struct {
		name    string
		ev      sandbox.ExecEvent
		names   []string
		loader  bool
		problem string
	}{
		{"the file itself, not written", touch, []string{"touch"}, false, ""},
		{"the file itself, under any name", func() sandbox.ExecEvent { e := touch; e.Exe = "/somewhere/x"; return e }(), []string{"touch"}, false, ""},
		{"not written: content is not looked at", func() sandbox.ExecEvent { e := curl; e.Ino += 1 << 40; return e }(), nil, false, ""},
		{"written copy: same content", written(touch, "/tmp/x"), []string{"touch"}, false, ""},
		{"written copy: same build-id, other content", func() sandbox.ExecEvent {
			e := written(touch, "/tmp/x")
			e.Size, e.SHA256 = e.Size+1, ""
			return e
		}(), []string{"touch"}, false, ""},
		{"written: same size, other content and build-id", func() sandbox.ExecEvent {
			e := written(touch, "/tmp/x")
			e.SHA256, e.BuildID = strings.Repeat("0", 64), ""
			return e
		}(), nil, false, ""},
		{"written: a size of interest not hashed", func() sandbox.ExecEvent {
			e := written(touch, "/tmp/x")
			e.SHA256, e.BuildID = "", ""
			return e
		}(), nil, false, "was not hashed"},
		{"written script: same content", written(script, "/ws/run"), []string{"deploy"}, false, ""},
		{"a script written, its interpreter not", func() sandbox.ExecEvent {
			e := touch
			e.Written = "/tmp/s"
			e.SHA256, e.BuildID = "", ""
			return e
		}(), []string{"touch"}, false, ""},
		{"written, its path not valid UTF-8 (the helper's flag decides)", func() sandbox.ExecEvent {
			e := written(touch, `/tmp/\xff`)
			e.Written = "/tmp/\ufffd"
			return e
		}(), []string{"touch"}, false, ""},
		{"the loader's own file", loader, []string{"ld-linux-x86-64.so.2"}, true, ""},
		{"a written copy of the loader", written(loader, "/tmp/l"), []string{"ld-linux-x86-64.so.2"}, true, ""},
	}
	for _, tc := range tests {
		id := tab.identify(tc.ev)
		var names []string
		for _, n := range id.names {
			if n == "touch" || n == "curl" || n == "deploy" || n == "ld-linux-x86-64.so.2" {
				names = append(names, n) // a loader also goes by its other names
			}
		}
		if !slices.Equal(names, tc.names) || id.loader != tc.loader || (tc.problem == "") != (id.problem == "") ||
			!strings.Contains(id.problem, tc.problem) {
			t.Errorf("%s: %+v, want names %q loader %v problem %q", tc.name, id, tc.names, tc.loader, tc.problem)
		}
	}

	// A host program that changed since the table was built cannot be
	// compared: a problem, not a pass.
	f, err := os.OpenFile(filepath.Join(dir, "curl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	ev := written(curl, "/tmp/c")
	ev.BuildID = ""
	if id := tab.identify(ev); !strings.Contains(id.problem, "changed since it was found") {
		t.Errorf("changed host program: %+v", id)
	}

	// A program that exists but cannot be read makes every written program
	// unverifiable (programs not written are still known by file).
	tab.broken = []string{"/usr/bin/broken"}
	if id := tab.identify(written(touch, "/tmp/x")); id.problem == "" {
		t.Errorf("broken table passed a written program: %+v", id)
	}
	if id := tab.identify(touch); id.problem != "" || !slices.Equal(id.names, []string{"touch"}) {
		t.Errorf("broken table, program not written: %+v", id)
	}
}

// TestExecRequestsIdentity: what the identity adds to the requests: the
// names of the host programs it is (decided with the same words), the
// written path in every request's target, and unverifiable for a loader or
// a problem.
func TestExecRequestsIdentity(t *testing.T) {
	ev := sandbox.ExecEvent{Exe: "/tmp/x", Written: "/tmp/x", Argv: []string{"/tmp/x", "-rf", "/etc"}, Cwd: "/ws"}
	reqs := execRequests(ev, identity{names: []string{"rm"}}, "")
	var got []string
	for _, r := range reqs {
		if r.Target.Exe != "/tmp/x" {
			t.Errorf("request without the written path: %+v", r)
		}
		got = append(got, r.Target.Resource+"|"+r.Target.Command+"|"+r.Risk.String())
	}
	if want := []string{"x|x -rf /etc|medium", "rm|rm -rf /etc|critical"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, id := range []identity{{loader: true}, {problem: "cannot compare"}} {
		reqs := execRequests(sandbox.ExecEvent{Exe: "/tmp/l", Written: "/tmp/l", Argv: []string{"/tmp/l", "/usr/bin/true"}}, id, "")
		if len(reqs) != 1 || reqs[0].Risk != grants.RiskCritical || !strings.HasPrefix(reqs[0].Target.Option, OptionUnverifiable) {
			t.Errorf("%+v: %+v", id, reqs)
		}
	}
	if r := execRequests(sandbox.ExecEvent{Exe: "/usr/bin/git", Argv: []string{"git", "push"}}, identity{names: []string{"git"}}, ""); len(r) != 1 || r[0].Target.Exe != "" {
		t.Errorf("host git: %+v", r)
	}
}

// BenchmarkProgramTable: building the table for interactive-dev and the
// usual PATH (once per policy and PATH; the first command pays it).
func BenchmarkProgramTable(b *testing.B) {
	p := policyFor(b, b.TempDir(), `profile = "interactive-dev"`)
	for b.Loop() {
		var c programCache
		if tab := c.table(p, "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"); len(tab.byFile) == 0 {
			b.Fatal("no program found")
		}
	}
}

// TestProgramCache: the table is built once per policy and PATH, and again
// when a folder it searched changes (a program added, replaced, removed).
func TestProgramCache(t *testing.T) {
	dir := t.TempDir()
	p := policyFor(t, t.TempDir(), denyTouchTOML)
	var c programCache
	a := c.table(p, dir)
	if b := c.table(p, dir); b != a {
		t.Error("the same policy and PATH built the table again")
	}
	copyTo(t, "/usr/bin/true", filepath.Join(dir, "touch"))
	now := time.Now().Add(time.Second)
	if err := os.Chtimes(dir, now, now); err != nil { // coarse mtimes: make the change visible
		t.Fatal(err)
	}
	b := c.table(p, dir)
	if b == a {
		t.Fatal("a changed PATH folder did not rebuild the table")
	}
	if id := b.identify(hostFacts(t, filepath.Join(dir, "touch"))); !slices.Contains(id.names, "touch") {
		t.Errorf("new program not in the rebuilt table: %+v", id)
	}
	if other := c.table(policyFor(t, t.TempDir(), denyTouchTOML), dir); other == b {
		t.Error("another policy shares the table")
	}
	// A change whose folder's modification time is set back to what it
	// was is a change all the same.
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	copyTo(t, "/usr/bin/true", filepath.Join(dir, "sneaky"))
	if err := os.Chtimes(dir, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if d := c.table(p, dir); d == b {
		t.Error("a change hidden behind the old modification time did not rebuild the table")
	}
}

// TestProgramTableNil: without a table every program is unverifiable.
func TestProgramTableNil(t *testing.T) {
	var tab *programTable
	if id := tab.identify(sandbox.ExecEvent{Exe: "/usr/bin/true"}); id.problem == "" || tab.sizes() != nil {
		t.Errorf("nil table: %+v", id)
	}
}

// TestLoaderDirCache: the loader folders are listed again when a folder
// the globs list changes (a loader folder added, removed or replaced, at
// either level), whatever its modification time says, and kept while none
// does; a folder changed within the settling time is listed again at every
// call.
func TestLoaderDirCache(t *testing.T) {
	root := t.TempDir()
	usr := filepath.Join(root, "usr")
	globs := []string{root + "/lib*/ld-*.so*", usr + "/lib*/ld-*.so*", root + "/lib*/*-linux-*/ld-*.so*", usr + "/lib*/*-linux-*/ld-*.so*"}
	roots := []string{root, usr}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Every folder's modification time set back to the same instant: the
	// cache must not rely on it.
	old := time.Now().Add(-time.Hour)
	backdate := func() {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				err = os.Chtimes(p, old, old)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rel := func(dirs []string) string {
		var out []string
		for _, d := range dirs {
			r, _ := filepath.Rel(root, d)
			out = append(out, r)
		}
		return strings.Join(out, " ")
	}
	mk("lib/x86_64-linux-gnu")
	mk("usr/lib")
	backdate()
	fresh := loaderDirCache{} // the default settling time: just made, so never kept
	if got := rel(fresh.dirsFor(roots, globs)); got != "lib lib/x86_64-linux-gnu usr/lib" || fresh.key != "" {
		t.Errorf("just made: %q, kept %v", got, fresh.key != "")
	}
	c := loaderDirCache{settle: -1} // every listing kept
	for _, st := range []struct {
		name   string
		change func()
		want   string
	}{
		{"first", func() {}, "lib lib/x86_64-linux-gnu usr/lib"},
		{"a multiarch folder added", func() { mk("lib/aarch64-linux-gnu") }, "lib lib/aarch64-linux-gnu lib/x86_64-linux-gnu usr/lib"},
		{"a lib folder added", func() { mk("lib64") }, "lib lib/aarch64-linux-gnu lib/x86_64-linux-gnu lib64 usr/lib"},
		{"one beneath /usr added", func() { mk("usr/lib32/i386-linux-gnu") }, "lib lib/aarch64-linux-gnu lib/x86_64-linux-gnu lib64 usr/lib usr/lib32 usr/lib32/i386-linux-gnu"},
		{"one removed", func() { os.Remove(filepath.Join(root, "lib/aarch64-linux-gnu")) }, "lib lib/x86_64-linux-gnu lib64 usr/lib usr/lib32 usr/lib32/i386-linux-gnu"},
		{"a lib folder replaced", func() {
			os.RemoveAll(filepath.Join(root, "lib64"))
			mk("lib64/x-linux-y")
		}, "lib lib/x86_64-linux-gnu lib64 lib64/x-linux-y usr/lib usr/lib32 usr/lib32/i386-linux-gnu"},
	} {
		st.change()
		backdate()
		got := rel(c.dirsFor(roots, globs))
		if got != st.want || c.key == "" {
			t.Errorf("%s: %q (kept %v), want %q", st.name, got, c.key != "", st.want)
		}
		// The next call, nothing changed, answers the same from the cache.
		listed := c.key
		if again := rel(c.dirsFor(roots, globs)); again != st.want || c.key != listed {
			t.Errorf("%s, again: %q, want %q from the cache", st.name, again, st.want)
		}
	}
}

func BenchmarkLoaderDirs(b *testing.B) {
	var c loaderDirCache
	b.Run("listed", func(b *testing.B) {
		for b.Loop() {
			loaderDirs(loaderGlobs())
		}
	})
	b.Run("cached", func(b *testing.B) {
		for b.Loop() {
			c.dirs()
		}
	})
}
