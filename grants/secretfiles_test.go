package grants

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSecretFilesProtected: a `[secrets.NAME] file` is credential data that
// no tool may read, write or delete, wherever it lies and whatever the rules
// (an allow rule naming it exactly, permissive mode) say, also through a
// symlink to it.
func TestSecretFilesProtected(t *testing.T) {
	e := newEnv(t)
	inWS := e.in("conf/gh-token.txt") // an innocent name inside the workspace
	outside := filepath.Join(e.root, "tokens", "api")
	for _, f := range []string{inWS, outside} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte("v"), 0o600)
	}
	link := e.in("link-to-token")
	os.Symlink(outside, link)
	p := e.policy(t, `
mode = "permissive"
[[rules.allow]]
rule_id = "exact"
capability = "*"
target = { path = "`+inWS+`" }
[[rules.allow]]
rule_id = "exact2"
capability = "*"
target = { path = "`+outside+`" }
[secrets.gh]
file = "ws/conf/gh-token.txt"
hosts = ["api.github.com"]
[secrets.api]
file = "`+link+`"
hosts = ["api.example.com"]
`)
	if got := p.SecretFiles(); len(got) != 2 {
		t.Fatalf("SecretFiles = %v", got)
	}
	for _, path := range []string{inWS, outside} {
		for _, c := range []Capability{CapWorkspaceRead, CapWorkspaceWrite, CapWorkspaceDelete, CapFilesystemRead, CapFilesystemWrite, CapFilesystemDelete} {
			if p.InWorkspace(path) != (c == CapWorkspaceRead || c == CapWorkspaceWrite || c == CapWorkspaceDelete) {
				continue
			}
			d := p.Decide(fileReq(c, path))
			if d.Effect != Deny || d.Reason != ReasonProtectedPath || !d.Request.HasClass(DataCredential) {
				t.Errorf("%s %s: %v %s %s classes %v; want deny protected_path credential", c, path, d.Effect, d.Reason, d.RuleID, d.Request.DataClasses)
			}
		}
	}
	// A neighbour of a secret file is not affected.
	if d := p.Decide(fileReq(CapWorkspaceRead, e.in("conf/other.txt"))); d.Effect != Allow {
		t.Errorf("neighbour: %v %s", d.Effect, d.Reason)
	}
}
