package grants

import "testing"

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
