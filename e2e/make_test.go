package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMakeRunStdoutIsMCPOnly: a host that starts the server with `make run`
// reads MCP messages from its stdout; make must print nothing there (no
// echoed commands, no build output), so the first byte is the server's
// answer to initialize.
func TestMakeRunStdoutIsMCPOnly(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		missing(t, "make is not installed: %v", err)
	}
	cmd := exec.Command("make", "run")
	cmd.Dir = ".."
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
