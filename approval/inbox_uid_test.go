package approval

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// Another local user must get nowhere near the inbox: not through the
// runtime folder, not as a peer (the hub checks SO_PEERCRED), and not as a
// hub (the peer checks it too). The other user is real: made with useradd,
// running this test binary as a helper.

const inboxHelperEnv = "ONELLM_INBOX_HELPER"

// TestInboxHelperProcess is the other user's side, run by otherUserRun.
func TestInboxHelperProcess(t *testing.T) {
	mode, sock, ok := strings.Cut(os.Getenv(inboxHelperEnv), " ")
	if !ok {
		t.Skip("only a helper for the uid tests")
	}
	switch mode {
	case "client": // dial, say hello, print what comes back
		conn, err := net.Dial("unix", sock)
		if err != nil {
			fmt.Println("dial:", err)
			return
		}
		addr := os.Getenv("ONELLM_INBOX_ADDR")
		fmt.Fprintf(conn, `{"type":"hello","version":3,"addr":%q,"server":"intruder"}`+"\n", addr)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(conn)
		fmt.Printf("got: %q (%v)\n", got, err)
	case "hub": // listen where the test's server will look, and hold on
		ln, err := net.Listen("unix", sock)
		if err != nil {
			fmt.Println("listen:", err)
			return
		}
		os.Chmod(sock, 0o777)
		fmt.Println("ready")
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go io.Copy(io.Discard, c)
			}
		}()
		io.Copy(io.Discard, os.Stdin) // until the test closes it
	}
}

// otherUser is an unprivileged user for the test, made with useradd.
func otherUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	u := testkit.NewUser(t, "onellm-inbox")
	return u.UID, u.GID
}

// openDir is a folder every user can reach (for the sockets the other user
// must be able to touch), and a copy of this test binary it can run.
func openDir(t *testing.T) (dir, bin string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "onellm-inbox-uid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "helper.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// otherUserCmd runs the helper as uid/gid.
func otherUserCmd(bin string, uid, gid uint32, env ...string) *exec.Cmd {
	cmd := exec.Command(bin, "-test.run=^TestInboxHelperProcess$")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	return cmd
}

func TestInboxRefusesOtherUsers(t *testing.T) {
	uid, gid := otherUser(t)
	open, bin := openDir(t)

	t.Run("the runtime folder keeps them out", func(t *testing.T) {
		addr, dir := freeAddr(t), runtimeDir(t)
		// The test's temp folders are 0700 already; make the path up to the
		// runtime folder reachable, so only the runtime folder's own mode is tested.
		for d := filepath.Dir(dir); d != "/" && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
			os.Chmod(d, 0o755)
		}
		a := join(t, addr, dir, "alpha", nil)
		a.role(t)
		out, _ := otherUserCmd(bin, uid, gid, inboxHelperEnv+"=client "+a.c.inbox.sock, "ONELLM_INBOX_ADDR="+addr).CombinedOutput()
		if !strings.Contains(string(out), "dial:") || !strings.Contains(string(out), "permission denied") {
			t.Fatalf("another user reached the socket: %s", out)
		}
	})

	t.Run("the hub refuses a peer of another uid", func(t *testing.T) {
		addr, dir := freeAddr(t), runtimeDir(t)
		a := join(t, addr, dir, "alpha", nil)
		a.role(t)
		// A second door to the same hub, in a folder the other user can
		// reach: only SO_PEERCRED stands in the way.
		sock := filepath.Join(open, "door.sock")
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		os.Chmod(sock, 0o777)
		served := make(chan struct{})
		go func() {
			defer close(served)
			conn, err := ln.AcceptUnix()
			if err == nil {
				a.c.inbox.hub.serve(conn)
			}
		}()
		out, err := otherUserCmd(bin, uid, gid, inboxHelperEnv+"=client "+sock, "ONELLM_INBOX_ADDR="+addr).CombinedOutput()
		<-served
		if err != nil || !strings.Contains(string(out), `got: ""`) {
			t.Fatalf("the other user's client: %v %s", err, out)
		}
		if !a.log.has(fmt.Sprintf("refused a connection to the inbox: uid %d", uid)) {
			t.Fatalf("no refusal logged: %q", a.log.lines)
		}
		if len(a.c.view().Pending) != 0 {
			t.Fatal("the intruder posted")
		}
	})

	t.Run("a peer refuses a hub of another uid", func(t *testing.T) {
		stranger, err := net.Listen("tcp", "127.0.0.1:0") // the address is taken…
		if err != nil {
			t.Fatal(err)
		}
		defer stranger.Close()
		addr := stranger.Addr().String()
		dir := filepath.Join(open, "run")
		os.Mkdir(dir, 0o777)
		os.Chmod(dir, 0o777)
		sock := filepath.Join(dir, "console-"+strings.ReplaceAll(addr, ":", "_")+".sock")
		cmd := otherUserCmd(bin, uid, gid, inboxHelperEnv+"=hub "+sock) // …and the other user serves the socket
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { stdin.Close(); cmd.Wait() }()
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("the other user's hub: %q %v", line, err)
		}
		m := join(t, addr, dir, "beta", nil)
		m.log.await(t, "ERROR")
		if want := fmt.Sprintf("is served by uid %d, not this user", uid); !m.log.has(want) {
			t.Fatalf("want %q in %q", want, m.log.lines)
		}
	})
}
