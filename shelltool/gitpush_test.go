package shelltool

import "testing"

func TestGitStartDir(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"git", "push"}, "/w"},
		{[]string{"git", "-C", "sub", "push"}, "/w/sub"},
		{[]string{"git", "-C", "a", "-C", "../b", "push"}, "/w/b"},
		{[]string{"git", "-C", "/x", "-c", "a.b=c", "push", "-C", "no"}, "/x"},
		{[]string{"git", "-c", "-C", "push"}, "/w"}, // -c's value
		{[]string{"git", "-C", "", "push"}, "/w"},
		{[]string{"/usr/lib/git-core/git-push", "-C", "x"}, "/w"},
	}
	for _, tt := range tests {
		if got := gitStartDir("/w", tt.argv); got != tt.want {
			t.Errorf("gitStartDir(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

func TestIsPushForm(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git push origin main": true, "git send-pack x": true, "git http-push u": true,
		"git receive-pack r": false, "git status": false, "git": false, "gitpush": false,
	} {
		if got := isPushForm(cmd); got != want {
			t.Errorf("isPushForm(%q) = %v", cmd, got)
		}
	}
}
