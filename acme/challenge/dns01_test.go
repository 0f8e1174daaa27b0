// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"net"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

func TestKeyAuthorizationDigest(t *testing.T) {
	// SHA-256("abc") is ba7816bf...f20015ad (FIPS 180-2 appendix B.1).
	if got, want := KeyAuthorizationDigest("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"; got != want {
		t.Errorf("KeyAuthorizationDigest(abc): got %q, want %q", got, want)
	}
}

func TestDNS01(t *testing.T) {
	dns := startDNS(t)
	digest := KeyAuthorizationDigest(testKeyAuth)
	dns.SetTXT("_acme-challenge.ok.test", "unrelated", digest, "v=spf1 -all")
	dns.SetTXT("_acme-challenge.WILD.test", digest)
	dns.SetTXT("_acme-challenge.wrong.test", "abc", "def")
	dns.SetTXT("_acme-challenge.one-wrong.test", digest+"x")
	dns.SetA("_acme-challenge.nx.test")
	tests := []struct {
		name   string
		ident  acme.Identifier
		want   acme.ProblemType
		detail string
	}{
		{name: "one of several right", ident: dnsIdent("ok.test")},
		{name: "case-insensitive base name of a wildcard", ident: dnsIdent("wild.TEST")},
		{name: "wrong values", ident: dnsIdent("wrong.test"), want: acme.ProbUnauthorized,
			detail: `Incorrect TXT record "abc" (and 1 more) found at _acme-challenge.wrong.test`},
		{name: "one wrong value", ident: dnsIdent("one-wrong.test"), want: acme.ProbUnauthorized,
			detail: `Incorrect TXT record "` + digest + `x" found at _acme-challenge.one-wrong.test`},
		{name: "none", ident: dnsIdent("none.test"), want: acme.ProbUnauthorized,
			detail: "No TXT record found at _acme-challenge.none.test"},
		{name: "NXDOMAIN", ident: dnsIdent("nx.test"), want: acme.ProbUnauthorized,
			detail: "No TXT record found at _acme-challenge.nx.test"},
		{name: "ip identifier", ident: ipIdent("127.0.0.1"), want: acme.ProbMalformed,
			detail: "RFC 8738 §7"},
	}
	v := newValidator(t, dns, Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validate(t, v, request(acme.ChallengeDNS01, tc.ident))
			checkProblem(t, p, tc.ident, tc.want, tc.detail)
		})
	}
}

// TestDNS01Timeout points the resolver at a UDP socket that never answers.
func TestDNS01Timeout(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("ListenPacket: %v", err)
	}
	defer pc.Close()
	v, err := New(Config{Resolver: pc.LocalAddr().String(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, typ := range []acme.ChallengeType{acme.ChallengeDNS01, acme.ChallengeHTTP01} {
		ident := dnsIdent("slow.test")
		start := time.Now()
		p := validate(t, v, request(typ, ident))
		checkProblem(t, p, ident, acme.ProbDNS, "DNS problem: timeout looking up")
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v, want about the 300ms timeout", typ, d)
		}
	}
}
