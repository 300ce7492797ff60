// Package tool breaks every wall of the fixture's architecture: it imports
// grants without an arrow, opens a file, dials out, starts a process and
// decides by itself, each in a way text search would miss.
package tool

import (
	"net"
	"net/http"
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

// doer hides the client's type behind an interface: the call below names
// no http function, but making the client names the type.
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Fetch sends through an interface.
func Fetch(r *http.Request) {
	var d doer = &http.Client{}
	_, _ = d.Do(r)
}
