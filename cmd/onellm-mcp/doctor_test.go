package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/shelltool/toolchains"
)

// TestDoctorInstalls: doctor reports the settings that hold npm and pip to
// the decided index as the runner sets them (toolchains.IndexPins), and
// the installation configs commands see hidden (Set.Configs), found deep
// in a home folder; without toolchains, that installers are not held.
func TestDoctorInstalls(t *testing.T) {
	home := t.TempDir()
	for _, f := range []string{".nvm/versions/node/v20.0.0/etc/npmrc", ".pyenv/versions/3.12.0/pip.conf"} {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"PATH": "/nonexistent"}
	set := toolchains.Detect(toolchains.Host{Home: home, Getenv: func(k string) string { return env[k] }}, []string{toolchains.Node, toolchains.Python})
	if len(set.Configs()) != 2 {
		t.Fatalf("the fixture's configs were not found: %q", set.Configs())
	}
	var out strings.Builder
	doctorInstalls(&out, set, true)
	var want []string
	for _, pin := range toolchains.IndexPins() {
		want = append(want, pin.Key+"="+pin.Value+": ")
	}
	want = append(want, "npm_config_registry="+toolchains.NpmRegistry, "PIP_CONFIG_FILE="+os.DevNull, "hidden from commands")
	want = append(want, set.Configs()...)
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("doctor lacks %q:\n%s", w, out.String())
		}
	}

	out.Reset()
	doctorInstalls(&out, toolchains.Set{}, true)
	if !strings.Contains(out.String(), "hidden from commands: none found") {
		t.Errorf("no configs found:\n%s", out.String())
	}
	out.Reset()
	doctorInstalls(&out, set, false)
	if !strings.Contains(out.String(), "NOT held to the decided index") || strings.Contains(out.String(), "PIP_CONFIG_FILE") {
		t.Errorf("without toolchains:\n%s", out.String())
	}
}
