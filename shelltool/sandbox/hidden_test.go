//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
	"golang.org/x/sys/unix"
)

type runResult struct {
	res Result
	err error
}

// runAsync starts s in the background; the result arrives on the channel.
func runAsync(s Spec) <-chan runResult {
	ch := make(chan runResult, 1)
	go func() {
		res, err := Run(context.Background(), s)
		ch <- runResult{res, err}
	}()
	return ch
}

// awaitName waits (inotify, no polling) until the command names file in
// dir, or the command ends first, which fails the test.
func awaitName(t *testing.T, w *testkit.DirWatch, dir, file string, done <-chan runResult) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Lstat(filepath.Join(dir, file)); err == nil {
			return
		}
		select {
		case r := <-done:
			t.Fatalf("the command ended before naming %s: %v %+v", file, r.err, r.res)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not name %s within 60 s", file)
		}
		w.Wait(100 * time.Millisecond)
	}
}

func writeFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// replaceByRename puts content at p the way editors, passwd and useradd
// do: a new file renamed over the old one.
func replaceByRename(t *testing.T, p, content string) {
	t.Helper()
	writeFile(t, p+".new", content, 0o644)
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
}

// TestHiddenFileReplacedByHost: a hidden credential file that the host
// replaces by a rename while the command reads it in a tight loop (a shell
// builtin: no exec between reads) is never read: PID 1 kills the command
// at the mount's loss, the result says why and carries no output.
func TestHiddenFileReplacedByHost(t *testing.T) {
	needSandbox(t)
	for _, gated := range []bool{false, true} {
		name := "ungated"
		if gated {
			name = "gated"
		}
		t.Run(name, func(t *testing.T) {
			ws := newWorkspace(t)
			env := filepath.Join(ws.dir, ".env")
			writeFile(t, env, "OLD-SECRET\n", 0o600)
			w := testkit.WatchDir(t, ws.dir)
			s := ws.spec(`touch started; while :; do read -r l < .env && echo "read: $l"; cat .env; done 2>/dev/null`)
			s.Hidden = []string{env}
			s.Timeout = 120 * time.Second
			if gated {
				s.ExecGate = func(ExecEvent) bool { return true }
			}
			done := runAsync(s)
			awaitName(t, w, ws.dir, "started", done)
			replaceByRename(t, env, "NEW-SECRET\n")
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			res := r.res
			if strings.Contains(res.Stdout+res.Stderr, "SECRET") {
				t.Errorf("the command read the secret: %q %q", res.Stdout, res.Stderr)
			}
			if res.TimedOut || res.Signal != "SIGKILL" || !strings.Contains(res.Stopped, env+" was replaced or removed on the host while the command ran; the command was killed so it could not read it") {
				t.Errorf("want the command stopped for %s, got %+v", env, res)
			}
		})
	}
}

// TestHiddenReadOnlyReplacedByHost: a read-only carve-out replaced on the
// host is the same case: the command is killed before it can write into
// the new file.
func TestHiddenReadOnlyReplacedByHost(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	prot := filepath.Join(ws.dir, "protected")
	writeFile(t, prot, "orig\n", 0o644)
	w := testkit.WatchDir(t, ws.dir)
	s := ws.spec(`touch started; while :; do echo WROTE 2>/dev/null >> protected; done`)
	s.ReadOnly = append(s.ReadOnly, prot)
	s.Timeout = 120 * time.Second
	done := runAsync(s)
	awaitName(t, w, ws.dir, "started", done)
	replaceByRename(t, prot, "host\n")
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.res.Stopped, prot+" was replaced or removed on the host while the command ran; the command was killed so it could not write it") {
		t.Errorf("want the command stopped for %s, got %+v", prot, r.res)
	}
}

// TestHiddenInheritedMountLost: a mount the namespace inherited from the
// server's (a container's folder, say) that the host removes mid-command
// hides nothing of the sandbox's: the command is not stopped. Only the
// loss of a mount the set-up made is.
func TestHiddenInheritedMountLost(t *testing.T) {
	needSandbox(t)
	if os.Geteuid() != 0 {
		missingDep(t, "not root: cannot mount on the host")
	}
	ws := newWorkspace(t)
	env := filepath.Join(ws.dir, ".env")
	writeFile(t, env, "OLD-SECRET\n", 0o600)
	host := t.TempDir()
	point := filepath.Join(host, "m")
	if err := os.Mkdir(point, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", point, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(point, unix.MNT_DETACH) })
	w := testkit.WatchDir(t, ws.dir)
	s := ws.spec(`touch started; while [ ! -e go ]; do sleep 0.01; done; echo done`)
	s.Hidden = []string{env}
	s.Timeout = 120 * time.Second
	done := runAsync(s)
	awaitName(t, w, ws.dir, "started", done)
	// Gone from the host's table; the sandbox's private copy is detached
	// when its mount point is removed.
	if err := unix.Unmount(point, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(point); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws.dir, "go"), "", 0o644)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Stopped != "" || r.res.ExitCode != 0 || r.res.Stdout != "done\n" {
		t.Errorf("an inherited mount's loss stopped the command: %+v", r.res)
	}
}

// TestHiddenUnaffected: a command that makes, renames and removes files of
// its own (and fails to move or remove the hidden and read-only ones),
// while the host changes other files of the workspace, is not stopped.
func TestHiddenUnaffected(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	env := filepath.Join(ws.dir, ".env")
	writeFile(t, env, "SECRET\n", 0o600)
	prot := filepath.Join(ws.dir, "protected")
	writeFile(t, prot, "orig\n", 0o644)
	writeFile(t, filepath.Join(ws.dir, "host-old"), "x", 0o644)
	w := testkit.WatchDir(t, ws.dir)
	s := ws.spec(`set -u
mkdir -p d/e && echo a > d/e/f && mv d/e/f d/g && rm -r d && echo made > m && mv m n && rm n
mv .env x 2>/dev/null && echo moved-env; rm -f .env 2>/dev/null && echo removed-env
mv protected y 2>/dev/null && echo moved-protected
touch started
while [ ! -e go ]; do sleep 0.01; done
cat host-new; cat .env state/key 2>/dev/null; echo done`)
	state := filepath.Join(ws.dir, "state")
	writeFile(t, filepath.Join(state, "key"), "KEY\n", 0o600)
	// A hidden folder holding a hidden file, in both orders.
	s.Hidden = []string{env, filepath.Join(state, "key"), state, filepath.Join(state, "key")}
	s.ReadOnly = append(s.ReadOnly, prot)
	s.Timeout = 120 * time.Second
	done := runAsync(s)
	awaitName(t, w, ws.dir, "started", done)
	// The host's own changes to files that are neither hidden nor
	// read-only change no mount.
	writeFile(t, filepath.Join(ws.dir, "host-new"), "host-new\n", 0o644)
	replaceByRename(t, filepath.Join(ws.dir, "host-old"), "y")
	if err := os.Remove(filepath.Join(ws.dir, "host-old")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws.dir, "go"), "", 0o644)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Stopped != "" || r.res.ExitCode != 0 || r.res.Stdout != "host-new\ndone\n" {
		t.Errorf("an ordinary command was disturbed: %+v", r.res)
	}
	if b, err := os.ReadFile(env); err != nil || string(b) != "SECRET\n" {
		t.Errorf(".env on the host: %q %v", b, err)
	}
}

// hiddenEtc makes a stand-in for /etc: secrets present, absent, in a
// folder, matched by a pattern, and beneath a missing folder.
func hiddenEtc(t *testing.T) (dir string, names []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "etc")
	writeFile(t, filepath.Join(dir, "shadow"), "OLD-SHADOW\n", 0o640)
	writeFile(t, filepath.Join(dir, "passwd"), "root:x:0:0\n", 0o644)
	writeFile(t, filepath.Join(dir, "ssl/private/key"), "OLD-KEY\n", 0o644)
	writeFile(t, filepath.Join(dir, "ssl/certs/ca"), "CA\n", 0o644)
	writeFile(t, filepath.Join(dir, "ssh/ssh_host_rsa_key"), "OLD-HOSTKEY\n", 0o600)
	writeFile(t, filepath.Join(dir, "ssh/ssh_config"), "Host *\n", 0o644)
	if err := os.Symlink("shadow", filepath.Join(dir, "shadow-link")); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"shadow", "shadow-link", "krb5.keytab", "ssl/private", "ssh/ssh_host_*", "wg/secret"}
}

// TestHiddenEtcReplacedByHost: /etc's secrets stay hidden when the host
// renames a new one into place, creates one that did not exist, or makes
// the missing folder that holds one, while the command reads them all in
// a loop; what is not secret stays readable.
func TestHiddenEtcReplacedByHost(t *testing.T) {
	needSandbox(t)
	ws := newWorkspace(t)
	etc, names := hiddenEtc(t)
	w := testkit.WatchDir(t, ws.dir)
	reads := `for f in shadow shadow-link krb5.keytab ssl/private/key ssl/private/new ssh/ssh_host_rsa_key wg/secret; do
  read -r l < "$E/$f" && echo "read $f: $l"
done 2>/dev/null`
	s := ws.spec("r() {\n" + reads + "\n}\ntouch started\nwhile [ ! -e go ]; do r; done\nr\nr\ncat \"$E/passwd\" \"$E/ssl/certs/ca\" \"$E/ssh/ssh_config\"; ls \"$E/ssl/private\" 2>/dev/null || echo no-list")
	s.Env = append(s.Env, "E="+etc)
	s.Readable = []string{etc}
	s.etcDir, s.etcSecrets = etc, names
	s.Timeout = 120 * time.Second
	done := runAsync(s)
	awaitName(t, w, ws.dir, "started", done)
	replaceByRename(t, filepath.Join(etc, "shadow"), "NEW-SHADOW\n")
	replaceByRename(t, filepath.Join(etc, "ssh/ssh_host_rsa_key"), "NEW-HOSTKEY\n")
	writeFile(t, filepath.Join(etc, "krb5.keytab"), "NEW-KEYTAB\n", 0o644)
	writeFile(t, filepath.Join(etc, "ssl/private/new"), "NEW-KEY\n", 0o644)
	writeFile(t, filepath.Join(etc, "wg/secret"), "NEW-WG\n", 0o644)
	writeFile(t, filepath.Join(ws.dir, "go"), "", 0o644)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.res
	if res.Stopped != "" || res.ExitCode != 0 {
		t.Errorf("the command was disturbed: %+v", res)
	}
	if strings.Contains(res.Stdout, "read ") || strings.Contains(res.Stdout, "OLD-") || strings.Contains(res.Stdout, "NEW-") {
		t.Errorf("a secret was read: %q", res.Stdout)
	}
	if res.Stdout != "root:x:0:0\nCA\nHost *\nno-list\n" {
		t.Errorf("what is not secret: %q (stderr %q)", res.Stdout, res.Stderr)
	}
}

// TestHiddenEtcSubmounts: the mounts beneath /etc (a container's
// resolv.conf, or a whole folder bound in) come back on top of the
// overlay, except one at a secret's name; one holding a secret masks it.
// The mounts are made by root on the host (ONELLM_HIDDEN_ETC names a
// prepared folder when TestHiddenUnprivileged runs this as another user,
// so the sandbox sees them as the locked mounts of a user namespace).
func TestHiddenEtcSubmounts(t *testing.T) {
	needSandbox(t)
	etc := os.Getenv("ONELLM_HIDDEN_ETC")
	if etc == "" {
		if os.Geteuid() != 0 {
			missingDep(t, "not root: cannot make the mounts beneath the stand-in /etc")
		}
		etc = submountEtc(t)
	}
	ws := newWorkspace(t)
	s := ws.spec(`cd "$E"; cat resolv.conf ssl/certs/ca; for f in ssl/private/key sudoers.d/x shadow; do cat $f 2>/dev/null && echo "read $f"; done; ls sudoers.d 2>/dev/null; echo end`)
	s.Env = append(s.Env, "E="+etc)
	s.Readable = []string{etc}
	s.etcDir, s.etcSecrets = etc, []string{"ssl/private", "sudoers.d", "shadow"}
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "nameserver bound\nCA\nend\n" || res.Stopped != "" {
		t.Errorf("got %+v", res)
	}
}

// submountEtc makes a stand-in /etc with three mounts beneath it (removed
// after the test): a file bound over resolv.conf, a folder bound over ssl
// (holding the secret ssl/private), and one over sudoers.d (a secret).
func submountEtc(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("", "hidden-etc-") // reachable by another user
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(root, "etc")
	writeFile(t, filepath.Join(etc, "resolv.conf"), "nameserver underneath\n", 0o644)
	writeFile(t, filepath.Join(etc, "ssl/certs/ca"), "underneath\n", 0o644)
	writeFile(t, filepath.Join(etc, "sudoers.d/under"), "underneath\n", 0o644)
	writeFile(t, filepath.Join(etc, "shadow"), "SHADOW\n", 0o644)
	src := filepath.Join(root, "src")
	writeFile(t, filepath.Join(src, "resolv.conf"), "nameserver bound\n", 0o644)
	writeFile(t, filepath.Join(src, "ssl/certs/ca"), "CA\n", 0o644)
	writeFile(t, filepath.Join(src, "ssl/private/key"), "KEY\n", 0o644)
	writeFile(t, filepath.Join(src, "sudoers/x"), "SUDO\n", 0o644)
	for _, b := range [][2]string{{"resolv.conf", "resolv.conf"}, {"ssl", "ssl"}, {"sudoers", "sudoers.d"}} {
		dst := filepath.Join(etc, b[1])
		if err := unix.Mount(filepath.Join(src, b[0]), dst, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind %s: %v", dst, err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dst, unix.MNT_DETACH) })
	}
	return etc
}

// hiddenTests are the tests rerunHidden runs again in another setting.
var hiddenTests = []string{"TestHiddenFileReplacedByHost", "TestHiddenReadOnlyReplacedByHost", "TestHiddenUnaffected", "TestHiddenEtcReplacedByHost", "TestHiddenEtcSubmounts", "TestSandboxProperties"}

// TestHiddenUnprivileged runs the tests above again as an unprivileged
// user (the sandbox then runs in a user namespace: the overlay needs
// userxattr, its whiteouts are made there, and the mounts beneath the
// stand-in /etc are locked), when the tests run as root; and
// TestHiddenEtcUnsearchable, which needs a folder that user cannot search.
func TestHiddenUnprivileged(t *testing.T) {
	needSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: the other tests cover it")
	}
	if os.Getenv("ONELLM_HIDDEN_UNPRIVILEGED") != "" {
		return // the copy itself
	}
	sys := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	rerunHidden(t, nil, sys, append(hiddenTests, "TestHiddenEtcUnsearchable"),
		"ONELLM_HIDDEN_ETC="+submountEtc(t), "ONELLM_HIDDEN_UNSEARCHABLE="+unsearchableEtc(t))
}

// TestHiddenUserNamespace runs the tests above again as uid 0 of a user
// namespace (`unshare -Urm`, as in a rootless container): the helper is
// not in the initial namespace although its uid is 0, so trusted.* xattrs
// are not its own; when the tests run as root, the mounts beneath the
// stand-in /etc are made outside, so they are locked inside.
func TestHiddenUserNamespace(t *testing.T) {
	needSandbox(t)
	if os.Getenv("ONELLM_HIDDEN_UNPRIVILEGED") != "" {
		return // the copy itself
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		missingDep(t, "no unshare (util-linux): %v", err)
	}
	var env []string
	if os.Geteuid() == 0 {
		env = append(env, "ONELLM_HIDDEN_ETC="+submountEtc(t))
	}
	rerunHidden(t, []string{unshare, "-Urm"}, nil, hiddenTests, env...)
}

// TestHiddenIdentityUserNamespace runs them in a user namespace that maps
// every ID to itself, as the initial one does (root only): the uid_map
// cannot tell it apart, so the helper must learn from the kernel that
// trusted.* is not its own (the probe) and that the mounts beneath the
// stand-in /etc are locked (the overlay's EINVAL: binds instead).
func TestHiddenIdentityUserNamespace(t *testing.T) {
	needSandbox(t)
	if os.Getenv("ONELLM_HIDDEN_UNPRIVILEGED") != "" {
		return // the copy itself
	}
	if os.Getuid() != 0 {
		missingDep(t, "not root: cannot map every ID into a user namespace")
	}
	all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	sys := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS, UidMappings: all, GidMappings: all}
	rerunHidden(t, nil, sys, hiddenTests, "ONELLM_HIDDEN_ETC="+submountEtc(t))
}

// rerunHidden runs tests again in a copy of the test binary, started by
// wrap (a command and its arguments, or none) with sys, and fails unless
// every one of them passes.
func rerunHidden(t *testing.T, wrap []string, sys *syscall.SysProcAttr, tests []string, env ...string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "hidden-rerun-") // reachable by another user
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, tmp} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hidden.test")
	copyFile(t, self, bin, 0o755)
	argv := append(append([]string(nil), wrap...), bin, "-test.v", "-test.run", "^("+strings.Join(tests, "|")+")$", "-test.count=1")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "HOME=" + tmp, "ONELLM_HIDDEN_UNPRIVILEGED=1", "CI=" + os.Getenv("CI")}, env...)
	cmd.SysProcAttr = sys
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("%v %v: %v\n%s", wrap, sys, err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Fatalf("%v %v: %s did not pass:\n%s", wrap, sys, name, out)
		}
	}
}

// unsearchableEtc makes a stand-in /etc (removed after the test) where a
// root-only folder (0700) lies on the path of two secrets, beside a
// readable file.
func unsearchableEtc(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("", "hidden-etc-") // reachable by another user
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	etc := filepath.Join(root, "etc")
	writeFile(t, filepath.Join(etc, "passwd"), "root:x:0:0\n", 0o644)
	writeFile(t, filepath.Join(etc, "priv/key"), "KEY\n", 0o644)
	writeFile(t, filepath.Join(etc, "priv/sub/key"), "SUBKEY\n", 0o644)
	writeFile(t, filepath.Join(etc, "priv/other"), "OTHER\n", 0o644)
	for d, mode := range map[string]os.FileMode{root: 0o755, etc: 0o755, filepath.Join(etc, "priv"): 0o700} {
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	return etc
}

// TestHiddenEtcUnsearchable: a folder on secrets' paths that the server's
// uid cannot search (ONELLM_HIDDEN_UNSEARCHABLE, made by root for
// TestHiddenUnprivileged) fails nothing, and nothing in it becomes
// readable.
func TestHiddenEtcUnsearchable(t *testing.T) {
	needSandbox(t)
	etc := os.Getenv("ONELLM_HIDDEN_UNSEARCHABLE")
	if etc == "" {
		// Not a missing dependency: this is an entry point of
		// TestHiddenUnprivileged's run as another user, which sets it.
		t.Skip("runs inside TestHiddenUnprivileged, which makes the folder as root")
	}
	ws := newWorkspace(t)
	s := ws.spec(`cd "$E"; cat passwd; for f in priv/key priv/sub/key priv/other; do cat $f 2>/dev/null && echo "read $f"; done; ls priv 2>/dev/null; echo end`)
	s.Env = append(s.Env, "E="+etc)
	s.Readable = []string{etc}
	s.etcDir, s.etcSecrets = etc, []string{"priv/key", "priv/sub/key", "shadow"}
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "root:x:0:0\nend\n" || res.Stopped != "" {
		t.Errorf("got %+v", res)
	}
}

func TestParseMountinfo(t *testing.T) {
	in := "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n" +
		"41 27 0:38 / /etc/a\\040b\\134c\\012 rw - tmpfs x rw\n" +
		"bad line\n" +
		"42 x 0:1 / /skipped rw - t s rw\n" +
		"43 41 0:39 / /trailing\\04 rw - t s rw\n"
	want := []mountEntry{{27, 1, "/"}, {41, 27, "/etc/a b\\c\n"}, {43, 41, "/trailing\\04"}}
	got := parseMountinfo([]byte(in))
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// FuzzParseMountinfo: any input parses without panicking, and every entry
// comes from a line with six fields or more.
func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("27 1 254:0 / / rw - ext4 /dev/vda rw\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		lines := strings.Count(string(b), "\n") + 1
		if got := parseMountinfo(b); len(got) > lines {
			t.Fatalf("%d entries from %d lines", len(got), lines)
		}
	})
}

// TestMaskRefresh: a name matching a secret pattern made after the top
// layer (a warm helper's, long before its command) is masked all the same
// once the spec arrives; with nothing changed the layer is kept.
func TestMaskRefresh(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ssh/ssh_host_rsa_key"), "x", 0o600)
	m := prepareMask(dir, []string{"ssh/ssh_host_*", "shadow"})
	defer m.close()
	if errors.Is(m.err, unix.EPERM) && os.Geteuid() != 0 {
		missingDep(t, "cannot make a tmpfs here: %v", m.err)
	}
	if m.err != nil {
		t.Fatal(m.err)
	}
	layer := m.layer
	m.refresh()
	if m.layer != layer {
		t.Errorf("unchanged, but the layer was remade")
	}
	writeFile(t, filepath.Join(dir, "ssh/ssh_host_ed25519_key"), "x", 0o600)
	m.refresh()
	if m.err != nil {
		t.Fatal(m.err)
	}
	if got := m.plan.entries["ssh/ssh_host_ed25519_key"]; got != phFile || m.layer < 0 {
		t.Errorf("new key: %v (layer %d), names %v", got, m.layer, m.names)
	}
	if m.plan.entries["ssh/ssh_host_rsa_key"] != phFile || m.plan.entries["shadow"] != phWhiteout {
		t.Errorf("entries %v", m.plan.entries)
	}
}

// BenchmarkMaskRefresh: what refresh costs a command when /etc's secret
// patterns match what they matched (the common case).
func BenchmarkMaskRefresh(b *testing.B) {
	m := prepareMask("/etc", etcSecrets())
	defer m.close()
	if m.err != nil {
		b.Fatal(m.err)
	}
	for b.Loop() {
		m.refresh()
	}
}

func TestIsIdentityMap(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"         0          0 4294967295\n", true},
		{"0 0 4294967295", true},
		{"         0          0          1\n", false},
		{"         0       1000          1\n", false},
		{"0 0 4294967294\n", false},
		{"0 0 4294967295\n1 1 1\n", false},
		{"", false},
	} {
		if got := isIdentityMap([]byte(c.in)); got != c.want {
			t.Errorf("%q: got %v", c.in, got)
		}
	}
}

// TestPlanMask: what the top layer holds for each kind of name.
func TestPlanMask(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "shadow"), "x", 0o600)
	writeFile(t, filepath.Join(dir, "ssl/private/k"), "x", 0o600)
	writeFile(t, filepath.Join(dir, "ssh/ssh_host_a_key"), "x", 0o600)
	writeFile(t, filepath.Join(dir, "ssh/ssh_config"), "x", 0o644)
	writeFile(t, filepath.Join(dir, "afile"), "x", 0o644)
	os.MkdirAll(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "pki"))
	os.Symlink("/nonexistent-onellm/target", filepath.Join(dir, "outlink"))
	writeFile(t, filepath.Join(filepath.Dir(dir), "elsewhere"), "x", 0o600)
	os.Symlink("../elsewhere", filepath.Join(dir, "uplink"))
	names := expandSecrets(dir, []string{"shadow", "ssl/private", "ssh/ssh_host_*", "krb5.keytab", "wg/secret", "afile/x", "pki/tls/private", "outlink", "uplink"})
	p, err := planMask(dir, names)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]phKind{
		"shadow": phFile, "ssl/private": phDir, "ssh/ssh_host_a_key": phFile, "krb5.keytab": phWhiteout,
		"wg": phWhiteout, "real/tls": phWhiteout, "outlink": phFile, "uplink": phFile,
	}
	if len(p.entries) != len(want) {
		t.Errorf("entries %v, want %v", p.entries, want)
	}
	for n, k := range want {
		if got, ok := p.entries[n]; !ok || got != k {
			t.Errorf("%s: got %v %v, want %v", n, got, ok, k)
		}
	}
	if len(p.outside) != 1 || p.outside[0] != filepath.Join(filepath.Dir(dir), "elsewhere") {
		t.Errorf("outside %v", p.outside)
	}
	if _, err := planMask(dir, []string{"../x"}); err == nil {
		t.Error("a name outside the folder was planned")
	}
}
