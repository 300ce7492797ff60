package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onellm/onellm-mcp/internal/testkit"
)

// npmTarball builds the npm package hello-npm 1.0.0 in memory, as npm
// packs one (a gzipped tar whose files are under package/).
func npmTarball(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, body string }{
		{"package/package.json", `{"name":"hello-npm","version":"1.0.0","main":"index.js"}`},
		{"package/index.js", "module.exports = { value: 42 };\n"},
	} {
		hdr := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg, ModTime: time.Unix(499162500, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// npmRegistry is a minimal npm registry on one loopback address serving
// hello-npm: its metadata document and its tarball. It records every
// request's path.
type npmRegistry struct {
	*httptest.Server
	integrity string // the tarball's sha512 SRI
	mu        sync.Mutex
	paths     []string
}

const npmTarballPath = "/hello-npm/-/hello-npm-1.0.0.tgz"

func newNPMRegistry(t *testing.T, addr string, tgz []byte) *npmRegistry {
	t.Helper()
	sha := sha512.Sum512(tgz)
	sum := sha1.Sum(tgz)
	r := &npmRegistry{integrity: "sha512-" + base64.StdEncoding.EncodeToString(sha[:])}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("registry on %s: %v", addr, err)
	}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.paths = append(r.paths, req.Method+" "+req.URL.Path)
		r.mu.Unlock()
		switch req.URL.Path {
		case "/hello-npm":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"name": "hello-npm", "dist-tags": map[string]string{"latest": "1.0.0"},
				"versions": map[string]any{"1.0.0": map[string]any{
					"name": "hello-npm", "version": "1.0.0", "main": "index.js",
					"dist": map[string]string{"tarball": r.URL + npmTarballPath, "integrity": r.integrity, "shasum": hex.EncodeToString(sum[:])},
				}},
			})
		case npmTarballPath:
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(tgz)
		default:
			http.NotFound(w, req)
		}
	}))
	r.Server.Listener.Close()
	r.Server.Listener = ln
	r.Start()
	t.Cleanup(r.Close)
	return r
}

func (r *npmRegistry) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...)
}

// npmProject writes a project depending on hello-npm 1.0.0 whose lockfile
// resolves it on registry and whose .npmrc names registry too.
func npmProject(t *testing.T, f *fixture, registry *npmRegistry) {
	t.Helper()
	f.write(t, "package.json", `{"name":"app","version":"1.0.0","dependencies":{"hello-npm":"1.0.0"}}`)
	lock, _ := json.MarshalIndent(map[string]any{
		"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
		"packages": map[string]any{
			"": map[string]any{"name": "app", "version": "1.0.0", "dependencies": map[string]string{"hello-npm": "1.0.0"}},
			"node_modules/hello-npm": map[string]any{
				"version": "1.0.0", "resolved": registry.URL + npmTarballPath, "integrity": registry.integrity,
			},
		},
	}, "", "  ")
	f.write(t, "package-lock.json", string(lock)+"\n")
	// A scope's registry too, which npm reads on the host (the pinned
	// registry does not outrank it); in the sandbox the .npmrc is hidden
	// from npm, and the decision names no index npm will not use.
	f.write(t, ".npmrc", "registry="+registry.URL+"/\n@scoped:registry="+registry.URL+"/\n")
}

// npmConfig is proxyConfig plus the decoy registry's address reachable
// through the proxy, so only npm's own configuration keeps it away.
const npmConfig = proxyConfig + `
[[rules.allow]]
rule_id    = "decoy-api"
capability = "network.http.*"
target     = { host = "127.0.0.2" }
conditions = { allow_private = true }
`

// TestNPMCIThroughTheProxy: `npm ci` installs from a registry on
// 127.0.0.1 through the egress proxy when a rule allows installing from
// that host, and what is decided is what is fetched: the project's .npmrc
// and its lockfile name a second registry (127.0.0.2, reachable through
// the proxy too), yet the tarball comes from the registry the command line
// named and was decided, and a plain `npm ci` is decided as an install
// from the default registry, not from the one the project's files name.
// npm's cache and user config are the workspace's private ones, not the
// host's ~/.npm. Without the rule the install is refused before anything
// runs and no registry sees a request.
func TestNPMCIThroughTheProxy(t *testing.T) {
	needNPM(t)
	tgz := npmTarball(t)
	registry := newNPMRegistry(t, "127.0.0.1:0", tgz)
	decoy := newNPMRegistry(t, "127.0.0.2:0", tgz)
	install := "npm ci --registry " + registry.URL + "/ --no-audit --no-fund --fetch-retries=0 && node -e 'console.log(require(\"hello-npm\").value)'"

	allowed := newFixture(t, npmConfig+`
[[rules.allow]]
rule_id    = "local-registry"
capability = "package.install"
target     = { host = "127.0.0.1" }
`)
	npmProject(t, allowed, decoy)
	c := stdioClient(t, allowed, Modern)

	// explain builds the same requests: the install from the registry the
	// line names is allowed by the rule, a plain `npm ci` is an install
	// from the default registry, which no rule allows.
	for line, want := range map[string]string{
		"npm ci --registry " + registry.URL + "/": "request:  package.install (package.json) from 127.0.0.1",
		"npm ci": "request:  package.install (package.json) from registry.npmjs.org",
		// npm update fetches the manifest's packages as npm ci does.
		"npm update": "request:  package.install (package.json) from registry.npmjs.org",
		"npm update --registry " + registry.URL + "/": "request:  package.install (package.json) from 127.0.0.1",
	} {
		out, errOut, _ := runCLI(t, allowed.Root, "explain", "--config", allowed.Config, "--surface", "sandbox", "process.exec", line)
		var block string
		for _, b := range strings.Split(out, "\n\n") {
			if strings.Contains(b, "package.install") {
				block = b
			}
		}
		if !strings.Contains(block, want+"\n") || strings.Contains(block, "decision: allow") != strings.Contains(line, "--registry") {
			t.Errorf("explain %q:\n%s%s", line, out, errOut)
		}
	}

	// The project's .npmrc names the decoy as a scope's registry: on the
	// host npm reads it, so the decision names it; in the sandbox the file
	// is hidden from npm (a credential file), so the decision does not.
	for surface, named := range map[string]bool{"host": true, "sandbox": false} {
		out, errOut, _ := runCLI(t, allowed.Root, "explain", "--config", allowed.Config, "--surface", surface, "process.exec", "npm ci")
		if strings.Contains(out, "request:  package.install (package.json) from 127.0.0.2\n") != named {
			t.Errorf("explain --surface %s npm ci: the scope's registry named %v, want %v:\n%s%s", surface, !named, named, out, errOut)
		}
	}

	// npm in the sandbox: the default registry whatever the project says,
	// lockfile hosts replaced by it, the workspace's own cache and config.
	out, txt := runCmd(t, c, "npm config get registry && npm config get replace-registry-host && npm config get cache && npm config get userconfig && npm config get globalconfig")
	lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
	cacheRoot := filepath.Join(allowed.Root, ".cache", "onellm-mcp", "workspaces")
	if out.ExitCode != 0 || len(lines) != 5 || lines[0] != "https://registry.npmjs.org/" || lines[1] != "always" ||
		!strings.HasPrefix(lines[2], cacheRoot+"/") || !strings.HasPrefix(lines[3], cacheRoot+"/") || !strings.HasPrefix(lines[4], cacheRoot+"/") {
		t.Fatalf("npm's configuration in the sandbox:\n%s", txt)
	}

	// The CA bundle the host's global npmrc names is the one npm trusts in
	// the sandbox too (a company's TLS-inspecting proxy keeps working).
	host := exec.Command("npm", "config", "get", "cafile")
	host.Env, host.Dir = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, t.TempDir()
	want, err := host.Output()
	if err != nil {
		t.Fatalf("npm config get cafile on the host: %v", err)
	}
	if out, txt = runCmd(t, c, "npm config get cafile"); out.ExitCode != 0 || out.Stdout != string(want) {
		t.Fatalf("npm's cafile in the sandbox, want %q:\n%s", want, txt)
	}

	res := call(t, c, "execute_terminal_command", map[string]any{"command": install, "timeout_seconds": 120})
	structured(t, res, &out)
	txt = text(res)
	if out.ExitCode != 0 || !strings.HasSuffix(out.Stdout, "\n42\n") {
		t.Fatalf("npm ci through the proxy:\n%s", txt)
	}
	if got := registry.requests(); len(got) == 0 || !strings.Contains(strings.Join(got, " "), npmTarballPath) {
		t.Fatalf("the decided registry saw %v", got)
	}
	if got := decoy.requests(); len(got) != 0 {
		t.Fatalf("the registry the project's files name saw %v", got)
	}
	if _, err := os.Stat(filepath.Join(allowed.Root, ".npm")); err == nil {
		t.Error("npm wrote the host's ~/.npm")
	}
	if caches, _ := filepath.Glob(filepath.Join(cacheRoot, "*", "npm", "_cacache")); len(caches) != 1 {
		t.Errorf("npm's cache is not the workspace's: %v", caches)
	}
	if !hasPackageInstall(allowed.auditLines(t), "(package.json)", "127.0.0.1", "allow") {
		t.Fatal("no allowed package.install of (package.json) from 127.0.0.1 in the audit log")
	}

	// A plain `npm ci` is an install from the default registry, whatever
	// the project's .npmrc says: no rule allows that, nothing is fetched.
	before := len(registry.requests())
	res = call(t, c, "execute_terminal_command", map[string]any{"command": "npm ci --no-audit --no-fund", "timeout_seconds": 120})
	if !res.IsError || !strings.Contains(text(res), "package.install") {
		t.Fatalf("plain npm ci with the project's .npmrc naming an allowed host: %s", text(res))
	}
	if !hasPackageInstall(allowed.auditLines(t), "(package.json)", "registry.npmjs.org", "deny") {
		t.Fatal("no refused package.install of (package.json) from registry.npmjs.org in the audit log")
	}
	if len(registry.requests()) != before || len(decoy.requests()) != 0 {
		t.Fatalf("a refused install reached a registry: %v %v", registry.requests(), decoy.requests())
	}

	// Without the rule the same line is refused before npm runs.
	refused := newFixture(t, npmConfig)
	npmProject(t, refused, registry)
	c2 := stdioClient(t, refused, Modern)
	res = call(t, c2, "execute_terminal_command", map[string]any{"command": install, "timeout_seconds": 120})
	if !res.IsError || !strings.Contains(text(res), "package.install") {
		t.Fatalf("npm ci without a rule: %s", text(res))
	}
	if len(registry.requests()) != before || len(decoy.requests()) != 0 {
		t.Fatalf("a refused install reached a registry: %v %v", registry.requests(), decoy.requests())
	}
}

// hasPackageInstall reports whether the audit log holds a package.install
// of resource from host with that effect.
func hasPackageInstall(lines []map[string]any, resource, host, effect string) bool {
	for _, l := range lines {
		tgt, _ := l["target"].(map[string]any)
		if l["capability"] == "package.install" && tgt["resource"] == resource && tgt["host"] == host && l["effect"] == effect {
			return true
		}
	}
	return false
}

// needNPM: npm and node, or the test cannot run (missing fails under CI).
func needNPM(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"npm", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			testkit.Missing(t, "%s is not installed: %v", tool, err)
		}
	}
}

// TestNPMTarballURL: npm in the sandbox is held to its registry, which
// fetches a tarball URL from the registry too (replace-registry-host
// always). A tarball URL on the registry's own host installs through the
// proxy, decided as an install from that host; one on another host is
// refused before anything runs, saying why and what to do instead, even
// where a rule allows installing from that host, and no registry sees a
// request (it would have been asked of the registry, and failed).
func TestNPMTarballURL(t *testing.T) {
	needNPM(t)
	tgz := npmTarball(t)
	registry := newNPMRegistry(t, "127.0.0.1:0", tgz)
	other := newNPMRegistry(t, "127.0.0.2:0", tgz)
	f := newFixture(t, npmConfig+`
[[rules.allow]]
rule_id    = "local-registries"
capability = "package.install"
target     = { host = "127.0.0.*" }
`)
	f.write(t, "package.json", `{"name":"app","version":"1.0.0"}`)
	c := stdioClient(t, f, Modern)
	flags := " --no-audit --no-fund --fetch-retries=0 "

	away := "npm install" + flags + other.URL + npmTarballPath
	res := call(t, c, "execute_terminal_command", map[string]any{"command": away, "timeout_seconds": 120})
	if txt := text(res); !res.IsError || !strings.Contains(txt, "npm_config_replace_registry_host=always") ||
		!strings.Contains(txt, "npm install ./FILE.tgz") || !strings.Contains(txt, "nothing ran") {
		t.Fatalf("a tarball URL on another host than the registry: %s", txt)
	}
	out, errOut, _ := runCLI(t, f.Root, "explain", "--config", f.Config, "--surface", "sandbox", "process.exec", away)
	if !strings.Contains(out+errOut, "npm_config_replace_registry_host=always") {
		t.Errorf("explain of the refused line:\n%s%s", out, errOut)
	}
	if got := append(registry.requests(), other.requests()...); len(got) != 0 {
		t.Fatalf("a refused install reached a registry: %v", got)
	}

	home := "npm install --registry " + registry.URL + "/" + flags + registry.URL + npmTarballPath +
		" && node -e 'console.log(require(\"hello-npm\").value)'"
	res = call(t, c, "execute_terminal_command", map[string]any{"command": home, "timeout_seconds": 120})
	var run cmdOut
	structured(t, res, &run)
	if run.ExitCode != 0 || !strings.HasSuffix(run.Stdout, "\n42\n") {
		t.Fatalf("a tarball URL on the registry's host:\n%s", text(res))
	}
	if got := registry.requests(); !slices.Contains(got, "GET "+npmTarballPath) || len(other.requests()) != 0 {
		t.Fatalf("the registry saw %v, the other %v", got, other.requests())
	}
	if !hasPackageInstall(f.auditLines(t), registry.URL+npmTarballPath, "127.0.0.1", "allow") {
		t.Fatal("no allowed package.install of the tarball URL from 127.0.0.1 in the audit log")
	}
}
