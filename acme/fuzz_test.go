// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// FuzzCanonicalIdentifier: canonicalIdentifier never panics, a failure is
// a malformed or unsupportedIdentifier problem (or rejectedIdentifier for
// a DNS name that is not valid IDNA), and a success is canonical:
// idempotent, and for DNS lowercase LDH of at most 253 bytes with no
// trailing dot, only ASCII-lowercased from the input, whose reserved
// labels are A-labels that round-trip.
func FuzzCanonicalIdentifier(f *testing.F) {
	for _, s := range []struct{ typ, value string }{
		{"dns", "example.com"}, {"dns", "WWW.Example.COM."}, {"dns", "*.example.com"},
		{"dns", "*.*.example.com"}, {"dns", "a..b.test"}, {"dns", "-x.test"}, {"dns", "bad_name.test"},
		{"dns", "xn--bcher-kva.example"}, {"dns", "ab--cd.test"}, {"dns", "example.123"},
		{"dns", "xn--55555555.example"}, {"dns", "*.XN--Bcher-kva.example"}, {"dns", "1abc.xn--mgbh0fb.example"},
		{"dns", "xn--cafe-yvc.test"}, {"dns", "xn--a.test"},
		{"dns", "192.0.2.1"}, {"dns", "*.192.0.2.1"}, {"dns", "\u212a.test"}, {"dns", "bücher.de"},
		{"dns", strings.Repeat("a.", 126) + "com"}, {"dns", strings.Repeat("a", 64) + ".com"}, {"dns", ""},
		{"ip", "192.0.2.1"}, {"ip", "::ffff:192.0.2.1"}, {"ip", "2001:DB8::1"}, {"ip", "fe80::1%eth0"},
		{"ip", "::192.0.2.1"}, {"ip", "1.2.3.04"}, {"ip", ""},
		{"", "example.com"}, {"email", "a@b.test"}, {"DNS", "example.com"},
	} {
		f.Add(s.typ, s.value)
	}
	f.Fuzz(func(t *testing.T, typ, value string) {
		in := Identifier{Type: IdentifierType(typ), Value: value}
		out, prob := canonicalIdentifier(in)
		if prob != nil {
			notIDNA := typ == "dns" && prob.Type == ProbRejectedIdentifier
			if prob.Type != ProbMalformed && prob.Type != ProbUnsupportedIdentifier && !notIDNA {
				t.Fatalf("canonicalIdentifier(%q) problem type %s", in, prob.Type)
			}
			if prob.Status != 400 || prob.Detail == "" {
				t.Fatalf("canonicalIdentifier(%q) problem %+v lacks status or detail", in, prob)
			}
			if typ != "dns" && typ != "ip" && typ != "" && prob.Type != ProbUnsupportedIdentifier {
				t.Fatalf("unknown type %q gave %s, want unsupportedIdentifier", typ, prob.Type)
			}
			return
		}
		if out.Type != in.Type {
			t.Fatalf("type changed: %q -> %q", in.Type, out.Type)
		}
		again, prob := canonicalIdentifier(out)
		if prob != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, prob)
		}
		switch out.Type {
		case IdentifierDNS:
			checkCanonicalDNS(t, value, out.Value)
		case IdentifierIP:
			a, err := netip.ParseAddr(out.Value)
			if err != nil || a.Zone() != "" || a.Is4In6() || a.String() != out.Value {
				t.Fatalf("IP %q -> %q is not canonical (%v)", value, out.Value, err)
			}
			if orig := netip.MustParseAddr(value); orig.Unmap() != a {
				t.Fatalf("IP %q -> %q is a different address", value, out.Value)
			}
		default:
			t.Fatalf("accepted type %q", out.Type)
		}
	})
}

// checkCanonicalDNS checks a canonical DNS identifier independently of the
// code under test.
func checkCanonicalDNS(t *testing.T, in, out string) {
	t.Helper()
	if want := asciiLower(strings.TrimSuffix(in, ".")); out != want {
		t.Fatalf("DNS %q -> %q; want only ASCII lowercasing and one trailing dot removed (%q)", in, out, want)
	}
	if out == "" || len(out) > 253 || strings.HasSuffix(out, ".") {
		t.Fatalf("DNS %q -> %q: empty, too long or has a trailing dot", in, out)
	}
	labels := strings.Split(out, ".")
	if labels[0] == "*" {
		labels = labels[1:]
		if len(labels) < 2 {
			t.Fatalf("DNS %q -> %q: wildcard over fewer than two labels", in, out)
		}
	}
	if _, err := netip.ParseAddr(strings.Join(labels, ".")); err == nil {
		t.Fatalf("DNS %q -> %q is an IP address", in, out)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			t.Fatalf("DNS %q -> %q: bad label %q", in, out, l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				t.Fatalf("DNS %q -> %q: label %q has %q", in, out, l, c)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		t.Fatalf("DNS %q -> %q: numeric TLD", in, out)
	}
	for _, l := range labels {
		if len(l) < 4 || l[2:4] != "--" {
			continue
		}
		u, err := idna.Lookup.ToUnicode(l)
		if back, err2 := idna.Lookup.ToASCII(u); !strings.HasPrefix(l, "xn--") || err != nil || err2 != nil || back != l {
			t.Fatalf("DNS %q -> %q: reserved label %q is not an A-label that round-trips (%q, %v, %v)", in, out, l, back, err, err2)
		}
	}
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// FuzzCSRIdentifiers: for any bytes that parse as a CSR, csrIdentifiers
// never panics, fails with badCSR, or returns a non-empty, sorted,
// duplicate-free list of canonical identifiers that are exactly the
// canonical forms of the CSR's SANs, for a CSR whose signature verifies
// and uses neither MD5 nor SHA-1.
func FuzzCSRIdentifiers(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	for _, tmpl := range []*x509.CertificateRequest{
		{DNSNames: []string{"b.example.com", "A.example.com", "a.example.com."}},
		{DNSNames: []string{"*.example.com", "example.com"}, Subject: pkix.Name{CommonName: "Example.com"}},
		{IPAddresses: []net.IP{net.ParseIP("192.0.2.1"), net.ParseIP("::ffff:192.0.2.1"), net.ParseIP("2001:db8::1")}},
		{DNSNames: []string{"x.test"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}, Subject: pkix.Name{CommonName: "10.0.0.1"}},
		{DNSNames: []string{"x.test"}, Subject: pkix.Name{CommonName: "other.test"}},
		{DNSNames: []string{"bad_name.test"}},
		{Subject: pkix.Name{CommonName: "only-cn.test"}},
		{EmailAddresses: []string{"a@b.test"}, DNSNames: []string{"x.test"}},
		{DNSNames: []string{"xn--55555555.test", "xn--bcher-kva.test"}},
		{DNSNames: []string{"sha1.test"}, SignatureAlgorithm: x509.ECDSAWithSHA1},
	} {
		der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(der)
		// A copy with a broken signature.
		bad := slices.Clone(der)
		bad[len(bad)-1] ^= 1
		f.Add(bad)
	}
	f.Add([]byte{})
	f.Add([]byte{0x30, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		csr, err := x509.ParseCertificateRequest(der)
		if err != nil {
			return
		}
		ids, prob := csrIdentifiers(csr)
		if prob != nil {
			if prob.Type != ProbBadCSR || prob.Status != 400 || prob.Detail == "" {
				t.Fatalf("csrIdentifiers problem = %+v; want badCSR, 400, a detail", prob)
			}
			return
		}
		if len(ids) == 0 {
			t.Fatal("csrIdentifiers returned no identifiers and no problem")
		}
		if csr.CheckSignature() != nil {
			t.Fatal("csrIdentifiers accepted a CSR whose signature does not verify")
		}
		switch csr.SignatureAlgorithm {
		case x509.MD2WithRSA, x509.MD5WithRSA, x509.SHA1WithRSA, x509.DSAWithSHA1, x509.ECDSAWithSHA1:
			t.Fatalf("csrIdentifiers accepted a CSR signed with %s", csr.SignatureAlgorithm)
		}
		if len(csr.EmailAddresses) > 0 || len(csr.URIs) > 0 {
			t.Fatal("csrIdentifiers accepted e-mail or URI SANs")
		}
		sorted := slices.IsSortedFunc(ids, func(a, b Identifier) int {
			if c := strings.Compare(string(a.Type), string(b.Type)); c != 0 {
				return c
			}
			return strings.Compare(a.Value, b.Value)
		})
		if !sorted {
			t.Fatalf("identifiers not sorted: %q", ids)
		}
		for i, id := range ids {
			c, p := canonicalIdentifier(id)
			if p != nil || c != id {
				t.Fatalf("identifier %q is not canonical: %q, %v", id, c, p)
			}
			if i > 0 && ids[i-1] == id {
				t.Fatalf("duplicate identifier %q", id)
			}
		}
		// Exactly the SANs, canonicalised.
		want := map[Identifier]bool{}
		for _, n := range csr.DNSNames {
			c, p := canonicalIdentifier(Identifier{Type: IdentifierDNS, Value: n})
			if p != nil {
				t.Fatalf("accepted a CSR with the invalid DNS SAN %q", n)
			}
			want[c] = true
		}
		for _, a := range csr.IPAddresses {
			c, p := canonicalIdentifier(Identifier{Type: IdentifierIP, Value: a.String()})
			if p != nil {
				t.Fatalf("accepted a CSR with the invalid IP SAN %v", a)
			}
			want[c] = true
		}
		if len(want) != len(ids) {
			t.Fatalf("identifiers %q; want the %d distinct SANs", ids, len(want))
		}
		for _, id := range ids {
			if !want[id] {
				t.Fatalf("identifier %q is not a SAN of the CSR", id)
			}
		}
	})
}
