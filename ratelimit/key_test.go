// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"testing"
)

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
