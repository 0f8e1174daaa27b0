// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
)

// The record of dns-persist-01 (draft-ietf-acme-dns-persist): at
// _validation-persist.<name>, an RFC 8659 §4.2 issue-value whose
// issuer-domain-name is one of the CA's and whose parameters are
// accounturi (the account's URL, as the -00 and -01 revisions and the
// clients write it, or the -02 revision's hashed account URI; see
// matchAccountURI), policy (the value wildcard, compared
// case-insensitively, widens the record to wildcards) and persistUntil
// (seconds since the epoch, after which the record no longer validates).
// Parameter tags are compared case-insensitively (RFC 8659 §4.2); tags
// weir does not know are ignored, but no tag may appear twice.

// PersistLabel is the label of dns-persist-01's validation domain name.
const PersistLabel = "_validation-persist"

// PersistHashAlg is the one hash algorithm of hashed account URIs weir
// accepts: SHA-256, by its Named Information Hash Name String (RFC 6920).
const PersistHashAlg = "sha-256"

// PersistRecord is a dns-persist-01 TXT record.
type PersistRecord struct {
	// IssuerDomainName is the CA the record names, in lower case.
	IssuerDomainName string
	// AccountURI is the accounturi parameter: an account URL or a
	// hashed account URI (PersistAccountURI).
	AccountURI string
	// Wildcard is policy=wildcard.
	Wildcard bool
	// PersistUntil is the end of the record's validity; zero: none.
	PersistUntil time.Time
}

// String formats r as the TXT record that ParsePersistRecord reads back.
func (r PersistRecord) String() string {
	s := r.IssuerDomainName + "; accounturi=" + r.AccountURI
	if r.Wildcard {
		s += "; policy=wildcard"
	}
	if !r.PersistUntil.IsZero() {
		s += "; persistUntil=" + strconv.FormatInt(r.PersistUntil.Unix(), 10)
	}
	return s
}

// maxPersistUntilDigits bounds persistUntil: 11 digits reach the year
// 5138, and more than 18 would not fit an int64.
const maxPersistUntilDigits = 18

// ParsePersistRecord reads one TXT record (its character-strings joined).
// On an error the record's IssuerDomainName is still set when the
// issuer-domain-name itself was readable, so that a caller can tell a
// broken record meant for this CA from one meant for another.
func ParsePersistRecord(txt string) (PersistRecord, error) {
	var r PersistRecord
	d, rest, _ := strings.Cut(txt, ";")
	d = strings.Trim(d, " \t")
	if d == "" {
		return r, errors.New("the record names no issuer domain name")
	}
	if name := strings.ToLower(d); !isIssuerDomainName(name) {
		return r, fmt.Errorf("issuer domain name %s is not a domain name", excerpt([]byte(d)))
	} else {
		r.IssuerDomainName = name
	}
	params, err := parseIssueParams(rest)
	if err != nil {
		return r, err
	}
	r.AccountURI = params["accounturi"]
	r.Wildcard = strings.EqualFold(params["policy"], "wildcard")
	if val, ok := params["persistuntil"]; ok {
		if val == "" || len(val) > maxPersistUntilDigits || strings.Trim(val, "0123456789") != "" {
			return r, fmt.Errorf("persistUntil %s is not a base-10 UNIX timestamp", excerpt([]byte(val)))
		}
		n, _ := strconv.ParseInt(val, 10, 64) // digits only, at most 18
		r.PersistUntil = time.Unix(n, 0).UTC()
	}
	if r.AccountURI == "" {
		return r, errors.New("the record has no accounturi parameter")
	}
	return r, nil
}

// isIssuerDomainName reports whether s, in lower case, is an issuer
// domain name as RFC 8659 §4.2 writes it: labels of letters, digits and
// inner hyphens, at most 253 octets, no trailing dot.
func isIssuerDomainName(s string) bool {
	if !isDNSName(s) {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	return true
}

// PersistAccountURI returns the hashed account URI of
// draft-ietf-acme-dns-persist-02 §4.1: prefix || "sha-256/" ||
// base64url(SHA-256(len(domain) || domain || thumbprint || accountURL)).
// domain is the validated name (lower case, no trailing dot), or "*" for
// the form that does not depend on the domain.
func PersistAccountURI(prefix, domain string, thumbprint acme.Thumbprint, accountURL string) string {
	h := sha256.New()
	h.Write([]byte{byte(len(domain))})
	h.Write([]byte(domain))
	h.Write([]byte(thumbprint))
	h.Write([]byte(accountURL))
	return prefix + PersistHashAlg + "/" + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// checkHashedURI reports why uri is not a well-formed hashed account URI
// under prefix that weir accepts: the prefix, the algorithm sha-256, and a
// 43-character base64url SHA-256 value.
func checkHashedURI(uri, prefix string) error {
	rest, ok := strings.CutPrefix(uri, prefix)
	if !ok {
		return fmt.Errorf("accounturi %s is not under this CA's accountHashPrefix %s", excerpt([]byte(uri)), prefix)
	}
	alg, val, ok := strings.Cut(rest, "/")
	if !ok {
		return fmt.Errorf("accounturi %s has no hash algorithm (<prefix><alg>/<hash>)", excerpt([]byte(uri)))
	}
	if alg != PersistHashAlg {
		return fmt.Errorf("accounturi %s uses hash algorithm %s; this CA accepts only %s", excerpt([]byte(uri)), excerpt([]byte(alg)), PersistHashAlg)
	}
	if b, err := base64.RawURLEncoding.Strict().DecodeString(val); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("accounturi %s: the hash is not the unpadded base64url of a SHA-256 digest", excerpt([]byte(uri)))
	}
	return nil
}

// persistAccount is what a record's accounturi may name: the account's
// URL, or its hashed account URI for the validated name or for "*".
type persistAccount struct {
	// URL is the account's URL, exactly as weir serves it (the Location
	// of new-account, the kid of its requests).
	URL string
	// URLPrefix is the URL of this CA's accounts without the ID.
	URLPrefix string
	// HashPrefix is the directory's accountHashPrefix.
	HashPrefix string
	// Name is the validated name; Hashes its hashed account URIs, for
	// Name and for "*".
	Name   string
	Hashes [2]string
}

// matchAccountURI says why uri, a record's accounturi, does not name a,
// or returns nil if it does. An account URL is compared with a.URL as an
// exact string, as CAA compares its accounturi (RFC 8657 §3) and as
// clients copy the Location weir served: no case folding, no RFC 3986
// normalization, so a URL differing in case or by a trailing slash names
// another account (the problem says so). A value under a.HashPrefix is a
// hashed account URI, malformed if not sha-256/<43 characters>; any other
// absolute URL with a host is another account's, of this CA (the scheme
// and host of its account URLs) or of another server; anything else is
// malformed.
func matchAccountURI(uri string, a persistAccount) *persistFailure {
	if uri == a.URL {
		return nil
	}
	q := excerpt([]byte(uri))
	if strings.HasPrefix(uri, a.HashPrefix) {
		if err := checkHashedURI(uri, a.HashPrefix); err != nil {
			return &persistFailure{acme.ProbMalformed, "is malformed: " + err.Error()}
		}
		if uri == a.Hashes[0] || uri == a.Hashes[1] {
			return nil
		}
		return &persistFailure{acme.ProbUnauthorized, fmt.Sprintf("is for another account: its accounturi is not the hashed URI of account %s for %s (or for *) with the account's current key", a.URL, a.Name)}
	}
	u, err := url.Parse(uri)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return &persistFailure{acme.ProbMalformed, fmt.Sprintf("is malformed: accounturi %s is neither an account URL (this account's is %s) nor a hashed account URI under this CA's accountHashPrefix %s", q, a.URL, a.HashPrefix)}
	}
	var why string
	switch {
	case strings.EqualFold(uri, a.URL):
		why = fmt.Sprintf("is for another account: its accounturi %s differs from this account's URL %s in letter case, and account URLs are compared exactly", q, a.URL)
	case strings.TrimSuffix(uri, "/") == a.URL:
		why = fmt.Sprintf("is for another account: its accounturi %s differs from this account's URL %s by a trailing slash, and account URLs are compared exactly", q, a.URL)
	case sameOrigin(u, a.URLPrefix):
		why = fmt.Sprintf("is for another account: its accounturi %s is not this account's URL %s", q, a.URL)
	default:
		why = fmt.Sprintf("is for an account of another ACME server: its accounturi %s is not under this CA's account URLs %s (this account's is %s)", q, a.URLPrefix, a.URL)
	}
	return &persistFailure{acme.ProbUnauthorized, why}
}

// sameOrigin reports whether u has the scheme and host (with its port) of
// the URL prefix.
func sameOrigin(u *url.URL, prefix string) bool {
	p, err := url.Parse(prefix)
	return err == nil && u.Scheme == p.Scheme && u.Host == p.Host
}
