// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"slices"
	"strings"
	"testing"
)

func dns(v string) Identifier { return Identifier{Type: IdentifierDNS, Value: v} }
func ip(v string) Identifier  { return Identifier{Type: IdentifierIP, Value: v} }

func TestCanonicalIdentifier(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	// 4 labels of 63 plus 3 dots = 255 bytes; trimmed to fit 253.
	name253 := label63 + "." + label63 + "." + label63 + "." + strings.Repeat("a", 61)
	name254 := name253 + "a"

	tests := []struct {
		name     string
		in       Identifier
		want     Identifier // compared when wantProb is ""
		wantProb ProblemType
	}{
		// DNS names: valid.
		{name: "plain", in: dns("example.com"), want: dns("example.com")},
		{name: "lowercased", in: dns("WWW.Example.COM"), want: dns("www.example.com")},
		{name: "trailing dot", in: dns("example.com."), want: dns("example.com")},
		{name: "single label", in: dns("localhost"), want: dns("localhost")},
		{name: "digits and hyphens", in: dns("a-1.0-9.example"), want: dns("a-1.0-9.example")},
		{name: "all-numeric inner label", in: dns("123.example.com"), want: dns("123.example.com")},
		{name: "A-label", in: dns("xn--bcher-kva.example"), want: dns("xn--bcher-kva.example")},
		{name: "63-byte label", in: dns(label63 + ".com"), want: dns(label63 + ".com")},
		{name: "253 bytes", in: dns(name253), want: dns(name253)},
		{name: "253 bytes plus trailing dot", in: dns(name253 + "."), want: dns(name253)},
		{name: "wildcard", in: dns("*.example.com"), want: dns("*.example.com")},
		{name: "wildcard uppercase", in: dns("*.EXAMPLE.com."), want: dns("*.example.com")},
		{name: "wildcard over three labels", in: dns("*.a.example.com"), want: dns("*.a.example.com")},

		// DNS names: invalid.
		{name: "empty", in: dns(""), wantProb: ProbMalformed},
		{name: "only a dot", in: dns("."), wantProb: ProbMalformed},
		{name: "two trailing dots", in: dns("example.com.."), wantProb: ProbMalformed},
		{name: "leading dot", in: dns(".example.com"), wantProb: ProbMalformed},
		{name: "empty label", in: dns("a..b.test"), wantProb: ProbMalformed},
		{name: "underscore", in: dns("bad_name.test"), wantProb: ProbMalformed},
		{name: "leading hyphen", in: dns("-x.test"), wantProb: ProbMalformed},
		{name: "trailing hyphen", in: dns("x-.test"), wantProb: ProbMalformed},
		{name: "hyphens 3-4 not xn", in: dns("ab--cd.test"), wantProb: ProbRejectedIdentifier},
		{name: "64-byte label", in: dns(label63 + "a.com"), wantProb: ProbMalformed},
		{name: "254 bytes", in: dns(name254), wantProb: ProbMalformed},
		{name: "space", in: dns("a b.test"), wantProb: ProbMalformed},
		{name: "U-label", in: dns("bücher.example"), wantProb: ProbMalformed},
		{name: "Kelvin sign folds to k", in: dns("\u212a.test"), wantProb: ProbMalformed},
		{name: "invalid UTF-8", in: dns("a\xff.test"), wantProb: ProbMalformed},
		{name: "NUL byte", in: dns("a\x00.test"), wantProb: ProbMalformed},
		{name: "numeric TLD", in: dns("example.123"), wantProb: ProbMalformed},
		{name: "IPv4 as dns", in: dns("192.0.2.1"), wantProb: ProbMalformed},
		{name: "IPv6 as dns", in: dns("2001:db8::1"), wantProb: ProbMalformed},
		{name: "IPv4 as dns trailing dot", in: dns("192.0.2.1."), wantProb: ProbMalformed},
		{name: "URL", in: dns("https://example.com/"), wantProb: ProbMalformed},
		{name: "port", in: dns("example.com:443"), wantProb: ProbMalformed},

		// Wildcards: invalid.
		{name: "bare wildcard", in: dns("*"), wantProb: ProbMalformed},
		{name: "wildcard over a TLD", in: dns("*.com"), wantProb: ProbMalformed},
		{name: "wildcard dot only", in: dns("*."), wantProb: ProbMalformed},
		{name: "double wildcard", in: dns("*.*.example.com"), wantProb: ProbMalformed},
		{name: "wildcard not leftmost", in: dns("a.*.example.com"), wantProb: ProbMalformed},
		{name: "partial wildcard", in: dns("a*.example.com"), wantProb: ProbMalformed},
		{name: "wildcard suffix", in: dns("example.*"), wantProb: ProbMalformed},
		{name: "wildcard over an IP", in: dns("*.192.0.2.1"), wantProb: ProbMalformed},

		// IP addresses.
		{name: "IPv4", in: ip("192.0.2.1"), want: ip("192.0.2.1")},
		{name: "IPv6 shortened", in: ip("2001:0db8:0000:0000:0000:0000:0000:0001"), want: ip("2001:db8::1")},
		{name: "IPv6 uppercase", in: ip("2001:DB8::A"), want: ip("2001:db8::a")},
		{name: "IPv4-mapped IPv6", in: ip("::ffff:192.0.2.1"), want: ip("192.0.2.1")},
		{name: "IPv4-mapped IPv6 hex", in: ip("::ffff:c000:0201"), want: ip("192.0.2.1")},
		{name: "IPv4-compatible stays v6", in: ip("::192.0.2.1"), want: ip("::c000:201")},
		{name: "loopback v6", in: ip("::1"), want: ip("::1")},
		{name: "IPv6 zone", in: ip("fe80::1%eth0"), wantProb: ProbMalformed},
		{name: "IPv4-mapped with zone", in: ip("::ffff:192.0.2.1%1"), wantProb: ProbMalformed},
		{name: "IPv4 leading zero", in: ip("192.0.2.01"), wantProb: ProbMalformed},
		{name: "IPv4 short", in: ip("192.0.2"), wantProb: ProbMalformed},
		{name: "CIDR", in: ip("192.0.2.0/24"), wantProb: ProbMalformed},
		{name: "IP with brackets", in: ip("[::1]"), wantProb: ProbMalformed},
		{name: "IP empty", in: ip(""), wantProb: ProbMalformed},
		{name: "IP given a name", in: ip("example.com"), wantProb: ProbMalformed},
		{name: "IP with spaces", in: ip(" 192.0.2.1"), wantProb: ProbMalformed},

		// Types.
		{name: "no type", in: Identifier{Value: "example.com"}, wantProb: ProbMalformed},
		{name: "email type", in: Identifier{Type: "email", Value: "a@example.com"}, wantProb: ProbUnsupportedIdentifier},
		{name: "uppercase DNS type", in: Identifier{Type: "DNS", Value: "example.com"}, wantProb: ProbUnsupportedIdentifier},
		{name: "permanent-identifier", in: Identifier{Type: "permanent-identifier", Value: "x"}, wantProb: ProbUnsupportedIdentifier},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, prob := canonicalIdentifier(tt.in)
			if tt.wantProb != "" {
				if prob == nil {
					t.Fatalf("canonicalIdentifier(%+v) = %+v, nil; want a %s problem", tt.in, got, tt.wantProb)
				}
				if prob.Type != tt.wantProb || prob.Status != 400 || prob.Detail == "" {
					t.Errorf("canonicalIdentifier(%+v) problem = %s (status %d); want %s, 400", tt.in, prob, prob.Status, tt.wantProb)
				}
				if tt.in.Type != "" && (prob.Identifier == nil || *prob.Identifier != tt.in) {
					t.Errorf("problem identifier = %v; want the input %+v", prob.Identifier, tt.in)
				}
				return
			}
			if prob != nil {
				t.Fatalf("canonicalIdentifier(%+v) problem = %v; want %+v", tt.in, prob, tt.want)
			}
			if got != tt.want {
				t.Errorf("canonicalIdentifier(%+v) = %+v; want %+v", tt.in, got, tt.want)
			}
			again, prob := canonicalIdentifier(got)
			if prob != nil || again != got {
				t.Errorf("not idempotent: canonicalIdentifier(%+v) = %+v, %v", got, again, prob)
			}
		})
	}
}

// TestCanonicalIdentifierIDNA: every reserved LDH label (hyphens in the
// third and fourth positions) must be a valid A-label, in the base name of
// a wildcard too; an invalid one is rejectedIdentifier naming the label.
func TestCanonicalIdentifierIDNA(t *testing.T) {
	tests := []struct {
		in     string
		want   string // the canonical name; "" when refused
		detail string // in the problem's detail when refused
		// malformed: refused by the LDH syntax before IDNA applies
		// (the Punycode of a label that is all ASCII ends in "-").
		malformed bool
	}{
		{in: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
		{in: "XN--BCHER-KVA.Example", want: "xn--bcher-kva.example"},
		{in: "*.xn--bcher-kva.example", want: "*.xn--bcher-kva.example"},
		{in: "www.xn--j6w193g", want: "www.xn--j6w193g"},         // 香港, a CJK TLD
		{in: "xn--mgbh0fb.example", want: "xn--mgbh0fb.example"}, // مثال, right-to-left
		{in: "xn--zca.example", want: "xn--zca.example"},         // ß, not mapped to ss (non-transitional)
		{in: "xn--55555555.example", detail: `label "xn--55555555"`},
		{in: "XN--55555555.example", detail: `label "xn--55555555"`},
		{in: "*.xn--55555555.example", detail: `label "xn--55555555"`},
		{in: "a.xn--55555555", detail: `label "xn--55555555"`},
		{in: "xn--a.example", detail: `label "xn--a"`}, // decodes to U+0080, a control
		{in: "xn--.example", detail: `label "xn--" starts or ends with a hyphen`, malformed: true},
		{in: "xn--abc-.example", detail: `label "xn--abc-" starts or ends with a hyphen`, malformed: true},
		{in: "xn--a-ecp.example", detail: `label "xn--a-ecp"`},       // U+2488, disallowed
		{in: "xn--ssa.example", detail: `label "xn--ssa"`},           // starts with a combining mark
		{in: "xn--ss-dha.example", detail: `label "xn--ss-dha"`},     // Ò: upper case, a mapped code point
		{in: "xn--cafe-yvc.example", detail: `label "xn--cafe-yvc"`}, // e and U+0301: not NFC
		{in: "1abc.xn--mgbh0fb.example", detail: "bidi rule"},        // RFC 5893 across labels
		{in: "ab--cd.example", detail: `label "ab--cd"`},             // reserved, not xn--
		{in: "*.ab--cd.example", detail: `label "ab--cd"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, prob := canonicalIdentifier(dns(tt.in))
			if tt.want != "" {
				if prob != nil || got != dns(tt.want) {
					t.Fatalf("got %+v, %v; want %s", got, prob, tt.want)
				}
				return
			}
			want := ProbRejectedIdentifier
			if tt.malformed {
				want = ProbMalformed
			}
			if prob == nil {
				t.Fatalf("got %+v, nil; want %s", got, want)
			}
			if prob.Type != want || prob.Status != 400 || !strings.Contains(prob.Detail, tt.detail) {
				t.Errorf("got %s %d %q; want %s 400 with %q", prob.Type, prob.Status, prob.Detail, want, tt.detail)
			}
			if prob.Identifier == nil || *prob.Identifier != dns(tt.in) {
				t.Errorf("problem identifier = %v; want %q", prob.Identifier, tt.in)
			}
		})
	}
}

func TestCanonicalIdentifiers(t *testing.T) {
	t.Run("sorted and deduplicated", func(t *testing.T) {
		got, prob := canonicalIdentifiers([]Identifier{
			dns("b.test"), ip("::ffff:10.0.0.1"), dns("A.test."), dns("a.test"), ip("10.0.0.1"), dns("*.a.test"),
		})
		if prob != nil {
			t.Fatal(prob)
		}
		want := []Identifier{dns("*.a.test"), dns("a.test"), dns("b.test"), ip("10.0.0.1")}
		if !slices.Equal(got, want) {
			t.Errorf("got %+v; want %+v", got, want)
		}
	})
	t.Run("one bad identifier is the problem itself", func(t *testing.T) {
		_, prob := canonicalIdentifiers([]Identifier{dns("ok.test"), {Type: "email", Value: "x"}})
		if prob == nil || prob.Type != ProbUnsupportedIdentifier || len(prob.Subproblems) != 0 {
			t.Fatalf("got %v; want a single unsupportedIdentifier problem", prob)
		}
	})
	t.Run("several bad identifiers are subproblems", func(t *testing.T) {
		bad := []Identifier{dns("bad_name.test"), dns("-x.test"), dns("a..b.test")}
		_, prob := canonicalIdentifiers(append([]Identifier{dns("ok.test")}, bad...))
		if prob == nil || prob.Type != ProbMalformed {
			t.Fatalf("got %v; want malformed", prob)
		}
		if len(prob.Subproblems) != len(bad) {
			t.Fatalf("got %d subproblems; want %d", len(prob.Subproblems), len(bad))
		}
		for i, sp := range prob.Subproblems {
			if sp.Identifier == nil || *sp.Identifier != bad[i] {
				t.Errorf("subproblem %d identifier = %v; want %+v", i, sp.Identifier, bad[i])
			}
		}
	})
}

// TestSplitWildcard: a "*." DNS name is authorized by its base name
// (RFC 8555 §7.1.3), and the authorization's Name gives the name back.
func TestSplitWildcard(t *testing.T) {
	for _, tc := range []struct {
		id       Identifier
		base     Identifier
		wildcard bool
	}{
		{dns("*.example.com"), dns("example.com"), true},
		{dns("example.com"), dns("example.com"), false},
		{dns("a.*.example.com"), dns("a.*.example.com"), false},
		{ip("192.0.2.1"), ip("192.0.2.1"), false},
	} {
		base, wildcard := tc.id.SplitWildcard()
		if base != tc.base || wildcard != tc.wildcard {
			t.Errorf("%v: %v, %t; want %v, %t", tc.id, base, wildcard, tc.base, tc.wildcard)
		}
		a := &Authorization{Identifier: base, Wildcard: wildcard}
		if a.Name() != tc.id.Value {
			t.Errorf("%v: the authorization's name is %q", tc.id, a.Name())
		}
	}
}
