// SPDX-License-Identifier: Apache-2.0

package server

import (
	"slices"
	"testing"
)

// TestServerNames: weir's own HTTPS certificate names loopback, the host
// name, the listen host and the external URL's host.
func TestServerNames(t *testing.T) {
	for _, tc := range []struct {
		listen, external string
		wantDNS          []string
		wantIP           []string
	}{
		{"localhost:14000", "", []string{"localhost"}, []string{"127.0.0.1", "::1"}},
		{"0.0.0.0:14000", "https://ca.corp.example:8443", []string{"localhost", "ca.corp.example"}, []string{"127.0.0.1", "::1"}},
		{"10.1.2.3:14000", "https://10.1.2.3:14000", []string{"localhost"}, []string{"127.0.0.1", "::1", "10.1.2.3"}},
		{":14000", "https://[2001:db8::7]/", []string{"localhost"}, []string{"127.0.0.1", "::1", "2001:db8::7"}},
		{"acme.internal:443", "https://ACME.internal", []string{"localhost", "acme.internal"}, []string{"127.0.0.1", "::1"}},
	} {
		dns, ips := serverNames(tc.listen, tc.external)
		// The machine's host name sits after localhost; leave it out.
		dns = slices.DeleteFunc(dns, func(n string) bool { return n != "localhost" && !slices.Contains(tc.wantDNS, n) })
		var gotIPs []string
		for _, ip := range ips {
			gotIPs = append(gotIPs, ip.String())
		}
		if !slices.Equal(dns, tc.wantDNS) || !slices.Equal(gotIPs, tc.wantIP) {
			t.Errorf("serverNames(%q, %q) = %v %v, want %v %v", tc.listen, tc.external, dns, gotIPs, tc.wantDNS, tc.wantIP)
		}
	}
}
