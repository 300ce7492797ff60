package fstools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/internal/toolkit"
)

// applyTool plans and runs apply_patch with args, as the server would after
// an allow, and returns the plan and the result text.
func applyTool(t *testing.T, p *grants.Policy, args any) (*toolkit.Plan, toolkit.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	plan, err := NewApplyPatch().Plan(context.Background(), &toolkit.Env{Policy: p}, raw)
	if err != nil {
		return nil, toolkit.Result{}, err
	}
	return plan, plan.Run(context.Background(), toolkit.Grant{}), nil
}

func resultText(r toolkit.Result) string {
	b, _ := json.Marshal(r.Tool.Content)
	return string(b)
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b) + "|" + fi.Mode().Perm().String()
		return nil
	})
	return out
}

// TestApplyGitDiff applies a real `git diff` over a whole tree (edits, a new
// file, a deletion, a rename, a mode change) and compares the result.
func TestApplyGitDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	p, root := testPolicy(t, `profile = "interactive-dev"`)
	ws := p.Workspace
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	before := map[string]string{
		"main.go":      "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"crlf.txt":     "one\r\ntwo\r\nthree\r\n",
		"gone.txt":     "bye\n",
		"old/name.txt": "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n",
		"run.sh":       "#!/bin/sh\necho run\n",
		"nonl.txt":     "a\nb",
	}
	repo := filepath.Join(root, "repo")
	for name, content := range before {
		mustWrite(t, filepath.Join(repo, name), content)
		mustWrite(t, filepath.Join(ws, name), content)
	}
	git(repo, "init", "-q")
	git(repo, "add", "-A")
	git(repo, "commit", "-qm", "before")
	mustWrite(t, filepath.Join(repo, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n")
	mustWrite(t, filepath.Join(repo, "crlf.txt"), "one\r\nTWO\r\nthree\r\n")
	os.Remove(filepath.Join(repo, "gone.txt"))
	mustWrite(t, filepath.Join(repo, "new/file.txt"), "fresh\n")
	git(repo, "mv", "old/name.txt", "renamed.txt")
	mustWrite(t, filepath.Join(repo, "renamed.txt"), "line 1\nline 2\nline 3\nline 4\nline 5\nline six\n")
	os.Chmod(filepath.Join(repo, "run.sh"), 0o755)
	mustWrite(t, filepath.Join(repo, "nonl.txt"), "a\nb\n")
	git(repo, "add", "-A")
	diff := git(repo, "diff", "--cached", "-M", "HEAD")

	plan, res, err := applyTool(t, p, ApplyPatchArgs{Patch: diff})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tool.IsError {
		t.Fatalf("apply failed: %s\n%s", resultText(res), diff)
	}
	var caps []string
	for _, r := range plan.Requests {
		caps = append(caps, string(r.Capability)+" "+strings.TrimPrefix(r.Target.Path, ws+"/"))
	}
	for _, want := range []string{"workspace.files.delete gone.txt", "workspace.files.delete old/name.txt", "workspace.files.write renamed.txt", "workspace.files.write new/file.txt"} {
		if !strings.Contains(strings.Join(caps, "\n"), want) {
			t.Errorf("requests %v lack %q", caps, want)
		}
	}
	os.RemoveAll(filepath.Join(repo, ".git"))
	os.Remove(filepath.Join(ws, "old")) // git does not keep empty folders
	got, want := readTree(t, ws), readTree(t, repo)
	if len(got) != len(want) {
		t.Errorf("tree has %d files, want %d: %v", len(got), len(want), got)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %q, want %q", name, got[name], w)
		}
	}
}

func TestApplyAllOrNothing(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	ws := p.Workspace
	mustWrite(t, filepath.Join(ws, "a.txt"), "alpha\n")
	mustWrite(t, filepath.Join(ws, "blocker"), "a file where a folder is needed\n")
	mustWrite(t, filepath.Join(ws, "c.txt"), "gamma\n")
	envelope := `*** Begin Patch
*** Update File: a.txt
@@
-alpha
+ALPHA
*** Delete File: c.txt
*** Add File: blocker/b.txt
+beta
*** End Patch`
	before := readTree(t, ws)
	_, res, err := applyTool(t, p, ApplyPatchArgs{Patch: envelope})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Tool.IsError || !strings.Contains(resultText(res), "nothing was changed") {
		t.Fatalf("want a failure that changed nothing, got %s", resultText(res))
	}
	if after := readTree(t, ws); len(after) != len(before) || after["a.txt"] != before["a.txt"] || after["c.txt"] != before["c.txt"] {
		t.Fatalf("tree changed: %v → %v", before, after)
	}
	entries, _ := os.ReadDir(ws)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".onellm-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestApplyHunkErrorChangesNothing(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	ws := p.Workspace
	mustWrite(t, filepath.Join(ws, "a.txt"), "one\ntwo\n")
	mustWrite(t, filepath.Join(ws, "b.txt"), "func main() {\n\treturn\n}\n")
	diff := "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n func mian() {\n-\treturn nil\n+\treturn 1\n }\n"
	_, res, err := applyTool(t, p, ApplyPatchArgs{Patch: diff})
	if err != nil {
		t.Fatal(err)
	}
	txt := resultText(res)
	if !res.Tool.IsError || !strings.Contains(txt, "b.txt") || !strings.Contains(txt, "hunk 1") || !strings.Contains(txt, "func main()") {
		t.Fatalf("want a hunk error naming the file, the hunk and the closest text: %s", txt)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("a.txt changed: %q", b)
	}
}

func TestApplyEditsAndDryRun(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	ws := p.Workspace
	mustWrite(t, filepath.Join(ws, "win.txt"), "\ufeffhello world\r\nhello again\r\n")
	os.Chmod(filepath.Join(ws, "win.txt"), 0o600)
	tests := []struct {
		name   string
		args   ApplyPatchArgs
		file   string
		want   string
		errMsg string
	}{
		{name: "dry run", args: ApplyPatchArgs{DryRun: true, Edits: []Edit{{Path: "win.txt", OldText: "world", NewText: "there"}}}, file: "win.txt", want: "\ufeffhello world\r\nhello again\r\n"},
		{name: "once, crlf and bom kept", args: ApplyPatchArgs{Edits: []Edit{{Path: "win.txt", OldText: "hello world\n", NewText: "hi world\n"}}}, file: "win.txt", want: "\ufeffhi world\r\nhello again\r\n"},
		{name: "several occurrences", args: ApplyPatchArgs{Edits: []Edit{{Path: "win.txt", OldText: "h", NewText: "H"}}}, errMsg: "occurs"},
		{name: "replace all", args: ApplyPatchArgs{Edits: []Edit{{Path: "win.txt", OldText: "h", NewText: "H", ReplaceAll: true}}}, file: "win.txt", want: "\ufeffHi world\r\nHello again\r\n"},
		{name: "missing text", args: ApplyPatchArgs{Edits: []Edit{{Path: "win.txt", OldText: "Hello agian", NewText: "x"}}}, errMsg: "Hello again"},
		{name: "create", args: ApplyPatchArgs{Edits: []Edit{{Path: "dir/new.txt", NewText: "new\n"}}}, file: "dir/new.txt", want: "new\n"},
		{name: "create existing", args: ApplyPatchArgs{Edits: []Edit{{Path: "dir/new.txt", NewText: "again\n"}}}, errMsg: "empty old_text"},
		{name: "two edits in order", args: ApplyPatchArgs{Edits: []Edit{{Path: "dir/new.txt", OldText: "new", NewText: "newer"}, {Path: "dir/new.txt", OldText: "newer", NewText: "newest"}}}, file: "dir/new.txt", want: "newest\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res, err := applyTool(t, p, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if tt.errMsg != "" {
				if !res.Tool.IsError || !strings.Contains(resultText(res), tt.errMsg) {
					t.Fatalf("want error %q, got %s", tt.errMsg, resultText(res))
				}
				return
			}
			if res.Tool.IsError {
				t.Fatal(resultText(res))
			}
			b, _ := os.ReadFile(filepath.Join(ws, tt.file))
			if string(b) != tt.want {
				t.Fatalf("%s = %q, want %q", tt.file, b, tt.want)
			}
		})
	}
	if fi, _ := os.Stat(filepath.Join(ws, "win.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode changed to %v", fi.Mode().Perm())
	}
}

func TestApplyPatchBadInput(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	for _, tt := range []struct {
		args string
		want string
	}{
		{`{}`, "give a patch"},
		{`{"patch":"x","edits":[{"path":"a","old_text":"a","new_text":"b"}]}`, "not both"},
		{`{"patch":"hello"}`, "not a patch"},
		{`{"patch":"--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n"}`, "absolute"},
		{`{"patch":"--- a/x\u0000\n"}`, "NUL"},
		{`{"edits":[{"path":"","old_text":"a","new_text":"b"}]}`, "path is required"},
		{`{"edits":[{"path":"a","old_text":"a","new_text":"b","extra":1}]}`, "unknown argument"},
		{`{"patch":"` + strings.Repeat("x", 17<<20) + `"}`, "limit"},
	} {
		_, err := NewApplyPatch().Plan(context.Background(), &toolkit.Env{Policy: p}, json.RawMessage(tt.args))
		if _, ok := err.(*toolkit.ArgError); !ok || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.60s: err = %v, want ArgError with %q", tt.args, err, tt.want)
		}
	}
}

func BenchmarkApplyPatchTool(b *testing.B) {
	p, _ := testPolicy(b, `profile = "interactive-dev"`)
	var lines []string
	for i := range 2000 {
		lines = append(lines, "line "+strings.Repeat("x", i%40))
	}
	mustWrite(b, filepath.Join(p.Workspace, "big.txt"), strings.Join(lines, "\n")+"\n")
	raw, _ := json.Marshal(ApplyPatchArgs{DryRun: true, Edits: []Edit{{Path: "big.txt", OldText: "line " + strings.Repeat("x", 39) + "\n", NewText: "changed\n", ReplaceAll: true}}})
	for b.Loop() {
		plan, err := NewApplyPatch().Plan(context.Background(), &toolkit.Env{Policy: p}, raw)
		if err != nil {
			b.Fatal(err)
		}
		if r := plan.Run(context.Background(), toolkit.Grant{}); r.Tool.IsError {
			b.Fatal(r.Tool.Content)
		}
	}
}

// TestCreateNeverOverwrites: a file that appears at a path the patch
// creates, after the patch was planned, is never overwritten.
func TestCreateNeverOverwrites(t *testing.T) {
	p, _ := testPolicy(t, `profile = "interactive-dev"`)
	// The patch computed late.txt as a new file; then someone else wrote it
	// before the commit.
	raw, _ := json.Marshal(ApplyPatchArgs{Patch: "*** Begin Patch\n*** Add File: late.txt\n+from the patch\n*** End Patch\n"})
	plan, err := NewApplyPatch().Plan(context.Background(), &toolkit.Env{Policy: p}, raw)
	if err != nil {
		t.Fatal(err)
	}
	o := plan.Run // the plan's action, as the server runs it after the decision
	c := computed{op: &fileOp{dst: Resolved{Real: filepath.Join(p.Workspace, "late.txt")}}, content: []byte("from the patch\n"), mode: 0o644}
	mustWrite(t, filepath.Join(p.Workspace, "late.txt"), "someone else's\n")
	if err := commit([]computed{c}, ""); err == nil || !strings.Contains(err.Error(), "appeared") {
		t.Fatalf("write over a file that appeared: %v", err)
	}
	if r := o(context.Background(), toolkit.Grant{}); !r.Tool.IsError || !strings.Contains(resultText(r), "already exists") {
		t.Fatalf("patch over a file that appeared: %s", resultText(r))
	}
	if b, _ := os.ReadFile(filepath.Join(p.Workspace, "late.txt")); string(b) != "someone else's\n" {
		t.Fatalf("the other file was overwritten: %q", b)
	}
	entries, _ := os.ReadDir(p.Workspace)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".onellm-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}
