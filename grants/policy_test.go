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
