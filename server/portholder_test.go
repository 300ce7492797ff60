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
	got := (&portHolders{}).name(addr)
	if want := fmt.Sprintf("pid %d (", os.Getpid()); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ", this user)") {
		t.Fatalf("portHolders.name(%s) = %q, want %q…", addr, got, want)
	}
	ln.Close()
	if got := (&portHolders{}).name(addr); got != "" {
		t.Fatalf("a closed port is held by %q", got)
	}
	if got := (&portHolders{}).name("nonsense"); got != "" {
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
	got := (&portHolders{}).name(ln.Addr().String())
	if strings.ContainsAny(got, "\x1b\r") || !strings.Contains(got, display.Escape("a\x1b[2Jb\rc")) {
		t.Fatalf("portHolder = %q: want the name escaped", got)
	}
}

// TestPortHolderScansOnce: the console asks for the holder at every retry;
// /proc is scanned in full only when the holder may have changed: another
// socket listens on the port, or the process kept no longer has it.
func TestPortHolderScansOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	h := &portHolders{}
	want := fmt.Sprintf("pid %d (", os.Getpid())
	for range 5 {
		if got := h.name(addr); !strings.HasPrefix(got, want) {
			t.Fatalf("name = %q, want %q…", got, want)
		}
	}
	if h.scans != 1 {
		t.Fatalf("%d full scans of /proc for one holder asked 5 times", h.scans)
	}
	// The socket in another process's hands: pid 1 is kept, and does not
	// hold it, so the next call scans again and finds this process.
	h.pid = "1"
	if got := h.name(addr); !strings.HasPrefix(got, want) || h.scans != 2 {
		t.Fatalf("after the kept process lost the socket: %q, %d scans", got, h.scans)
	}
	// Another socket on the port than the one kept (as after the holder
	// closed it and something listened again): scanned again.
	h.inode = "0"
	if got := h.name(addr); !strings.HasPrefix(got, want) || h.scans != 3 {
		t.Fatalf("a new socket on the port: %q, %d scans", got, h.scans)
	}
	ln.Close()
	if got := h.name(addr); got != "" || h.scans != 3 {
		t.Fatalf("a closed port is held by %q (%d scans)", got, h.scans)
	}
}

// BenchmarkPortHolder: one retry's look at a port held by this process,
// the holder kept (cached) and found anew by a full scan of /proc (full).
func BenchmarkPortHolder(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	b.Run("cached", func(b *testing.B) {
		h := &portHolders{}
		for b.Loop() {
			h.name(addr)
		}
	})
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			(&portHolders{}).name(addr)
		}
	})
}
