package grants

import (
	"fmt"
	"slices"
	"strings"
)

// KnownToolchains are the toolchains `[sandbox] toolchains` can name, in
// the order they are reported (shelltool/toolchains finds them).
func KnownToolchains() []string { return []string{"git", "go", "python", "node", "rust"} }

// toolchainsSetting reads `[sandbox] toolchains`: absent or "auto" is every
// known toolchain, "none" is none, else a list of known names.
func toolchainsSetting(v any) ([]string, error) {
	known := KnownToolchains()
	var names []string
	switch v := v.(type) {
	case nil:
		return known, nil
	case string:
		switch v {
		case "auto":
			return known, nil
		case "none":
			return []string{}, nil
		}
		names = []string{v}
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want \"auto\", \"none\" or a list of names, got %v", e)
			}
			names = append(names, s)
		}
	default:
		return nil, fmt.Errorf("want \"auto\", \"none\" or a list of names, got %v", v)
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("unknown toolchain %q; use \"auto\", \"none\" or names among %s", n, strings.Join(known, ", "))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
