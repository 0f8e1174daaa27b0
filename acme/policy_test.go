// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"strings"
	"testing"
)

func TestPolicyCheck(t *testing.T) {
	tests := []struct {
		name   string
		cfg    PolicyConfig
		id     Identifier
		reject bool   // want a rejectedIdentifier problem
		detail string // substring of the problem detail when rejected
	}{
		// No policy: every DNS name, no IP.
		{name: "empty policy allows a name", id: dns("example.com")},
		{name: "empty policy allows a wildcard", id: dns("*.example.com")},
		{name: "empty policy refuses IPs", id: ip("192.0.2.1"), reject: true, detail: "no IP ranges are allowed"},
		{name: "empty policy refuses IPv6", id: ip("2001:db8::1"), reject: true, detail: "no IP ranges are allowed"},

		// allowed-domains: the domain and its subdomains, on label boundaries.
		{name: "allowed exact", cfg: allow("example.com"), id: dns("example.com")},
		{name: "allowed subdomain", cfg: allow("example.com"), id: dns("a.b.example.com")},
		{name: "allowed wildcard", cfg: allow("example.com"), id: dns("*.example.com")},
		{name: "allowed deep wildcard", cfg: allow("example.com"), id: dns("*.a.example.com")},
		{name: "allowed not a suffix match", cfg: allow("example.com"), id: dns("badexample.com"), reject: true, detail: "allowed-domains"},
		{name: "allowed parent refused", cfg: allow("a.example.com"), id: dns("example.com"), reject: true, detail: "allowed-domains"},
		{name: "allowed sibling refused", cfg: allow("a.example.com"), id: dns("b.example.com"), reject: true},
		{name: "wildcard wider than allowed", cfg: allow("a.example.com"), id: dns("*.example.com"), reject: true},
		{name: "allowed second entry", cfg: allow("example.org", "example.com"), id: dns("x.example.com")},
		{name: "allowed entry normalised", cfg: allow(".Example.COM."), id: dns("x.example.com")},
		{name: "allowed TLD", cfg: allow("test"), id: dns("a.test")},

		// denied-domains: wins over allowed, with subdomains and wildcards.
		{name: "denied exact", cfg: deny("denied.test"), id: dns("denied.test"), reject: true, detail: `denied domain "denied.test"`},
		{name: "denied subdomain", cfg: deny("denied.test"), id: dns("a.denied.test"), reject: true},
		{name: "denied wildcard", cfg: deny("denied.test"), id: dns("*.denied.test"), reject: true},
		{name: "denied deep wildcard", cfg: deny("denied.test"), id: dns("*.a.denied.test"), reject: true},
		{name: "denied not a suffix match", cfg: deny("denied.test"), id: dns("notdenied.test")},
		{name: "denied parent allowed", cfg: deny("a.example.com"), id: dns("example.com")},
		{name: "denied sibling allowed", cfg: deny("a.example.com"), id: dns("b.example.com")},
		// A certificate for *.example.com is valid for a.example.com (RFC
		// 6125 §6.4.3), so it would be a certificate for a denied name.
		{name: "wildcard covering a denied name", cfg: deny("a.example.com"), id: dns("*.example.com"), reject: true, detail: "a.example.com"},
		// ... but not for x.a.example.com: a wildcard matches one label.
		{name: "wildcard above a deeper denied name", cfg: deny("x.a.example.com"), id: dns("*.example.com")},
		{name: "denied wins over allowed", cfg: PolicyConfig{AllowedDomains: []string{"example.com"}, DeniedDomains: []string{"secret.example.com"}}, id: dns("x.secret.example.com"), reject: true, detail: "denied"},
		{name: "allowed beside denied", cfg: PolicyConfig{AllowedDomains: []string{"example.com"}, DeniedDomains: []string{"secret.example.com"}}, id: dns("www.example.com")},
		{name: "denied entry normalised", cfg: deny("DENIED.test."), id: dns("denied.test"), reject: true},

		// allowed-ip-ranges.
		{name: "IP in range", cfg: ipRanges("10.0.0.0/8"), id: ip("10.1.2.3")},
		{name: "IP at range start", cfg: ipRanges("10.0.0.0/8"), id: ip("10.0.0.0")},
		{name: "IP at range end", cfg: ipRanges("10.0.0.0/8"), id: ip("10.255.255.255")},
		{name: "IP outside range", cfg: ipRanges("10.0.0.0/8"), id: ip("11.0.0.0"), reject: true, detail: "not in ca.policy.allowed-ip-ranges"},
		{name: "IP range unmasked in config", cfg: ipRanges("10.1.2.3/8"), id: ip("10.200.0.1")},
		{name: "single address", cfg: ipRanges("192.0.2.7"), id: ip("192.0.2.7")},
		{name: "single address neighbour", cfg: ipRanges("192.0.2.7"), id: ip("192.0.2.8"), reject: true},
		{name: "IPv6 in range", cfg: ipRanges("2001:db8::/32"), id: ip("2001:db8:1::5")},
		{name: "IPv6 outside range", cfg: ipRanges("2001:db8::/32"), id: ip("2001:db9::1"), reject: true},
		{name: "v4 range does not admit v6", cfg: ipRanges("0.0.0.0/0"), id: ip("::1"), reject: true},
		{name: "v6 range does not admit v4", cfg: ipRanges("::/0"), id: ip("127.0.0.1"), reject: true},
		{name: "second range", cfg: ipRanges("10.0.0.0/8", "127.0.0.0/8"), id: ip("127.0.0.1")},
		{name: "IP ranges do not allow names", cfg: PolicyConfig{AllowedDomains: []string{"example.com"}, AllowedIPRanges: []string{"0.0.0.0/0"}}, id: dns("other.test"), reject: true},
		{name: "allowed-domains do not restrict IPs", cfg: PolicyConfig{AllowedDomains: []string{"example.com"}, AllowedIPRanges: []string{"0.0.0.0/0"}}, id: ip("198.51.100.1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPolicy(tt.cfg)
			if err != nil {
				t.Fatalf("NewPolicy(%+v): %v", tt.cfg, err)
			}
			prob := p.check(tt.id)
			switch {
			case !tt.reject && prob != nil:
				t.Fatalf("Check(%+v) = %v; want allowed", tt.id, prob)
			case tt.reject && prob == nil:
				t.Fatalf("Check(%+v) = nil; want rejectedIdentifier", tt.id)
			case tt.reject:
				if prob.Type != ProbRejectedIdentifier || prob.Status != 400 {
					t.Errorf("Check(%+v) = %s (status %d); want rejectedIdentifier, 400", tt.id, prob, prob.Status)
				}
				if prob.Identifier == nil || *prob.Identifier != tt.id {
					t.Errorf("problem identifier = %v; want %+v", prob.Identifier, tt.id)
				}
				if !strings.Contains(prob.Detail, tt.detail) {
					t.Errorf("detail = %q; want it to contain %q", prob.Detail, tt.detail)
				}
			}
		})
	}
}

func TestPolicyCheckUnknownType(t *testing.T) {
	p, err := NewPolicy(PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if prob := p.check(Identifier{Type: "email", Value: "a@b.test"}); prob == nil || prob.Type != ProbUnsupportedIdentifier {
		t.Errorf("Check(email) = %v; want unsupportedIdentifier", prob)
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  PolicyConfig
		want []string // substrings of the error; none means valid
	}{
		{name: "empty", cfg: PolicyConfig{}},
		{name: "valid", cfg: PolicyConfig{
			AllowedDomains:  []string{"example.com", ".example.org", "Example.NET.", "test"},
			DeniedDomains:   []string{"secret.example.com"},
			AllowedIPRanges: []string{"10.0.0.0/8", "192.0.2.1", "2001:db8::/32", "::1"},
		}},
		{name: "wildcard allowed domain", cfg: allow("*.example.com"), want: []string{`ca.policy.allowed-domains[0]: "*.example.com" is not a domain name`}},
		{name: "bad denied domain", cfg: deny("ok.test", "bad_name.test"), want: []string{`ca.policy.denied-domains[1]: "bad_name.test"`}},
		{name: "empty domain", cfg: allow(""), want: []string{"ca.policy.allowed-domains[0]"}},
		{name: "URL as domain", cfg: deny("https://x.test"), want: []string{"ca.policy.denied-domains[0]"}},
		{name: "IP as domain", cfg: allow("192.0.2.1"), want: []string{"ca.policy.allowed-domains[0]"}},
		{name: "bad IP range", cfg: ipRanges("10.0.0.0/8", "10.0.0.0/33"), want: []string{`ca.policy.allowed-ip-ranges[1]: "10.0.0.0/33" is not an IP address or CIDR`}},
		{name: "name as IP range", cfg: ipRanges("localhost"), want: []string{"ca.policy.allowed-ip-ranges[0]"}},
		{name: "every error at once", cfg: PolicyConfig{
			AllowedDomains:  []string{"-a.test"},
			DeniedDomains:   []string{"ok.test", "a..b"},
			AllowedIPRanges: []string{"x"},
		}, want: []string{"ca.policy.allowed-domains[0]", "ca.policy.denied-domains[1]", "ca.policy.allowed-ip-ranges[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v; want nil", err)
				}
				if _, err := NewPolicy(tt.cfg); err != nil {
					t.Fatalf("NewPolicy() = %v; want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil; want errors naming %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q; want it to contain %q", err, w)
				}
			}
			if _, nerr := NewPolicy(tt.cfg); nerr == nil {
				t.Errorf("NewPolicy() = nil error for an invalid config")
			}
		})
	}
}

func allow(d ...string) PolicyConfig    { return PolicyConfig{AllowedDomains: d} }
func deny(d ...string) PolicyConfig     { return PolicyConfig{DeniedDomains: d} }
func ipRanges(r ...string) PolicyConfig { return PolicyConfig{AllowedIPRanges: r} }
