//go:build linux

package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// buildHelperBinary builds cmd/onellm-sandbox into a temporary folder and
// returns its path and SHA-256.
func buildHelperBinary(t testing.TB) (path, sum string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		missingDep(t, "no go toolchain to build the helper binary: %v", err)
	}
	path = filepath.Join(t.TempDir(), HelperBinaryName)
	cmd := exec.Command(gobin, "build", "-trimpath", "-o", path, "github.com/onellm/onellm-mcp/cmd/onellm-sandbox")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the helper binary: %v\n%s", err, out)
	}
	return path, fileSHA256(t, path)
}

// builtHelper is the helper binary, built and loaded; path is its file.
func builtHelper(t testing.TB) (h *HelperProgram, path string) {
	t.Helper()
	path, sum := buildHelperBinary(t)
	h, err := LoadHelperProgram(path, sum)
	if err != nil {
		t.Fatal(err)
	}
	return h, path
}

func fileSHA256(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestLoadHelperProgramRefuses: a helper file that is not exactly the one
// the digest names, or not a plain file, is refused (and a FIFO does not
// block the load).
func TestLoadHelperProgramRefuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("#!/bin/sh\ntouch "+filepath.Join(dir, "ran")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := fileSHA256(t, good)
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, helperMaxSize+1); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, digest, want string
	}{
		{"another digest", good, strings.Repeat("0", 64), "this server was built with"},
		{"a symlink, even to the right file", link, sum, "too many levels of symbolic links"},
		{"digest not hex", good, "zz" + sum[2:], "is not a SHA-256"},
		{"digest too short", good, sum[:62], "is not a SHA-256"},
		{"missing", filepath.Join(dir, "none"), sum, "no such file"},
		{"a FIFO", fifo, sum, "not a regular file"},
		{"a folder", dir, sum, "not a regular file"},
		{"too large", big, sum, "not a regular file of at most"},
		{"a device through a symlink", zero, sum, "too many levels of symbolic links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := LoadHelperProgram(tc.path, tc.digest)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadHelperProgram = %v, %v; want an error with %q", h, err, tc.want)
			}
			if !strings.Contains(tc.digest, sum[:16]) && strings.Contains(err.Error(), sum[:16]) {
				t.Fatalf("the error names a file's digest: %v", err)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("a refused helper file ran")
	}
}

// TestLoadHelperProgramSealed: the copy is sealed (no write, no resize, no
// further seal), close-on-exec and above the descriptors a child's
// descriptor shuffle reaches.
func TestLoadHelperProgramSealed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h")
	if err := os.WriteFile(path, []byte("content"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHelperProgram(path, fileSHA256(t, path))
	if err != nil {
		t.Fatal(err)
	}
	defer h.memfd.Close()
	if !h.Sealed() || h.Fallback() != nil {
		t.Fatalf("helper %s: sealed %v, fallback %v", h, h.Sealed(), h.Fallback())
	}
	fd := int(h.memfd.Fd())
	if fd < helperFDMin {
		t.Errorf("memfd is descriptor %d, below %d", fd, helperFDMin)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("memfd flags %#x, %v: want close-on-exec", flags, err)
	}
	if _, err := unix.Pwrite(fd, []byte("X"), 0); err != unix.EPERM {
		t.Errorf("write to the sealed copy: %v, want EPERM", err)
	}
	if err := unix.Ftruncate(fd, 1); err != unix.EPERM {
		t.Errorf("shrink: %v, want EPERM", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_FUTURE_WRITE); err != unix.EPERM {
		t.Errorf("another seal: %v, want EPERM", err)
	}
	// Writable through a new open of /proc/self/fd/N? The seal is on the
	// file, not the descriptor.
	if f, err := os.OpenFile(h.path, os.O_WRONLY, 0); err == nil {
		_, werr := f.Write([]byte("X"))
		f.Close()
		if werr == nil {
			t.Error("the sealed copy was written through a reopen")
		}
	}
	got := make([]byte, 16)
	n, _ := unix.Pread(fd, got, 0)
	if string(got[:n]) != "content" {
		t.Errorf("sealed copy holds %q", got[:n])
	}
}

// TestHelperBinaryRunsCommands: helpers started from the sealed helper
// binary run commands exactly as the running binary's do (warm and cold),
// and a helper is that memfd, not a file anyone can write.
func TestHelperBinaryRunsCommands(t *testing.T) {
	needSandbox(t)
	h, path := builtHelper(t)
	abi, used, err := ProbeHelper(h)
	if err != nil || used != h || abi < 1 {
		t.Fatalf("ProbeHelper = %d, %s, %v", abi, used, err)
	}
	// The file may change now: the sealed copy is what runs.
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 99\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := newWorkspace(t)
	r := NewRunnerWith(h, NetworkNone)
	defer r.Close()
	pid := waitWarm(t, r, NetworkNone)
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil || !strings.HasPrefix(exe, "/memfd:"+HelperBinaryName) {
		t.Errorf("warm helper's exe %q, %v: want the memfd", exe, err)
	}
	for i, cold := range []bool{false, true} {
		s := ws.spec("cat /etc/shadow 2>/dev/null || echo denied; touch made")
		var res Result
		if cold {
			n, nerr := normalize(s, true)
			if nerr != nil {
				t.Fatal(nerr)
			}
			res, err = execute(context.Background(), &n, h)
		} else {
			res, err = r.Run(context.Background(), s)
		}
		if err != nil || res.ExitCode != 0 || res.Stdout != "denied\n" {
			t.Fatalf("%d (cold %v): %v %+v", i, cold, err, res)
		}
	}
	if r.warmRuns.Load() != 1 {
		t.Errorf("warm runs %d, want 1", r.warmRuns.Load())
	}
}

// TestProbeHelperFallsBack: a sealed program that is no helper fails the
// probe; the running binary is used instead and Fallback says why.
func TestProbeHelperFallsBack(t *testing.T) {
	needSandbox(t)
	h, err := LoadHelperProgram("/bin/true", fileSHA256(t, "/bin/true"))
	if err != nil {
		t.Fatal(err)
	}
	_, used, err := ProbeHelper(h)
	if err != nil {
		t.Fatalf("the running binary's probe: %v", err)
	}
	if used.Sealed() || used.Fallback() == nil || !strings.Contains(used.String(), "failed the probe") {
		t.Fatalf("used %s (sealed %v)", used, used.Sealed())
	}
	// The given-up copy is closed.
	if _, err := unix.FcntlInt(h.memfd.Fd(), unix.F_GETFD, 0); err == nil {
		t.Error("the memfd of the given-up helper is still open")
	}
}

// TestDefaultHelperWithoutDigest: a build that names no digest (go test,
// go install) uses the running binary.
func TestDefaultHelperWithoutDigest(t *testing.T) {
	h := DefaultHelper()
	if h.Sealed() || h.Fallback() == nil || h.path != "/proc/self/exe" {
		t.Fatalf("DefaultHelper = %s", h)
	}
}
