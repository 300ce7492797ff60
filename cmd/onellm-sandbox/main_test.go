package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportsOnlyTheSandbox: the helper binary exists so that a helper's
// start runs no heavy package initialisers (mcp-go's JSON schema compiler
// cost ~3 ms and 21k allocations per command): beyond the standard library
// it links the sandbox package, what the sandbox itself imports, and
// golang.org/x/sys only.
func TestImportsOnlyTheSandbox(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{
		"github.com/onellm/onellm-mcp/cmd/onellm-sandbox",
		"github.com/onellm/onellm-mcp/shelltool/sandbox",
		"github.com/onellm/onellm-mcp/internal/gitmeta",
		"golang.org/x/sys/unix",
	}
	for _, dep := range strings.Fields(string(out)) {
		if !slices.Contains(allowed, dep) {
			t.Errorf("the helper binary links %s: keep it to the sandbox, std and x/sys (split what the helper needs out of a heavier package)", dep)
		}
	}
}
