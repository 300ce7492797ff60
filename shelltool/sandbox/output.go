//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// capture keeps the head and the tail of a stream, plus enough slack on each
// side (the longest secret) to redact a secret that straddles a cut.
type capture struct {
	headMax, tailMax int // bytes of the original stream shown on each side
	slack            int // longest secret
	head             []byte
	tail             []byte // last bytes after head; trimmed to tailMax+slack
	total            int64
}

func newCapture(outputMax int, secrets []string) *capture {
	slack := 0
	for _, s := range secrets {
		slack = max(slack, len(s))
	}
	h := outputMax / 2
	return &capture{headMax: h, tailMax: outputMax - h, slack: slack}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := c.headMax + c.slack - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	keep := c.tailMax + c.slack
	if len(p) >= keep {
		c.tail = append(c.tail[:0], p[len(p)-keep:]...)
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*keep {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-keep:]...)
	}
	return n, nil
}

// result returns the redacted text and whether it was truncated.
func (c *capture) result(secrets []string) (string, bool) {
	keep := c.tailMax + c.slack
	if len(c.tail) > keep {
		c.tail = c.tail[len(c.tail)-keep:]
	}
	total := c.total
	whole := total <= int64(len(c.head)+len(c.tail))
	if total <= int64(c.headMax+c.tailMax) {
		return redact(append(append([]byte{}, c.head...), c.tail...), secrets), false
	}
	// Original positions: head covers [0, len(head)), tail covers
	// [total-len(tail), total).
	tailOff := total - int64(len(c.tail))
	// The tail window with its slack starts at tailStart; part of it may
	// still be in head when the stream is short.
	tailStart := max(0, total-int64(c.tailMax+c.slack))
	var tailBuf []byte
	if tailStart < tailOff {
		tailBuf = append(tailBuf, c.head[tailStart:]...)
	}
	tailBuf = append(tailBuf, c.tail[max(0, tailStart-tailOff):]...)

	headOut, headEnd := cutPrefix(c.head, c.headMax, secrets)
	tailOut, tailFrom := cutSuffix(tailBuf, int(total-int64(c.tailMax)-tailStart), secrets)
	tailFromAbs := tailStart + int64(tailFrom)
	if int64(headEnd) >= tailFromAbs && whole {
		return redact(append(append([]byte{}, c.head...), c.tail...), secrets), false
	}
	omitted := tailFromAbs - int64(headEnd)
	return headOut + fmt.Sprintf("\n… [%d bytes truncated] …\n", omitted) + tailOut, true
}

// matches returns the merged intervals covered by any occurrence of any
// secret in b (occurrences may overlap).
func matches(b []byte, secrets []string) [][2]int {
	var iv [][2]int
	for _, s := range secrets {
		if s == "" {
			continue
		}
		sb := []byte(s)
		for from := 0; from < len(b); {
			i := bytes.Index(b[from:], sb)
			if i < 0 {
				break
			}
			iv = append(iv, [2]int{from + i, from + i + len(sb)})
			from += i + 1
		}
	}
	if len(iv) < 2 {
		return iv
	}
	sort.Slice(iv, func(i, j int) bool { return iv[i][0] < iv[j][0] })
	out := iv[:1]
	for _, x := range iv[1:] {
		last := &out[len(out)-1]
		if x[0] <= last[1] {
			last[1] = max(last[1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}

func redact(b []byte, secrets []string) string {
	s, _ := cutPrefix(b, len(b), secrets)
	return s
}

// cutPrefix renders b[:limit] redacted; a match that starts before limit is
// rendered whole. It returns the text and the end position covered.
func cutPrefix(b []byte, limit int, secrets []string) (string, int) {
	limit = min(limit, len(b))
	var sb strings.Builder
	pos := 0
	for _, m := range matches(b, secrets) {
		if m[0] >= limit {
			break
		}
		sb.Write(b[pos:m[0]])
		sb.WriteString(RedactedMarker)
		pos = m[1]
	}
	end := max(pos, limit)
	if pos < limit {
		sb.Write(b[pos:limit])
	}
	return sb.String(), end
}

// cutSuffix renders b[from:] redacted; a match that ends after from is
// rendered whole. It returns the text and the start position covered.
func cutSuffix(b []byte, from int, secrets []string) (string, int) {
	from = max(0, min(from, len(b)))
	var sb strings.Builder
	start := from
	pos := from
	for _, m := range matches(b, secrets) {
		if m[1] <= from {
			continue
		}
		if m[0] < start {
			start = m[0]
			pos = m[0]
		}
		sb.Write(b[pos:m[0]])
		sb.WriteString(RedactedMarker)
		pos = m[1]
	}
	sb.Write(b[pos:])
	return sb.String(), start
}
