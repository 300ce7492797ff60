// Package netaddr owns the one address classifier: what kind of address
// an IP is (loopback, private, link-local, metadata, embedded forms, …),
// whether it is public, and the one loopback check built on it. The HTTP
// client's private-address guard, the HTTP transport's and the approval
// console's loopback-only binding all ask it.
//
// Security model: only global unicast addresses outside every
// special-purpose range are public; IPv6 forms that embed an IPv4 address
// are judged by the embedded address too, so no spelling of a private
// address passes as public.
package netaddr

import (
	"net/netip"
	"strings"
)

// Address classes returned by Classify. Embedded forms are reported as
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

// Classify says what kind of address a is and whether it is public (may
// be reached without a rule's allow_private). IPv6 forms that embed an IPv4
// address (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) are classified
// by the embedded address too: "6to4→loopback" is not public. Only global
// unicast addresses outside every special-purpose range are public.
func Classify(a netip.Addr) (class string, public bool) {
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
	c, pub := Classify(v4)
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

// IsLoopback reports whether a is a loopback address, written plainly or
// IPv4-mapped (::ffff:127.0.0.1).
func IsLoopback(a netip.Addr) bool {
	c, _ := Classify(a)
	return c == ClassLoopback || c == FormIPv4Mapped+"→"+ClassLoopback
}

// IsLoopbackHost reports whether host (a name or IP literal, brackets
// allowed) names only loopback: "localhost" or a loopback address. Any
// other name is not trusted to stay loopback.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && IsLoopback(a)
}
