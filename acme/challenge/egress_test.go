// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// mustEgress compiles cfg.
func mustEgress(t *testing.T, cfg EgressConfig, own ...string) *Egress {
	t.Helper()
	aps := make([]netip.AddrPort, len(own))
	for i, s := range own {
		aps[i] = netip.MustParseAddrPort(s)
	}
	e, err := NewEgress(cfg, aps...)
	if err != nil {
		t.Fatalf("NewEgress: %v", err)
	}
	return e
}

// TestEgressBuiltin checks the built-in policy: the metadata services,
// link-local, "this network", multicast and broadcast are denied, in every
// spelling of the address; loopback, the private ranges and the rest of
// the world are allowed.
func TestEgressBuiltin(t *testing.T) {
	e := mustEgress(t, EgressConfig{})
	tests := []struct {
		addr string
		deny string // a part of the reason; "" means allowed
	}{
		{"169.254.169.254", "link-local"},
		{"169.254.170.2", "link-local"},
		{"::ffff:169.254.169.254", "link-local"}, // IPv4-mapped
		{"64:ff9b::a9fe:a9fe", "embeds 169.254.169.254 (NAT64"},
		{"64:ff9b:1::a9fe:a9fe", "embeds 169.254.169.254"},
		{"100.100.100.200", "Alibaba"},
		{"168.63.129.16", "Azure"},
		{"192.0.0.192", "Oracle"},
		{"fd00:ec2::254", "AWS"},
		{"fe80::1", "IPv6 link-local"},
		{"0.0.0.0", "this network"},
		{"0.1.2.3", "this network"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"ff02::1", "IPv6 multicast"},
		{"::", "unspecified"},
		{"127.0.0.1", ""},
		{"127.8.9.10", ""},
		{"::1", ""},
		{"10.1.2.3", ""},
		{"172.16.0.1", ""},
		{"192.168.1.1", ""},
		{"fd00::1", ""},
		{"fd00:ec2::253", ""},
		{"100.64.0.1", ""},
		{"100.100.100.201", ""},
		{"192.0.2.1", ""},
		{"64:ff9b::808:808", ""},
		{"2001:db8::1", ""},
	}
	for _, tt := range tests {
		err := e.CheckAddr(netip.MustParseAddr(tt.addr))
		switch {
		case tt.deny == "" && err != nil:
			t.Errorf("CheckAddr(%s): got %v, want allowed", tt.addr, err)
		case tt.deny != "" && err == nil:
			t.Errorf("CheckAddr(%s): allowed, want denied (%s)", tt.addr, tt.deny)
		case tt.deny != "" && !strings.Contains(err.Error(), tt.deny):
			t.Errorf("CheckAddr(%s): got %q, want it to contain %q", tt.addr, err, tt.deny)
		}
		var ee *EgressError
		if err != nil && !errors.As(err, &ee) {
			t.Errorf("CheckAddr(%s): got %T, want *EgressError", tt.addr, err)
		}
	}
}

// TestEgressPrecedence checks how configured ranges combine with the
// built-in ones: the most specific range decides; at equal length denied
// beats allowed, and configured beats built-in; DefaultDeny refuses what
// no range covers.
func TestEgressPrecedence(t *testing.T) {
	tests := []struct {
		name    string
		cfg     EgressConfig
		allowed []string
		denied  []string
	}{
		{
			name:    "a hole in link-local",
			cfg:     EgressConfig{AllowedCIDRs: []string{"169.254.10.0/24"}},
			allowed: []string{"169.254.10.5", "10.0.0.1"},
			denied:  []string{"169.254.169.254", "169.254.11.1"},
		},
		{
			name:    "configured beats built-in at equal length",
			cfg:     EgressConfig{AllowedCIDRs: []string{"169.254.0.0/16"}},
			allowed: []string{"169.254.169.254"},
			denied:  []string{"fd00:ec2::254", "100.100.100.200"},
		},
		{
			name:    "denied beats allowed at equal length",
			cfg:     EgressConfig{AllowedCIDRs: []string{"10.0.0.0/8"}, DeniedCIDRs: []string{"10.0.0.0/8"}},
			allowed: []string{"192.168.0.1"},
			denied:  []string{"10.1.2.3"},
		},
		{
			name:    "a more specific allowed range inside a denied one",
			cfg:     EgressConfig{AllowedCIDRs: []string{"10.1.0.0/16"}, DeniedCIDRs: []string{"10.0.0.0/8"}},
			allowed: []string{"10.1.2.3"},
			denied:  []string{"10.2.0.1"},
		},
		{
			name:    "a denied host inside an allowed range",
			cfg:     EgressConfig{AllowedCIDRs: []string{"10.0.0.0/8"}, DeniedCIDRs: []string{"10.9.9.9/32"}},
			allowed: []string{"10.9.9.8"},
			denied:  []string{"10.9.9.9", "::ffff:10.9.9.9"},
		},
		{
			name:    "default deny",
			cfg:     EgressConfig{Default: "deny", AllowedCIDRs: []string{"10.0.0.0/8", "::1/128"}},
			allowed: []string{"10.20.30.40", "::1"},
			denied:  []string{"127.0.0.1", "192.168.1.1", "8.8.8.8", "169.254.169.254"},
		},
		{
			name:   "unmasked configured range",
			cfg:    EgressConfig{DeniedCIDRs: []string{"192.168.1.77/24"}},
			denied: []string{"192.168.1.1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEgress(t, tt.cfg)
			for _, a := range tt.allowed {
				if err := e.CheckAddr(netip.MustParseAddr(a)); err != nil {
					t.Errorf("CheckAddr(%s): got %v, want allowed", a, err)
				}
			}
			for _, a := range tt.denied {
				if err := e.CheckAddr(netip.MustParseAddr(a)); err == nil {
					t.Errorf("CheckAddr(%s): allowed, want denied", a)
				}
			}
		})
	}
}

// TestEgressOwnListeners checks that weir's own listeners are never
// dialed, whatever the ranges allow, and that a listener on an unspecified
// address covers every address of the host on its port.
func TestEgressOwnListeners(t *testing.T) {
	local := func() ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("fd00::5")}, nil
	}
	tests := []struct {
		name    string
		own     string
		allowed []string
		denied  []string
	}{
		{"loopback", "127.0.0.1:14001",
			[]string{"127.0.0.1:14002", "127.0.0.2:14001", "10.0.0.5:14001"},
			[]string{"127.0.0.1:14001", "[::ffff:127.0.0.1]:14001"}},
		{"IPv4 unspecified", "0.0.0.0:443",
			[]string{"10.0.0.6:443", "10.0.0.5:80"},
			[]string{"10.0.0.5:443", "127.0.0.9:443", "[::1]:443", "[fd00::5]:443"}},
		{"IPv6 unspecified", "[::]:8443",
			[]string{"192.168.0.1:8443"},
			[]string{"[::1]:8443", "127.0.0.1:8443", "10.0.0.5:8443"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := mustEgress(t, EgressConfig{AllowedCIDRs: []string{"0.0.0.0/0", "::/0"}}, tt.own)
			e.localAddrs = local
			for _, a := range tt.allowed {
				if err := e.CheckDial(netip.MustParseAddrPort(a)); err != nil {
					t.Errorf("CheckDial(%s): got %v, want allowed", a, err)
				}
			}
			for _, a := range tt.denied {
				err := e.CheckDial(netip.MustParseAddrPort(a))
				if err == nil || !strings.Contains(err.Error(), "weir's own listeners") {
					t.Errorf("CheckDial(%s): got %v, want refused as weir's own listener", a, err)
				}
			}
		})
	}
	// Interfaces that cannot be read: every address is taken as local.
	e := mustEgress(t, EgressConfig{}, "0.0.0.0:443")
	e.localAddrs = func() ([]netip.Addr, error) { return nil, errors.New("no interfaces") }
	if err := e.CheckDial(netip.MustParseAddrPort("192.168.7.7:443")); err == nil {
		t.Error("CheckDial with unreadable interfaces: allowed, want refused")
	}
}

// TestGuardedDial checks the one place every validation connection goes
// through: a refused address, a host name (which a dialer would resolve
// again, after the check) and a zoned address never reach the dialer.
func TestGuardedDial(t *testing.T) {
	var dialed []string
	fake := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return nil, errors.New("fake dialer")
	}
	dial := guardedDial(mustEgress(t, EgressConfig{}, "127.0.0.1:14001"), fake)
	for _, addr := range []string{
		"169.254.169.254:80", "[fd00:ec2::254]:80", "[::ffff:169.254.169.254]:443",
		"metadata.google.internal:80", "localhost:80", "[fe80::1%lo]:80", "127.0.0.1:14001", "0.0.0.0:80",
	} {
		_, err := dial(t.Context(), "tcp", addr)
		if err == nil || err.Error() == "fake dialer" {
			t.Errorf("dial(%s): got %v, want refused by the egress policy", addr, err)
		}
	}
	if len(dialed) != 0 {
		t.Errorf("the dialer was called for %v, want never", dialed)
	}
	if _, err := dial(t.Context(), "tcp", "127.0.0.1:80"); err == nil || err.Error() != "fake dialer" {
		t.Errorf("dial(127.0.0.1:80): got %v, want the dialer's own error", err)
	}
	if want := []string{"127.0.0.1:80"}; len(dialed) != 1 || dialed[0] != want[0] {
		t.Errorf("dialed %v, want %v", dialed, want)
	}
}

// TestEgressConfigValidate checks that every bad entry is reported with
// its key.
func TestEgressConfigValidate(t *testing.T) {
	err := EgressConfig{Default: "maybe", AllowedCIDRs: []string{"10.0.0.0/8", "10.0.0.0/33"}, DeniedCIDRs: []string{"example.com"}}.Validate()
	for _, want := range []string{
		`challenges.egress.default: "maybe" must be allow or deny`,
		`challenges.egress.allowed-cidrs[1]: "10.0.0.0/33"`,
		`challenges.egress.denied-cidrs[0]: "example.com"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: got %v, want it to contain %q", err, want)
		}
	}
	if err := (EgressConfig{Default: "deny", AllowedCIDRs: []string{"10.0.0.1", "fd00::/8"}}).Validate(); err != nil {
		t.Errorf("Validate of a good config: %v", err)
	}
	if _, err := New(Config{Egress: EgressConfig{Default: "nope"}}); err == nil {
		t.Error("New with a bad egress config: got nil error")
	}
}
