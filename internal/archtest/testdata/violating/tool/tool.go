// Package tool breaks every wall of the fixture's architecture: it imports
// grants without an arrow, opens a file, dials out, starts a process and
// decides by itself, each in a way text search would miss.
package tool

import (
	"net"
	sys "os"
	exe "os/exec"

	pol "example.com/violating/grants"
)

// Run does everything it must not.
func Run(p *pol.Policy) {
	open := sys.Open // a method value, not a call
	if f, err := open("/etc/hostname"); err == nil {
		f.Close()
	}
	var d net.Dialer
	_, _ = d.Dial("tcp", "127.0.0.1:1")
	_ = exe.Command("true")
	decide := p.Decide
	_ = decide("x")
}
