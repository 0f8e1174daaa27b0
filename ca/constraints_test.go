// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/elliptic"
	"crypto/x509"
	"net"
	"testing"
)

func mustCIDR(t *testing.T, s string) *net.IPNet {
	t.Helper()
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// verifies reports whether Go's verifier accepts the leaf under h (which
// enforces the CA certificates' name constraints), with the error.
func verifies(h *Hierarchy, leaf *x509.Certificate) error {
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(h.Root)
	inter.AddCert(h.Intermediate)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: testNow()})
	return err
}

// TestNameConstraints: a constrained hierarchy carries the constraints,
// critical, on the root and the intermediate; PermitsDNS and PermitsIP
// agree with Go's verifier on leaves the CA signs; an unconstrained one
// permits everything.
func TestNameConstraints(t *testing.T) {
	nc := NameConstraints{
		PermittedDNS: []string{"corp.example", "localhost", ".svc.example"},
		ExcludedDNS:  []string{"secret.corp.example"},
		PermittedIPs: []*net.IPNet{mustCIDR(t, "10.0.0.0/8"), mustCIDR(t, "::1/128")},
	}
	h, err := GenerateConstrainedHierarchy("Weir Test", testNow(), nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*x509.Certificate{h.Root, h.Intermediate} {
		if !c.PermittedDNSDomainsCritical || len(c.PermittedDNSDomains) != 3 || len(c.ExcludedDNSDomains) != 1 ||
			len(c.PermittedIPRanges) != 2 {
			t.Errorf("%s: constraints %v / %v / %v, critical %t", c.Subject.CommonName,
				c.PermittedDNSDomains, c.ExcludedDNSDomains, c.PermittedIPRanges, c.PermittedDNSDomainsCritical)
		}
	}
	if !h.Constrained() {
		t.Error("Constrained() = false")
	}
	issuer, err := New(testConfig(), h, testNow)
	if err != nil {
		t.Fatal(err)
	}
	key := newECKey(t, elliptic.P256())
	for _, tc := range []struct {
		dns  string
		ip   string
		want bool
	}{
		{dns: "corp.example", want: true},
		{dns: "a.b.corp.example", want: true},
		{dns: "*.a.corp.example", want: true},
		// The wildcard covers secret.corp.example, which is excluded.
		{dns: "*.corp.example", want: false},
		{dns: "localhost", want: true},
		{dns: "www.example.com", want: false},
		{dns: "corp.example.evil", want: false},
		{dns: "xcorp.example", want: false},
		{dns: "secret.corp.example", want: false},
		{dns: "db.secret.corp.example", want: false},
		{dns: "*.secret.corp.example", want: false},
		{dns: "api.svc.example", want: true},
		{dns: "svc.example", want: false}, // ".svc.example" covers the names under it only
		{ip: "10.1.2.3", want: true},
		{ip: "::1", want: true},
		{ip: "192.168.1.1", want: false},
		{ip: "::2", want: false},
	} {
		req := IssueRequest{PublicKey: key.Public()}
		var got bool
		name := tc.dns + tc.ip
		if tc.dns != "" {
			req.DNSNames = []string{tc.dns}
			got = h.PermitsDNS(tc.dns)
		} else {
			ip := net.ParseIP(tc.ip)
			req.IPAddresses = []net.IP{ip}
			got = h.PermitsIP(ip)
		}
		if got != tc.want {
			t.Errorf("%s: Permits = %t, want %t", name, got, tc.want)
		}
		iss, err := issuer.Issue(req)
		if err != nil {
			t.Fatalf("%s: Issue: %v", name, err)
		}
		verr := verifies(h, iss.Cert)
		if (verr == nil) != tc.want {
			t.Errorf("%s: Go's verifier says %v; want it to accept: %t", name, verr, tc.want)
		}
	}

	// Constraints on IP ranges alone permit no DNS name.
	ipOnly, err := GenerateConstrainedHierarchy("Weir Test", testNow(), NameConstraints{PermittedIPs: []*net.IPNet{mustCIDR(t, "10.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	if ipOnly.PermitsDNS("corp.example") || !ipOnly.PermitsIP(net.ParseIP("10.0.0.1")) {
		t.Error("an IP-only hierarchy must permit its IP range and no DNS name")
	}
	// Constraints on DNS names alone permit no IP address.
	dnsOnly, err := GenerateConstrainedHierarchy("Weir Test", testNow(), NameConstraints{PermittedDNS: []string{"corp.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if !dnsOnly.PermitsDNS("a.corp.example") || dnsOnly.PermitsIP(net.ParseIP("10.0.0.1")) || dnsOnly.PermitsIP(net.ParseIP("::1")) {
		t.Error("a DNS-only hierarchy must permit its domains and no IP address")
	}

	plain := newTestHierarchy(t)
	if plain.Constrained() || !plain.PermitsDNS("www.example.com") || !plain.PermitsIP(net.ParseIP("192.168.1.1")) {
		t.Error("an unconstrained hierarchy must permit every name")
	}
	for _, bad := range []NameConstraints{{PermittedDNS: []string{"*.corp.example"}}, {ExcludedDNS: []string{"Corp.Example"}}, {PermittedDNS: []string{""}}} {
		if _, err := GenerateConstrainedHierarchy("Weir Test", testNow(), bad); err == nil {
			t.Errorf("GenerateConstrainedHierarchy accepted %+v", bad)
		}
	}
}
