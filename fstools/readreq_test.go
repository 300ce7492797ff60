package fstools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

const secretMarker = "SECRET-MARKER-4711"

// TestPatchReadRequests: every input form that reads a file's content asks
// to read it, decided with the rest of the call, so a write-only grant
// refuses it; the forms that do not read content never show any of it,
// even in their errors, and a dry run reads (no oracle).
func TestPatchReadRequests(t *testing.T) {
	p, _ := testPolicy(t, `
mode = "strict"
[[rules.allow]]
rule_id = "write-only"
capability = "workspace.files.write"
[[rules.allow]]
rule_id = "delete-only"
capability = "workspace.files.delete"
`)
	ws := p.Workspace
	body := "first line\n" + secretMarker + "\nlast line\n"
	cases := []struct {
		name  string
		args  ApplyPatchArgs
		reads bool
	}{
		{"unified update", ApplyPatchArgs{Patch: "--- a/s.txt\n+++ b/s.txt\n@@ -1,2 +1,2 @@\n first line\n-nope\n+x\n"}, true},
		{"envelope update", ApplyPatchArgs{Patch: "*** Begin Patch\n*** Update File: s.txt\n@@\n-nope\n+x\n*** End Patch\n"}, true},
		{"edits", ApplyPatchArgs{Edits: []Edit{{Path: "s.txt", OldText: "nope", NewText: "x"}}}, true},
		{"unified deletion with content", ApplyPatchArgs{Patch: "--- a/s.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-nope\n"}, true},
		{"rename with hunks", ApplyPatchArgs{Patch: "diff --git a/s.txt b/t.txt\nsimilarity index 90%\nrename from s.txt\nrename to t.txt\n--- a/s.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-nope\n+x\n"}, true},
		{"U0 addition", ApplyPatchArgs{Patch: "--- a/s.txt\n+++ b/s.txt\n@@ -9,0 +10 @@\n+x\n"}, true},
		{"dry run of a deletion", ApplyPatchArgs{Patch: "*** Begin Patch\n*** Delete File: s.txt\n*** End Patch\n", DryRun: true}, true},
		{"dry run of a rename", ApplyPatchArgs{Patch: "diff --git a/s.txt b/t.txt\nsimilarity index 100%\nrename from s.txt\nrename to t.txt\n", DryRun: true}, true},
		{"envelope delete", ApplyPatchArgs{Patch: "*** Begin Patch\n*** Delete File: s.txt\n*** End Patch\n"}, false},
		{"pure rename onto an existing file", ApplyPatchArgs{Patch: "diff --git a/s.txt b/u.txt\nsimilarity index 100%\nrename from s.txt\nrename to u.txt\n"}, false},
		{"mode change", ApplyPatchArgs{Patch: "diff --git a/s.txt b/s.txt\nold mode 100644\nnew mode 100755\n"}, false},
		{"add over an existing file", ApplyPatchArgs{Patch: "*** Begin Patch\n*** Add File: s.txt\n+x\n*** End Patch\n"}, false},
		{"edit creating a file", ApplyPatchArgs{Edits: []Edit{{Path: "new.txt", OldText: "", NewText: "x"}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mustWrite(t, filepath.Join(ws, "s.txt"), body)
			mustWrite(t, filepath.Join(ws, "u.txt"), "other "+secretMarker+"\n")
			os.Remove(filepath.Join(ws, "t.txt"))
			os.Remove(filepath.Join(ws, "new.txt"))
			raw, _ := json.Marshal(tc.args)
			plan, err := NewApplyPatch().Plan(context.Background(), &toolkit.Env{Policy: p}, raw)
			if err != nil {
				t.Fatal(err)
			}
			reads, allowed := false, true
			for _, r := range plan.Requests {
				if r.Capability == grants.CapWorkspaceRead {
					reads = true
				}
				if p.Decide(r).Effect != grants.Allow {
					allowed = false
				}
			}
			if reads != tc.reads {
				t.Fatalf("read request %v, want %v: %+v", reads, tc.reads, plan.Requests)
			}
			if allowed == tc.reads {
				t.Fatalf("under a write-only grant the call is allowed=%v", allowed)
			}
			if tc.reads {
				return // refused as a whole: nothing runs
			}
			r := plan.Run(context.Background(), toolkit.Grant{})
			if txt := resultText(r); strings.Contains(txt, secretMarker) {
				t.Fatalf("the result shows content it may not read: %s", txt)
			}
		})
	}
}

// TestPatchPathsAreWorkspaceRelative: "~/x" in a diff or an envelope is the
// file "~/x" in the workspace, never one in the home folder.
func TestPatchPathsAreWorkspaceRelative(t *testing.T) {
	p, root := testPolicy(t, `profile = "interactive-dev"`)
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o755)
	for _, patch := range []string{
		"--- /dev/null\n+++ b/~/x\n@@ -0,0 +1 @@\n+hi\n",
		"diff --git a/~/y b/~/y\nnew file mode 100644\n--- /dev/null\n+++ b/~/y\n@@ -0,0 +1 @@\n+hi\n",
		"*** Begin Patch\n*** Add File: ~/z\n+hi\n*** End Patch\n",
	} {
		plan, res, err := applyTool(t, p, ApplyPatchArgs{Patch: patch})
		if err != nil || res.Tool.IsError {
			t.Fatalf("%v %s", err, resultText(res))
		}
		for _, r := range plan.Requests {
			if !strings.HasPrefix(r.Target.Path, filepath.Join(p.Workspace, "~")+"/") || r.Capability != grants.CapWorkspaceWrite {
				t.Fatalf("request %s %s", r.Capability, r.Target.Path)
			}
		}
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Fatalf("the home folder was written: %v", ents)
	}
	for _, n := range []string{"x", "y", "z"} {
		if b, err := os.ReadFile(filepath.Join(p.Workspace, "~", n)); err != nil || string(b) != "hi\n" {
			t.Fatalf("~/%s in the workspace: %v %q", n, err, b)
		}
	}
}

// TestPatchStripsSetuid: a setuid or setgid file that a patch changes comes
// back with its permission bits only.
func TestPatchStripsSetuid(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	f := filepath.Join(p.Workspace, "tool.sh")
	mustWrite(t, f, "echo a\n")
	if err := os.Chmod(f, 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	if _, res, err := applyTool(t, p, ApplyPatchArgs{Edits: []Edit{{Path: "tool.sh", OldText: "a", NewText: "b"}}}); err != nil || res.Tool.IsError {
		t.Fatalf("%v %s", err, resultText(res))
	}
	fi, _ := os.Stat(f)
	if fi.Mode() != 0o755 {
		t.Fatalf("mode %v, want -rwxr-xr-x", fi.Mode())
	}
}
