package grants

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestToolchainsSetting(t *testing.T) {
	all := KnownToolchains()
	tests := []struct {
		in      any
		want    []string
		wantErr string
	}{
		{nil, all, ""},
		{"auto", all, ""},
		{"none", []string{}, ""},
		{"go", []string{"go"}, ""},
		{[]any{"node", "go", "go"}, []string{"go", "node"}, ""},
		{[]any{}, nil, ""},
		{"java", nil, `unknown toolchain "java"`},
		{[]any{"go", 3}, nil, "list of names"},
		{true, nil, "list of names"},
	}
	for _, tt := range tests {
		got, err := toolchainsSetting(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: err %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%v: got %v %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestToolchainsConfigKey(t *testing.T) {
	for _, tt := range []struct{ toml, wantErr string }{
		{`toolchains = "none"`, ""},
		{`toolchains = ["go", "git"]`, ""},
		{`toolchains = ["cobol"]`, "[sandbox] toolchains"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(path, []byte("profile = \"interactive-dev\"\n[sandbox]\n"+tt.toml+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadFile(path)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: %v, want %q", tt.toml, err, tt.wantErr)
		}
	}
}
