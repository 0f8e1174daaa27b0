// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// The test vector of draft-ietf-acme-dns-persist-02 §10.2.
const (
	vectorPrefix     = "https://ca.example/account-hash/"
	vectorThumbprint = acme.Thumbprint("NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
	vectorAccountURL = "https://ca.example/acct/123"
)

func TestPersistAccountURIVector(t *testing.T) {
	for _, tc := range []struct{ domain, want string }{
		{"example.com", vectorPrefix + "sha-256/5SQm7n6tPh2-PlLbCKGnViTXX5z19SCN4cPGQHSk-kw"},
		{"*", vectorPrefix + "sha-256/NpDnSwUthQK8zCgFdefYxAdAVPnygMLbs9US6oO-5ug"},
	} {
		if got := PersistAccountURI(vectorPrefix, tc.domain, vectorThumbprint, vectorAccountURL); got != tc.want {
			t.Errorf("PersistAccountURI(%s): got %s, want %s", tc.domain, got, tc.want)
		}
	}
}

func TestParsePersistRecord(t *testing.T) {
	uri := vectorPrefix + "sha-256/5SQm7n6tPh2-PlLbCKGnViTXX5z19SCN4cPGQHSk-kw"
	good := []struct {
		name, txt string
		want      PersistRecord
	}{
		{"the draft's figure 2", "authority.example; accounturi=" + uri, PersistRecord{IssuerDomainName: "authority.example", AccountURI: uri}},
		{"no spaces, upper-case issuer and tags", "Authority.EXAMPLE;AccountURI=" + uri + ";POLICY=WildCard", PersistRecord{IssuerDomainName: "authority.example", AccountURI: uri, Wildcard: true}},
		{"tabs and empty parameters", "\tauthority.example ;; accounturi = " + uri + " ;", PersistRecord{IssuerDomainName: "authority.example", AccountURI: uri}},
		{"persistUntil", "authority.example; accounturi=" + uri + "; persistUntil=1721952000",
			PersistRecord{IssuerDomainName: "authority.example", AccountURI: uri, PersistUntil: time.Unix(1721952000, 0).UTC()}},
		{"another policy value is no policy", "authority.example; accounturi=" + uri + "; policy=subdomains", PersistRecord{IssuerDomainName: "authority.example", AccountURI: uri}},
		{"an unknown parameter is ignored", "authority.example; accounturi=" + uri + "; future-tag=x", PersistRecord{IssuerDomainName: "authority.example", AccountURI: uri}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePersistRecord(tc.txt)
			if err != nil {
				t.Fatalf("ParsePersistRecord(%q): %v", tc.txt, err)
			}
			if got != tc.want {
				t.Errorf("ParsePersistRecord(%q): got %+v, want %+v", tc.txt, got, tc.want)
			}
		})
	}
	bad := []struct {
		name, txt, issuer, err string
	}{
		{"empty", "", "", "names no issuer domain name"},
		{"parameters only", "; accounturi=" + uri, "", "names no issuer domain name"},
		{"issuer not a domain name", "authority_example; accounturi=" + uri, "", "is not a domain name"},
		{"issuer with a trailing dot", "authority.example.; accounturi=" + uri, "", "is not a domain name"},
		{"issuer label with a leading hyphen", "-authority.example; accounturi=" + uri, "", "is not a domain name"},
		{"no accounturi", "authority.example", "authority.example", "no accounturi parameter"},
		{"no accounturi, a policy", "authority.example; policy=wildcard", "authority.example", "no accounturi parameter"},
		{"empty accounturi", "authority.example; accounturi=", "authority.example", "no accounturi parameter"},
		{"accounturi twice", "authority.example; accounturi=" + uri + "; accounturi=" + uri, "authority.example", "accounturi appears twice"},
		{"a tag twice in other cases", "authority.example; accounturi=" + uri + "; policy=wildcard; Policy=wildcard", "authority.example", "policy appears twice"},
		{"parameter without =", "authority.example; accounturi", "authority.example", "is not tag=value"},
		{"space inside a value", "authority.example; accounturi=https://a b", "authority.example", "is not tag=value"},
		{"bad tag", "authority.example; -x=1; accounturi=" + uri, "authority.example", "is not tag=value"},
		{"non-ASCII value", "authority.example; accounturi=" + uri + "; note=é", "authority.example", "is not tag=value"},
		{"persistUntil not a number", "authority.example; accounturi=" + uri + "; persistUntil=tomorrow", "authority.example", "is not a base-10 UNIX timestamp"},
		{"persistUntil negative", "authority.example; accounturi=" + uri + "; persistUntil=-5", "authority.example", "is not a base-10 UNIX timestamp"},
		{"persistUntil with a sign", "authority.example; accounturi=" + uri + "; persistUntil=+5", "authority.example", "is not a base-10 UNIX timestamp"},
		{"persistUntil empty", "authority.example; accounturi=" + uri + "; persistUntil=", "authority.example", "is not a base-10 UNIX timestamp"},
		{"persistUntil too long", "authority.example; accounturi=" + uri + "; persistUntil=1234567890123456789", "authority.example", "is not a base-10 UNIX timestamp"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePersistRecord(tc.txt)
			if err == nil {
				t.Fatalf("ParsePersistRecord(%q): got %+v, want an error", tc.txt, got)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParsePersistRecord(%q): error %q, want it to contain %q", tc.txt, err, tc.err)
			}
			if got.IssuerDomainName != tc.issuer {
				t.Errorf("ParsePersistRecord(%q): issuer %q, want %q", tc.txt, got.IssuerDomainName, tc.issuer)
			}
		})
	}
}

func TestCheckHashedURI(t *testing.T) {
	good := PersistAccountURI(vectorPrefix, "example.com", vectorThumbprint, vectorAccountURL)
	if err := checkHashedURI(good, vectorPrefix); err != nil {
		t.Fatalf("checkHashedURI(%s): %v", good, err)
	}
	hash := strings.TrimPrefix(good, vectorPrefix+"sha-256/")
	for _, tc := range []struct{ name, uri, err string }{
		{"another prefix", "https://other.example/account-hash/sha-256/" + hash, "is not under this CA's accountHashPrefix"},
		{"the account URL itself", vectorAccountURL, "is not under this CA's accountHashPrefix"},
		{"no algorithm", vectorPrefix + hash, "has no hash algorithm"},
		{"another algorithm", vectorPrefix + "sha-512/" + hash, "accepts only sha-256"},
		{"algorithm in upper case", vectorPrefix + "SHA-256/" + hash, "accepts only sha-256"},
		{"short hash", vectorPrefix + "sha-256/" + hash[:42], "not the unpadded base64url of a SHA-256 digest"},
		{"padded hash", vectorPrefix + "sha-256/" + hash + "=", "not the unpadded base64url of a SHA-256 digest"},
		{"standard base64", vectorPrefix + "sha-256/" + strings.ReplaceAll(hash, "-", "+"), "not the unpadded base64url of a SHA-256 digest"},
	} {
		if err := checkHashedURI(tc.uri, vectorPrefix); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: checkHashedURI(%s): got %v, want an error containing %q", tc.name, tc.uri, err, tc.err)
		}
	}
}

// testPersistAccount is the test vector's account, validating
// example.com, with this CA's accounts under https://ca.example/acct/.
func testPersistAccount() persistAccount {
	return persistAccount{URL: vectorAccountURL, URLPrefix: "https://ca.example/acct/", HashPrefix: vectorPrefix, Name: "example.com",
		Hashes: [2]string{PersistAccountURI(vectorPrefix, "example.com", vectorThumbprint, vectorAccountURL),
			PersistAccountURI(vectorPrefix, "*", vectorThumbprint, vectorAccountURL)}}
}

func TestMatchAccountURI(t *testing.T) {
	a := testPersistAccount()
	for _, tc := range []struct {
		name, uri string
		want      acme.ProblemType // "": a match
		detail    string
	}{
		{name: "the account URL", uri: vectorAccountURL},
		{name: "the hashed URI for the name", uri: a.Hashes[0]},
		{name: "the hashed URI for *", uri: a.Hashes[1]},
		{name: "another account's URL", uri: "https://ca.example/acct/124", want: acme.ProbUnauthorized,
			detail: `is for another account: its accounturi "https://ca.example/acct/124" is not this account's URL https://ca.example/acct/123`},
		{name: "a longer ID", uri: vectorAccountURL + "4", want: acme.ProbUnauthorized, detail: "is not this account's URL"},
		{name: "another host", uri: "https://other.example/acct/123", want: acme.ProbUnauthorized,
			detail: `is for an account of another ACME server: its accounturi "https://other.example/acct/123" is not under this CA's account URLs https://ca.example/acct/ (this account's is https://ca.example/acct/123)`},
		{name: "another port", uri: "https://ca.example:8443/acct/123", want: acme.ProbUnauthorized, detail: "is for an account of another ACME server"},
		{name: "http instead of https", uri: "http://ca.example/acct/123", want: acme.ProbUnauthorized, detail: "is for an account of another ACME server"},
		{name: "a trailing slash", uri: vectorAccountURL + "/", want: acme.ProbUnauthorized,
			detail: "differs from this account's URL https://ca.example/acct/123 by a trailing slash, and account URLs are compared exactly"},
		{name: "the host in upper case", uri: "https://CA.example/acct/123", want: acme.ProbUnauthorized, detail: "in letter case, and account URLs are compared exactly"},
		{name: "the scheme in upper case", uri: "HTTPS://ca.example/acct/123", want: acme.ProbUnauthorized, detail: "in letter case"},
		{name: "a percent-encoded path", uri: "https://ca.example/%61cct/123", want: acme.ProbUnauthorized, detail: "is not this account's URL"},
		{name: "a query", uri: vectorAccountURL + "?x=1", want: acme.ProbUnauthorized, detail: "is not this account's URL"},
		{name: "another account's hashed URI", uri: PersistAccountURI(vectorPrefix, "example.com", vectorThumbprint, "https://ca.example/acct/124"),
			want: acme.ProbUnauthorized, detail: "is not the hashed URI of account https://ca.example/acct/123 for example.com (or for *)"},
		{name: "a hashed URI with another key", uri: PersistAccountURI(vectorPrefix, "example.com", testThumbprint, vectorAccountURL),
			want: acme.ProbUnauthorized, detail: "with the account's current key"},
		{name: "a malformed hashed URI", uri: vectorPrefix + "sha-1/abc", want: acme.ProbMalformed, detail: "is malformed: accounturi \"" + vectorPrefix + "sha-1/abc\" uses hash algorithm"},
		{name: "a bare ID", uri: "123", want: acme.ProbMalformed,
			detail: `is malformed: accounturi "123" is neither an account URL (this account's is https://ca.example/acct/123) nor a hashed account URI under this CA's accountHashPrefix ` + vectorPrefix},
		{name: "a relative URL", uri: "/acct/123", want: acme.ProbMalformed, detail: "is neither an account URL"},
		{name: "a URN", uri: "urn:acme:acct:123", want: acme.ProbMalformed, detail: "is neither an account URL"},
		{name: "no host", uri: "https:///acct/123", want: acme.ProbMalformed, detail: "is neither an account URL"},
		{name: "not a URL", uri: "https://ca.example/%zz", want: acme.ProbMalformed, detail: "is neither an account URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := matchAccountURI(tc.uri, a)
			switch {
			case tc.want == "" && f != nil:
				t.Fatalf("matchAccountURI(%s): %s %s, want a match", tc.uri, f.typ, f.detail)
			case tc.want == "":
			case f == nil:
				t.Fatalf("matchAccountURI(%s): a match, want %s", tc.uri, tc.want)
			case f.typ != tc.want || !strings.Contains(f.detail, tc.detail):
				t.Fatalf("matchAccountURI(%s): %s %q, want %s containing %q", tc.uri, f.typ, f.detail, tc.want, tc.detail)
			}
		})
	}
}

func TestAccountLabel(t *testing.T) {
	// The example of draft-ietf-acme-dns-account-label (and of its
	// client implementations).
	if got, want := AccountLabel("https://example.com/acme/acct/ExampleAccount"), "ujmmovf2vn55tgye"; got != want {
		t.Errorf("AccountLabel: got %s, want %s", got, want)
	}
	if got, want := AccountChallengeName("example.org", "https://example.com/acme/acct/ExampleAccount"), "_ujmmovf2vn55tgye._acme-challenge.example.org"; got != want {
		t.Errorf("AccountChallengeName: got %s, want %s", got, want)
	}
}

// FuzzParsePersistRecord checks that any text either parses into a record
// that formats and parses back to itself, and whose accounturi
// matchAccountURI accepts exactly when it is the account's URL or hashed
// URI, or fails without a panic.
func FuzzParsePersistRecord(f *testing.F) {
	uri := vectorPrefix + "sha-256/5SQm7n6tPh2-PlLbCKGnViTXX5z19SCN4cPGQHSk-kw"
	for _, s := range []string{
		"authority.example; accounturi=" + uri,
		"authority.example; accounturi=" + uri + "; policy=wildcard; persistUntil=1721952000",
		"authority.example; accounturi=" + vectorAccountURL,
		"authority.example; accounturi=" + vectorAccountURL + "/; policy=wildcard",
		"authority.example; accounturi=HTTPS://other.example/acct/123",
		"authority.example; accounturi=urn:x",
		"A.B;accounturi=x;POLICY=WILDCARD;x-y=z",
		"authority.example; accounturi=" + uri + "; accounturi=" + uri,
		";;", "", "a; persistUntil=99999999999999999",
	} {
		f.Add(s)
	}
	a := testPersistAccount()
	f.Fuzz(func(t *testing.T, txt string) {
		r, err := ParsePersistRecord(txt)
		if err != nil {
			if r.IssuerDomainName != "" && !isIssuerDomainName(r.IssuerDomainName) {
				t.Fatalf("%q: error %v with issuer %q that is not a domain name", txt, err, r.IssuerDomainName)
			}
			return
		}
		if r.IssuerDomainName != strings.ToLower(r.IssuerDomainName) || !isIssuerDomainName(r.IssuerDomainName) || r.AccountURI == "" {
			t.Fatalf("%q: parsed into %+v", txt, r)
		}
		again, err := ParsePersistRecord(r.String())
		if err != nil || again != r {
			t.Fatalf("%q: %+v formats as %q, which parses into %+v, %v", txt, r, r.String(), again, err)
		}
		// The accounturi matches only the account's URL or hashed URIs,
		// exactly; anything else is a malformed or unauthorized problem
		// with a detail.
		f := matchAccountURI(r.AccountURI, a)
		match := r.AccountURI == a.URL || r.AccountURI == a.Hashes[0] || r.AccountURI == a.Hashes[1]
		if match != (f == nil) || f != nil && (f.detail == "" || f.typ != acme.ProbMalformed && f.typ != acme.ProbUnauthorized) {
			t.Fatalf("%q: accounturi %q: match %v, failure %+v", txt, r.AccountURI, match, f)
		}
	})
}
