// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/dnstest"
)

const testAccountPrefix = "https://ca.test/acme/account/"

// caaValidator is a Validator with CAA on for the identity
// "weir.internal" (and "Alt.Weir.Internal", to check case folding).
func caaValidator(t *testing.T, dns *dnstest.Server) *Validator {
	t.Helper()
	return newValidator(t, dns, Config{CAA: CAAConfig{Enabled: true,
		Identities: []string{"weir.internal", "Alt.Weir.Internal"}}, AccountURIPrefix: testAccountPrefix})
}

func issue(v string) dnstest.CAA     { return dnstest.CAA{Tag: "issue", Value: v} }
func issueWild(v string) dnstest.CAA { return dnstest.CAA{Tag: "issuewild", Value: v} }

func TestCheckCAA(t *testing.T) {
	dns := startDNS(t)
	// Each case's records live under its own name in caa.test.
	set := map[string][]dnstest.CAA{
		"us.caa.test":           {issue("weir.internal")},
		"case.caa.test":         {issue("  WEIR.internal ; ")},
		"alt.caa.test":          {issue("other.example"), issue("alt.weir.internal")},
		"other.caa.test":        {issue("other.example")},
		"nobody.caa.test":       {issue(";")},
		"malformed.caa.test":    {issue("weir.internal; accounturi")},
		"iodef.caa.test":        {{Tag: "iodef", Value: "mailto:sec@caa.test"}},
		"wild.caa.test":         {issue("other.example"), issueWild("weir.internal")},
		"nowild.caa.test":       {issue("weir.internal"), issueWild(";")},
		"onlyissue.caa.test":    {issue("weir.internal")},
		"acct.caa.test":         {issue("weir.internal; accounturi=" + testAccountPrefix + "42")},
		"acctother.caa.test":    {issue("weir.internal; accounturi=" + testAccountPrefix + "43")},
		"methods.caa.test":      {issue("weir.internal; validationmethods=dns-01,http-01")},
		"methodsonly.caa.test":  {issue("weir.internal; validationmethods=tls-alpn-01")},
		"both.caa.test":         {issue("weir.internal; accounturi=" + testAccountPrefix + "42; validationmethods=dns-01")},
		"drafts.caa.test":       {issue("weir.internal; validationmethods=dns-persist-01,dns-account-01")},
		"persist.caa.test":      {issue("weir.internal; validationmethods=dns-persist-01")},
		"critical.caa.test":     {issue("weir.internal"), {Critical: true, Tag: "tbs", Value: "x"}},
		"noncritical.caa.test":  {issue("weir.internal"), {Tag: "tbs", Value: "x"}},
		"critknown.caa.test":    {issue("weir.internal"), {Critical: true, Tag: "iodef", Value: "mailto:x@caa.test"}},
		"parent.caa.test":       {issue("other.example")},
		"target.elsewhere.test": {issue("other.example")},
		"usparent.caa.test":     {issue("weir.internal")},
		"servfail.caa.test":     {issue("weir.internal")},
	}
	for name, recs := range set {
		dns.SetCAA(name, recs...)
	}
	dns.SetCNAME("alias.caa.test", "target.elsewhere.test")
	dns.SetRCode("servfail.caa.test", dnstest.TypeCAA, dnsmessage.RCodeServerFailure)
	dns.SetRCode("refused.caa.test", dnstest.TypeCAA, dnsmessage.RCodeRefused)
	v := caaValidator(t, dns)

	tests := []struct {
		name     string
		ident    string
		wildcard bool
		account  string
		method   acme.ChallengeType
		detail   string // "" means allowed
	}{
		{name: "no CAA anywhere", ident: "host.nocaa.test"},
		{name: "issue names us", ident: "us.caa.test"},
		{name: "case and spaces do not matter", ident: "case.caa.test"},
		{name: "one of several records names another identity of ours", ident: "alt.caa.test"},
		{name: "issue names another CA", ident: "other.caa.test", detail: `CAA record for other.caa.test prevents issuance: its issue properties authorize other.example, not weir.internal or Alt.Weir.Internal`},
		{name: "issue names no CA", ident: "nobody.caa.test", detail: `authorize ";"`},
		{name: "a malformed value authorizes nobody", ident: "malformed.caa.test", detail: "malformed"},
		{name: "no issue property restricts nothing", ident: "iodef.caa.test"},
		{name: "issuewild names us for a wildcard", ident: "wild.caa.test", wildcard: true},
		{name: "issue does not apply to a wildcard with issuewild", ident: "nowild.caa.test", wildcard: true, detail: "its issuewild properties authorize"},
		{name: "issuewild does not apply to a plain name", ident: "wild.caa.test", detail: "its issue properties authorize other.example"},
		{name: "a wildcard without issuewild falls back to issue", ident: "onlyissue.caa.test", wildcard: true},
		{name: "a wildcard given with its label", ident: "*.wild.caa.test"},
		{name: "accounturi matches", ident: "acct.caa.test", account: "42"},
		{name: "accounturi of another account", ident: "acct.caa.test", account: "7", detail: "is for account " + testAccountPrefix + "42, not " + testAccountPrefix + "7"},
		{name: "accounturi mismatch", ident: "acctother.caa.test", account: "42", detail: "RFC 8657 §3"},
		{name: "validationmethods lists the method", ident: "methods.caa.test", method: acme.ChallengeDNS01},
		{name: "validationmethods lists the other methods", ident: "methods.caa.test", method: acme.ChallengeTLSALPN01, detail: "allows validation methods dns-01,http-01, not tls-alpn-01"},
		{name: "validationmethods of one method", ident: "methodsonly.caa.test", method: acme.ChallengeHTTP01, detail: "RFC 8657 §4"},
		{name: "validationmethods names dns-persist-01", ident: "drafts.caa.test", method: acme.ChallengeDNSPersist01},
		{name: "validationmethods names dns-account-01", ident: "drafts.caa.test", method: acme.ChallengeDNSAccount01},
		{name: "validationmethods without dns-account-01", ident: "persist.caa.test", method: acme.ChallengeDNSAccount01, detail: "allows validation methods dns-persist-01, not dns-account-01"},
		{name: "validationmethods dns-persist-01 does not allow dns-01", ident: "persist.caa.test", method: acme.ChallengeDNS01, detail: "not dns-01"},
		{name: "accounturi and validationmethods both match", ident: "both.caa.test", account: "42", method: acme.ChallengeDNS01},
		{name: "accounturi matches, validationmethods does not", ident: "both.caa.test", account: "42", method: acme.ChallengeHTTP01, detail: "not http-01"},
		{name: "an unknown critical property", ident: "critical.caa.test", detail: `the critical property "tbs"`},
		{name: "an unknown property that is not critical", ident: "noncritical.caa.test"},
		{name: "a known critical property", ident: "critknown.caa.test"},
		{name: "the record on the parent applies", ident: "a.b.parent.caa.test", detail: "CAA record for parent.caa.test prevents issuance"},
		{name: "the closest record wins", ident: "x.usparent.caa.test"},
		{name: "a CNAME's target's records apply", ident: "alias.caa.test", detail: "CAA record for alias.caa.test prevents issuance: its issue properties authorize other.example"},
		{name: "SERVFAIL refuses", ident: "servfail.caa.test", detail: "CAA lookup for servfail.caa.test failed: SERVFAIL"},
		{name: "SERVFAIL on the parent refuses", ident: "www.servfail.caa.test", detail: "SERVFAIL for the CAA query of servfail.caa.test"},
		{name: "REFUSED refuses", ident: "refused.caa.test", detail: "REFUSED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = acme.ChallengeHTTP01
			}
			account := tc.account
			if account == "" {
				account = "1"
			}
			p := v.CheckCAA(t.Context(), acme.CAARequest{Identifier: dnsIdent(tc.ident), Wildcard: tc.wildcard, AccountID: acme.AccountID(account), Method: method})
			switch {
			case tc.detail == "" && p != nil:
				t.Errorf("refused: %v, want allowed", p)
			case tc.detail != "" && p == nil:
				t.Errorf("allowed, want a caa problem containing %q", tc.detail)
			case p != nil:
				if p.Type != acme.ProbCAA || !strings.Contains(p.Detail, tc.detail) {
					t.Errorf("got %s %q, want caa containing %q", p.Type, p.Detail, tc.detail)
				}
				if p.Identifier == nil || p.Identifier.Value != tc.ident {
					t.Errorf("identifier %+v, want %s", p.Identifier, tc.ident)
				}
			}
		})
	}
}

func TestCheckCAADisabledAndIP(t *testing.T) {
	dns := startDNS(t)
	dns.SetCAA("other.caa.test", issue("other.example"))
	dns.SetRCode("ip.caa.test", dnstest.TypeCAA, dnsmessage.RCodeServerFailure)
	off := newValidator(t, dns, Config{})
	if p := off.CheckCAA(t.Context(), acme.CAARequest{Identifier: dnsIdent("other.caa.test"), Method: acme.ChallengeHTTP01}); p != nil {
		t.Errorf("CAA off: %v, want nothing checked", p)
	}
	on := caaValidator(t, dns)
	if p := on.CheckCAA(t.Context(), acme.CAARequest{Identifier: ipIdent("127.0.0.1"), Method: acme.ChallengeHTTP01}); p != nil {
		t.Errorf("ip identifier: %v, want no CAA check (RFC 8738)", p)
	}
}

// TestCheckCAATruncated: an answer too large for UDP is fetched again over
// TCP.
func TestCheckCAATruncated(t *testing.T) {
	dns := startDNS(t)
	var recs []dnstest.CAA
	for range 40 {
		recs = append(recs, issue("other-ca-with-a-rather-long-name.example"))
	}
	dns.SetCAA("big.caa.test", append(recs, issue("weir.internal"))...)
	v := caaValidator(t, dns)
	if p := v.CheckCAA(t.Context(), acme.CAARequest{Identifier: dnsIdent("big.caa.test"), Method: acme.ChallengeHTTP01}); p != nil {
		t.Errorf("refused: %v, want allowed by the last of 41 records", p)
	}
}

// TestCheckCAATimeout: a resolver that never answers refuses issuance
// within the validation timeout.
func TestCheckCAATimeout(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	v, err := New(Config{Resolver: pc.LocalAddr().String(), Timeout: 300 * time.Millisecond,
		CAA: CAAConfig{Enabled: true, Identities: []string{"weir.internal"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	p := v.CheckCAA(ctx, acme.CAARequest{Identifier: dnsIdent("slow.caa.test"), Method: acme.ChallengeHTTP01})
	if p == nil || p.Type != acme.ProbCAA || !strings.Contains(p.Detail, "timeout") {
		t.Errorf("got %v, want a caa problem about a timeout", p)
	}
}

func TestCAAConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  CAAConfig
		want string
	}{
		{CAAConfig{Enabled: true}, "no CA identities"},
		{CAAConfig{Enabled: true, Identities: []string{"not a name"}}, `"not a name" is not a domain name`},
		{CAAConfig{Identities: []string{"not a name"}}, ""},
		{CAAConfig{Enabled: true, Identities: []string{"weir.internal"}}, ""},
	} {
		err := Config{CAA: tc.cfg}.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func TestParseIssueValue(t *testing.T) {
	for _, tc := range []struct {
		in     string
		domain string
		params map[string]string
		ok     bool
	}{
		{"ca.example", "ca.example", nil, true},
		{";", "", nil, true},
		{"", "", nil, true},
		{" ca.example ; accounturi = https://x/acct/1 ; validationmethods=dns-01 ", "ca.example",
			map[string]string{"accounturi": "https://x/acct/1", "validationmethods": "dns-01"}, true},
		{"ca.example; a=1; a=2", "", nil, false},
		{"ca.example; =1", "", nil, false},
		{"ca.example; -a=1", "", nil, false},
		{"ca.example; a=b c", "", nil, false},
		{"ca.example; novalue", "", nil, false},
		{"ca example", "", nil, false},
	} {
		domain, params, ok := parseIssueValue(tc.in)
		if ok != tc.ok || domain != tc.domain || (ok && len(params) != len(tc.params)) {
			t.Errorf("parseIssueValue(%q) = %q %v %v, want %q %v %v", tc.in, domain, params, ok, tc.domain, tc.params, tc.ok)
			continue
		}
		for k, v := range tc.params {
			if params[k] != v {
				t.Errorf("parseIssueValue(%q)[%s] = %q, want %q", tc.in, k, params[k], v)
			}
		}
	}
}

func TestParseCAA(t *testing.T) {
	for _, tc := range []struct {
		data []byte
		want caaRecord
		err  bool
	}{
		{append([]byte{0, 5}, "issueca.example"...), caaRecord{tag: "issue", value: "ca.example"}, false},
		{append([]byte{128, 5}, "ISSUEx"...), caaRecord{critical: true, tag: "issue", value: "x"}, false},
		{[]byte{0}, caaRecord{}, true},
		{[]byte{0, 0}, caaRecord{}, true},
		{append([]byte{0, 9}, "issue"...), caaRecord{}, true},
		{append([]byte{0, 2}, "a-"...), caaRecord{}, true},
	} {
		got, err := parseCAA(tc.data)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseCAA(%q) = %+v, %v; want %+v (error %v)", tc.data, got, err, tc.want, tc.err)
		}
	}
}
