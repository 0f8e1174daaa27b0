// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"testing"
)

// TestIPPrefix: the one /64 rule. An IPv4 address is its own /32, an IPv6
// address its /64; an IPv4-mapped address is its IPv4 address and a zone is
// dropped. The invalid Addr gives the invalid Prefix. The Edge's table key
// is the same group in 16 bytes.
func TestIPPrefix(t *testing.T) {
	tests := []struct {
		addr string
		want string
	}{
		{"192.0.2.7", "192.0.2.7/32"},
		{"127.0.0.1", "127.0.0.1/32"},
		{"::ffff:192.0.2.7", "192.0.2.7/32"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
		{"::", "::/64"},
	}
	for _, tt := range tests {
		addr, want := netip.MustParseAddr(tt.addr), netip.MustParsePrefix(tt.want)
		if got := IPPrefix(addr); got != want {
			t.Errorf("IPPrefix(%s) = %s, want %s", tt.addr, got, want)
		}
		if got, want := edgeKey(addr), want.Addr().As16(); got != want {
			t.Errorf("edgeKey(%s) = %x, want %x", tt.addr, got, want)
		}
	}
	if got := IPPrefix(netip.Addr{}); got.IsValid() || got != (netip.Prefix{}) {
		t.Errorf("IPPrefix(invalid) = %v, want the invalid Prefix", got)
	}
	if got := edgeKey(netip.Addr{}); got != ([16]byte{}) {
		t.Errorf("edgeKey(invalid) = %x, want zeros", got)
	}
}

func TestIPKey(t *testing.T) {
	tests := []struct {
		addr string
		want string
	}{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
	}
	for _, tt := range tests {
		if got := IPKey(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IPKey(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if got := IPKey(netip.Addr{}); got != "" {
		t.Errorf("IPKey(invalid) = %q, want \"\"", got)
	}
}

func TestFQDNSetKey(t *testing.T) {
	sum := sha256.Sum256([]byte("a.example.com,b.example.com"))
	want := "acct-1:" + hex.EncodeToString(sum[:])
	same := [][]string{
		{"a.example.com", "b.example.com"},
		{"b.example.com", "a.example.com"},
		{"B.Example.COM.", "a.example.com", "a.example.com"},
	}
	for _, names := range same {
		if got := FQDNSetKey("acct-1", names); got != want {
			t.Errorf("FQDNSetKey(%q) = %q, want %q", names, got, want)
		}
	}
	differ := map[string]string{
		"another account": FQDNSetKey("acct-2", same[0]),
		"a wildcard":      FQDNSetKey("acct-1", []string{"*.a.example.com", "b.example.com"}),
		"a subset":        FQDNSetKey("acct-1", []string{"a.example.com"}),
	}
	for what, got := range differ {
		if got == want {
			t.Errorf("%s gives the same key %q", what, got)
		}
	}
}

func TestFailedValidationKey(t *testing.T) {
	if got, want := FailedValidationKey("acct-1", "WWW.Example.com."), "acct-1:www.example.com"; got != want {
		t.Errorf("FailedValidationKey = %q, want %q", got, want)
	}
	if FailedValidationKey("a", "*.example.com") == FailedValidationKey("a", "example.com") {
		t.Error("*.example.com and example.com share a failed-validation key")
	}
}

func TestRegisteredDomainKey(t *testing.T) {
	tests := []struct {
		name    string
		want    string
		wantErr bool
	}{
		{name: "www.example.com", want: "example.com"},
		{name: "new.blog.example.co.uk", want: "example.co.uk"},
		{name: "*.foo.Example.com.", want: "example.com"},
		{name: "example.com", want: "example.com"},
		{name: "host.internal", want: "host.internal"},
		{name: "192.0.2.7", want: "192.0.2.7"},
		{name: "2001:db8::1", want: "2001:db8::/64"},
		{name: "co.uk", wantErr: true},
		{name: "com", wantErr: true},
		{name: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := RegisteredDomainKey(tt.name)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("RegisteredDomainKey(%q) = %q, %v; want %q, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestBucketKey(t *testing.T) {
	if got, want := BucketKey(OrderCreation, "acct-1"), "order-creation:acct-1"; got != want {
		t.Errorf("BucketKey = %q, want %q", got, want)
	}
}
