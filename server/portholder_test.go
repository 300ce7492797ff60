package server

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
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
