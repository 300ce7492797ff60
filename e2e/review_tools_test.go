package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewCommandBypasses runs command lines whose programs or redirection
// targets the analysis used to miss, in the real sandbox, under a policy that
// denies touch, every <dynamic> command and writes beneath deploy/prod: each
// must be refused and leave no file behind.
func TestReviewCommandBypasses(t *testing.T) {
	f := newFixture(t, `profile = "permissive-dev"

[[rules.deny]]
rule_id    = "no-touch"
capability = "process.exec"
target     = { resource = "touch" }

[[rules.deny]]
rule_id    = "no-dynamic"
capability = "process.exec"
target     = { resource = "<dynamic>" }

[[rules.deny]]
rule_id    = "no-prod"
capability = "workspace.files.*"
target     = { path = "deploy/prod/**" }
`)
	f.write(t, "deploy/prod/keep", "x\n")
	f.write(t, "lines.txt", "one\ntwo\n")
	c := stdioClient(t, f, Legacy)

	pwned := filepath.Join(f.Workspace, "pwned")
	prod := filepath.Join(f.Workspace, "deploy", "prod", "c")
	for _, tc := range []struct{ line, file string }{
		// The time keyword takes "--" after -p (bash's TIMEIGN): the command is touch.
		{"time -p -- touch pwned", pwned},
		{"time -- touch pwned", pwned},
		// Tilde prefixes other than ~ and ~/: ~+ is $PWD, ~- is $OLDPWD.
		{"echo x > ~+/deploy/prod/c", prod},
		// A redirection target is brace-expanded; one word is fine for bash.
		{"echo x > deplo{y..y}/prod/c", prod},
		// A redirection written before a cd can run after it.
		{"f() { echo x > c; }; cd deploy/prod && f", prod},
		{"for i in 1 2; do echo x > c; cd deploy/prod; done", prod},
		{"trap 'echo x > c' EXIT; cd deploy/prod", prod},
		// Builtins that make a later name run another program, or run a string.
		{"hash -p /usr/bin/touch ls; ls pwned", pwned},
		{"mapfile -C 'touch pwned; :' -c 1 a < lines.txt", pwned},
		{"compgen -C 'touch pwned' x", pwned},
		{"shopt -s expand_aliases\nalias ls='touch pwned'\nls", pwned},
		// Strings evaluated as code at run time.
		{"x='$(touch pwned)'; : ${x@P}", pwned},
		{"printf -v 'a[$(touch pwned)]' x", pwned},
		{"x='a[$(touch pwned)]'; : $((x))", pwned},
	} {
		t.Run(tc.line, func(t *testing.T) {
			res := call(t, c, "execute_terminal_command", map[string]any{"command": tc.line})
			_, statErr := os.Stat(tc.file)
			os.Remove(tc.file)
			if statErr == nil {
				t.Errorf("%q created %s (result: %s)", tc.line, tc.file, text(res))
			}
			if !res.IsError || !strings.Contains(text(res), "matched_deny") {
				t.Errorf("%q was not refused: %s", tc.line, text(res))
			}
		})
	}
}
