//go:build linux

package sandbox

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestParseExecStackEnv: the watched variables of the environment come out
// of the stack (any case, prefixes), a pin given unchanged is not shown, a
// changed or repeated one is, a missing one is unset; an environment
// pointer outside the strings is an error, a cut one errShort.
func TestParseExecStackEnv(t *testing.T) {
	const sp = 0x7ffc00001000
	w := compileEnvWatch(EnvWatch{
		Names: []string{"PIP_INDEX_URL", "npm_config_*", "GOPROXY", "PIP_CONFIG_FILE"},
		Pins:  []string{"npm_config_registry=https://registry.npmjs.org/", "PIP_CONFIG_FILE=/dev/null", "GOPROXY=https://proxy.golang.org"},
	})
	for _, tc := range []struct {
		name      string
		env       []string
		set, gone []string
	}{
		{"only the pins", []string{"PATH=/bin", "npm_config_registry=https://registry.npmjs.org/", "PIP_CONFIG_FILE=/dev/null", "GOPROXY=https://proxy.golang.org"}, nil, nil},
		{"a changed pin and a new variable", []string{"npm_config_registry=http://evil.example/", "PIP_CONFIG_FILE=/dev/null", "pip_index_url=http://idx.example/", "GOPROXY=https://proxy.golang.org"},
			[]string{"npm_config_registry=http://evil.example/", "pip_index_url=http://idx.example/"}, nil},
		{"another spelling beside the pin", []string{"npm_config_registry=https://registry.npmjs.org/", "NPM_CONFIG_REGISTRY=http://evil.example/", "PIP_CONFIG_FILE=/dev/null", "GOPROXY=https://proxy.golang.org"},
			[]string{"NPM_CONFIG_REGISTRY=http://evil.example/"}, nil},
		{"a pin given twice", []string{"GOPROXY=https://proxy.golang.org", "GOPROXY=http://evil.example", "npm_config_registry=https://registry.npmjs.org/", "PIP_CONFIG_FILE=/dev/null"},
			[]string{"GOPROXY=http://evil.example"}, nil},
		{"pins removed", []string{"PATH=/bin", "novalue"}, nil, []string{"npm_config_registry", "PIP_CONFIG_FILE", "GOPROXY"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &envReport{w: w}
			argv, _, err := parseExecStack(stackImage(sp, []string{"npm", "i"}, tc.env, "/usr/bin/npm", nil), sp, r)
			if err != nil || !slices.Equal(argv, []string{"npm", "i"}) {
				t.Fatalf("argv %q, %v", argv, err)
			}
			if !slices.Equal(r.set, tc.set) || !slices.Equal(r.unset(), tc.gone) {
				t.Errorf("env %q unset %q, want %q and %q", r.set, r.unset(), tc.set, tc.gone)
			}
		})
	}
	// Parsed again after a short read: nothing counted twice.
	r := &envReport{w: w}
	img := stackImage(sp, []string{"x"}, []string{"GOPROXY=http://a"}, "/x", nil)
	if _, _, err := parseExecStack(img, sp, r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := parseExecStack(img, sp, r); err != nil || len(r.set) != 1 {
		t.Errorf("second parse: %q, %v", r.set, err)
	}
	bad := stackImage(sp, []string{"x"}, []string{"GOPROXY=http://a"}, "/x", func(w []uint64) { w[3] = sp })
	if _, _, err := parseExecStack(bad, sp, &envReport{w: w}); err == nil || !strings.Contains(err.Error(), "environment unreadable") {
		t.Errorf("env pointer into the tables: %v", err)
	}
	// The environment's strings lie between argv's and the exec path's.
	cut := stackImage(sp, []string{"x"}, []string{"GOPROXY=http://a"}, "", nil)
	if _, _, err := parseExecStack(cut[:len(cut)-3], sp, &envReport{w: w}); !errors.Is(err, errShort) {
		t.Errorf("cut inside the environment: %v", err)
	}
	big := []string{"npm_config_x=" + strings.Repeat("a", maxWatchedEnv)}
	if _, _, err := parseExecStack(stackImage(sp, []string{"x"}, big, "/x", nil), sp, &envReport{w: w}); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("watched variables over the bound: %v", err)
	}
}
