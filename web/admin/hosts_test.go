// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCanonicalHost(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  string
	}{
		{in: "localhost", want: "localhost"},
		{in: "Weir-Admin.Corp.Example.", want: "weir-admin.corp.example"},
		{in: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
		{in: "127.0.0.1", want: "127.0.0.1"},
		{in: "::1", want: "::1"},
		{in: "[::1]", want: "::1"},
		{in: "[2001:DB8::1]", want: "2001:db8::1"},
		{in: "::ffff:10.0.0.1", want: "10.0.0.1"},
		{in: "", wantErr: "empty"},
		{in: "localhost:14001", wantErr: "not a host name"},
		{in: "[::1]:14001", wantErr: "not a host name"},
		{in: "https://weir.example", wantErr: "not a host name"},
		{in: "*.corp.example", wantErr: "not a host name"},
		{in: "bücher.example", wantErr: "not a host name"},
		{in: "a..b", wantErr: "empty"},
		{in: "-a.example", wantErr: "hyphen"},
		{in: "a_b.example", wantErr: "character"},
		{in: strings.Repeat("a", 64) + ".example", wantErr: "63"},
		{in: strings.Repeat("a.", 127) + "ab", wantErr: "253"},
		{in: "fe80::1%eth0", wantErr: "zone"},
		{in: "127.1", wantErr: "number"},
		{in: "10.0.0.256", wantErr: "number"},
	}
	for _, tt := range tests {
		got, err := CanonicalHost(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("CanonicalHost(%q) = %q, %v; want an error about %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CanonicalHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// hostRequest is a GET with Host host that arrived at local ("" for a
// request without a connection).
func hostRequest(host, local string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/config", nil)
	r.Host = host
	if local != "" {
		addr, err := net.ResolveTCPAddr("tcp", local)
		if err != nil {
			panic(err)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
	}
	return r
}

func TestHostPolicy(t *testing.T) {
	p, err := newHostPolicy([]string{"localhost", "127.0.0.1", "::1", "weir-admin.corp.example"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host, local string
		want        bool
	}{
		{"localhost", "", true},
		{"localhost:14001", "", true},
		{"LocalHost:14001", "", true},
		{"localhost.:14001", "", true},
		{"127.0.0.1:14001", "", true},
		{"[::1]:14001", "", true},
		{"[::1]", "", true},
		{"[::ffff:127.0.0.1]:14001", "", true},
		{"weir-admin.corp.example", "", true},
		{"weir-admin.corp.example:443", "", true},
		// DNS rebinding: the attacker's names, however they end.
		{"attacker.example:14001", "", false},
		{"attacker.example", "", false},
		{"localhost.attacker.example:14001", "", false},
		{"127.0.0.1.nip.io:14001", "", false},
		{"corp.example", "", false},
		{"x.weir-admin.corp.example", "", false},
		// Malformed or foreign addresses.
		{"", "", false},
		{"::1", "", false},
		{"[::1", "", false},
		{"10.0.0.7:14001", "", false},
		{"[fe80::1%25eth0]:14001", "", false},
		// The address the connection arrived at is the listener's own.
		{"10.0.0.7:14001", "10.0.0.7:14001", true},
		{"10.0.0.7", "10.0.0.7:14001", true},
		{"[2001:db8::7]:14001", "[2001:db8::7]:14001", true},
		{"10.0.0.8:14001", "10.0.0.7:14001", false},
		{"attacker.example:14001", "10.0.0.7:14001", false},
	}
	for _, tt := range tests {
		if got := p.allows(hostRequest(tt.host, tt.local)); got != tt.want {
			t.Errorf("Host %q arriving at %q: allowed = %v, want %v", tt.host, tt.local, got, tt.want)
		}
	}
	if _, err := newHostPolicy([]string{"localhost", "evil.example:80"}); err == nil || !strings.Contains(err.Error(), "Hosts[1]") {
		t.Errorf("a host with a port: err = %v, want one naming Hosts[1]", err)
	}
}

// FuzzHostPolicy: CanonicalHost is idempotent, and a host it accepts is
// allowed as a Host header, with or without a port and whatever its case,
// by a policy built from it; nothing panics.
func FuzzHostPolicy(f *testing.F) {
	for _, s := range []string{"localhost", "[::1]", "127.0.0.1", "A.Example.", "a..b", "[::1]:80", "xn--bcher-kva.example", "::ffff:1.2.3.4", "127.1", "%", "[", "]"} {
		f.Add(s, "127.0.0.1:1")
	}
	f.Fuzz(func(t *testing.T, h, header string) {
		p, _ := newHostPolicy([]string{"localhost"})
		_ = p.allows(hostRequest(header, ""))
		c, err := CanonicalHost(h)
		if err != nil {
			return
		}
		if c2, err := CanonicalHost(c); err != nil || c2 != c {
			t.Fatalf("CanonicalHost(%q) = %q, but CanonicalHost(%q) = %q, %v", h, c, c, c2, err)
		}
		p, err = newHostPolicy([]string{h})
		if err != nil {
			t.Fatalf("newHostPolicy(%q): %v", h, err)
		}
		host := c
		if strings.Contains(c, ":") {
			host = "[" + c + "]"
		}
		for _, hdr := range []string{host, host + ":14001", strings.ToUpper(host)} {
			if !p.allows(hostRequest(hdr, "")) {
				t.Fatalf("policy of %q refuses Host %q", h, hdr)
			}
		}
	})
}
