//go:build linux

package shelltool

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const denyTouchTOML = `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-touch"
capability = "process.exec"
target     = { resource = "touch" }
`

// TestExecGateIdentity: a program a deny rule names is refused under any
// name where the command can write: a copy in /tmp, /dev/shm or the
// workspace, a copy with a byte appended (same build-id), a hard link, a
// symlink; a copied dynamic loader is refused whatever it runs. Nothing of
// the refused program runs (the marker it would make is absent).
func TestExecGateIdentity(t *testing.T) {
	needProgram(t, "touch", "cc", "python3")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, denyTouchTOML)
	marker := filepath.Join(ws, "marker")
	hostLink := filepath.Join(ws, "hostlink")
	if err := os.Link("/usr/bin/touch", hostLink); err != nil && !errors.Is(err, syscall.EXDEV) {
		t.Fatal(err)
	} else if err != nil {
		hostLink = "" // another file system: no hard link can exist
	}
	loader := "/lib64/ld-linux-x86-64.so.2"
	// Written programs naming their own ELF interpreter: a named program
	// (it would run first, as itself) and a loader the command wrote.
	if err := os.WriteFile(filepath.Join(ws, "h.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyTo(t, loader, filepath.Join(ws, "myld"))
	for out, interp := range map[string]string{"interp-touch": "/usr/bin/touch", "interp-written": filepath.Join(ws, "myld")} {
		if b, err := exec.Command("cc", "-Wl,--dynamic-linker="+interp, "-o", filepath.Join(ws, out), filepath.Join(ws, "h.c")).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, b)
		}
	}
	// patch sets e_ident's data byte (5), which the kernel ignores.
	patch := func(f string) string {
		return "python3 -c \"f=open('" + f + "','r+b');f.seek(5);f.write(bytes([7]))\""
	}
	tests := []struct{ name, cmd, want, rule string }{
		{"copy in /tmp", "cp /usr/bin/touch /tmp/x && /tmp/x " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"copy in /dev/shm", "cp /usr/bin/touch /dev/shm/x && /dev/shm/x " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"copy in the workspace", "cp /usr/bin/touch ./x && ./x " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"copy run with argv0 cat", "cp /usr/bin/touch /tmp/x && (exec -a cat /tmp/x " + marker + "); echo rc=$?", "rc=137", "no-touch"},
		{"copy named by invalid UTF-8", "cp /usr/bin/touch $'/tmp/\\xff' && $'/tmp/\\xff' " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"copy in a folder named by invalid UTF-8", "mkdir $'/tmp/\\xfe' && cp /usr/bin/touch $'/tmp/\\xfe/x' && $'/tmp/\\xfe/x' " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"copy with a byte appended (same build-id)", "cp /usr/bin/touch /tmp/x && printf x >>/tmp/x && /tmp/x " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"symlink", "ln -s /usr/bin/touch /tmp/x && /tmp/x " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"hard link made inside (cross-mount: refused or killed)", "{ ln /usr/bin/touch ./hl 2>/dev/null && ./hl " + marker + "; } ; echo rc=$?", "rc=", ""},
		{"copied loader runs the denied program", "cp " + loader + " /tmp/l && /tmp/l /usr/bin/touch " + marker + "; echo rc=$?", "rc=137", "exec_critical_risk"},
		{"copied loader runs an allowed program", "cp " + loader + " /tmp/l && /tmp/l /usr/bin/true; echo rc=$?", "rc=137", "exec_critical_risk"},
		{"a named program as the interpreter", "./interp-touch " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"a written interpreter", "./interp-written " + marker + "; echo rc=$?", "rc=137", "exec_critical_risk"},
		{"copy with e_ident's data byte patched", "cp /usr/bin/touch /tmp/x && " + patch("/tmp/x") + " && /tmp/x " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"patched loader copy runs the denied program", "cp " + loader + " /tmp/l && " + patch("/tmp/l") + " && /tmp/l /usr/bin/touch " + marker + "; echo rc=$?", "rc=137", "exec_critical_risk"},
		{"a named program as the interpreter, header patched", "cp interp-touch p5 && " + patch("p5") + " && ./p5 " + marker + "; echo rc=$?", "rc=137", "no-touch"},
		{"loader in the workspace", "cp " + loader + " ./ld.x && ./ld.x /usr/bin/true; echo rc=$?", "rc=137", "exec_critical_risk"},
	}
	if hostLink != "" {
		tests = append(tests, struct{ name, cmd, want, rule string }{
			"hard link made on the host", hostLink + " " + marker + "; echo rc=$?", "rc=137", "no-touch"})
	}
	tool := &Tool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			out := runTool(t, tool, (&gateCall{}).env(p), tc.cmd)
			if !strings.Contains(out.Stdout, tc.want) {
				t.Errorf("stdout %q, want %q (stderr %q, refused %q)", out.Stdout, tc.want, out.Stderr, out.RefusedPrograms)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the denied program ran: marker written (stdout %q)", out.Stdout)
			}
			if tc.rule != "" && (len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "rule "+tc.rule)) {
				t.Errorf("refused programs %q, want one by %s", out.RefusedPrograms, tc.rule)
			}
		})
	}
}

// TestExecGateIdentityBuildsRun: programs the command builds or copies
// that are not a named program run: a C program compiled in the workspace,
// a copy of an unnamed program, make recipes under interactive-dev, a
// script in /tmp. A copy changed beyond its build-id is not recognised
// (documented: the gate cannot tell what a program does).
func TestExecGateIdentityBuildsRun(t *testing.T) {
	needProgram(t, "make", "cc", "touch", "go")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, denyTouchTOML)
	files := map[string]string{
		"hello.c":  "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n",
		"Makefile": "all: hello\n\t./hello\n\tsh -c 'echo built'\nhello: hello.c\n\tcc -o hello hello.c\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Go programs as go build makes them (ET_EXEC; a PIE names its
	// interpreter) run when written.
	goProgram(t, ws, "gohello", "println(\"gohello\")")
	goProgram(t, ws, "gopie", "println(\"gopie\")", "-buildmode=pie")
	tool := &Tool{}
	for _, tc := range []struct{ name, cmd, want string }{
		{"Go programs, executable and PIE", "./gohello 2>&1 && ./gopie 2>&1", "gohello\ngopie\n"},
		{"make builds and runs a C program", "make -s", "hello\nbuilt\n"},
		{"the built program again, and from /tmp", "./hello && cp hello /tmp/h && /tmp/h", "hello\nhello\n"},
		{"a copy of an unnamed program", "cp /usr/bin/echo /tmp/e && /tmp/e ok", "ok\n"},
		{"a script in /tmp", "printf '#!/bin/sh\\necho script\\n' >/tmp/s && chmod +x /tmp/s && /tmp/s", "script\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runTool(t, tool, (&gateCall{}).env(p), tc.cmd)
			if out.ExitCode != 0 || out.Stdout != tc.want || len(out.RefusedPrograms) != 0 {
				t.Errorf("%+v, want stdout %q", out, tc.want)
			}
		})
	}
}

// TestExecGateIdentityStaticPIE: a written static-pie program cannot be
// told from a copied dynamic loader (ET_DYN, no interpreter), so it is
// refused as unverifiable (documented).
func TestExecGateIdentityStaticPIE(t *testing.T) {
	needProgram(t, "cc")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	if err := os.WriteFile(filepath.Join(ws, "h.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("cc", "-static-pie", "-o", filepath.Join(ws, "spie"), filepath.Join(ws, "h.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc -static-pie: %v\n%s", err, b)
	}
	out := runTool(t, &Tool{}, (&gateCall{}).env(p), "./spie; echo rc=$?")
	if out.Stdout != "rc=137\n" || len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "exec_critical_risk") {
		t.Errorf("written static-pie: %+v", out)
	}
}

// TestExecGateIdentityGoBuildID: a Go program linked without a GNU
// build-id (as kubectl or terraform are) is still known after a byte is
// appended to a copy: by its Go build ID note.
func TestExecGateIdentityGoBuildID(t *testing.T) {
	needProgram(t, "go")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	bin := filepath.Join(ws, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(ws, "marker")
	goProgram(t, bin, "gox", `if len(os.Args) > 1 { _ = os.WriteFile(os.Args[1], nil, 0o644) }`, "-ldflags=-B none")
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	p := policyFor(t, ws, `profile = "interactive-dev"

[[rules.deny]]
rule_id    = "no-gox"
capability = "process.exec"
target     = { resource = "gox" }
`)
	out := runTool(t, &Tool{}, (&gateCall{}).env(p), "cp bin/gox /tmp/k && printf x >>/tmp/k && /tmp/k "+marker+"; echo rc=$?")
	if out.Stdout != "rc=137\n" || len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "rule no-gox") {
		t.Errorf("copy of a Go program with a byte appended: %+v", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the denied program ran: marker written")
	}
}

// goProgram builds a Go program whose main is body into dir/name.
func goProgram(t *testing.T, dir, name, body string, flags ...string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module "+name+"\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"os\"\n\nvar _ = os.Args\n\nfunc main() { "+body+" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, ".")...)
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, b)
	}
	return out
}

// TestExecGateIdentityCritical: a copy of a program the line analysis
// knows keeps its classification: a renamed rm removing a folder outside
// the workspace is critical (killed), with no rule naming rm at all.
func TestExecGateIdentityCritical(t *testing.T) {
	needProgram(t, "rm")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, `profile = "interactive-dev"`)
	out := runTool(t, &Tool{}, (&gateCall{}).env(p), "mkdir -p /tmp/outside && cp /usr/bin/rm ./x && ./x -r /tmp/outside; echo rc=$?; test -d /tmp/outside && echo kept")
	if out.Stdout != "rc=137\nkept\n" || len(out.RefusedPrograms) != 1 || !strings.Contains(out.RefusedPrograms[0], "exec_critical_risk") ||
		!strings.Contains(out.RefusedPrograms[0], "`rm -r /tmp/outside`") {
		t.Errorf("renamed rm -r outside: %+v", out)
	}
}
