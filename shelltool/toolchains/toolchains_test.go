package toolchains

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeHome builds a home folder with toolchains and secrets beside them.
func fakeHome(t *testing.T) (Host, string) {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	for _, d := range []string{
		".pyenv/versions/3.11.7/bin", ".pyenv/shims", ".cargo/bin", ".rustup/toolchains/stable/bin",
		".nvm/versions/node/v20/bin", ".local/bin", ".local/lib/python3.11/site-packages", ".local/share/keyrings",
		".ssh", "go/bin", "go/pkg/mod/cache/download", "goroot/bin", "goroot/src/runtime", "goroot/pkg/tool", "bin",
	} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"goroot/bin/go", "goroot/VERSION", "bin/git", ".cargo/bin/cargo"} {
		if err := os.WriteFile(filepath.Join(home, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".cargo/credentials.toml"), []byte("token = \"x\"\n"), 0o600)
	// Registry tokens deep inside installations, where npm and pip read them.
	os.MkdirAll(filepath.Join(home, ".nvm/versions/node/v20/etc"), 0o755)
	os.WriteFile(filepath.Join(home, ".nvm/versions/node/v20/etc/npmrc"), []byte("//registry.npmjs.org/:_authToken=npm_SECRET\n"), 0o600)
	// npm's built-in npmrc, which npm reads too.
	for _, prefix := range []string{".nvm/versions/node/v20", "node"} {
		os.MkdirAll(filepath.Join(home, prefix, "lib/node_modules/npm"), 0o755)
		os.WriteFile(filepath.Join(home, prefix, "lib/node_modules/npm/npmrc"), []byte("//registry.npmjs.org/:_authToken=npm_SECRET\n"), 0o644)
	}
	os.WriteFile(filepath.Join(home, ".pyenv/versions/3.11.7/pip.conf"), []byte("[global]\nindex-url = https://u:p@idx.example/simple\n"), 0o600)
	// The node in PATH, whose global npmrc names a CA bundle beside a token.
	os.MkdirAll(filepath.Join(home, "node/bin"), 0o755)
	os.MkdirAll(filepath.Join(home, "node/etc"), 0o755)
	os.WriteFile(filepath.Join(home, "node/bin/node"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(home, "node/etc/npmrc"), []byte("cafile=/etc/ssl/certs/ca-certificates.crt\n//registry.npmjs.org/:_authToken=npm_SECRET\n"), 0o644)
	os.Symlink(filepath.Join(home, "node/bin/node"), filepath.Join(home, "bin/node"))
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(`[user]
	name = "Ada \"the\" Lovelace" # comment
	email = ada@example.com
[url "https://ghp_SECRETTOKEN@github.com/"]
	insteadOf = https://github.com/
[credential]
	helper = store
[include]
	path = ~/.gitconfig.local
`), 0o644)
	os.Symlink(filepath.Join(home, "goroot/bin/go"), filepath.Join(home, "bin/go"))
	env := map[string]string{"PATH": filepath.Join(home, "bin") + ":" + filepath.Join(home, ".cargo/bin") + ":relative/bin"}
	return Host{Home: home, Getenv: func(k string) string { return env[k] }}, home
}

func TestDetect(t *testing.T) {
	h, home := fakeHome(t)
	s := Detect(h, Known)
	for _, n := range Known {
		if !s.Has(n) {
			t.Errorf("%s not found; found %v", n, s.Describe())
		}
	}
	got := s.Readable()
	want := []string{
		".cargo/bin", ".local/bin", ".local/lib/python3.11", ".nvm/versions", ".pyenv", ".rustup",
		"bin", "go/bin", "go/pkg/mod/cache/download", "goroot",
	}
	for i := range want {
		want[i] = filepath.Join(home, want[i])
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("readable:\n got %v\nwant %v", got, want)
	}
	for _, r := range got {
		for _, secret := range []string{".ssh", ".gitconfig", ".cargo/credentials.toml", ".local/share", ".npmrc"} {
			if r == home || strings.HasPrefix(filepath.Join(home, secret), r+"/") || r == filepath.Join(home, secret) {
				t.Errorf("readable root %s opens %s", r, secret)
			}
		}
	}
	if s.userName != `Ada "the" Lovelace` || s.userEmail != "ada@example.com" {
		t.Fatalf("identity %q <%q>", s.userName, s.userEmail)
	}
	var configs []string
	for _, c := range []string{".nvm/versions/node/v20/etc/npmrc", ".nvm/versions/node/v20/lib/node_modules/npm/npmrc", ".pyenv/versions/3.11.7/pip.conf", "node/etc/npmrc", "node/lib/node_modules/npm/npmrc"} {
		configs = append(configs, filepath.Join(home, c))
	}
	if got := s.Configs(); !slices.Equal(got, configs) {
		t.Errorf("configs holding tokens:\n got %v\nwant %v", got, configs)
	}
}

func TestDetectNothing(t *testing.T) {
	h := Host{Home: t.TempDir(), Getenv: func(string) string { return "" }}
	if s := Detect(h, Known); len(s.Found) != 0 {
		t.Fatalf("found %v in an empty home with no PATH", s.Describe())
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		in      []string
		want    []string
		wantErr string
	}{
		{nil, Known, ""},
		{[]string{"auto"}, Known, ""},
		{[]string{"none"}, nil, ""},
		{[]string{"go", "git"}, []string{"go", "git"}, ""},
		{[]string{"go", "java"}, nil, `unknown toolchain "java"`},
		{[]string{"auto", "go"}, nil, `unknown toolchain "auto"`},
	}
	for _, tt := range tests {
		got, err := Select(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Select(%v) = %v, want error %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Select(%v) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseIdentity(t *testing.T) {
	tests := []struct{ in, name, email string }{
		{"[user]\nname = A\nemail = a@x\n", "A", "a@x"},
		{"[User]\n\tName = B ; c\n", "B", ""},
		{"[user] name = inline\n", "inline", ""},
		{"[user]\nname = first\n[user]\nname = last\n", "last", ""},
		{"[core]\nname = not-user\n", "", ""},
		{"[user \"sub\"]\nname = sub\n", "", ""},
		{"[user]\nname = \"a;b#c\"\n", "a;b#c", ""},
		{"[user]\nname\n", "", ""},
	}
	for _, tt := range tests {
		n, e := parseIdentity([]byte(tt.in))
		if n != tt.name || e != tt.email {
			t.Errorf("%q: got %q %q, want %q %q", tt.in, n, e, tt.name, tt.email)
		}
	}
}

func TestPrepare(t *testing.T) {
	h, home := fakeHome(t)
	s := Detect(h, Known)
	cache := WorkspaceCache(t.TempDir(), "/work/app")
	c, err := s.Prepare(cache, []string{"/work/app"}, "")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if !Sets(k) {
			t.Errorf("Prepare sets %s, which Sets does not list (the line's analysis would read a passed value of it)", k)
		}
	}
	for _, k := range []string{"HOME", "GOCACHE", "GOMODCACHE", "npm_config_cache", "PIP_CACHE_DIR", "CARGO_HOME", "PYTHONUSERBASE"} {
		if !strings.HasPrefix(env[k], cache+"/") {
			t.Errorf("%s=%q is not under the workspace cache %s", k, env[k], cache)
		}
		if !slices.ContainsFunc(c.Writable, func(w string) bool { return env[k] == w || strings.HasPrefix(env[k], w+"/") }) {
			t.Errorf("%s=%q is not writable", k, env[k])
		}
	}
	if env["GOPROXY"] != "file://"+filepath.Join(home, "go/pkg/mod/cache/download")+","+GoProxy || env["RUSTUP_HOME"] != filepath.Join(home, ".rustup") {
		t.Errorf("GOPROXY=%q RUSTUP_HOME=%q", env["GOPROXY"], env["RUSTUP_HOME"])
	}
	if env["PIP_CONFIG_FILE"] != os.DevNull || filepath.Dir(env["npm_config_globalconfig"]) != filepath.Dir(env["npm_config_userconfig"]) || env["npm_config_globalconfig"] == env["npm_config_userconfig"] {
		t.Errorf("PIP_CONFIG_FILE %q, npm global config %q", env["PIP_CONFIG_FILE"], env["npm_config_globalconfig"])
	}
	if env["npm_config_registry"] != NpmRegistry || env["npm_config_replace_registry_host"] != "always" {
		t.Errorf("npm registry %q, replace host %q", env["npm_config_registry"], env["npm_config_replace_registry_host"])
	}
	if env["GIT_CONFIG_NOSYSTEM"] != "1" || env["GOTOOLCHAIN"] != "local" {
		t.Errorf("env %v", env)
	}
	for _, w := range c.Writable {
		if strings.HasPrefix(w, home) {
			t.Errorf("writable %s is in the real home", w)
		}
	}
	// npm's generated global config keeps the real one's CA bundle only.
	if b, err := os.ReadFile(env["npm_config_globalconfig"]); err != nil || !strings.HasSuffix(string(b), "\ncafile=/etc/ssl/certs/ca-certificates.crt\n") || strings.Contains(string(b), "SECRET") {
		t.Errorf("generated global npmrc: %q %v", b, err)
	}
	if b, err := os.ReadFile(env["npm_config_userconfig"]); err != nil || strings.Contains(string(b), "cafile") {
		t.Errorf("generated user npmrc: %q %v", b, err)
	}
	gc, err := os.ReadFile(env["GIT_CONFIG_GLOBAL"])
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"SECRETTOKEN", "insteadOf", "helper", "include"} {
		if strings.Contains(string(gc), leak) {
			t.Errorf("generated gitconfig carries %q:\n%s", leak, gc)
		}
	}
	if git, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(git, "config", "--file", env["GIT_CONFIG_GLOBAL"], "user.name").Output()
		if err != nil || strings.TrimSpace(string(out)) != `Ada "the" Lovelace` {
			t.Errorf("git reads user.name as %q (%v)", out, err)
		}
	}
	// Go's telemetry is off (else every go command starts a second go in
	// the background), from a folder commands cannot write.
	if b, err := os.ReadFile(filepath.Join(env["TEST_TELEMETRY_DIR"], "mode")); err != nil || string(b) != "off\n" {
		t.Errorf("go telemetry mode: %q %v", b, err)
	}
	if !slices.Contains(c.Readable, filepath.Dir(env["TEST_TELEMETRY_DIR"])) || slices.ContainsFunc(c.Writable, func(w string) bool { return strings.HasPrefix(env["TEST_TELEMETRY_DIR"], w+"/") }) {
		t.Errorf("go's telemetry folder %s is not read-only to commands", env["TEST_TELEMETRY_DIR"])
	}
	if !strings.HasPrefix(env["XDG_CONFIG_HOME"], env["HOME"]+"/") {
		t.Errorf("XDG_CONFIG_HOME=%q is not in the call's HOME", env["XDG_CONFIG_HOME"])
	}
	homeDir := env["HOME"]
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(homeDir); !os.IsNotExist(err) {
		t.Errorf("the call's HOME survived Close: %v", err)
	}
	c2, err := s.Prepare(cache, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if c2.home == homeDir {
		t.Error("two calls got the same HOME")
	}
}

// TestPrepareClearsCargoConfig: a config file a command of an earlier call
// wrote into the private CARGO_HOME (a source replacement moving every
// later cargo install's index) is gone at the next call, a symlink or a
// folder by that name too, without touching what it points to; the
// registry cache beside it stays; uv is told to read no persistent config.
func TestPrepareClearsCargoConfig(t *testing.T) {
	h, _ := fakeHome(t)
	s := Detect(h, Known)
	cache := WorkspaceCache(t.TempDir(), "/work/app")
	c, err := s.Prepare(cache, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["UV_NO_CONFIG"] != "1" {
		t.Errorf("UV_NO_CONFIG=%q", env["UV_NO_CONFIG"])
	}
	cargo := env["CARGO_HOME"]
	outside := filepath.Join(t.TempDir(), "keep.toml")
	for _, f := range []struct{ path, body string }{
		{filepath.Join(cargo, "config.toml"), "[source.crates-io]\nreplace-with = \"e\"\n"},
		{filepath.Join(cargo, "registry", "index", "x"), "cached"},
		{outside, "the person's"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(cargo, "config")); err != nil {
		t.Fatal(err)
	}
	c, err = s.Prepare(cache, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, name := range []string{"config.toml", "config"} {
		if _, err := os.Lstat(filepath.Join(cargo, name)); !os.IsNotExist(err) {
			t.Errorf("%s survived the next call: %v", name, err)
		}
	}
	for _, keep := range []string{filepath.Join(cargo, "registry", "index", "x"), outside} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
}

// TestPrepareGivenHome: with a HOME the sandbox makes, Prepare makes none,
// points HOME and the XDG folders at it, adds no writable root for it and
// leaves nothing for Close to remove; a HOME that is not a clean absolute
// path is refused.
func TestPrepareGivenHome(t *testing.T) {
	h, _ := fakeHome(t)
	s := Detect(h, Known)
	cache := WorkspaceCache(t.TempDir(), "/work/app")
	c, err := s.Prepare(cache, []string{"/work/app"}, "/tmp/home")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"HOME=/tmp/home", "XDG_CONFIG_HOME=/tmp/home/.config", "XDG_CACHE_HOME=/tmp/home/.cache"} {
		if !slices.Contains(c.Env, want) {
			t.Errorf("env lacks %s: %q", want, c.Env)
		}
	}
	if slices.ContainsFunc(c.Writable, func(w string) bool { return strings.HasPrefix(w, "/tmp/home") }) || len(c.Writable) != 6 {
		t.Errorf("writable roots %q", c.Writable)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "homes")); len(ents) != 0 || c.home != "" {
		t.Errorf("a host HOME was made: %d entries, %q", len(ents), c.home)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"tmp/home", "/tmp/home/", "/tmp/../home"} {
		if _, err := s.Prepare(cache, nil, bad); err == nil {
			t.Errorf("home %q accepted", bad)
		}
	}
}

func TestQuoteValueRoundTrip(t *testing.T) {
	git := need(t, "git")
	for _, v := range []string{`plain`, `with "quotes"`, `back\slash`, "semi;colon # hash", "tab\tand\nnewline"} {
		f := filepath.Join(t.TempDir(), "c")
		os.WriteFile(f, []byte("[user]\n\tname = "+quoteValue(v)+"\n"), 0o600)
		out, err := exec.Command(git, "config", "--file", f, "user.name").Output()
		want := strings.NewReplacer("\t", " ", "\n", " ").Replace(v)
		if err != nil || strings.TrimSuffix(string(out), "\n") != want {
			t.Errorf("%q: git read %q (%v), want %q", v, out, err, want)
		}
	}
}

func BenchmarkDetect(b *testing.B) {
	h := Host{Home: os.Getenv("HOME"), Getenv: os.Getenv}
	for b.Loop() {
		Detect(h, Known)
	}
}

func TestPyenvVersion(t *testing.T) {
	root, ws := t.TempDir(), t.TempDir()
	for _, v := range []string{"3.11.7", "3.13.0"} {
		os.MkdirAll(filepath.Join(root, "versions", v, "bin"), 0o755)
	}
	check := func(name, wantV string) {
		t.Helper()
		v, bin := pyenvVersion(root, []string{ws})
		if v != wantV || (wantV != "" && bin != filepath.Join(root, "versions", wantV, "bin")) || (wantV == "" && bin != "") {
			t.Errorf("%s: got %q %q, want %q", name, v, bin, wantV)
		}
	}
	check("no version file", "")
	os.WriteFile(filepath.Join(root, "version"), []byte("3.11.7\n"), 0o644)
	check("global version", "3.11.7")
	os.WriteFile(filepath.Join(ws, ".python-version"), []byte("3.13.0\n3.11.7\n"), 0o644)
	check("the workspace's .python-version wins", "3.13.0")
	for _, bad := range []string{"system\n", "../../etc\n", "3.9.9\n", "\n"} {
		os.WriteFile(filepath.Join(ws, ".python-version"), []byte(bad), 0o644)
		check("workspace names "+strings.TrimSpace(bad)+": global", "3.11.7")
	}
}

// BenchmarkPrepare: what every sandboxed command pays for toolchains: the
// fresh HOME (with go's telemetry off), the generated configs checked, the
// HOME removed.
//
// host: Prepare makes the HOME under the cache and Close removes it;
// sandbox: the sandbox makes it in its private /tmp (Spec.Home), so Prepare
// only checks the caches and the generated configs.
func BenchmarkPrepare(b *testing.B) {
	s := Detect(Host{Home: os.Getenv("HOME"), Getenv: os.Getenv}, Known)
	cache := WorkspaceCache(b.TempDir(), "/work/app")
	for _, tc := range []struct{ name, home string }{{"host", ""}, {"sandbox", "/tmp/home"}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				c, err := s.Prepare(cache, []string{"/work/app"}, tc.home)
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// TestGoTelemetryOff: the go command of this machine reads its telemetry
// mode where Prepare points it, and finds it off. A go that no longer
// reads TEST_TELEMETRY_DIR fails here: it would start a telemetry child in
// every command.
func TestGoTelemetryOff(t *testing.T) {
	goBin := need(t, "go")
	s := Set{Found: []Toolchain{{Name: Go}}}
	c, err := s.Prepare(WorkspaceCache(t.TempDir(), "/work/app"), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := exec.Command(goBin, "env", "GOTELEMETRY", "GOTELEMETRYDIR")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, c.Env...)
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "off\n" + envValueOf(c.Env, "TEST_TELEMETRY_DIR") + "\n"; string(out) != want {
		t.Fatalf("go env GOTELEMETRY GOTELEMETRYDIR = %q, want %q", out, want)
	}
	if ents, _ := os.ReadDir(c.home); len(ents) != 0 {
		t.Errorf("go wrote into the call's HOME: %v", ents)
	}
}

func envValueOf(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// need is the program's path, or it skips the test (fails it under
// CI=true, where every dependency is installed).
func need(t *testing.T, program string) string {
	t.Helper()
	p, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is needed: %v", program, err)
		}
		t.Skipf("no %s", program)
	}
	return p
}
