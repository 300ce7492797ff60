// Command onellm-sandbox is the sandbox helper alone: the process
// onellm-mcp starts for each sandboxed command (shelltool/sandbox), without
// the server's packages, so a helper's start runs none of their
// initialisers. It imports the sandbox package only (the standard library
// and golang.org/x/sys beneath it).
//
// onellm-mcp never runs it by its path: built by make build, whose
// onellm-mcp carries its SHA-256, it is read once at the server's start into
// a sealed memfd, checked, and exec'd from there (sandbox.DefaultHelper).
// Started any other way it refuses to do anything.
package main

import (
	"fmt"
	"os"

	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

func main() {
	sandbox.MaybeRunHelper() // returns only when not started as the helper
	fmt.Fprintln(os.Stderr, "onellm-sandbox: this is onellm-mcp's sandbox helper; onellm-mcp starts it, it is not run by hand")
	os.Exit(2)
}
