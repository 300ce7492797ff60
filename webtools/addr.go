package webtools

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Address classes returned by ClassifyAddr. Embedded forms are reported as
// "<form>→<class of the embedded IPv4 address>", e.g. "6to4→loopback".
const (
	ClassPublic        = "public"
	ClassLoopback      = "loopback"
	ClassPrivate       = "private"
	ClassLinkLocal     = "link-local"
	ClassCGNAT         = "cgnat"
	ClassUniqueLocal   = "unique-local"
	ClassSiteLocal     = "site-local"
	ClassMulticast     = "multicast"
	ClassUnspecified   = "unspecified"
	ClassMetadata      = "metadata"
	ClassDocumentation = "documentation"
	ClassBenchmarking  = "benchmarking"
	ClassReserved      = "reserved"
	ClassInvalid       = "invalid"
)

// Prefixes of embedded forms; the class is the prefix, "→", and the class of
// the embedded IPv4 address.
const (
	FormIPv4Mapped     = "ipv4-mapped"     // ::ffff:a.b.c.d
	FormIPv4Compatible = "ipv4-compatible" // ::a.b.c.d (deprecated; never public)
	FormNAT64          = "nat64"           // 64:ff9b::/96
	FormNAT64Local     = "nat64-local"     // 64:ff9b:1::/48 (never public)
	Form6to4           = "6to4"            // 2002::/16
	FormTeredo         = "teredo"          // 2001::/32, client address inverted
)

// metadataAddrs are the instance-metadata and credential endpoints of the
// common clouds. They are all link-local, CGNAT or reserved anyway; naming
// them separately makes the refusal message say what was at stake.
func isMetadata(a netip.Addr) bool {
	if a.Is4() {
		switch a.As4() {
		case [4]byte{169, 254, 169, 254}, // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle, …
			[4]byte{169, 254, 170, 2},   // AWS ECS task metadata
			[4]byte{169, 254, 170, 23},  // AWS EKS pod identity
			[4]byte{169, 254, 0, 23},    // Tencent Cloud
			[4]byte{100, 100, 100, 200}, // Alibaba Cloud
			[4]byte{192, 0, 0, 192}:     // Oracle Cloud (legacy)
			return true
		}
		return false
	}
	switch a.As16() {
	case [16]byte{0xfd, 0x00, 0x0e, 0xc2, 12: 0, 0, 0x02, 0x54}, // fd00:ec2::254 AWS IMDS
		[16]byte{0xfd, 0x00, 0x0e, 0xc2, 12: 0, 0, 0x00, 0x23}, // fd00:ec2::23 AWS EKS pod identity
		[16]byte{0xfd, 0x20, 0x00, 0xce, 12: 0, 0, 0x02, 0x54}: // fd20:ce::254 GCP
		return true
	}
	return false
}

// The ranges are written as code rather than held in package variables, so
// the package has no mutable state.
func classify4(a netip.Addr) string {
	b := a.As4()
	switch {
	case b[0] == 0:
		return ClassUnspecified // 0.0.0.0/8 "this network"; connecting to it reaches this host
	case b[0] == 10:
		return ClassPrivate
	case b[0] == 100 && b[1]&0xc0 == 64:
		return ClassCGNAT // 100.64.0.0/10
	case b[0] == 127:
		return ClassLoopback
	case b[0] == 169 && b[1] == 254:
		return ClassLinkLocal
	case b[0] == 172 && b[1]&0xf0 == 16:
		return ClassPrivate // 172.16.0.0/12
	case b[0] == 192 && b[1] == 0 && b[2] == 0:
		return ClassReserved // 192.0.0.0/24 IETF protocol assignments
	case b[0] == 192 && b[1] == 0 && b[2] == 2,
		b[0] == 198 && b[1] == 51 && b[2] == 100,
		b[0] == 203 && b[1] == 0 && b[2] == 113:
		return ClassDocumentation
	case b[0] == 192 && b[1] == 88 && b[2] == 99:
		return ClassReserved // 6to4 relay anycast (deprecated)
	case b[0] == 192 && b[1] == 168:
		return ClassPrivate
	case b[0] == 198 && b[1]&0xfe == 18:
		return ClassBenchmarking // 198.18.0.0/15
	case b[0]&0xf0 == 224:
		return ClassMulticast
	case b[0]&0xf0 == 240:
		return ClassReserved // 240.0.0.0/4 and the broadcast address
	}
	return ClassPublic
}

// ClassifyAddr says what kind of address a is and whether it is public (may
// be reached without a rule's allow_private). IPv6 forms that embed an IPv4
// address (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) are classified
// by the embedded address too: "6to4→loopback" is not public. Only global
// unicast addresses outside every special-purpose range are public.
func ClassifyAddr(a netip.Addr) (class string, public bool) {
	if !a.IsValid() {
		return ClassInvalid, false
	}
	a = a.WithZone("")
	if isMetadata(a) {
		return ClassMetadata, false
	}
	if a.Is4() {
		c := classify4(a)
		return c, c == ClassPublic
	}
	if a.Is4In6() {
		return embedded(FormIPv4Mapped, a.Unmap(), true)
	}
	b := a.As16()
	hi := uint16(b[0])<<8 | uint16(b[1])
	switch {
	case a.IsUnspecified():
		return ClassUnspecified, false
	case a.IsLoopback():
		return ClassLoopback, false
	case isZero(b[:12]):
		// ::a.b.c.d, deprecated IPv4-compatible; some stacks still route it
		// to the IPv4 address. Never public.
		return embedded(FormIPv4Compatible, v4(b[12:]), false)
	case hi == 0x0064 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]):
		return embedded(FormNAT64, v4(b[12:]), true)
	case hi == 0x0064 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1:
		return embedded(FormNAT64Local, v4(b[12:]), false)
	case hi == 0x2002:
		return embedded(Form6to4, v4(b[2:6]), true)
	case hi == 0x2001 && b[2] == 0 && b[3] == 0:
		var c [4]byte
		for i := range c {
			c[i] = ^b[12+i] // Teredo stores the client's address inverted
		}
		return embedded(FormTeredo, netip.AddrFrom4(c), true)
	case hi == 0x2001 && b[2] == 0 && b[3] == 2 && b[4] == 0 && b[5] == 0:
		return ClassBenchmarking, false // 2001:2::/48
	case hi == 0x2001 && b[2] == 0x0d && b[3] == 0xb8:
		return ClassDocumentation, false // 2001:db8::/32
	case hi&0xfff0 == 0x3ff0:
		return ClassDocumentation, false // 3fff::/20
	case hi == 0x2001 && b[2] < 2:
		return ClassReserved, false // rest of 2001::/23, IETF protocol assignments
	case b[0]&0xfe == 0xfc:
		return ClassUniqueLocal, false // fc00::/7
	case hi&0xffc0 == 0xfe80:
		return ClassLinkLocal, false
	case hi&0xffc0 == 0xfec0:
		return ClassSiteLocal, false // deprecated site-local
	case b[0] == 0xff:
		return ClassMulticast, false
	case b[0]&0xe0 != 0x20:
		return ClassReserved, false // outside 2000::/3 global unicast
	}
	return ClassPublic, true
}

func embedded(form string, v4 netip.Addr, mayBePublic bool) (string, bool) {
	c, pub := ClassifyAddr(v4)
	return form + "→" + c, mayBePublic && pub
}

func v4(b []byte) netip.Addr { return netip.AddrFrom4([4]byte(b)) }

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

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
