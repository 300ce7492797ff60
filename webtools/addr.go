package webtools

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// errHost is wrapped by every host-parsing error.
var errHost = errors.New("invalid host")

// parseHost normalises a URL host (without port or brackets) the way a
// resolver would read it. It returns either an address (IP literals in any
// spelling inet_aton or a URL parser accepts: 2130706433, 0x7f.1, 127.1,
// 0177.0.0.1, ::ffff:127.0.0.1) or a lower-case ASCII host name without a
// trailing dot. Names that end in a number but are not a valid IPv4 address
// are refused rather than sent to DNS, where some resolvers would read them
// as addresses after all.
func parseHost(h string) (name string, addr netip.Addr, err error) {
	if h == "" {
		return "", netip.Addr{}, fmt.Errorf("%w: empty host", errHost)
	}
	if len(h) > 253+1 {
		return "", netip.Addr{}, fmt.Errorf("%w: host name too long", errHost)
	}
	if strings.Contains(h, ":") {
		if strings.Contains(h, "%") {
			return "", netip.Addr{}, fmt.Errorf("%w: IPv6 zone identifiers are not allowed in %q", errHost, h)
		}
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() {
			return "", netip.Addr{}, fmt.Errorf("%w: %q is not a valid IPv6 address", errHost, h)
		}
		return "", a, nil
	}
	for i := 0; i < len(h); i++ {
		if h[i] >= 0x80 {
			return "", netip.Addr{}, fmt.Errorf("%w: non-ASCII host name %q; use its punycode (xn--…) form", errHost, h)
		}
	}
	h = strings.ToLower(h)
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", netip.Addr{}, fmt.Errorf("%w: empty host", errHost)
	}
	labels := strings.Split(h, ".")
	if endsInNumber(labels[len(labels)-1]) {
		a, ok := parseIPv4Loose(labels)
		if !ok {
			return "", netip.Addr{}, fmt.Errorf("%w: %q looks like an IPv4 address but is not a valid one", errHost, h)
		}
		return "", a, nil
	}
	if len(h) > 253 {
		return "", netip.Addr{}, fmt.Errorf("%w: host name too long", errHost)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", netip.Addr{}, fmt.Errorf("%w: %q has an empty or over-long label", errHost, h)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", netip.Addr{}, fmt.Errorf("%w: %q contains %q", errHost, h, c)
			}
		}
	}
	return h, netip.Addr{}, nil
}

// endsInNumber follows the WHATWG URL standard: a last label made only of
// digits, or 0x followed by hex digits, makes the host an IPv4 address.
func endsInNumber(l string) bool {
	if l == "" {
		return false
	}
	if allDigits(l, 10) {
		return true
	}
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		return allDigits(l[2:], 16)
	}
	return false
}

func allDigits(s string, base int) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
		default:
			return false
		}
	}
	return true
}

// parseIPv4Loose reads 1 to 4 dot-separated numbers, each decimal, octal
// (leading 0) or hex (0x), the last filling the remaining bytes: inet_aton's
// and the URL standard's rules.
func parseIPv4Loose(labels []string) (netip.Addr, bool) {
	if len(labels) > 4 {
		return netip.Addr{}, false
	}
	var parts [4]uint64
	for i, l := range labels {
		v, ok := parseIPv4Number(l)
		if !ok {
			return netip.Addr{}, false
		}
		parts[i] = v
	}
	n := len(labels)
	for i := 0; i < n-1; i++ {
		if parts[i] > 255 {
			return netip.Addr{}, false
		}
	}
	if parts[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	var v uint32
	for i := 0; i < n-1; i++ {
		v |= uint32(parts[i]) << (8 * (3 - i))
	}
	v |= uint32(parts[n-1])
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // "0x" is zero, as in the URL standard
		}
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if len(s) > 32 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// hostString renders a normalised host for a URL: IPv6 in brackets, IPv4
// in dotted decimal, names as they are.
func hostString(name string, a netip.Addr) string {
	if !a.IsValid() {
		return name
	}
	if a.Is4() {
		return a.String()
	}
	return "[" + a.String() + "]"
}
