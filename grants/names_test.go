package grants

import (
	"regexp"
	"strings"
	"testing"
)

// TestNameChecks: the secret and environment name checks accept exactly
// what the regular expressions they replace accept.
func TestNameChecks(t *testing.T) {
	secret := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	env := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{
		"", "a", "A_b-9", "9abc", "_x", "-x", "with space", "é", "a\n", "a$", "ab\x00",
		strings.Repeat("x", 64), strings.Repeat("x", 65), "GITHUB_TOKEN", "x.y", "PATH=1",
	} {
		if got, want := isSecretName(s), secret.MatchString(s); got != want {
			t.Errorf("isSecretName(%q) = %v, want %v", s, got, want)
		}
		if got, want := isEnvName(s), env.MatchString(s); got != want {
			t.Errorf("isEnvName(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzNameChecks compares the checks with the regular expressions on any
// input.
func FuzzNameChecks(f *testing.F) {
	secret := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	env := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{"", "a", "9a", "a-b", strings.Repeat("y", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if isSecretName(s) != secret.MatchString(s) || isEnvName(s) != env.MatchString(s) {
			t.Fatalf("%q: secret %v/%v env %v/%v", s, isSecretName(s), secret.MatchString(s), isEnvName(s), env.MatchString(s))
		}
	})
}
