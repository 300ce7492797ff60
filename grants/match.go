package grants

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	re2 "github.com/wasilibs/go-re2"
)

// pathGlob matches resolved absolute paths with a doublestar pattern.
type pathGlob struct {
	pattern string
	literal bool // no glob metacharacters: names one exact path
}

// compilePathGlob resolves a rule's path pattern: "~" is expanded, a relative
// pattern is joined to the workspace, and the literal leading folders are
// resolved through symlinks so the pattern speaks of real paths, as requests do.
func compilePathGlob(pattern, workspace, home string) (pathGlob, error) {
	if pattern == "" {
		return pathGlob{}, errors.New("empty path pattern")
	}
	if strings.ContainsRune(pattern, 0) {
		return pathGlob{}, errors.New("path pattern holds a NUL byte")
	}
	switch {
	case pattern == "~":
		pattern = home
	case strings.HasPrefix(pattern, "~/"):
		if home == "" {
			return pathGlob{}, errors.New("~ used but the home folder is unknown")
		}
		pattern = home + pattern[1:]
	case !strings.HasPrefix(pattern, "/"):
		pattern = workspace + "/" + pattern
	}
	if !doublestar.ValidatePattern(pattern) {
		return pathGlob{}, fmt.Errorf("bad glob %q", pattern)
	}
	base, rest := doublestar.SplitPattern(pattern)
	base = filepath.Clean(base)
	if real, err := filepath.EvalSymlinks(base); err == nil {
		base = real
	}
	if rest == "" || rest == "." {
		pattern = base
	} else {
		pattern = path.Join(base, rest)
		if strings.HasSuffix(rest, "/") {
			pattern += "/"
		}
	}
	return pathGlob{pattern: pattern, literal: !hasGlobMeta(pattern)}, nil
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[{\\") }

func (g pathGlob) match(p string) bool {
	if g.literal {
		return g.pattern == p
	}
	return doublestar.MatchUnvalidated(g.pattern, p)
}

// hostGlob matches host names label by label: a label "*" stands for one or
// more labels, other labels may hold path.Match wildcards. Case-insensitive.
type hostGlob struct {
	labels  []string
	literal bool
}

func validateHostGlob(pattern string) error {
	_, err := compileHostGlob(pattern)
	return err
}

func compileHostGlob(pattern string) (hostGlob, error) {
	p := strings.TrimSuffix(strings.ToLower(pattern), ".")
	if p == "" {
		return hostGlob{}, errors.New("empty host pattern")
	}
	if strings.ContainsAny(p, "/:@ ") && !strings.HasPrefix(p, "[") {
		return hostGlob{}, fmt.Errorf("host pattern %q must be a host name, without scheme, port or path", pattern)
	}
	labels := strings.Split(p, ".")
	for _, l := range labels {
		if l == "" {
			return hostGlob{}, fmt.Errorf("host pattern %q has an empty label", pattern)
		}
		if _, err := path.Match(l, ""); err != nil {
			return hostGlob{}, fmt.Errorf("bad host pattern %q: %v", pattern, err)
		}
	}
	return hostGlob{labels: labels, literal: !hasGlobMeta(p)}, nil
}

func (g hostGlob) match(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if g.literal {
		return strings.Join(g.labels, ".") == host
	}
	return matchLabels(g.labels, strings.Split(host, "."))
}

func matchLabels(pat, labels []string) bool {
	if len(pat) == 0 {
		return len(labels) == 0
	}
	if pat[0] == "*" {
		// One or more labels; try the shortest first.
		for n := 1; n <= len(labels); n++ {
			if matchLabels(pat[1:], labels[n:]) {
				return true
			}
		}
		return false
	}
	if len(labels) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], labels[0])
	return ok && matchLabels(pat[1:], labels[1:])
}

// wordGlob matches a single word such as a command or secret name.
type wordGlob struct{ pattern string }

func compileWordGlob(pattern string) (wordGlob, error) {
	if pattern == "" {
		return wordGlob{}, errors.New("empty pattern")
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return wordGlob{}, fmt.Errorf("bad glob %q: %v", pattern, err)
	}
	return wordGlob{pattern: pattern}, nil
}

func (g wordGlob) match(s string) bool {
	ok, _ := path.Match(g.pattern, s)
	return ok
}

// commandPattern matches a command's words. Each pattern word is a glob over
// one word; when the last pattern word ends in "*" it also takes every word
// that follows, so "git push*" matches "git push" and "git push origin main".
// A pattern starting with "re:" is an RE2 expression that must match the
// whole command.
type commandPattern struct {
	words []string
	re    *re2.Regexp
}

func compileCommandPattern(pattern string) (commandPattern, error) {
	if rest, ok := strings.CutPrefix(pattern, "re:"); ok {
		re, err := re2.Compile(`^(?:` + rest + `)$`)
		if err != nil {
			return commandPattern{}, fmt.Errorf("bad regular expression %q: %v", rest, err)
		}
		return commandPattern{re: re}, nil
	}
	words := strings.Fields(pattern)
	if len(words) == 0 {
		return commandPattern{}, errors.New("empty command pattern")
	}
	for _, w := range words {
		if _, err := path.Match(w, ""); err != nil {
			return commandPattern{}, fmt.Errorf("bad glob %q in command pattern: %v", w, err)
		}
	}
	return commandPattern{words: words}, nil
}

func (p commandPattern) match(command string) bool {
	if p.re != nil {
		return p.re.MatchString(command)
	}
	words := strings.Fields(command)
	last := len(p.words) - 1
	for i, pw := range p.words {
		if i == last && strings.HasSuffix(pw, "*") {
			if pw == "*" {
				return len(words) >= i // zero or more trailing words
			}
			if len(words) <= i {
				return false
			}
			ok, _ := path.Match(pw, words[i])
			return ok
		}
		if i >= len(words) {
			return false
		}
		if ok, _ := path.Match(pw, words[i]); !ok {
			return false
		}
	}
	return len(words) == len(p.words)
}

// capabilityGlob matches capability names; "*" crosses dots.
func matchCapability(pattern string, c Capability) bool {
	ok, _ := path.Match(pattern, string(c))
	return ok
}

// homeDir returns the user's home folder, or "" when unknown.
func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}
