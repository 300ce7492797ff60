package shelltool

import (
	"testing"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// execOf is an exec event numbered n, made by the image parent (a first
// exec) or replacing the image prev.
func execOf(n, prev, parent uint64, exe, path string, argv ...string) sandbox.ExecEvent {
	return sandbox.ExecEvent{Exec: n, PrevExec: prev, ParentExec: parent, Exe: exe, ExecPath: path, Argv: argv, Cwd: "/w"}
}

// TestPushLineage (review rev20d M1): git's transport under an approved
// push (image 1) runs under its approval, and nothing else does: not a
// hook or what it runs, not a program made by anything but git's code or
// git's use_shell sh, not a re-exec but the sh's of S, not a program the
// command may have written or run through a shebang.
func TestPushLineage(t *testing.T) {
	const core = "/usr/lib/git-core/"
	push := execOf(1, 0, 0, "/usr/bin/git", "/usr/bin/git", "git", "push", "/r.git", "main")
	s := "git-receive-pack '/r.git'"
	sh := execOf(2, 0, 1, "/usr/bin/dash", "/bin/sh", "/bin/sh", "-c", s, s)
	remote := execOf(2, 0, 1, core+"git", core+"git", core+"git", "remote-https", "origin", "https://h/r.git")
	helper := execOf(3, 0, 2, core+"git-remote-http", core+"git-remote-https", core+"git-remote-https", "origin", "https://h/r.git")
	hook := execOf(2, 0, 1, "/usr/bin/dash", "hooks/pre-push", "/bin/sh", "hooks/pre-push", "origin", "/r.git")
	hook.Written = "/w/hooks/pre-push"
	sendPack := func(n, prev, parent uint64) sandbox.ExecEvent {
		return execOf(n, prev, parent, core+"git", core+"git", core+"git", "send-pack", "--stateless-rpc", "--helper-status", "https://h/r.git/", "--stdin")
	}
	receivePack := func(n, prev, parent uint64, repo string) sandbox.ExecEvent {
		return execOf(n, prev, parent, core+"git", core+"git-receive-pack", "git-receive-pack", repo)
	}
	written := sendPack(2, 0, 1)
	written.Written = "/w/bin/git"
	problem := sendPack(2, 0, 1)
	problem.Problem = "executable was deleted"
	unnumbered := sh
	unnumbered.Exec, unnumbered.ParentExec = 0, 0
	shebang := execOf(2, 0, 1, core+"git", "/w/hooks/pre-push", core+"git-send-pack", "/w/hooks/pre-push", "origin")
	twoOps := execOf(2, 0, 1, "/usr/bin/dash", "/bin/sh", "/bin/sh", "-c", "git-receive-pack '/r.git' '/x.git'")
	twoCmds := execOf(2, 0, 1, "/usr/bin/dash", "/bin/sh", "/bin/sh", "-c", "git-receive-pack '/r.git'; git send-pack /x.git main")
	quoted := execOf(2, 0, 1, "/usr/bin/dash", "/bin/sh", "/bin/sh", "-c", `git-receive-pack '/r'\''.git'`)
	for _, tc := range []struct {
		name  string
		chain []sandbox.ExecEvent // before ev, each under the push
		ev    sandbox.ExecEvent
		want  bool
	}{
		{"use_shell sh made by the push", nil, sh, true},
		{"its S, made by it", []sandbox.ExecEvent{sh}, receivePack(3, 0, 2, "/r.git"), true},
		{"its S, in its place", []sandbox.ExecEvent{sh}, receivePack(3, 2, 1, "/r.git"), true},
		{"git remote-https made by the push", nil, remote, true},
		{"git-remote-https made by it", []sandbox.ExecEvent{remote}, helper, true},
		{"send-pack made by the helper", []sandbox.ExecEvent{remote, helper}, sendPack(4, 0, 3), true},
		{"http-push made by the helper", []sandbox.ExecEvent{remote, helper}, execOf(4, 0, 3, core+"git-http-push", core+"git-http-push", core+"git-http-push", "--helper-status", "https://h/r.git/"), true},
		{"send-pack made by the push", nil, sendPack(2, 0, 1), true},

		{"a hook", nil, hook, false},
		{"a hook's send-pack", []sandbox.ExecEvent{hook}, sendPack(3, 0, 2), false},
		{"a hook's use_shell sh", []sandbox.ExecEvent{hook}, execOf(3, 0, 2, "/usr/bin/dash", "/bin/sh", "/bin/sh", "-c", s), false},
		{"made by an image not kept", nil, sendPack(2, 0, 9), false},
		{"the push's re-exec", nil, sendPack(2, 1, 0), false},
		{"a helper's re-exec", []sandbox.ExecEvent{remote}, sendPack(3, 2, 1), false},
		{"sh's child that is not S", []sandbox.ExecEvent{sh}, receivePack(3, 0, 2, "/x.git"), false},
		{"sh's re-exec that is not S", []sandbox.ExecEvent{sh}, receivePack(3, 2, 1, "/x.git"), false},
		{"sh's child sh", []sandbox.ExecEvent{sh}, execOf(3, 0, 2, "/usr/bin/dash", "/bin/sh", "/bin/sh", "-c", s), false},
		{"made by S", []sandbox.ExecEvent{sh, receivePack(3, 0, 2, "/r.git")}, sendPack(4, 0, 3), false},
		{"made by send-pack", []sandbox.ExecEvent{sendPack(2, 0, 1)}, sendPack(3, 0, 2), false},
		{"S of two operands", nil, twoOps, false},
		{"S of two commands", nil, twoCmds, false},
		{"S with a quote", nil, quoted, false},
		{"a written git", nil, written, false},
		{"unverifiable", nil, problem, false},
		{"a script through its shebang", nil, shebang, false},
		{"options before send-pack", nil, execOf(2, 0, 1, core+"git", core+"git", "git", "-c", "a.b=c", "send-pack", "/x.git", "main"), false},
		{"not a transport", nil, execOf(2, 0, 1, core+"git", core+"git", core+"git", "pack-objects", "--stdout"), false},
		{"no lineage", nil, unnumbered, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l pushLineage
			approved := grants.Request{Capability: grants.CapProcessExec, Target: grants.Target{Resource: "git", Command: "git push /r.git main"}}
			l.pushed(push, approved)
			for _, ev := range tc.chain {
				l.under(ev)
			}
			got, ok := l.under(tc.ev)
			if ok != tc.want {
				t.Fatalf("under = %v, want %v", ok, tc.want)
			}
			if ok && got.Target.Command != approved.Target.Command {
				t.Errorf("under %+v, want the approved push", got)
			}
		})
	}
}

// TestPushKeptOnlyGit: only git itself (not a program the command may
// have written, nor one it cannot verify) is kept as a push.
func TestPushKeptOnlyGit(t *testing.T) {
	s := "git-receive-pack '/r.git'"
	child := execOf(2, 0, 1, "/usr/bin/dash", "/bin/sh", "/bin/sh", "-c", s)
	for _, tc := range []struct {
		name string
		ev   sandbox.ExecEvent
		want bool
	}{
		{"git", execOf(1, 0, 0, "/usr/bin/git", "/usr/bin/git", "git", "push"), true},
		{"a written git", sandbox.ExecEvent{Exec: 1, Exe: "/w/git", ExecPath: "/w/git", Argv: []string{"git", "push"}, Written: "/w/git"}, false},
		{"unverifiable", sandbox.ExecEvent{Exec: 1, Exe: "/usr/bin/git", Argv: []string{"git", "push"}, Problem: "x"}, false},
		{"not git", execOf(1, 0, 0, "/usr/bin/dash", "/bin/sh", "sh", "-c", "git push"), false},
	} {
		var l pushLineage
		l.pushed(tc.ev, grants.Request{})
		if _, ok := l.under(child); ok != tc.want {
			t.Errorf("%s: under = %v, want %v", tc.name, ok, tc.want)
		}
	}
}

// TestPushForm: the requests an approved push settles are git's push
// forms, and no others.
func TestPushForm(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git push origin main":           true,
		"git send-pack --stateless-rpc":  true,
		"git receive-pack /r.git":        true,
		"git http-push https://h/r.git/": true,
		"git push":                       true,
		"git pushx":                      false,
		"git remote-https origin u":      false,
		"git-receive-pack /r.git":        false,
		"gitpush":                        false,
	} {
		r := grants.Request{Capability: grants.CapProcessExec, Target: grants.Target{Resource: "git", Command: cmd}}
		if got := pushForm(r); got != want {
			t.Errorf("%q: %v, want %v", cmd, got, want)
		}
	}
	other := grants.Request{Capability: grants.CapProcessExec, Target: grants.Target{Resource: "git-receive-pack", Command: "git push /r.git"}}
	if pushForm(other) {
		t.Error("a request on another resource is a push form")
	}
}
