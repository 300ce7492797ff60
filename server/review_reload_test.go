package server

import (
	"path/filepath"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
)

// The audit log in use stays protected_path after a reload whose config
// names another audit.path (which only a restart applies): otherwise a tool
// could rewrite or delete the log that is actually being written.
func TestReloadKeepsAuditLogProtected(t *testing.T) {
	s, ws := testServer(t)
	inUse := s.Policy().AuditPath
	cfg, err := grants.LoadDefault(ws)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Audit.Path = filepath.Join(filepath.Dir(inUse), "elsewhere", "audit.jsonl")
	next, err := grants.Compile(cfg, grants.CompileOptions{Home: s.Policy().Home})
	if err != nil {
		t.Fatal(err)
	}
	s.reload(func() (*grants.Policy, error) { return next, nil })
	for _, c := range []grants.Capability{grants.CapFilesystemWrite, grants.CapFilesystemDelete} {
		d := s.Policy().Decide(grants.Request{Capability: c, Target: grants.Target{ToolName: "apply_patch", Path: inUse}})
		if d.Effect != grants.Deny || d.Reason != grants.ReasonProtectedPath {
			t.Errorf("%s on the audit log in use after the reload: %s", c, d.Explain())
		}
	}
}

// A reload that would put the audit key's folder within a tool's reach (a
// sandbox root over it) is refused: the key signs the log's checkpoints.
func TestReloadKeepsAuditKeyOutOfReach(t *testing.T) {
	s, ws := testServer(t)
	before := s.Policy()
	cfg, err := grants.LoadDefault(ws)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Audit.Path = before.AuditPath
	cfg.Sandbox.Readable = []string{grants.StateDir(before.Home)}
	next, err := grants.Compile(cfg, grants.CompileOptions{Home: before.Home})
	if err != nil {
		t.Fatal(err)
	}
	s.reload(func() (*grants.Policy, error) { return next, nil })
	if s.Policy() != before {
		t.Fatalf("a policy that lets tools read the audit key was put in force")
	}
	cfg.Sandbox.Readable = nil
	if next, err = grants.Compile(cfg, grants.CompileOptions{Home: before.Home}); err != nil {
		t.Fatal(err)
	}
	s.reload(func() (*grants.Policy, error) { return next, nil })
	if s.Policy() != next {
		t.Fatalf("the same config without the sandbox root was refused too")
	}
}
