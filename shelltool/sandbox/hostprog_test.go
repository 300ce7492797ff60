//go:build linux

package sandbox

import (
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadProgramFileFIFO: a FIFO a command planted under a program's name
// in a PATH folder it can write is not a program, and reading it does not
// block (it would hang the table every later command waits on).
func TestReadProgramFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "git")
	if err := unix.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var p ProgramFile
	var err error
	go func() { p, err = ReadProgramFile(fifo); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a bound on a blocked open, not a speed target
		t.Fatal("ReadProgramFile blocked on a FIFO")
	}
	if err != nil {
		t.Fatalf("a FIFO: %v, want it read as no program", err)
	}
	if p.Exec || p.ELF != (ELFIdent{}) {
		t.Fatalf("a FIFO is a program: %+v", p)
	}
	p.SHA256() // whatever it answers, it returns
}
