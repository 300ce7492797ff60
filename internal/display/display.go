// Package display makes model-chosen text safe to show a person: in an
// elicitation message, on the approval console, on stderr, in explain.
//
// Security model: a model (or a file it wrote) chooses commands, paths and
// hosts, and could choose characters that make a terminal or a page show
// something other than what will run: ANSI escape sequences that move the
// cursor or erase a line, carriage returns that overwrite it, newlines that
// fake another line of the prompt, bidi overrides (U+202E) that reverse
// text, and invisible format characters. Escape replaces each of them with
// a visible escape (\x1b, \r, \n, U+202E), so what a person reads is
// exactly the bytes that will be used, one line for one value.
package display

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every control, format (bidi, zero-width), line or
// paragraph separator character and every invalid UTF-8 byte shown as a
// visible escape. Printable text, spaces and backslashes are kept.
func Escape(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, "U+%04X", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape: C1 controls, format characters (bidi embeddings, overrides
// and isolates, zero-width joiners and spaces, BOM, soft hyphen), line and
// paragraph separators, other invisible spaces, and private-use or
// unassigned code points a font may draw as anything.
func needsEscape(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs):
		return true
	case unicode.Is(unicode.Zs, r) && r != ' ':
		return true // no-break and other spaces that look like a plain one
	case !unicode.IsPrint(r) && !unicode.IsGraphic(r):
		return true
	}
	return false
}

// isPlain is the fast path: printable ASCII only.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
