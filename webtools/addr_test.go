package webtools

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/onellm/onellm-mcp/internal/netaddr"
)

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
			if c, _ := netaddr.Classify(addr); c != tt.class {
				t.Errorf("class of %q = %q; want %q", tt.in, c, tt.class)
			}
		}
		if err != nil && !errors.Is(err, errHost) {
			t.Errorf("parseHost(%q) error does not wrap errHost: %v", tt.in, err)
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
		class, public := netaddr.Classify(addr)
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
			c4, pub4 := netaddr.Classify(addr.Unmap())
			if pub4 != public || (addr.Is4In6() && class != "ipv4-mapped→"+c4) {
				t.Fatalf("%v: %s/%v vs unmapped %s/%v", addr, class, public, c4, pub4)
			}
		}
	})
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
			if _, pub := netaddr.Classify(tg.addr); pub && (tg.addr.Unmap().IsLoopback() || tg.addr.Unmap().IsPrivate()) {
				t.Fatalf("%q: %v public", s, tg.addr)
			}
		}
	})
}
