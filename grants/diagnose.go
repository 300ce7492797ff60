package grants

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Helpers that turn a config mistake into a message a person can act on:
// the known names closest to a misspelt one, and where and why a glob is
// malformed. They explain; they never decide what a pattern matches.

// closestFirst returns known sorted by edit distance to word (closest
// first; ties keep their order).
func closestFirst(word string, known []string) []string {
	out := slices.Clone(known)
	dist := make(map[string]int, len(out))
	w := strings.ToLower(word)
	for _, k := range out {
		d := editDistance(w, strings.ToLower(k))
		// A name that holds the word whole ("files.read" in
		// "workspace.files.read") is what was meant, more often than one
		// a few letters away.
		if w != "" && strings.Contains(strings.ToLower(k), w) {
			d = min(d, 1)
		}
		dist[k] = d
	}
	slices.SortStableFunc(out, func(a, b string) int { return dist[a] - dist[b] })
	return out
}

// Closest returns known sorted by edit distance to word, closest first: for
// messages that list the names a mistyped one could have meant.
func Closest(word string, known []string) []string { return closestFirst(word, known) }

// knownList renders "use one of a, b, c" with the closest name first.
func knownList(word string, known []string) string {
	return strings.Join(closestFirst(word, known), ", ")
}

// editDistance is the Levenshtein distance between a and b, by runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// globProblem says where and why pattern is not a valid glob ("" when it
// finds nothing wrong). braces is set for path globs, where {a,b} lists
// alternatives.
func globProblem(pattern string, braces bool) string {
	at := func(i int) int { return utf8.RuneCountInString(pattern[:i]) + 1 }
	if !utf8.ValidString(pattern) {
		for i, r := range pattern {
			if r == utf8.RuneError {
				return fmt.Sprintf("it is not valid UTF-8 at character %d", at(i))
			}
		}
	}
	var openBraces []int
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			if i == len(pattern)-1 {
				return fmt.Sprintf(`it ends in a lone "\" at character %d; write "\\" for a backslash`, at(i))
			}
			i++
		case '[':
			end, why := classEnd(pattern, i)
			if why != "" {
				return fmt.Sprintf(`the "[" at character %d %s; write "\[" for a literal "["`, at(i), why)
			}
			i = end
		case '{':
			if braces {
				openBraces = append(openBraces, i)
			}
		case '}':
			if braces && len(openBraces) == 0 {
				return fmt.Sprintf(`the "}" at character %d closes no "{"; write "\}" for a literal "}"`, at(i))
			}
			if braces {
				openBraces = openBraces[:len(openBraces)-1]
			}
		}
	}
	if len(openBraces) > 0 {
		return fmt.Sprintf(`the "{" at character %d is never closed with "}"; write "\{" for a literal "{"`, at(openBraces[0]))
	}
	return ""
}

// classEnd finds the "]" closing the character class opened at start, or
// says what is wrong with the class.
func classEnd(p string, start int) (int, string) {
	i := start + 1
	if i < len(p) && (p[i] == '^' || p[i] == '!') {
		i++
	}
	if i < len(p) && p[i] == ']' {
		return 0, `opens an empty character class "[]"`
	}
	if i < len(p) && p[i] == '-' {
		return 0, `starts a character class with "-", which needs a character before it`
	}
	// element = "\x" or one character; a range is element "-" element.
	element := func() bool {
		if i >= len(p) || p[i] == ']' {
			return false
		}
		if p[i] == '\\' {
			i++
		}
		i++
		return true
	}
	for i < len(p) {
		if p[i] == ']' {
			return i, ""
		}
		element()
		if i < len(p) && p[i] == '-' {
			i++
			if !element() {
				return 0, `has a range with no end ("-]")`
			}
		}
	}
	return 0, `opens a character class that is never closed with "]"`
}

// badGlob renders the message for a pattern a glob compiler refused.
func badGlob(kind, pattern string, braces bool) error {
	why := globProblem(pattern, braces)
	if why == "" {
		why = "it is not a valid glob (see config.example.toml)"
	}
	return fmt.Errorf("bad %s %q: %s", kind, pattern, why)
}
