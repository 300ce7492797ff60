package server

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/internal/display"
)

func TestPortHolder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	got := portHolder(addr)
	if want := fmt.Sprintf("pid %d (", os.Getpid()); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ", this user)") {
		t.Fatalf("portHolder(%s) = %q, want %q…", addr, got, want)
	}
	ln.Close()
	if got := portHolder(addr); got != "" {
		t.Fatalf("a closed port is held by %q", got)
	}
	if got := portHolder("nonsense"); got != "" {
		t.Fatalf("a bad address: %q", got)
	}
}

// TestPortHolderEscapesName: the holder names itself (comm), so its name
// is escaped before it goes into the error line on stderr. This test
// process renames itself for a moment.
func TestPortHolderEscapesName(t *testing.T) {
	const comm = "/proc/self/comm"
	was, err := os.ReadFile(comm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(comm, []byte("a\x1b[2Jb\rc"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(comm, was, 0) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := portHolder(ln.Addr().String())
	if strings.ContainsAny(got, "\x1b\r") || !strings.Contains(got, display.Escape("a\x1b[2Jb\rc")) {
		t.Fatalf("portHolder = %q: want the name escaped", got)
	}
}
