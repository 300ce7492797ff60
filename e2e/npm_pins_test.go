package e2e

import (
	"strings"
	"testing"
)

// TestNPMPinRemovedIsDynamic: a line that takes away the registry the
// sandbox holds npm to (unset, env -u, an empty value), names a config
// file or names two registries is an install from <dynamic>, refused
// before npm runs by rules that allow the default registry and 127.0.0.1:
// otherwise npm would read the config file the line names and fetch from
// the registry it names (the decoy, reachable through the proxy) while
// the install was decided as one from registry.npmjs.org.
func TestNPMPinRemovedIsDynamic(t *testing.T) {
	needNPM(t)
	tgz := npmTarball(t)
	decoy := newNPMRegistry(t, "127.0.0.2:0", tgz)
	f := newFixture(t, npmConfig+`
[[rules.allow]]
rule_id    = "default-registry"
capability = "package.install"
target     = { host = "registry.npmjs.org" }

[[rules.allow]]
rule_id    = "local-registry"
capability = "package.install"
target     = { host = "127.0.0.1" }
`)
	npmProject(t, f, decoy)
	f.write(t, "alt.conf", "registry="+decoy.URL+"/\n")
	c := stdioClient(t, f, Modern)
	const flags = " --no-audit --no-fund --fetch-retries=0"
	for _, line := range []string{
		"unset npm_config_registry; npm ci --userconfig alt.conf" + flags,
		"env -u npm_config_registry npm_config_userconfig=alt.conf npm ci" + flags,
		"npm_config_registry= npm_config_userconfig=alt.conf npm ci" + flags,
		// Port 9 on 127.0.0.1: nothing listens, nothing leaves the machine.
		"npm_config_registry=http://127.0.0.1:9/ NPM_CONFIG_REGISTRY=" + decoy.URL + "/ npm ci" + flags,
		"NPM_CONFIG_REGISTRY=" + decoy.URL + "/ npm_config_registry=http://127.0.0.1:9/ npm ci" + flags,
	} {
		out, errOut, _ := runCLI(t, f.Root, "explain", "--config", f.Config, "--surface", "sandbox", "process.exec", line)
		if !strings.Contains(out, "request:  package.install (package.json) from <dynamic>\n") || strings.Contains(out, "the call as a whole: allow") {
			t.Errorf("explain %q:\n%s%s", line, out, errOut)
		}
		res := call(t, c, "execute_terminal_command", map[string]any{"command": line, "timeout_seconds": 120})
		if !res.IsError || !strings.Contains(text(res), "package.install") {
			t.Errorf("%q: %s", line, text(res))
		}
		if got := decoy.requests(); len(got) != 0 {
			t.Fatalf("%q: the registry the config file names saw %v", line, got)
		}
	}
	if !hasPackageInstall(f.auditLines(t), "(package.json)", "<dynamic>", "deny") {
		t.Error("no refused package.install of (package.json) from <dynamic> in the audit log")
	}
}
