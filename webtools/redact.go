package webtools

import (
	"cmp"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Redact replaces every secret's value in s with "[REDACTED:NAME]", and the
// common encodings of the value too (standard and URL-safe base64, URL
// query and path escaping). Longer values are replaced first, so a value
// that contains another is redacted under its own name.
//
// Redaction matches whole values only, so it tells the model nothing it did
// not already know: to see a redaction it must have sent the whole value.
func Redact(s string, secrets []Secret) string {
	if s == "" || len(secrets) == 0 {
		return s
	}
	r := newRedactor(secrets)
	if r == nil {
		return s
	}
	return r.Replace(s)
}

func newRedactor(secrets []Secret) *strings.Replacer {
	pairs := redactionPairs(secrets)
	if len(pairs) == 0 {
		return nil
	}
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return strings.NewReplacer(args...)
}

// redaction is one form of a secret's value and the mark that replaces it.
type redaction struct{ old, new string }

// redactionPairs lists every form of every value, longest first: at each
// position the longest form wins, so the result does not depend on the
// order of the configuration (strings.Replacer and redactPrefix both try
// them in this order).
func redactionPairs(secrets []Secret) []redaction {
	var pairs []redaction
	seen := map[string]bool{}
	for _, sec := range secrets {
		if sec.Value == "" {
			continue
		}
		mark := "[REDACTED:" + sec.Name + "]"
		for _, form := range []string{
			sec.Value,
			base64.StdEncoding.EncodeToString([]byte(sec.Value)),
			base64.RawStdEncoding.EncodeToString([]byte(sec.Value)),
			base64.URLEncoding.EncodeToString([]byte(sec.Value)),
			base64.RawURLEncoding.EncodeToString([]byte(sec.Value)),
			url.QueryEscape(sec.Value),
			url.PathEscape(sec.Value),
		} {
			if !seen[form] {
				seen[form] = true
				pairs = append(pairs, redaction{form, mark})
			}
		}
	}
	slices.SortStableFunc(pairs, func(a, b redaction) int { return cmp.Compare(len(b.old), len(a.old)) })
	return pairs
}

// redactionSlack is how many bytes beyond a cap must be read so that a
// value starting before the cap is seen whole: the longest form's length.
func redactionSlack(secrets []Secret) int {
	if pairs := redactionPairs(secrets); len(pairs) > 0 {
		return len(pairs[0].old)
	}
	return 0
}

// redactPrefix redacts s and cuts the result to at most maxOut bytes, so
// that no part of a value survives the cut: redaction comes first, the cut
// second. complete says s is the whole body; otherwise s must extend at
// least redactionSlack bytes past the cap, and only text starting where a
// value would be seen whole is kept. truncated reports that text was
// dropped.
func redactPrefix(s string, secrets []Secret, maxOut int, complete bool) (out string, truncated bool) {
	pairs := redactionPairs(secrets)
	safeEnd := len(s)
	if !complete && len(pairs) > 0 {
		safeEnd = max(0, len(s)-len(pairs[0].old)+1)
	}
	cut := min(maxOut, safeEnd)
	type match struct {
		at, n int
		mark  string
	}
	var ms []match
	for _, p := range pairs {
		for off := 0; off < cut; {
			i := strings.Index(s[off:], p.old)
			if i < 0 || off+i >= cut {
				break
			}
			ms = append(ms, match{off + i, len(p.old), p.new})
			off += i + 1
		}
	}
	// Leftmost first, longest at a position (pairs are longest first and
	// the sort is stable).
	slices.SortStableFunc(ms, func(a, b match) int { return cmp.Compare(a.at, b.at) })
	var b strings.Builder
	pos := 0
	for _, m := range ms {
		if m.at < pos {
			continue
		}
		b.WriteString(s[pos:m.at])
		b.WriteString(m.mark)
		pos = m.at + m.n
	}
	if pos < cut {
		b.WriteString(s[pos:cut])
		pos = cut
	}
	out = b.String()
	truncated = !complete || pos < len(s)
	if len(out) > maxOut {
		out, truncated = out[:maxOut], true
	}
	return out, truncated
}

// containsSecret names the first secret whose value (in any redacted form)
// occurs in s, or "".
func containsSecret(s string, secrets []Secret) string {
	for _, sec := range secrets {
		if sec.Value != "" && Redact(s, []Secret{sec}) != s {
			return sec.Name
		}
	}
	return ""
}
