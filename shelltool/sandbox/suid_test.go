//go:build linux && amd64

package sandbox

import (
	"archive/tar"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSetuidSurvives runs each way of making a setuid or setgid file in
// the sandbox, then looks on the host: no file in the workspace may carry
// either bit, and plain modes still work.
func TestNoSetuidSurvives(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	// A setuid source outside the workspace, readable by the command.
	srcDir := t.TempDir()
	src := filepath.Join(srcDir, "suidprog")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, fs.ModeSetuid|0o755); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(src); fi.Mode()&fs.ModeSetuid == 0 {
		t.Fatalf("could not make the setuid source: %v", fi.Mode())
	}
	tarPath := filepath.Join(srcDir, "modes.tar")
	writeTar(t, tarPath, map[string]int64{"tsuid": 0o4755, "tsgid": 0o2755, "tdir/": 0o2755})

	py := func(code string) string { return "/usr/bin/python3 -c '" + code + "'" }
	// perlSys calls a system call with $p holding the path "p".
	perlSys := func(args string) string {
		return `perl -e 'my $p = "p"; my $r = syscall(` + args + `); print $r == -1 ? "$!\n" : "ok\n"'`
	}
	const eperm = "Operation not permitted"
	tests := []struct {
		name, cmd, want string
	}{
		{"chmod 4755", "touch a && chmod 4755 a", eperm},
		{"chmod g+s", "touch b && chmod g+s b", eperm},
		{"chmod u+s on a folder", "mkdir c && chmod u+s c", eperm},
		{"install -m 4755", "install -m 4755 /bin/true d", eperm},
		{"cp -p of a setuid binary", "cp -p " + src + " e", "cp:"},
		{"hard link to a setuid binary", "ln " + src + " e2; ln /usr/bin/passwd e3", "ln:"},
		{"tar x with modes", "tar -xpf " + tarPath, eperm},
		{"mknod regular file 4755", py(`import os,stat; os.mknod("f", stat.S_IFREG|0o4755)`), eperm},
		{"mknod fifo 2755", py(`import os,stat; os.mknod("g", stat.S_IFIFO|0o2755)`), eperm},
		{"mkdir -m 2755", "mkdir -m 2755 h", eperm},
		{"open O_CREAT 04755", py(`import os; os.open("i", os.O_CREAT|os.O_WRONLY, 0o4755)`), eperm},
		{"fchmod", py(`import os; fd=os.open("j", os.O_CREAT|os.O_WRONLY, 0o644); os.fchmod(fd, 0o6755)`), eperm},
		{"creat 02755", perlSys(`85, $p, 02755`), eperm},
		{"fchmodat2", "touch p && " + perlSys(`452, -100, $p, 04755, 0`), eperm},
		{"openat2 is ENOSYS", perlSys(`437, -100, $p, 0, 0`), "Function not implemented"},
		{"plain chmod works", "touch n && chmod 755 n && stat -c %a n", "755"},
		{"open O_CREAT 0644 works", py(`import os; os.open("o", os.O_CREAT|os.O_WRONLY, 0o644); print("created")`), "created"},
		{"open without O_CREAT ignores the mode", py(`import os; os.close(os.open("o", os.O_RDONLY)); print("opened")`), "opened"},
		{"workspace mounted nosuid", "grep ' " + ws.dir + " ' /proc/self/mountinfo", "nosuid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := ws.spec(tc.cmd)
			s.Readable = []string{srcDir}
			r, err := Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if out := r.Stdout + r.Stderr; !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, output %q does not contain %q", r.ExitCode, out, tc.want)
			}
		})
	}
	err := filepath.WalkDir(ws.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			t.Errorf("%s has mode %v after the commands", p, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeTar(t *testing.T, path string, entries map[string]int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for name, mode := range entries {
		h := &tar.Header{Name: name, Mode: mode, Typeflag: tar.TypeReg, Size: 0}
		if strings.HasSuffix(name, "/") {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}
