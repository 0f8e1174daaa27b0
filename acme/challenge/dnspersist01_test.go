// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

const (
	testIssuer     = "weir.test"
	testHashPrefix = "https://ca.test/acme/account-hash/"
	testAccountID  = acme.AccountID("42")
	testThumbprint = acme.Thumbprint("9jg46WB3rR_AHD-EBXdN7cBkH1WOu0tA3M9fm21mqTI")
)

// draftConfig enables the two draft challenge types with the test CA's
// names.
func draftConfig(now func() time.Time) Config {
	return Config{
		Enabled: map[acme.ChallengeType]bool{acme.ChallengeDNSPersist01: true, acme.ChallengeDNSAccount01: true},
		Persist: PersistConfig{IssuerDomainNames: []string{testIssuer, "alt.weir.test"}, AccountHashPrefix: testHashPrefix},
		// The same prefix as the CAA tests.
		AccountURIPrefix: testAccountPrefix, Now: now,
	}
}

// draftRequest is a request of the test account for ident.
func draftRequest(typ acme.ChallengeType, ident acme.Identifier, wildcard bool) acme.ValidationRequest {
	r := request(typ, ident)
	r.Wildcard, r.AccountID, r.Thumbprint = wildcard, testAccountID, testThumbprint
	return r
}

func TestDNSPersist01(t *testing.T) {
	dns := startDNS(t)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	acctURL := testAccountPrefix + string(testAccountID)
	uri := func(name string) string { return PersistAccountURI(testHashPrefix, name, testThumbprint, acctURL) }
	other := PersistAccountURI(testHashPrefix, "ok.test", testThumbprint, testAccountPrefix+"43")
	rec := func(name, params string) string { return testIssuer + "; accounturi=" + uri(name) + params }
	later, earlier := now.Add(time.Hour).Unix(), now.Add(-time.Second).Unix()
	set := map[string][]string{
		"ok.test":         {"v=spf1 -all", rec("ok.test", "")},
		"star.test":       {rec("*", "")},
		"alt.test":        {"ALT.Weir.Test; accounturi=" + uri("alt.test")},
		"wild.test":       {rec("wild.test", "; policy=Wildcard")},
		"nowild.test":     {rec("nowild.test", "")},
		"until.test":      {rec("until.test", "; persistUntil="+itoa(later))},
		"expired.test":    {rec("expired.test", "; persistUntil="+itoa(earlier))},
		"otheracct.test":  {testIssuer + "; accounturi=" + other},
		"othername.test":  {rec("ok.test", "")},
		"otherca.test":    {"ca.example; accounturi=" + uri("otherca.test"), "letsencrypt.org"},
		"malformed.test":  {testIssuer + "; policy=wildcard"},
		"badhash.test":    {testIssuer + "; accounturi=" + testHashPrefix + "sha-1/abc"},
		"plain.test":      {testIssuer + "; accounturi=" + acctURL + "; policy=wildcard"},
		"plainother.test": {testIssuer + "; accounturi=" + testAccountPrefix + "43"},
		"plainhost.test":  {testIssuer + "; accounturi=https://other-weir.test/acme/account/42"},
		"plaincase.test":  {testIssuer + "; accounturi=" + strings.ToUpper(acctURL)},
		"plainbad.test":   {testIssuer + "; accounturi=acct-42"},
		"twobad.test":     {rec("ok.test", ""), rec("twobad.test", "; persistUntil="+itoa(earlier))},
		"onegood.test":    {rec("ok.test", ""), rec("onegood.test", "")},
	}
	for name, vals := range set {
		dns.SetTXT("_validation-persist."+name, vals...)
	}
	v := newValidator(t, dns, draftConfig(func() time.Time { return now }))
	tests := []struct {
		name     string
		ident    acme.Identifier
		wildcard bool
		want     acme.ProblemType
		detail   string
		until    int64
	}{
		{name: "a record among others", ident: dnsIdent("ok.test")},
		{name: "the record of every domain (*)", ident: dnsIdent("star.test")},
		{name: "the other issuer name, in another case", ident: dnsIdent("alt.test")},
		{name: "a wildcard with policy=wildcard", ident: dnsIdent("wild.test"), wildcard: true},
		{name: "policy=wildcard serves the name itself", ident: dnsIdent("wild.test")},
		{name: "persistUntil ahead", ident: dnsIdent("until.test"), until: later},
		{name: "more than one record, one good", ident: dnsIdent("onegood.test")},
		{name: "a wildcard without policy=wildcard", ident: dnsIdent("nowild.test"), wildcard: true, want: acme.ProbUnauthorized,
			detail: "has no policy=wildcard, which a wildcard authorization (*.nowild.test) needs"},
		{name: "persistUntil passed", ident: dnsIdent("expired.test"), want: acme.ProbUnauthorized,
			detail: "expired at " + time.Unix(earlier, 0).UTC().Format(time.RFC3339) + " (persistUntil)"},
		{name: "another account's record", ident: dnsIdent("otheracct.test"), want: acme.ProbUnauthorized,
			detail: "is for another account: its accounturi is not the hashed URI of account " + acctURL + " for otheracct.test"},
		{name: "a record hashed for another name", ident: dnsIdent("othername.test"), want: acme.ProbUnauthorized, detail: "is for another account"},
		{name: "another CA's records only", ident: dnsIdent("otherca.test"), want: acme.ProbUnauthorized,
			detail: `No TXT record at _validation-persist.otherca.test names this CA (issuer domain names weir.test, alt.weir.test): found "ca.example; accounturi=`},
		{name: "no accounturi", ident: dnsIdent("malformed.test"), want: acme.ProbMalformed,
			detail: `TXT record "weir.test; policy=wildcard" at _validation-persist.malformed.test is malformed: the record has no accounturi parameter`},
		{name: "another hash algorithm", ident: dnsIdent("badhash.test"), want: acme.ProbMalformed, detail: "this CA accepts only sha-256"},
		{name: "the account URL", ident: dnsIdent("plain.test")},
		{name: "the account URL, a wildcard", ident: dnsIdent("plain.test"), wildcard: true},
		{name: "another account's URL", ident: dnsIdent("plainother.test"), want: acme.ProbUnauthorized,
			detail: `TXT record "weir.test; accounturi=` + testAccountPrefix + `43" at _validation-persist.plainother.test is for another account: its accounturi "` + testAccountPrefix + `43" is not this account's URL ` + acctURL},
		{name: "the URL of an account at another server", ident: dnsIdent("plainhost.test"), want: acme.ProbUnauthorized,
			detail: `is for an account of another ACME server: its accounturi "https://other-weir.test/acme/account/42" is not under this CA's account URLs ` + testAccountPrefix},
		{name: "the account URL in upper case", ident: dnsIdent("plaincase.test"), want: acme.ProbUnauthorized, detail: "in letter case, and account URLs are compared exactly"},
		{name: "neither an account URL nor a hashed URI", ident: dnsIdent("plainbad.test"), want: acme.ProbMalformed,
			detail: `is malformed: accounturi "acct-42" is neither an account URL (this account's is ` + acctURL + `) nor a hashed account URI`},
		{name: "two records, both wrong", ident: dnsIdent("twobad.test"), want: acme.ProbUnauthorized, detail: "is for another account"},
		{name: "no record", ident: dnsIdent("none.test"), want: acme.ProbUnauthorized, detail: "No TXT record found at _validation-persist.none.test"},
		{name: "ip identifier", ident: ipIdent("127.0.0.1"), want: acme.ProbMalformed, detail: "dns-persist-01 cannot validate an IP address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			until, p := v.ValidateUntil(ctx, draftRequest(acme.ChallengeDNSPersist01, tc.ident, tc.wildcard))
			checkProblem(t, p, tc.ident, tc.want, tc.detail)
			var want time.Time
			if tc.until != 0 {
				want = time.Unix(tc.until, 0).UTC()
			}
			if !until.Equal(want) {
				t.Errorf("until: got %v, want %v", until, want)
			}
		})
	}
	// "two records, both wrong" names the second failure's count.
	p := validate(t, v, draftRequest(acme.ChallengeDNSPersist01, dnsIdent("twobad.test"), false))
	checkProblem(t, p, dnsIdent("twobad.test"), acme.ProbUnauthorized, "(and 1 more)")
}

func TestDNSAccount01(t *testing.T) {
	dns := startDNS(t)
	digest := KeyAuthorizationDigest(testKeyAuth)
	mine := AccountChallengeName("ok.test", testAccountPrefix+string(testAccountID))
	dns.SetTXT(mine, digest)
	// Another account's record for the same name, and dns-01's, do not
	// count.
	dns.SetTXT(AccountChallengeName("theirs.test", testAccountPrefix+"43"), digest)
	dns.SetTXT("_acme-challenge.theirs.test", digest)
	dns.SetTXT(AccountChallengeName("wrong.test", testAccountPrefix+string(testAccountID)), "abc")
	v := newValidator(t, dns, draftConfig(nil))
	tests := []struct {
		name   string
		ident  acme.Identifier
		want   acme.ProblemType
		detail string
	}{
		{name: "the account's record", ident: dnsIdent("ok.test")},
		{name: "only another account's and dns-01's records", ident: dnsIdent("theirs.test"), want: acme.ProbUnauthorized,
			detail: "No TXT record found at " + AccountChallengeName("theirs.test", testAccountPrefix+string(testAccountID))},
		{name: "a wrong value", ident: dnsIdent("wrong.test"), want: acme.ProbUnauthorized, detail: `Incorrect TXT record "abc" found at _`},
		{name: "ip identifier", ident: ipIdent("127.0.0.1"), want: acme.ProbMalformed, detail: "dns-account-01 cannot validate an IP address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validate(t, v, draftRequest(acme.ChallengeDNSAccount01, tc.ident, false))
			checkProblem(t, p, tc.ident, tc.want, tc.detail)
		})
	}
}

func TestDraftConfig(t *testing.T) {
	persistOnly := map[acme.ChallengeType]bool{acme.ChallengeDNSPersist01: true}
	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"drafts off by default need nothing", Config{}, ""},
		{"account without the account URL prefix", Config{Enabled: map[acme.ChallengeType]bool{acme.ChallengeDNSAccount01: true}}, "need the account URL prefix"},
		{"persist without issuer names", Config{Enabled: persistOnly, AccountURIPrefix: "https://ca.test/a/", Persist: PersistConfig{AccountHashPrefix: testHashPrefix}}, "needs 1 to 10 issuer domain names, not 0"},
		{"upper-case issuer name", Config{Enabled: persistOnly, AccountURIPrefix: "https://ca.test/a/", Persist: PersistConfig{IssuerDomainNames: []string{"Weir.test"}, AccountHashPrefix: testHashPrefix}}, "must be lower case"},
		{"trailing dot", Config{Enabled: persistOnly, AccountURIPrefix: "https://ca.test/a/", Persist: PersistConfig{IssuerDomainNames: []string{"weir.test."}, AccountHashPrefix: testHashPrefix}}, "is not a domain name"},
		{"twice", Config{Enabled: persistOnly, AccountURIPrefix: "https://ca.test/a/", Persist: PersistConfig{IssuerDomainNames: []string{"weir.test", "weir.test"}, AccountHashPrefix: testHashPrefix}}, "listed twice"},
		{"relative hash prefix", Config{Enabled: persistOnly, AccountURIPrefix: "https://ca.test/a/", Persist: PersistConfig{IssuerDomainNames: []string{"weir.test"}, AccountHashPrefix: "/account-hash/"}}, "is not an absolute URL"},
		{"eleven names", Config{Enabled: persistOnly, AccountURIPrefix: "https://ca.test/a/", Persist: PersistConfig{IssuerDomainNames: []string{"a.t", "b.t", "c.t", "d.t", "e.t", "f.t", "g.t", "h.t", "i.t", "j.t", "k.t"}, AccountHashPrefix: testHashPrefix}}, "not 11"},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: Validate: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: Validate: got %v, want an error containing %q", tc.name, err, tc.err)
		}
	}
	// A nil Enabled leaves the drafts off.
	v, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	p := validate(t, v, draftRequest(acme.ChallengeDNSPersist01, dnsIdent("ok.test"), false))
	checkProblem(t, p, dnsIdent("ok.test"), acme.ProbMalformed, `challenge type "dns-persist-01" is not enabled`)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
