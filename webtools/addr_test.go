package webtools

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestClassifyAddr(t *testing.T) {
	tests := []struct {
		in     string
		class  string
		public bool
	}{
		// IPv4
		{"8.8.8.8", "public", true},
		{"1.1.1.1", "public", true},
		{"127.0.0.1", "loopback", false},
		{"127.255.255.254", "loopback", false},
		{"10.0.0.1", "private", false},
		{"172.16.0.1", "private", false},
		{"172.31.255.255", "private", false},
		{"172.32.0.1", "public", true},
		{"192.168.1.1", "private", false},
		{"169.254.1.1", "link-local", false},
		{"169.254.169.254", "metadata", false},
		{"169.254.170.2", "metadata", false},
		{"100.100.100.200", "metadata", false},
		{"192.0.0.192", "metadata", false},
		{"100.64.0.1", "cgnat", false},
		{"100.127.255.255", "cgnat", false},
		{"100.128.0.1", "public", true},
		{"0.0.0.0", "unspecified", false},
		{"0.1.2.3", "unspecified", false},
		{"224.0.0.1", "multicast", false},
		{"239.255.255.250", "multicast", false},
		{"240.0.0.1", "reserved", false},
		{"255.255.255.255", "reserved", false},
		{"192.0.0.8", "reserved", false},
		{"192.88.99.1", "reserved", false},
		{"192.0.2.1", "documentation", false},
		{"198.51.100.7", "documentation", false},
		{"203.0.113.9", "documentation", false},
		{"198.18.0.1", "benchmarking", false},
		{"198.19.255.255", "benchmarking", false},
		{"198.20.0.1", "public", true},
		// IPv6
		{"::", "unspecified", false},
		{"::1", "loopback", false},
		{"2606:4700:4700::1111", "public", true},
		{"2001:4860:4860::8888", "public", true},
		{"fe80::1", "link-local", false},
		{"fec0::1", "site-local", false},
		{"fc00::1", "unique-local", false},
		{"fd12:3456::1", "unique-local", false},
		{"fd00:ec2::254", "metadata", false},
		{"fd00:ec2::23", "metadata", false},
		{"fd20:ce::254", "metadata", false},
		{"ff02::1", "multicast", false},
		{"ff0e::1", "multicast", false},
		{"2001:db8::1", "documentation", false},
		{"3fff::1", "documentation", false},
		{"2001:2::1", "benchmarking", false},
		{"2001:10::1", "reserved", false},
		{"100::1", "reserved", false},
		{"4000::1", "reserved", false},
		// IPv4-mapped
		{"::ffff:127.0.0.1", "ipv4-mapped→loopback", false},
		{"::ffff:7f00:1", "ipv4-mapped→loopback", false},
		{"::ffff:10.1.2.3", "ipv4-mapped→private", false},
		{"::ffff:169.254.169.254", "ipv4-mapped→metadata", false},
		{"::ffff:8.8.8.8", "ipv4-mapped→public", true},
		// IPv4-compatible (deprecated): never public
		{"::127.0.0.1", "ipv4-compatible→loopback", false},
		{"::8.8.8.8", "ipv4-compatible→public", false},
		// NAT64
		{"64:ff9b::127.0.0.1", "nat64→loopback", false},
		{"64:ff9b::a9fe:a9fe", "nat64→metadata", false},
		{"64:ff9b::8.8.8.8", "nat64→public", true},
		{"64:ff9b:1::8.8.8.8", "nat64-local→public", false},
		// 6to4
		{"2002:7f00:1::", "6to4→loopback", false},
		{"2002:c0a8:101::1", "6to4→private", false},
		{"2002:a9fe:a9fe::", "6to4→metadata", false},
		{"2002:808:808::1", "6to4→public", true},
		// Teredo: client address inverted in the last 32 bits
		{"2001:0::80ff:fffe", "teredo→loopback", false},                         // ^7f00:0001
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", "teredo→private", false},       // ^0a00:0001
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo→documentation", false}, // RFC 4380's example, 192.0.2.45
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", "teredo→public", true},         // 8.8.8.8
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.in)
		class, public := ClassifyAddr(a)
		if class != tt.class || public != tt.public {
			t.Errorf("ClassifyAddr(%s) = %q, %v; want %q, %v", tt.in, class, public, tt.class, tt.public)
		}
	}
	if c, p := ClassifyAddr(netip.Addr{}); c != "invalid" || p {
		t.Errorf("zero Addr: %q %v", c, p)
	}
	if c, p := ClassifyAddr(netip.MustParseAddr("fe80::1%eth0")); c != "link-local" || p {
		t.Errorf("zoned: %q %v", c, p)
	}
}

func TestParseHost(t *testing.T) {
	tests := []struct {
		in       string
		name     string // want a name
		addr     string // want an address
		class    string
		errMatch string
	}{
		{in: "Example.COM.", name: "example.com"},
		{in: "api.github.com", name: "api.github.com"},
		{in: "localhost", name: "localhost"},
		{in: "1.2.3.example", name: "1.2.3.example"},
		{in: "under_score.test", name: "under_score.test"},
		{in: "127.0.0.1", addr: "127.0.0.1", class: "loopback"},
		{in: "127.0.0.1.", addr: "127.0.0.1", class: "loopback"},
		{in: "2130706433", addr: "127.0.0.1", class: "loopback"},
		{in: "0x7f.1", addr: "127.0.0.1", class: "loopback"},
		{in: "0X7F.0.0.1", addr: "127.0.0.1", class: "loopback"},
		{in: "127.1", addr: "127.0.0.1", class: "loopback"},
		{in: "127.0.1", addr: "127.0.0.1", class: "loopback"},
		{in: "0177.0.0.1", addr: "127.0.0.1", class: "loopback"},
		{in: "017700000001", addr: "127.0.0.1", class: "loopback"},
		{in: "0x7f000001", addr: "127.0.0.1", class: "loopback"},
		{in: "0xa9fea9fe", addr: "169.254.169.254", class: "metadata"},
		{in: "0251.0376.0251.0376", addr: "169.254.169.254", class: "metadata"},
		{in: "10.1", addr: "10.0.0.1", class: "private"},
		{in: "0", addr: "0.0.0.0", class: "unspecified"},
		{in: "0x", addr: "0.0.0.0", class: "unspecified"},
		{in: "::ffff:127.0.0.1", addr: "::ffff:127.0.0.1", class: "ipv4-mapped→loopback"},
		{in: "::127.0.0.1", addr: "::127.0.0.1", class: "ipv4-compatible→loopback"},
		{in: "2002:7f00:1::", addr: "2002:7f00:1::", class: "6to4→loopback"},
		{in: "::1", addr: "::1", class: "loopback"},
		{in: "8.8.8.8", addr: "8.8.8.8", class: "public"},
		{in: "256.1.1.1", errMatch: "not a valid one"},
		{in: "1.2.3.4.5", errMatch: "not a valid one"},
		{in: "08.1.1.1", errMatch: "not a valid one"},
		{in: "1.2.3.0x1g", name: "1.2.3.0x1g"},
		{in: "4294967296", errMatch: "not a valid one"},
		{in: "example.123", errMatch: "not a valid one"},
		{in: "fe80::1%eth0", errMatch: "zone"},
		{in: "bücher.de", errMatch: "punycode"},
		{in: "a..b", errMatch: "label"},
		{in: "", errMatch: "empty"},
		{in: ".", errMatch: "empty"},
		{in: "a b", errMatch: "contains"},
		{in: "1::2::3", errMatch: "IPv6"},
	}
	for _, tt := range tests {
		name, addr, err := parseHost(tt.in)
		switch {
		case tt.errMatch != "":
			if err == nil || !strings.Contains(err.Error(), tt.errMatch) {
				t.Errorf("parseHost(%q) = %q, %v, %v; want error with %q", tt.in, name, addr, err, tt.errMatch)
			}
		case err != nil:
			t.Errorf("parseHost(%q): %v", tt.in, err)
		case tt.name != "":
			if name != tt.name || addr.IsValid() {
				t.Errorf("parseHost(%q) = %q, %v; want name %q", tt.in, name, addr, tt.name)
			}
		default:
			if addr != netip.MustParseAddr(tt.addr) || name != "" {
				t.Errorf("parseHost(%q) = %q, %v; want %s", tt.in, name, addr, tt.addr)
			}
			if c, _ := ClassifyAddr(addr); c != tt.class {
				t.Errorf("class of %q = %q; want %q", tt.in, c, tt.class)
			}
		}
		if err != nil && !errors.Is(err, errHost) {
			t.Errorf("parseHost(%q) error does not wrap errHost: %v", tt.in, err)
		}
	}
}

func TestMatchHost(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"api.github.com", "api.github.com", true},
		{"api.github.com", "API.github.com.", true},
		{"api.github.com", "github.com", false},
		{"*.github.com", "api.github.com", true},
		{"*.github.com", "a.b.github.com", true},
		{"*.github.com", "github.com", false},
		{"*.github.com", "evilgithub.com", false},
		{"*.github.com", "github.com.evil.com", false},
		{"api.*.com", "api.x.y.com", true},
		{"*", "anything.at.all", true},
		{"127.0.0.1", "127.0.0.1", true},
		{"a.test", "b.test", false},
	}
	for _, tt := range tests {
		s := Secret{Name: "s", Value: "v", Hosts: []string{tt.pattern}}
		if got := s.MatchesHost(tt.host); got != tt.want {
			t.Errorf("%q matches %q = %v; want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

// FuzzParseHost: never panics; an address it parses is classified the same
// way net.IP judges it where net.ParseIP also parses the text; a name it
// returns is never something a resolver would read as an IPv4 address; a
// non-public verdict from net's predicates is never public here.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0x7f.1", "::ffff:127.0.0.1", "example.com", "2002:7f00:1::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, addr, err := parseHost(s)
		if err != nil {
			if name != "" || addr.IsValid() {
				t.Fatalf("error with a result: %q %v", name, addr)
			}
			return
		}
		if name != "" {
			if addr.IsValid() {
				t.Fatalf("both a name and an address")
			}
			labels := strings.Split(name, ".")
			if endsInNumber(labels[len(labels)-1]) {
				t.Fatalf("name %q ends in a number", name)
			}
			if _, err := netip.ParseAddr(name); err == nil {
				t.Fatalf("name %q is an address", name)
			}
			if name != strings.ToLower(name) || strings.HasSuffix(name, ".") {
				t.Fatalf("name %q not normalised", name)
			}
			return
		}
		class, public := ClassifyAddr(addr)
		ip := net.IP(addr.AsSlice())
		if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
			ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
			if public {
				t.Fatalf("%q → %v judged public (%s) but net.IP says otherwise", s, addr, class)
			}
		}
		if p := net.ParseIP(strings.TrimSuffix(s, ".")); p != nil {
			want, _ := netip.AddrFromSlice(p)
			if want.Unmap() != addr.Unmap() {
				t.Fatalf("%q: parseHost %v, net.ParseIP %v", s, addr, p)
			}
		}
		if addr.Is4() || addr.Is4In6() {
			c4, pub4 := ClassifyAddr(addr.Unmap())
			if pub4 != public || (addr.Is4In6() && class != "ipv4-mapped→"+c4) {
				t.Fatalf("%v: %s/%v vs unmapped %s/%v", addr, class, public, c4, pub4)
			}
		}
	})
}

func BenchmarkClassifyAddr(b *testing.B) {
	addrs := []netip.Addr{
		netip.MustParseAddr("8.8.8.8"),
		netip.MustParseAddr("127.0.0.1"),
		netip.MustParseAddr("2606:4700:4700::1111"),
		netip.MustParseAddr("::ffff:10.0.0.1"),
		netip.MustParseAddr("2002:7f00:1::"),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ClassifyAddr(addrs[i%len(addrs)])
	}
}

// FuzzParseURL: never panics; a URL it accepts is http(s), has no userinfo,
// and its normalised form parses back to the same destination.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"http://127.1:8080/a", "https://user@x.test/", "http://[::ffff:7f00:1]/", "HTTP://Example.COM./p?q#f", "http://%31%32%37.0.0.1/", "http://0x7f.1:0/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, tg, err := parseURL(s)
		if err != nil {
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || tg.port < 1 || tg.port > 65535 {
			t.Fatalf("%q accepted as %v", s, u)
		}
		u2, tg2, err := parseURL(u.String())
		if err != nil || tg2 != tg || u2.String() != u.String() {
			t.Fatalf("%q → %q → %v %+v (was %+v)", s, u.String(), err, tg2, tg)
		}
		if tg.addr.IsValid() {
			if _, pub := ClassifyAddr(tg.addr); pub && (tg.addr.Unmap().IsLoopback() || tg.addr.Unmap().IsPrivate()) {
				t.Fatalf("%q: %v public", s, tg.addr)
			}
		}
	})
}
