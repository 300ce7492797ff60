package grants

import (
	"strings"
	"testing"
)

func TestWithWorkspaceOnlyNarrows(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"`)
	sub := p.Workspace + "/sub"
	tests := []struct {
		ws, want string
	}{
		{sub, sub},
		{p.Workspace, p.Workspace},
		{"/", p.Workspace},
		{p.Workspace + "_evil", p.Workspace},
		{"/etc", p.Workspace},
	}
	for _, tt := range tests {
		if got := p.WithWorkspace(tt.ws).Workspace; got != tt.want {
			t.Errorf("WithWorkspace(%q) = %q, want %q", tt.ws, got, tt.want)
		}
	}
	n := p.WithWorkspace(sub)
	if d := n.Decide(fileReq(CapWorkspaceRead, p.Workspace+"/top.txt")); d.Reason != ReasonInvalidArguments {
		t.Errorf("a workspace request outside the narrowed workspace: %+v", d)
	}
	if d := n.Decide(fileReq(CapWorkspaceRead, sub+"/a.txt")); d.Effect != Allow {
		t.Errorf("a read inside the narrowed workspace: %+v", d)
	}
	if p.Workspace == sub {
		t.Error("narrowing changed the original policy")
	}
}

// TestNarrowingKeepsWorkspaceRules: a path the narrowing put outside the
// workspace still gets the workspace rules' stricter answer.
func TestNarrowingKeepsWorkspaceRules(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `mode = "permissive"

[[rules.deny]]
rule_id = "no-prod"
capability = "workspace.files.*"
target = { path = "deploy/prod/**" }

[[rules.allow]]
rule_id = "outside-ok"
capability = "filesystem.*"
`)
	n := p.WithWorkspace(p.Workspace + "/sub")
	d := n.Decide(fileReq(CapFilesystemWrite, p.Workspace+"/deploy/prod/app.toml"))
	if d.Effect != Deny || d.RuleID != "no-prod" {
		t.Fatalf("narrowed: %+v; the workspace deny rule must still bind", d)
	}
	if d := n.Decide(fileReq(CapFilesystemRead, "/etc/hostname")); d.RuleID == "no-prod" {
		t.Fatalf("a path outside the configured workspace: %+v", d)
	}
}

func TestDeniedWriteFolders(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"

[[rules.deny]]
rule_id = "prod"
capability = "workspace.files.*"
target = { path = "deploy/prod/**" }

[[rules.deny]]
rule_id = "go-files-only"
capability = "workspace.files.write"
target = { path = "src/**/*.go" }

[[rules.deny]]
rule_id = "conditional"
capability = "workspace.files.write"
target = { path = "vendor/**" }
conditions = { risk_level = ["high"] }

[[rules.deny]]
rule_id = "reads-only"
capability = "workspace.files.read"
target = { path = "secret/**" }

[[rules.deny]]
rule_id = "outside"
capability = "filesystem.*"
target = { path = "/srv/data/locked/**" }

[[rules.deny]]
rule_id = "outside-reads"
capability = "filesystem.read"
target = { path = "/srv/data/private/**" }
`)
	got := p.DeniedWriteFolders()
	if len(got) != 2 || got[0] != p.Workspace+"/deploy/prod" || got[1] != "/srv/data/locked" {
		t.Fatalf("DeniedWriteFolders = %v, want %s/deploy/prod and /srv/data/locked", got, p.Workspace)
	}
}

func TestShadowedRules(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"

[[rules.allow]]
rule_id = "github-api"
capability = "network.http.get"
target = { host = "api.github.com" }

[[rules.allow]]
rule_id = "reads"
capability = "workspace.files.read"
target = { path = "src/**" }
`)
	got := p.Shadowed()
	if len(got) != 1 || !strings.Contains(got[0], "github-api") || !strings.Contains(got[0], "interactive-dev/ask-network") {
		t.Fatalf("Shadowed() = %v, want github-api outranked by interactive-dev/ask-network", got)
	}
}

func TestLiftedCredentialPaths(t *testing.T) {
	e := newEnv(t)
	p := e.policy(t, `profile = "interactive-dev"

[[rules.allow]]
rule_id = "env"
capability = "workspace.files.read"
target = { path = ".env" }

[[rules.allow]]
rule_id = "glob"
capability = "workspace.files.read"
target = { path = "keys/*.pem" }

[[rules.allow]]
rule_id = "write-only"
capability = "workspace.files.write"
target = { path = "w.pem" }

[[rules.allow]]
rule_id = "not-a-credential"
capability = "filesystem.read"
target = { path = "/etc/hostname" }

[[rules.allow]]
rule_id = "netrc"
capability = "filesystem.*"
target = { path = "/home/x/.netrc" }
`)
	got := p.LiftedCredentialPaths()
	if len(got) != 2 || got[0] != e.in(".env") || got[1] != "/home/x/.netrc" {
		t.Fatalf("LiftedCredentialPaths = %q, want [%s /home/x/.netrc]", got, e.in(".env"))
	}
}
