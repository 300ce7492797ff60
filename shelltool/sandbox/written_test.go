//go:build linux

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func fileFacts(t *testing.T, p string) (int64, ELFIdent, string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	id, err := ReadELFIdent(f)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := FileSHA256(f)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size(), id, sum
}

// TestExecGateWritten: the tracer marks the programs the command may have
// written (a copy in /tmp, /dev/shm or the workspace, a script there) and
// no others, reads a written executable's build-id, and hashes it only at
// a size of Spec.IdentitySizes; cold and warm helpers alike.
func TestExecGateWritten(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	trueSize, trueID, trueSum := fileFacts(t, "/usr/bin/true")
	_, echoID, _ := fileFacts(t, "/usr/bin/echo")
	if trueID.BuildID == "" || echoID.BuildID == "" {
		t.Fatalf("host programs without build-id: %+v %+v", trueID, echoID)
	}
	cmd := "cp /usr/bin/true /tmp/t && /tmp/t && /usr/bin/true && cp /usr/bin/true ./t && ./t && " +
		"cp /usr/bin/echo /dev/shm/e && /dev/shm/e -n && printf '#!/bin/sh\\n' >/tmp/s && chmod +x /tmp/s && /tmp/s"
	realSh, _ := filepath.EvalSymlinks("/bin/sh")
	type want struct {
		exe, written, buildID, sum string
	}
	wants := []want{
		{"/usr/bin/cp", "", "", ""},
		{"/tmp/t", "/tmp/t", trueID.BuildID, trueSum},
		{"/usr/bin/true", "", "", ""},
		{"/usr/bin/cp", "", "", ""},
		{filepath.Join(ws.dir, "t"), filepath.Join(ws.dir, "t"), trueID.BuildID, trueSum},
		{"/usr/bin/cp", "", "", ""},
		{"/dev/shm/e", "/dev/shm/e", echoID.BuildID, ""}, // not a size of interest: not hashed
		{"/usr/bin/chmod", "", "", ""},
		{realSh, "/tmp/s", "", ""}, // the script is written, its interpreter is not
	}
	eachPath(t, func(t *testing.T, run runFunc) {
		g := &gateRecorder{}
		s := ws.spec(cmd)
		s.ExecGate, s.IdentitySizes = g.gate, []int64{trueSize}
		r, err := run(context.Background(), s)
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("run: %v %+v", err, r)
		}
		ev := g.seen()
		if len(ev) != len(wants) {
			t.Fatalf("%d events, want %d: %+v", len(ev), len(wants), ev)
		}
		for i, w := range wants {
			e := ev[i]
			interpSet := e.InterpIno != 0 && e.InterpDev != 0
			if e.Exe != w.exe || e.Written != w.written || e.WrittenExe != (w.buildID != "") || e.BuildID != w.buildID || e.SHA256 != w.sum || e.Problem != "" || e.Size == 0 ||
				interpSet != (w.buildID != "") {
				t.Errorf("event %d: %+v, want %+v", i, e, w)
			}
		}
	})
}

// TestExecGateWrittenByDescriptor: a script exec'd through a descriptor
// (fexecve: the kernel names it /dev/fd/N) is counted as written, since
// the helper cannot tell where that descriptor's file lies.
func TestExecGateWrittenByDescriptor(t *testing.T) {
	needSandbox(t)
	needTool(t, "python3")
	ws := newWorkspace(t)
	writeExec(t, filepath.Join(ws.dir, "s"), "#!/bin/sh\necho via-fd\n")
	g := &gateRecorder{}
	s := ws.spec(`python3 -c 'import os; fd = os.open("s", os.O_RDONLY); os.set_inheritable(fd, True); os.execve(fd, ["git", "push"], {})'`)
	s.ExecGate = g.gate
	r, err := Run(context.Background(), s)
	if err != nil || r.Stdout != "via-fd\n" {
		t.Fatalf("run: %v %+v", err, r)
	}
	found := false
	for _, e := range g.seen() {
		if len(e.ExecPath) > 8 && e.ExecPath[:8] == "/dev/fd/" {
			found = true
			if e.Written != e.ExecPath {
				t.Errorf("script by descriptor not written: %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("no exec by descriptor among %+v", g.seen())
	}
}

// TestExecGateWrittenDotDot: a script reached through a symlink and ".."
// (the kernel resolves the symlink first, a lexical clean drops it) is
// written, wherever the clean path would lead.
func TestExecGateWrittenDotDot(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	if err := os.MkdirAll(filepath.Join(ws.dir, "usr/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(ws.dir, "usr/bin/git"), "#!/bin/sh\necho fake-git \"$@\"\n")
	n := len(strings.Split(strings.Trim(ws.dir, "/"), "/")) + 1
	deep := filepath.Join(ws.dir, strings.Repeat("d/", n))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(deep, filepath.Join(ws.dir, "l")); err != nil {
		t.Fatal(err)
	}
	path := ws.dir + "/l" + strings.Repeat("/..", n) + "/usr/bin/git" // cleans to /usr/bin/git
	g := &gateRecorder{}
	s := ws.spec(path + " push origin main; cd l && ." + strings.Repeat("/..", n) + "/usr/bin/git push")
	s.ExecGate = g.gate
	r, err := Run(context.Background(), s)
	if err != nil || r.Stdout != "fake-git push origin main\nfake-git push\n" {
		t.Fatalf("run: %v %+v", err, r)
	}
	found := 0
	for _, e := range g.seen() {
		if strings.HasSuffix(e.ExecPath, "/usr/bin/git") {
			found++
			if e.Written == "" || e.Written == "/usr/bin/git" {
				t.Errorf("script through .. not written (or named as the host's): %+v", e)
			}
		}
	}
	if found != 2 {
		t.Errorf("%d execs of the script, want 2: %+v", found, g.seen())
	}
}

// TestHasDotDot: a ".." component anywhere, and nothing else, as a split
// on "/" finds it.
func TestHasDotDot(t *testing.T) {
	for _, p := range []string{"", "/", "..", "/..", "../x", "/a/../b", "a/..", "/a/..b", "/a/b..", "/...", "/a/.../b",
		"..a", "a..", "/a//../", "/./", ".", "//..//", "/a/b/c"} {
		want := slices.Contains(strings.Split(p, "/"), "..")
		if got := hasDotDot(p); got != want {
			t.Errorf("hasDotDot(%q) = %v, want %v", p, got, want)
		}
	}
}
