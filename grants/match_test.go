package grants

import (
	"path"
	"strings"
	"testing"
)

func TestHostGlob(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"*.github.com", []string{"a.github.com", "a.b.github.com", "API.GitHub.com", "a.github.com."}, []string{"github.com", "agithub.com", "a.github.com.evil", "a.github.co", ""}},
		{"api.github.com", []string{"api.github.com", "API.GITHUB.COM", "api.github.com."}, []string{"github.com", "x.api.github.com", "api.github.com.evil.net", "api-github.com"}},
		{"API.GitHub.COM.", []string{"api.github.com"}, []string{"github.com"}},
		{"api.*.com", []string{"api.x.com", "api.x.y.com"}, []string{"api.com", "x.api.x.com"}},
		{"api-?.example.com", []string{"api-1.example.com"}, []string{"api-12.example.com", "api-.example.com"}},
		{"s3.*.amazonaws.com", []string{"s3.eu-west-1.amazonaws.com"}, []string{"s3.amazonaws.com"}},
		{"*", []string{"localhost", "a.b.c"}, nil},
		{"127.0.0.1", []string{"127.0.0.1"}, []string{"127.0.0.10", "127.0.0.1.nip.io"}},
		{"[::1]", []string{"::1"}, []string{"1", ":", "::2"}},
		{"::1", []string{"::1"}, []string{"1"}},
	}
	for _, tt := range tests {
		g, err := compileHostGlob(tt.pattern)
		if err != nil {
			t.Errorf("compileHostGlob(%q): %v", tt.pattern, err)
			continue
		}
		for _, h := range tt.yes {
			if !g.match(h) {
				t.Errorf("%q should match %q", tt.pattern, h)
			}
		}
		for _, h := range tt.no {
			if g.match(h) {
				t.Errorf("%q should not match %q", tt.pattern, h)
			}
		}
	}
	for _, bad := range []string{"", ".", "a..b", "https://a.com", "a.com:443", "a.com/x", "u@a.com", "a com", "[a.com", "a.[.com", "fe80::1%eth0"} {
		if _, err := compileHostGlob(bad); err == nil {
			t.Errorf("compileHostGlob(%q) accepted", bad)
		}
	}
}

func TestCommandPattern(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"git push*", []string{"git push", "git push origin main", "git push --force", "git  push   origin"}, []string{"git pull", "git", "git status push", "xgit push", "sudo git push"}},
		{"git push", []string{"git push", " git  push "}, []string{"git push origin", "git", "git pushx"}},
		{"git *", []string{"git", "git status", "git push origin main"}, []string{"gitk", "sudo git"}},
		{"git * main", []string{"git push main", "git pull main"}, []string{"git main", "git push origin main"}},
		{"*", []string{"ls", "a b c"}, nil},
		{"rm -rf /*", []string{"rm -rf /", "rm -rf /home/me"}, []string{"rm -rf home", "rm -r /home"}},
		{"curl https://*", []string{"curl https://a.com/x/y.sh"}, []string{"curl http://a.com", "wget https://a.com"}},
		{"go test ./...", []string{"go test ./..."}, []string{"go test ./x/..."}},
		{"re:git (push|pull)", []string{"git push", "git pull"}, []string{"git push origin", "xgit push", "git pushx"}},
		{"re:git push.*", []string{"git push", "git push origin main"}, []string{"git pull", "sudo git push"}},
		{"re:.*--force.*", []string{"git push --force", "x --force-with-lease"}, []string{"git push -f"}},
		{"re:a|b", []string{"a", "b"}, []string{"ab", "xa"}}, // alternation is anchored as a whole
		{"re:(a)|(b)", []string{"a", "b"}, []string{"ab", "xa", "bx"}},
	}
	for _, tt := range tests {
		p, err := compileCommandPattern(tt.pattern)
		if err != nil {
			t.Errorf("compileCommandPattern(%q): %v", tt.pattern, err)
			continue
		}
		for _, c := range tt.yes {
			if !p.match(c) {
				t.Errorf("%q should match %q", tt.pattern, c)
			}
		}
		for _, c := range tt.no {
			if p.match(c) {
				t.Errorf("%q should not match %q", tt.pattern, c)
			}
		}
	}
	for _, bad := range []string{"", "   ", "git [", "re:(", "re:a)", `re:\`, "re:a)|(b", "re:x)|(?:.*", "a\\"} {
		if _, err := compileCommandPattern(bad); err == nil {
			t.Errorf("compileCommandPattern(%q) accepted", bad)
		}
	}
}

func TestWordGlob(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"git", []string{"git"}, []string{"/usr/bin/git", "gitk", "Git"}},
		{"*", []string{"git", "/usr/bin/git", "./run.sh"}, nil},
		{"*/git", []string{"/usr/bin/git", "./git"}, []string{"git"}},
		{"py*", []string{"python3", "py"}, []string{"/usr/bin/python3"}},
		{"[gs]h", []string{"gh", "sh"}, []string{"bh"}},
		{"\\*", []string{"*"}, []string{"x"}},
	}
	for _, tt := range tests {
		g, err := compileWordGlob(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tt.yes {
			if !g.match(s) {
				t.Errorf("%q should match %q", tt.pattern, s)
			}
		}
		for _, s := range tt.no {
			if g.match(s) {
				t.Errorf("%q should not match %q", tt.pattern, s)
			}
		}
	}
	for _, bad := range []string{"", "[", "a\\"} {
		if _, err := compileWordGlob(bad); err == nil {
			t.Errorf("compileWordGlob(%q) accepted", bad)
		}
	}
}

func TestPathGlob(t *testing.T) {
	const ws = "/x/ws"
	tests := []struct {
		pattern string
		literal bool
		yes, no []string
	}{
		{"**", false, []string{"/x/ws", "/x/ws/a", "/x/ws/a/b/c"}, []string{"/x/ws_evil", "/x/ws_evil/a", "/x", "/x/wsa/b"}},
		{"src/*.go", false, []string{"/x/ws/src/a.go"}, []string{"/x/ws/src/sub/a.go", "/x/ws/a.go"}},
		{"src/**/*.go", false, []string{"/x/ws/src/a.go", "/x/ws/src/a/b/c.go"}, []string{"/x/ws/srcx/a.go"}},
		{"**/.env*", false, []string{"/x/ws/.env", "/x/ws/a/.env.local"}, []string{"/x/ws_evil/.env"}},
		{"a/{b,c}/d", false, []string{"/x/ws/a/b/d", "/x/ws/a/c/d"}, []string{"/x/ws/a/e/d"}},
		{"README.md", true, []string{"/x/ws/README.md"}, []string{"/x/ws/readme.md", "/x/ws/a/README.md"}},
		{"./a//b/../c", true, []string{"/x/ws/a/c"}, []string{"/x/ws/a/b/c"}},
		{"/etc/*", false, []string{"/etc/passwd"}, []string{"/etc/a/b", "/x/ws/etc/a"}},
		{"/etc/hosts", true, []string{"/etc/hosts"}, []string{"/etc/hosts2"}},
		{"../other/*", false, []string{"/x/other/a"}, []string{"/x/ws/other/a"}},
		{"~/notes/**", false, []string{"/home/u/notes/a"}, []string{"/x/ws/~/notes/a"}},
		{"~", true, []string{"/home/u"}, []string{"/home/u/a"}},
		{"~x", true, []string{"/x/ws/~x"}, nil},
		{"/", true, []string{"/"}, []string{"/a"}},
	}
	for _, tt := range tests {
		g, err := compilePathGlob(tt.pattern, ws, "/home/u")
		if err != nil {
			t.Errorf("compilePathGlob(%q): %v", tt.pattern, err)
			continue
		}
		if g.literal != tt.literal {
			t.Errorf("%q: literal = %v (compiled %q)", tt.pattern, g.literal, g.pattern)
		}
		for _, s := range tt.yes {
			if !g.match(s) {
				t.Errorf("%q (compiled %q) should match %q", tt.pattern, g.pattern, s)
			}
		}
		for _, s := range tt.no {
			if g.match(s) {
				t.Errorf("%q (compiled %q) should not match %q", tt.pattern, g.pattern, s)
			}
		}
	}
	for _, bad := range []string{"", "[", "a/[b", "{a,b", "a\x00b"} {
		if _, err := compilePathGlob(bad, ws, "/home/u"); err == nil {
			t.Errorf("compilePathGlob(%q) accepted", bad)
		}
	}
	if _, err := compilePathGlob("~/a", ws, ""); err == nil || !strings.Contains(err.Error(), "home") {
		t.Errorf("~ without a home: %v", err)
	}
}

func TestMatchCapability(t *testing.T) {
	tests := []struct {
		pattern string
		c       Capability
		want    bool
	}{
		{"*", CapUserAsk, true},
		{"network.*", CapHTTPGet, true},
		{"network.http.*", CapHTTPOptions, true},
		{"workspace.files.*", CapWorkspaceDelete, true},
		{"workspace.files.*", CapFilesystemRead, false},
		{"filesystem.*", CapWorkspaceRead, false},
		{"process.exec", CapProcessExec, true},
		{"process.*", CapProcessExec, true},
		{"network.http.get", CapHTTPHead, false},
	}
	for _, tt := range tests {
		if got := matchCapability(tt.pattern, tt.c); got != tt.want {
			t.Errorf("matchCapability(%q, %s) = %v", tt.pattern, tt.c, got)
		}
	}
}

func TestClassify(t *testing.T) {
	for p, want := range map[string]bool{
		"/w/.git/hooks/pre-commit": true, "/w/.git/hooks": true, "/w/.git/config": true, "/w/sub/.git/hooks/x/y": true,
		"/w/.git/HEAD": false, "/w/.git/configx": true, "/w/git/hooks/a": false, "/w/.git/hooksx": true,
		"/w/.git/commondir": true, "/w/.git/modules/m/config": true, "/w/.git/worktrees/t/gitdir": true,
		"/w/.git/index": false, "/w/.git/refs/heads/main": false,
	} {
		if got := isGitCodePath(p); got != want {
			t.Errorf("isGitCodePath(%s) = %v", p, got)
		}
	}
}

// TestCredentialNamesAreSimpleGlobs keeps IsCredentialPath's fast matcher
// honest: every name pattern must mean the same under path.Match.
func TestCredentialNamesAreSimpleGlobs(t *testing.T) {
	for _, g := range credentialNames {
		if strings.Count(g, "*") > 1 || strings.ContainsAny(g, "?[\\") {
			t.Errorf("%q is not a simple glob", g)
		}
		for _, name := range []string{".env", ".env.local", "a.pem", "id_rsa.pub", "service-account-1.json", "x", "terraform.tfstate.backup", "pem", ".envrc"} {
			want, _ := path.Match(g, name)
			if got := matchSimpleGlob(g, name); got != want {
				t.Errorf("matchSimpleGlob(%q, %q) = %v, path.Match says %v", g, name, got, want)
			}
		}
	}
}

// TestNameIndexAgreesWithGlobs checks the compiled credential-name lookups
// against plain glob matching over many names.
func TestNameIndexAgreesWithGlobs(t *testing.T) {
	names := []string{".env", ".env.local", ".envrc", "a.pem", "x.PEM", "pem", ".pem", "id_rsa", "id_rsa.pub", "my_id_rsa",
		"service-account.json", "service-account-prod.json", "service-account.yaml", "terraform.tfstate.backup", "prod.tfvars",
		"db.kdbx", "a.key", "keys", ".netrc", "notes.txt", "secrets.yml", "credentials.json", "x.p12", "app.keystore", "a.b.key"}
	for _, n := range names {
		want := false
		for _, g := range credentialNames {
			if ok, _ := path.Match(g, n); ok {
				want = true
			}
		}
		if got := credentialNameIndex.match(n); got != want {
			t.Errorf("%q: index says %v, globs say %v", n, got, want)
		}
	}
}

func TestProcSecretsAreCredentials(t *testing.T) {
	for p, want := range map[string]bool{
		"/proc/1234/environ": true, "/proc/1234/task/5/environ": true, "/proc/1/mem": true,
		"/proc/1234/status": false, "/home/me/environ": false, "/x/console.token": true,
	} {
		if got := IsCredentialPath(p); got != want {
			t.Errorf("IsCredentialPath(%q) = %v, want %v", p, got, want)
		}
	}
}
