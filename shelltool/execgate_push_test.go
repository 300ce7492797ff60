//go:build linux

package shelltool

import (
	"context"
	"encoding/json"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/grants"
)

const askPushTOML = "profile = \"interactive-dev\"\n[[rules.ask]]\nrule_id = \"ask-push\"\ncapability = \"process.exec\"\ntarget = { command = \"git push*\" }\n"

// lineAsks are the requests of the line that the policy asks about: what
// the person approves before it runs.
func lineAsks(t *testing.T, tool *Tool, p *grants.Policy, line string) []grants.Request {
	t.Helper()
	tool.Start(p)
	args, _ := json.Marshal(Args{Command: line})
	plan, err := tool.Plan(context.Background(), (&gateCall{}).env(p), args)
	if err != nil {
		t.Fatal(err)
	}
	var asks []grants.Request
	for _, r := range plan.Requests {
		if d := p.Decide(r); d.Effect == grants.Ask {
			asks = append(asks, d.Request)
		}
	}
	if len(asks) == 0 {
		t.Fatalf("nothing of %q is asked about (the test proves nothing)", line)
	}
	return asks
}

// hasMain reports whether the bare repository at dir has a main branch.
func hasMain(dir string) bool {
	return exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", "refs/heads/main").Run() == nil
}

// TestExecGateApprovedPushTransport (review rev20d M1): an approved `git
// push` to a local or http remote lands, though git runs its transport as
// programs that are push forms no approval names (sh -c
// "git-receive-pack '/path'" and git-receive-pack; git remote-http,
// git-remote-http and git send-pack); the same transport run by the
// command itself, and a push no one approved, are still killed.
func TestExecGateApprovedPushTransport(t *testing.T) {
	needProgram(t, "git", "sh")
	for _, tc := range []struct{ name, url string }{
		{"path", "WS/remote.git"},
		{"file", "file://WS/remote.git"},
		{"http", "HTTP/remote.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitWorkspace(t, "git init -q --bare remote.git && git init -q --bare other.git && git -C remote.git config http.receivepack true")
			toml := askPushTOML
			url := strings.ReplaceAll(tc.url, "WS", ws)
			if tc.name == "http" {
				url = strings.ReplaceAll(url, "HTTP", gitHTTPServer(t, ws))
				toml += "[sandbox]\nnetwork = \"full\"\n"
			}
			p := policyFor(t, ws, toml)
			tool := &Tool{}
			line := "git push -q " + url + " main; echo push=$?"
			approved := lineAsks(t, tool, p, line)
			script := line + `
printf 'git send-pack ` + ws + `/other.git main\n' >/tmp/own.sh; sh /tmp/own.sh; echo own=$?
printf 'sh -c "git-receive-pack '"'"'` + ws + `/other.git'"'"'" </dev/null\n' >/tmp/shell.sh; sh /tmp/shell.sh; echo shell=$?
printf 'git push -q ` + ws + `/other.git main\n' >/tmp/np.sh; sh /tmp/np.sh; echo np=$?`
			out := runTool(t, tool, approvingEnv(p, approved), script)
			if !hasMain(filepath.Join(ws, "remote.git")) || !strings.Contains(out.Stdout, "push=0") {
				t.Errorf("the approved push did not land: %+v", out)
			}
			if hasMain(filepath.Join(ws, "other.git")) {
				t.Errorf("a push no one approved landed: %+v", out)
			}
			for _, want := range []string{"own=137", "shell=137", "np=137"} {
				if !strings.Contains(out.Stdout, want) {
					t.Errorf("want %s (the command's own transport, or an unapproved push, killed): %q", want, out.Stdout)
				}
			}
		})
	}
}

// gitHTTPServer serves the repositories in root over http on 127.0.0.1
// (git http-backend, as CGI), pushes included, and returns its URL.
func gitHTTPServer(t *testing.T, root string) string {
	t.Helper()
	dir, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(dir)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git-http-backend")
	}
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestExecGatePlainHTTPPush (review rev20d M1): a push over http that no
// rule asks about lands, though git gives its remote helpers GIT_DIR,
// which makes send-pack's push form critical (review rev20d H3) and no
// one approved it; the command's own send-pack with GIT_DIR is still
// critical, and killed.
func TestExecGatePlainHTTPPush(t *testing.T) {
	ws := gitWorkspace(t, "git init -q --bare remote.git && git init -q --bare other.git && git -C remote.git config http.receivepack true && git -C other.git config http.receivepack true")
	url := gitHTTPServer(t, ws)
	p := policyFor(t, ws, "profile = \"interactive-dev\"\n[sandbox]\nnetwork = \"full\"\n")
	script := "git push -q " + url + "/remote.git main; echo push=$?\n" +
		"printf 'GIT_DIR=" + ws + "/.git git send-pack " + ws + "/other.git main\\n' >/tmp/own.sh; sh /tmp/own.sh; echo own=$?"
	out := runTool(t, &Tool{}, (&gateCall{}).env(p), script)
	if !hasMain(filepath.Join(ws, "remote.git")) || !strings.Contains(out.Stdout, "push=0") {
		t.Errorf("the push did not land: %+v", out)
	}
	if hasMain(filepath.Join(ws, "other.git")) || !strings.Contains(out.Stdout, "own=137") {
		t.Errorf("the command's own critical send-pack ran: %+v", out)
	}
}

// TestExecGatePushHookInheritsNothing (review rev20d M1): a pre-push hook
// (core.hooksPath: a workspace folder the command may write) runs under
// the approved push but is no part of git's transport: its own git
// send-pack, its sh -c git-receive-pack and its exec of git send-pack are
// killed, while the approved push itself proceeds.
func TestExecGatePushHookInheritsNothing(t *testing.T) {
	ws := gitWorkspace(t, "git init -q --bare remote.git && git init -q --bare other.git && git config core.hooksPath hooks && mkdir hooks")
	hook := "#!/bin/sh\n" +
		"git send-pack " + ws + "/other.git main; echo send-pack=$? >>" + ws + "/hook.log\n" +
		"sh -c \"git-receive-pack '" + ws + "/other.git'\" </dev/null >/dev/null; echo receive-pack=$? >>" + ws + "/hook.log\n" +
		"sh -c 'exec git send-pack " + ws + "/other.git main'; echo exec=$? >>" + ws + "/hook.log\n" +
		"exit 0\n"
	if err := os.WriteFile(filepath.Join(ws, "hooks", "pre-push"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	p := policyFor(t, ws, askPushTOML)
	tool := &Tool{}
	line := "git push -q " + ws + "/remote.git main; echo push=$?"
	out := runTool(t, tool, approvingEnv(p, lineAsks(t, tool, p, line)), line)
	if !hasMain(filepath.Join(ws, "remote.git")) || !strings.Contains(out.Stdout, "push=0") {
		t.Errorf("the approved push did not land (the test proves nothing): %+v", out)
	}
	if hasMain(filepath.Join(ws, "other.git")) {
		t.Errorf("the hook's push landed: %+v", out)
	}
	log, _ := os.ReadFile(filepath.Join(ws, "hook.log"))
	for _, want := range []string{"send-pack=137", "receive-pack=137", "exec=137"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the hook's transport was not killed (want %s): %q %+v", want, log, out)
		}
	}
}
