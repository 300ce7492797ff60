package gitmeta

import (
	"strings"
	"testing"
)

func TestProtected(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/ws/src/main.go", false},
		{"/ws/.gitignore", false},
		{"/ws/.github/workflows/ci.yml", false},
		{"/ws/.git", true},
		{"/ws/.git/config", true},
		{"/ws/.git/config.worktree", true},
		{"/ws/.git/hooks", true},
		{"/ws/.git/hooks/pre-commit", true},
		{"/ws/.git/info/attributes", true},
		{"/ws/.git/commondir", true},
		{"/ws/.git/description", true},
		{"/ws/.git/new-file", true},
		{"/ws/.git/rebase-merge/git-rebase-todo", true},
		{"/ws/.git/index", false},
		{"/ws/.git/index.lock", false},
		{"/ws/.git/HEAD", false},
		{"/ws/.git/ORIG_HEAD", false},
		{"/ws/.git/FETCH_HEAD", false},
		{"/ws/.git/_HEAD", true},
		{"/ws/.git/packed-refs", false},
		{"/ws/.git/COMMIT_EDITMSG", false},
		{"/ws/.git/objects/ab/cdef", false},
		{"/ws/.git/refs/heads/main", false},
		{"/ws/.git/logs/HEAD", false},
		{"/ws/sub/.git/config", true},
		{"/ws/sub/.git/hooks/post-checkout", true},
		{"/ws/sub/.git/objects/pack/x.pack", false},
		{"/ws/sub/.git", true},
		{"/ws/.git/modules/lib/config", true},
		{"/ws/.git/modules/lib/hooks/pre-commit", true},
		{"/ws/.git/modules/lib/index", false},
		{"/ws/.git/modules/lib", true},
		{"/ws/.git/modules/a/modules/b/config", true},
		{"/ws/.git/modules/a/modules/b/HEAD", false},
		{"/ws/.git/modules", true},
		{"/ws/.git/worktrees/wt/gitdir", true},
		{"/ws/.git/worktrees/wt/commondir", true},
		{"/ws/.git/worktrees/wt/HEAD", false},
		{"/ws/.git/worktrees/wt/index", false},
		{"/ws/wt/.git", true},
		{"/ws/a/.git/b/.git/config", true},
	}
	for _, tc := range tests {
		if got := Protected(tc.path); got != tc.want {
			t.Errorf("Protected(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// FuzzProtected: whatever comes before a git directory, its config, hooks
// and commondir are protected, and a path without a ".git" component never
// is.
func FuzzProtected(f *testing.F) {
	f.Add("/ws", "pre-commit")
	f.Add("/ws/.git/modules/x", "a")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, prefix, name string) {
		for _, p := range []string{prefix + "/.git/config", prefix + "/.git/hooks/" + name, prefix + "/.git/commondir"} {
			if !Protected(p) {
				t.Fatalf("Protected(%q) = false", p)
			}
		}
		if !strings.Contains("/"+prefix+"/", "/.git/") && Protected(prefix) {
			t.Fatalf("Protected(%q) = true without a .git component", prefix)
		}
	})
}
