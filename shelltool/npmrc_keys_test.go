package shelltool

import (
	"slices"
	"testing"

	"github.com/onellm/onellm-mcp/shelltool/cmdline"
)

// TestNpmrcIndexesVariableKeys: npm expands ${VAR} in an .npmrc key as in
// a value, so a key holding one may name any registry (rev16 H6:
// `${NOPE?}@acme:registry=URL` is @acme's registry to npm).
func TestNpmrcIndexesVariableKeys(t *testing.T) {
	for _, tc := range []struct {
		rc     string
		pinned bool
		want   []string
	}{
		{"${NOPE?}@acme:registry=https://evil.example/\n", false, []string{cmdline.Dynamic}},
		{"${NOPE?}@acme:registry=https://evil.example/\n", true, []string{cmdline.Dynamic}},
		{"${R}=https://evil.example/\n", true, []string{cmdline.Dynamic}},
		{"@acme:registry=https://npm.acme.example/\n", true, []string{"npm.acme.example"}},
		{"registry=https://r.example/\n", true, nil}, // pinned: npm_config_registry wins
		{"cache=${HOME}/x\n", false, nil},
	} {
		if got := npmrcIndexes([]byte(tc.rc), tc.pinned); !slices.Equal(got, tc.want) {
			t.Errorf("%q (pinned %v): %q, want %q", tc.rc, tc.pinned, got, tc.want)
		}
	}
}
