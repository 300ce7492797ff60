package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// TestMakeRunStdoutIsMCPOnly: a host that starts the server with `make run`
// reads MCP messages from its stdout; make must print nothing there (no
// echoed commands, no build output, no "Entering directory"), so the first
// byte is the server's answer to initialize. From another folder a host
// runs `make -s -C DIR run`: GNU make before 4.4.1 prints "Entering
// directory" for -C before it reads the Makefile, so only -s (or
// --no-print-directory) on the command line keeps it off stdout there; from
// 4.4.1 the Makefile's MAKEFLAGS line does it for a plain `make -C DIR run`.
func TestMakeRunStdoutIsMCPOnly(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		testkit.Missing(t, "make is not installed: %v", err)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	runs := []struct {
		dir  string
		args []string
	}{
		{repo, []string{"run"}},
		{elsewhere, []string{"-s", "-C", repo, "run"}},
		{elsewhere, []string{"--no-print-directory", "-C", repo, "run"}},
	}
	if makeHonoursMakefileFlags(t) {
		runs = append(runs, struct {
			dir  string
			args []string
		}{elsewhere, []string{"-C", repo, "run"}})
	} else {
		t.Log("GNU make < 4.4.1: a plain `make -C DIR run` prints \"Entering directory\" before reading the Makefile; not checked")
	}
	for _, r := range runs {
		t.Run(strings.Join(r.args, " "), func(t *testing.T) { firstLineIsMCP(t, r.dir, r.args...) })
	}
}

// makeHonoursMakefileFlags reports whether make is GNU make 4.4.1 or later,
// which applies MAKEFLAGS set in the Makefile to itself.
func makeHonoursMakefileFlags(t *testing.T) bool {
	out, err := exec.Command("make", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	var major, minor, patch int
	first, _, _ := strings.Cut(string(out), "\n")
	if _, err := fmt.Sscanf(strings.TrimPrefix(first, "GNU Make "), "%d.%d.%d", &major, &minor, &patch); err != nil {
		fmt.Sscanf(strings.TrimPrefix(first, "GNU Make "), "%d.%d", &major, &minor)
	}
	return major > 4 || major == 4 && (minor > 4 || minor == 4 && patch >= 1)
}

// firstLineIsMCP starts make with args in dir and checks that the first
// line on its stdout is the server's answer to initialize.
func firstLineIsMCP(t *testing.T, dir string, args ...string) {
	cmd := exec.Command("make", args...)
	cmd.Dir = dir
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"make-test","version":"1"}}}` + "\n"
	if _, err := io.WriteString(stdin, init); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	select {
	case line := <-lines:
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.ID != 1 || !strings.Contains(msg.Result.ServerInfo.Name, "onellm") {
			t.Fatalf("the first line on stdout is not the server's answer: %q (%v)", line, err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("no answer from make run")
	}
}
