package grants

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path"
	"regexp/syntax"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	re2 "github.com/wasilibs/go-re2"
)

// pathGlob matches resolved absolute paths with a doublestar pattern.
type pathGlob struct {
	pattern string
	literal bool   // no glob metacharacters: names one exact path
	base    string // the literal leading folder every match starts with
	// prefix is base with its trailing slash and rest the glob after it:
	// a path under prefix is matched on its remainder only, so the long
	// literal folder is compared once, not walked by the glob matcher.
	prefix, rest string
}

// compilePathGlob resolves a rule's path pattern: "~" is expanded, a relative
// pattern is joined to the workspace, and the literal leading folders are
// resolved through symlinks so the pattern speaks of real paths, as requests do.
// The workspace, the home folder and resolved folders are escaped, so a glob
// character in their names stands for itself.
func compilePathGlob(pattern, workspace, home string) (pathGlob, error) {
	if pattern == "" {
		return pathGlob{}, errors.New("empty path pattern")
	}
	if strings.ContainsRune(pattern, 0) {
		return pathGlob{}, errors.New("path pattern holds a NUL byte")
	}
	written := pattern
	switch {
	case pattern == "~":
		pattern = escapeGlob(home)
	case strings.HasPrefix(pattern, "~/"):
		if home == "" {
			return pathGlob{}, errors.New("~ used but the home folder is unknown")
		}
		pattern = escapeGlob(home) + pattern[1:]
	case !strings.HasPrefix(pattern, "/"):
		pattern = escapeGlob(workspace) + "/" + pattern
	}
	if !doublestar.ValidatePattern(pattern) {
		return pathGlob{}, badGlob("glob", written, true)
	}
	base, rest := doublestar.SplitPattern(pattern)
	// Folders that do not exist yet keep their names; the existing part
	// is resolved (a symlinked home or workspace).
	base = resolveExisting(unescapeGlob(base))
	if !hasGlobMeta(rest) {
		// No glob at all: one exact path, compared as a string.
		return pathGlob{pattern: path.Join(base, unescapeGlob(rest)), literal: true}, nil
	}
	pattern = path.Join(escapeGlob(base), rest)
	if strings.HasSuffix(rest, "/") {
		pattern += "/"
	}
	g := pathGlob{pattern: pattern, base: base, prefix: strings.TrimSuffix(base, "/") + "/"}
	g.rest = strings.TrimPrefix(pattern, strings.TrimSuffix(escapeGlob(base), "/")+"/")
	if g.rest == pattern { // the escaped base did not prefix the pattern: match whole paths
		g.prefix = ""
	}
	return g, nil
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[{\\") }

// escapeGlob quotes glob metacharacters so s matches only itself.
func escapeGlob(s string) string {
	if !hasGlobMeta(s) {
		return s
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		if strings.IndexByte("*?[]{}\\", c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unescapeGlob removes the backslash escapes of a glob without metacharacters.
func unescapeGlob(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (g pathGlob) match(p string) bool {
	if g.literal {
		return g.pattern == p
	}
	if !strings.HasPrefix(p, g.base) {
		return false // cheap: most path rules name another folder
	}
	if g.prefix != "" && len(p) > len(g.prefix) && strings.HasPrefix(p, g.prefix) {
		return doublestar.MatchUnvalidated(g.rest, p[len(g.prefix):])
	}
	return doublestar.MatchUnvalidated(g.pattern, p)
}

// hostGlob matches host names label by label: a label "*" stands for one or
// more labels, other labels may hold path.Match wildcards. Case-insensitive.
// An IPv6 literal ("::1" or "[::1]") names exactly that address.
type hostGlob struct {
	labels  []string
	literal bool
	name    string // the whole pattern, for literal comparison
	// tail is the pattern's literal ending (".github.com" for
	// "*.github.com"): a host without it cannot match, checked before the
	// label walk.
	tail string
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
	// Requests carry IPv6 addresses in their canonical form, unbracketed.
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(p, "["), "]")); err == nil && a.Is6() && a.Zone() == "" {
		s := a.String()
		return hostGlob{labels: []string{s}, literal: true, name: s}, nil
	}
	if strings.ContainsAny(p, "/:@ ") {
		return hostGlob{}, fmt.Errorf("host pattern %q must be a host name, without scheme, port or path", pattern)
	}
	labels := strings.Split(p, ".")
	for _, l := range labels {
		if l == "" {
			return hostGlob{}, fmt.Errorf("host pattern %q has an empty label", pattern)
		}
		if _, err := path.Match(l, ""); err != nil {
			return hostGlob{}, badGlob("host pattern", pattern, false)
		}
	}
	g := hostGlob{labels: labels, literal: !hasGlobMeta(p), name: p}
	for i := len(labels) - 1; i >= 0 && !hasGlobMeta(labels[i]); i-- {
		g.tail = "." + labels[i] + g.tail
	}
	return g, nil
}

// HostMatches reports whether host matches the host pattern as rules and
// secrets' hosts read it (label by label, "*" for one label or more, other
// wildcards within a label; case-insensitive). It is the one host matcher:
// config validation, the policy, secret brokering and the egress proxy all
// go through it. A pattern that does not compile matches nothing.
func HostMatches(pattern, host string) bool {
	g, err := compileHostGlob(pattern)
	return err == nil && host != "" && g.match(host)
}

func (g hostGlob) match(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return g.matchLabels(host, strings.Split(host, "."))
}

// matchLabels matches a host already lower-cased, without its trailing dot,
// and split into labels.
func (g hostGlob) matchLabels(host string, labels []string) bool {
	if g.literal {
		return g.name == host
	}
	if g.tail != "" && !strings.HasSuffix(host, g.tail) && host != g.tail[1:] {
		return false
	}
	return matchLabels(g.labels, labels)
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

// wordGlob matches a single word such as a command or secret name. Unlike
// path.Match, "*" and "?" also match '/': a command word is not a path, and
// `resource = "*"` must match "/usr/bin/git" too.
type wordGlob struct{ pattern string }

func compileWordGlob(pattern string) (wordGlob, error) {
	if pattern == "" {
		return wordGlob{}, errors.New("empty pattern")
	}
	if strings.ContainsRune(pattern, 0) {
		return wordGlob{}, errors.New("pattern holds a NUL byte")
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return wordGlob{}, badGlob("glob", pattern, false)
	}
	return wordGlob{pattern: pattern}, nil
}

func (g wordGlob) match(s string) bool { return matchWord(g.pattern, s) }

// matchWord is path.Match with '/' an ordinary character. The pattern has
// been checked by path.Match at compile time and holds no NUL. '/' is swapped
// for NUL, which no command word (an argv string) holds; a word that does
// matches nothing.
func matchWord(pattern, s string) bool {
	if strings.IndexByte(s, 0) >= 0 {
		return false
	}
	if strings.IndexByte(s, '/') >= 0 {
		s = strings.ReplaceAll(s, "/", "\x00")
		pattern = strings.ReplaceAll(pattern, "/", "\x00")
	}
	ok, _ := path.Match(pattern, s)
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
	// first is the first word when it holds no wildcard (the usual command
	// name), compared before any glob matching.
	first string
}

func compileCommandPattern(pattern string) (commandPattern, error) {
	if rest, ok := strings.CutPrefix(pattern, "re:"); ok {
		// Check the expression alone first: "a)|(b" only parses once
		// wrapped, and would then match far more than whole commands. The
		// standard parser (same RE2 syntax) also keeps go-re2 from logging
		// parse errors to stderr.
		if _, err := syntax.Parse(rest, syntax.Perl); err != nil {
			return commandPattern{}, fmt.Errorf("bad regular expression %q: %v", rest, err)
		}
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
	if strings.ContainsRune(pattern, 0) {
		return commandPattern{}, errors.New("command pattern holds a NUL byte")
	}
	for _, w := range words {
		if _, err := path.Match(w, ""); err != nil {
			return commandPattern{}, badGlob("glob", w, false)
		}
	}
	c := commandPattern{words: words}
	if !hasGlobMeta(words[0]) {
		c.first = words[0]
	}
	return c, nil
}

func (p commandPattern) match(command string) bool {
	if p.re != nil {
		return p.re.MatchString(command)
	}
	return p.matchWords(strings.Fields(command))
}

// matchPrepared matches a command whose words were split already.
func (p commandPattern) matchPrepared(command string, words []string) bool {
	if p.re != nil {
		return p.re.MatchString(command)
	}
	return p.matchWords(words)
}

// matchWords matches a command already split into words.
func (p commandPattern) matchWords(words []string) bool {
	if p.first != "" && (len(words) == 0 || words[0] != p.first) {
		return false
	}
	last := len(p.words) - 1
	for i, pw := range p.words {
		if i == last && strings.HasSuffix(pw, "*") {
			if pw == "*" {
				return len(words) >= i // zero or more trailing words
			}
			if len(words) <= i {
				return false
			}
			return matchWord(pw, words[i])
		}
		if i >= len(words) {
			return false
		}
		if !matchWord(pw, words[i]) {
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
