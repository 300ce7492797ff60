//go:build linux

package shelltool

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExecGateValgrindClient (review rev20d H1): valgrind's launcher
// (valgrind.bin) and its tools load the client program themselves, with no
// execve the gate sees, so the client must be decided from their argv as
// the line analysis decides `valgrind rm x`: deny rm and a critical rm -r
// outside hold for it.
func TestExecGateValgrindClient(t *testing.T) {
	needProgram(t, "valgrind.bin")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[[rules.deny]]\nrule_id = \"no-rm\"\ncapability = \"process.exec\"\ntarget = { resource = \"rm\" }\n")
	victim := filepath.Join(ws, "victim")
	for _, cmd := range []string{
		"sh -c 'valgrind.bin -q --tool=none rm " + victim + "'; echo rc=$?",
		"sh -c 'valgrind.bin -q --tool=none --trace-children=no rm -f -- " + victim + "'; echo rc=$?",
	} {
		if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := runTool(t, &Tool{}, (&gateCall{}).env(p), cmd)
		if _, err := os.Stat(victim); err != nil {
			t.Errorf("%s: rm ran under valgrind (%+v)", cmd, out)
		}
	}
}
