package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelperBinary: the server starts its sandbox helpers from the helper
// binary built beside it only when that file's SHA-256 is the one it was
// built with; a changed (say, by a sandboxed command: bin/ is often in the
// workspace) or missing helper binary is never run, and the server's own
// binary is the helper instead. version says which.
func TestHelperBinary(t *testing.T) {
	out, _, code := runCLI(t, t.TempDir(), "version")
	if code != 0 || !strings.Contains(out, "helper:   onellm-sandbox (") || !strings.Contains(out, "SHA-256 verified, run from a sealed memfd") {
		t.Fatalf("version of the built pair: %d %q", code, out)
	}
	for _, tc := range []struct {
		name   string
		helper string // the helper file's content; "" for none
		want   string
	}{
		{"changed", "#!/bin/sh\ntouch @MARKER@\nexit 0\n", "this server was built with"},
		{"missing", "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "onellm-mcp")
			copyFile(t, binary, bin, 0o755)
			marker := filepath.Join(dir, "helper-ran")
			if tc.helper != "" {
				if err := os.WriteFile(filepath.Join(dir, "onellm-sandbox"), []byte(strings.ReplaceAll(tc.helper, "@MARKER@", marker)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmdOut, cmdErr, code := runCLIWith(t, bin, dir, "version")
			if code != 0 || !strings.Contains(cmdOut, "exec gate: available") ||
				!strings.Contains(cmdOut, "helper:   the server binary itself (/proc/self/exe): ") || !strings.Contains(cmdOut, tc.want) {
				t.Fatalf("version: %d %q %q; want the fallback, with %q", code, cmdOut, cmdErr, tc.want)
			}
			f := newFixture(t, `profile = "interactive-dev"`)
			c := stdioClientWith(t, f, Legacy, bin, nil)
			res := call(t, c, "execute_terminal_command", map[string]any{"command": "echo hi"})
			if res.IsError || !strings.Contains(text(res), "stdout:\nhi\n") {
				t.Fatalf("a command with the fallback helper: %s", text(res))
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the changed helper binary ran")
			}
		})
	}
}
