package grants

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Available says whether a secret has a value to send without reading a
// file's content; Value agrees wherever Available can know.
func TestSecretAvailable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ONELLM_TEST_SET", "v4lue")
	t.Setenv("ONELLM_TEST_EMPTY", "")
	for _, tc := range []struct {
		name string
		s    Secret
		want string // "" available, else in the error
	}{
		{"variable set", Secret{Name: "a", Env: "ONELLM_TEST_SET"}, ""},
		{"variable empty", Secret{Name: "a", Env: "ONELLM_TEST_EMPTY"}, "secret a has no value on the server (variable ONELLM_TEST_EMPTY is empty)"},
		{"variable unset", Secret{Name: "a", Env: "ONELLM_TEST_UNSET_NEVER"}, "variable ONELLM_TEST_UNSET_NEVER is empty"},
		{"file with a value", Secret{Name: "f", File: write("tok", "v4lue\n")}, ""},
		{"empty file", Secret{Name: "f", File: write("empty", "")}, "secret f has no value on the server (file "},
		{"missing file", Secret{Name: "f", File: filepath.Join(dir, "none")}, "its file cannot be read"},
		{"a pipe is read only when used", Secret{Name: "f", File: fifo}, ""},
		{"no source", Secret{Name: "n"}, "names no env or file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Available()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("not available: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if _, verr := tc.s.Value(); verr == nil {
				t.Fatal("Value found a value Available says is not there")
			}
		})
	}
}
