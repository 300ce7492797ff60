package shelltool

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/onellm/onellm-mcp/grants"
	"github.com/onellm/onellm-mcp/shelltool/sandbox"
)

// An approved git push runs git's own transport as programs the exec gate
// sees: for an http(s) remote `git remote-https NAME URL`, which runs
// git-remote-https, which runs `git send-pack --stateless-rpc …`; for a
// local path `sh -c "git-receive-pack '/path'"` (git's use_shell form),
// which runs git-receive-pack. Those are push forms (cmdline.GitNames), so
// an ask rule on `git push*` or a force push's critical risk asks about
// them, and no approval names their words: the approved push would fail.
//
// So is a push no one was asked about, over http(s): git gives its remote
// helpers GIT_DIR, which makes send-pack's push form critical (a push's
// configuration from its environment: review rev20d H3), and no one
// approved it in the call.
//
// pushLineage lets them be decided as part of the push, narrowly.
// The tracer numbers every exec and says, for a process's first exec since
// it was made, the image of the process that made it when it did
// (ExecEvent.ParentExec), and otherwise the image it replaces (PrevExec):
// numbers, never reused in a command, unlike PIDs. An image is kept here
// (by its number) when it is
//
//   - a push: git (not a program the command may have written) whose
//     push-form request was allowed, by a person's approval or not;
//   - a remote helper under one: the first exec of a process made by a
//     push or a helper under one, being git's remote helper
//     (git remote-http(s)/ftp(s), git-remote-http(s)/ftp(s));
//   - git's use_shell form under one: the first exec, made likewise, of
//     `sh -c S` where S is exactly one git-receive-pack or git-upload-pack
//     with one single-quoted operand (sh runs S and nothing else).
//
// A program then runs under the push when it is the first exec of a
// process made by a push or a helper under one, and is one
// of those or the pushing end (git send-pack, receive-pack, http-push,
// upload-pack, by git's or their dashed name); or it is the program S
// names, with exactly S's words, run by such a sh (as its child, or in
// its place). Only its push-form requests (resource git, a push form's
// command) carry the push's request (grants.Request.Under); the server
// settles their ask as that request is decided (a person's approval of
// it; for a push allowed unasked, only the built-in ask at critical risk,
// never a rule the person wrote), and records so. Its other requests (a
// deny rule on anything, a rule on its own name, a risk of its own) are
// decided as any program's.
//
// Everything else inherits nothing (fail closed): a hook (sh running a
// hook's path, without -c, or a script through its shebang: the hooks
// folder, core.hooksPath and the workspace's .husky are the command's to
// write), a program the command may have written (Written: it could be
// anything named git), a re-exec of any image but the use_shell sh's, a
// process made by anything but git's code (a grandchild through a hook or
// any shell: what sh runs beyond S is not git's code), a process made
// before its maker exec'd the approved push (ParentExec is the maker's
// image when it forked), and a PID reused (the number differs).
type pushLineage struct {
	images map[uint64]pushImage
}

// maxPushImages bounds the images kept; past it they are forgotten (a
// plumbing program then inherits nothing).
const maxPushImages = 1024

// pushImage is one kept image: what it is and the push's request it is
// or runs under.
type pushImage struct {
	kind plumbing
	push grants.Request
	// words are what the use_shell sh runs (its one command S).
	words []string
}

// plumbing is what an exec is of git's push transport.
type plumbing int

const (
	notPlumbing plumbing = iota
	gitPush              // (kept images only) a push that was allowed
	pushHelper           // a remote helper: its children may be plumbing
	pushEnd              // send-pack, receive-pack, http-push, upload-pack
	useShell             // sh -c S, git's form for running S
)

// gitHelper reports whether sub names one of git's remote helpers that
// push (remote-http, -https, -ftp, -ftps).
func gitHelper(sub string) bool {
	switch sub {
	case "remote-ftp", "remote-ftps", "remote-http", "remote-https":
		return true
	}
	return false
}

// gitEnd reports whether sub names a pushing end of git's transport.
func gitEnd(sub string) bool {
	switch sub {
	case "http-push", "receive-pack", "send-pack", "upload-pack":
		return true
	}
	return false
}

// plumbingOf says what ev is of git's push transport (and for useShell the
// words S runs), by the names it was run by: the executable's, argv[0]'s
// and the exec path's, which must agree (a script through its shebang, a
// link by another name, is none). A program the command may have written,
// or one that cannot be verified, is none.
func plumbingOf(ev sandbox.ExecEvent) (plumbing, []string) {
	if ev.Problem != "" || ev.Written != "" || len(ev.Argv) == 0 {
		return notPlumbing, nil
	}
	exe, arg0, path := filepath.Base(ev.Exe), filepath.Base(ev.Argv[0]), filepath.Base(ev.ExecPath)
	if arg0 != path {
		return notPlumbing, nil
	}
	switch {
	case exe == "git" && arg0 == "git" && len(ev.Argv) > 1:
		return gitPlumbing(ev.Argv[1])
	case exe == "git" || exe == "git-remote-http" || exe == "git-http-push":
		if sub, ok := strings.CutPrefix(arg0, "git-"); ok && (exe == "git" || exe == "git-"+sub || exe == "git-remote-http" && gitHelper(sub)) {
			return gitPlumbing(sub)
		}
	case (exe == "dash" || exe == "bash" || exe == "sh") && arg0 == "sh":
		if words, ok := useShellWords(ev.Argv); ok {
			return useShell, words
		}
	}
	return notPlumbing, nil
}

// gitPlumbing is what git's subcommand sub is of its push transport.
func gitPlumbing(sub string) (plumbing, []string) {
	switch {
	case gitHelper(sub):
		return pushHelper, nil
	case gitEnd(sub):
		return pushEnd, nil
	}
	return notPlumbing, nil
}

// useShellWords reads git's use_shell form, sh -c S [S], where S is
// `NAME 'OPERAND'` (git's quoting of one operand without a quote or "!"
// in it) for NAME git-receive-pack or git-upload-pack: the words S runs.
func useShellWords(argv []string) ([]string, bool) {
	if len(argv) < 3 || len(argv) > 4 || argv[1] != "-c" || len(argv) == 4 && argv[3] != argv[2] {
		return nil, false
	}
	name, op, ok := strings.Cut(argv[2], " ")
	if !ok || name != "git-receive-pack" && name != "git-upload-pack" || len(op) < 2 || op[0] != '\'' || op[len(op)-1] != '\'' {
		return nil, false
	}
	op = op[1 : len(op)-1]
	if op == "" || strings.ContainsAny(op, "'!") {
		return nil, false
	}
	return []string{name, op}, true
}

// under returns the push's request ev runs under as git's push
// transport, if it does (see pushLineage), and keeps ev's image when its
// own children may be plumbing too.
func (l *pushLineage) under(ev sandbox.ExecEvent) (grants.Request, bool) {
	if ev.Exec == 0 || l.images == nil {
		return grants.Request{}, false
	}
	kind, words := plumbingOf(ev)
	from, ok := l.images[ev.ParentExec]
	if ev.PrevExec != 0 {
		from, ok = l.images[ev.PrevExec]
		ok = ok && from.kind == useShell // only sh runs S in its place
	}
	if !ok || kind == notPlumbing {
		return grants.Request{}, false
	}
	switch from.kind {
	case gitPush, pushHelper:
		ok = ev.PrevExec == 0
	case useShell:
		ok = kind == pushEnd && slices.Equal(ev.Argv, from.words)
	default:
		ok = false
	}
	if !ok {
		return grants.Request{}, false
	}
	if kind == pushHelper || kind == useShell {
		l.keep(ev.Exec, pushImage{kind: kind, push: from.push, words: words})
	}
	return from.push, true
}

// pushed keeps ev's image as a push whose allowed push-form request is r,
// when ev is git itself (not a program the command may have written).
func (l *pushLineage) pushed(ev sandbox.ExecEvent, r grants.Request) {
	if ev.Exec == 0 || ev.Problem != "" || ev.Written != "" || filepath.Base(ev.Exe) != "git" {
		return
	}
	l.keep(ev.Exec, pushImage{kind: gitPush, push: r})
}

func (l *pushLineage) keep(n uint64, im pushImage) {
	if l.images == nil || len(l.images) >= maxPushImages {
		l.images = map[uint64]pushImage{}
	}
	l.images[n] = im
}

// pushForm reports whether r is a git push form's request (resource git,
// command git push, send-pack, receive-pack or http-push): the only
// requests of git's transport a push's decision settles.
func pushForm(r grants.Request) bool {
	sub, ok := strings.CutPrefix(r.Target.Command, "git ")
	if !ok || r.Capability != grants.CapProcessExec || r.Target.Resource != "git" {
		return false
	}
	sub, _, _ = strings.Cut(sub, " ")
	return sub == "push" || sub == "send-pack" || sub == "receive-pack" || sub == "http-push"
}
