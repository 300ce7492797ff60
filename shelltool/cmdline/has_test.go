package cmdline

import (
	"strings"
	"testing"
)

// TestHas: has finds whole words of a space-separated list only, as
// splitting the list would.
func TestHas(t *testing.T) {
	split := func(list, s string) bool {
		for _, w := range strings.Split(list, " ") {
			if w != "" && w == s {
				return true
			}
		}
		return false
	}
	lists := []string{"", "a", "ab abc b", "abc ab", "x  y", " lead trail ", "git-push git push", "ab"}
	words := []string{"", "a", "ab", "abc", "b", "c", "x", "y", "lead", "trail", "push", "git", "git push", " ", "bc", "abcd"}
	for _, l := range lists {
		for _, w := range words {
			if got, want := has(l, w), split(l, w); got != want {
				t.Errorf("has(%q, %q) = %v, want %v", l, w, got, want)
			}
		}
	}
}
