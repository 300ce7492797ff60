package netaddr

import (
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
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
		class, public := Classify(a)
		if class != tt.class || public != tt.public {
			t.Errorf("Classify(%s) = %q, %v; want %q, %v", tt.in, class, public, tt.class, tt.public)
		}
	}
	if c, p := Classify(netip.Addr{}); c != "invalid" || p {
		t.Errorf("zero Addr: %q %v", c, p)
	}
	if c, p := Classify(netip.MustParseAddr("fe80::1%eth0")); c != "link-local" || p {
		t.Errorf("zoned: %q %v", c, p)
	}
}

// TestLoopback: the one loopback check, for addresses and listen hosts.
func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.1": true, "::1": true, "[::1]": true, "::ffff:127.0.0.1": true,
		"localhost": true, "LocalHost": true,
		"0.0.0.0": false, "::": false, "": false, "10.0.0.1": false, "example.com": false,
		"localhost.example.com": false, "2002:7f00:1::": false, "::127.0.0.1": false, "fe80::1": false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	addrs := []netip.Addr{
		netip.MustParseAddr("8.8.8.8"),
		netip.MustParseAddr("127.0.0.1"),
		netip.MustParseAddr("2606:4700:4700::1111"),
		netip.MustParseAddr("::ffff:10.0.0.1"),
		netip.MustParseAddr("2002:7f00:1::"),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Classify(addrs[i%len(addrs)])
	}
}
