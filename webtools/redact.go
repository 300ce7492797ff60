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
	type pair struct{ old, new string }
	var pairs []pair
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
				pairs = append(pairs, pair{form, mark})
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// strings.Replacer tries the olds in argument order at each position;
	// longest first makes the result independent of configuration order.
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(len(b.old), len(a.old)) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return strings.NewReplacer(args...)
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
