// SPDX-License-Identifier: Apache-2.0

package challenge

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
)

// dns-persist-01 (draft-ietf-acme-dns-persist): a TXT record at
// _validation-persist.<name> that names this CA (one of its issuer domain
// names) and the account (its URL, or the -02 revision's hashed account
// URI: matchAccountURI), read afresh at each validation (§4.2). Records
// naming other issuers are ignored (§4.3.2); a wildcard authorization
// needs policy=wildcard in the record at its base name (§5); a record
// past its persistUntil no longer validates, and the authorization it
// validates expires no later (§4.1). The hashed URI is recomputed from
// the account's current key, with the validated name and with "*"
// (§4.2). Syntax errors in a record meant for this CA are malformed
// problems, the rest unauthorized ones (§9.3.1).

// MaxIssuerDomainNames is the most issuer domain names a challenge may
// carry (draft-ietf-acme-dns-persist-02 §3.1).
const MaxIssuerDomainNames = 10

// PersistConfig configures dns-persist-01.
type PersistConfig struct {
	// IssuerDomainNames are the names by which records name this CA
	// (lower-case A-labels without a trailing dot, 1 to 10): the
	// challenge object's and the directory's issuerDomainNames.
	IssuerDomainNames []string
	// AccountHashPrefix is the URI prefix of hashed account URIs, the
	// directory's accountHashPrefix (e.g. https://ca.example/acme/account-hash/).
	AccountHashPrefix string
}

// validateDrafts checks what dns-account-01 and dns-persist-01 need when
// enabled.
func (c Config) validateDrafts() []error {
	var errs []error
	if (c.enabled(acme.ChallengeDNSAccount01) || c.enabled(acme.ChallengeDNSPersist01)) && c.AccountURIPrefix == "" {
		errs = append(errs, errors.New("challenge: config: dns-account-01 and dns-persist-01 need the account URL prefix"))
	}
	if !c.enabled(acme.ChallengeDNSPersist01) {
		return errs
	}
	errs = append(errs, CheckIssuerDomainNames(c.Persist.IssuerDomainNames)...)
	if u, err := url.Parse(c.Persist.AccountHashPrefix); err != nil || !u.IsAbs() || u.Host == "" {
		errs = append(errs, fmt.Errorf("challenge: config: dns-persist-01 account hash prefix %q is not an absolute URL", c.Persist.AccountHashPrefix))
	}
	return errs
}

// CheckIssuerDomainNames reports what is wrong with names as the issuer
// domain names of dns-persist-01: 1 to 10 distinct lower-case domain
// names without a trailing dot (draft-ietf-acme-dns-persist-02 §3.1).
func CheckIssuerDomainNames(names []string) []error {
	var errs []error
	if len(names) == 0 || len(names) > MaxIssuerDomainNames {
		errs = append(errs, fmt.Errorf("dns-persist-01 needs 1 to %d issuer domain names, not %d", MaxIssuerDomainNames, len(names)))
	}
	for i, n := range names {
		switch {
		case !isIssuerDomainName(n):
			errs = append(errs, fmt.Errorf("issuer domain name %q is not a domain name (letters, digits and hyphens, no trailing dot)", n))
		case n != strings.ToLower(n):
			errs = append(errs, fmt.Errorf("issuer domain name %q must be lower case", n))
		case slices.Contains(names[:i], n):
			errs = append(errs, fmt.Errorf("issuer domain name %q is listed twice", n))
		}
	}
	return errs
}

// persistFailure is why one record meant for this CA did not validate.
type persistFailure struct {
	typ    acme.ProblemType
	detail string
}

// validateDNSPersist01 looks up _validation-persist.<name> and succeeds
// if a record names this CA and the account and allows this
// authorization, returning its persistUntil (zero without one).
func (v *Validator) validateDNSPersist01(ctx context.Context, t target, req acme.ValidationRequest) (time.Time, *acme.Problem) {
	if t.ip.IsValid() {
		return time.Time{}, acme.Malformed("dns-persist-01 cannot validate an IP address identifier")
	}
	if req.AccountID == "" || req.Thumbprint == "" {
		return time.Time{}, acme.Internal(errors.New("challenge: dns-persist-01 without an account and its key"))
	}
	name := PersistLabel + "." + t.name
	txts, err := v.resolver.LookupTXT(ctx, name+".") // rooted: no search domains
	if err != nil && !isNotFound(err) {
		return time.Time{}, dnsProblem("TXT", name, err)
	}
	if len(txts) == 0 {
		return time.Time{}, acme.Unauthorized("No TXT record found at %s", name)
	}
	var fails []persistFailure
	for _, txt := range txts {
		rec, err := ParsePersistRecord(txt)
		if !slices.Contains(v.cfg.Persist.IssuerDomainNames, rec.IssuerDomainName) {
			continue // another CA's record, or none can tell (§4.3.2)
		}
		if err != nil {
			fails = append(fails, persistFailure{acme.ProbMalformed, fmt.Sprintf("TXT record %s at %s is malformed: %v", excerpt([]byte(txt)), name, err)})
			continue
		}
		if f := v.checkPersistRecord(rec, t, req); f != nil {
			fails = append(fails, persistFailure{f.typ, fmt.Sprintf("TXT record %s at %s %s", excerpt([]byte(txt)), name, f.detail)})
			continue
		}
		return rec.PersistUntil, nil
	}
	if len(fails) == 0 {
		return time.Time{}, acme.Unauthorized("No TXT record at %s names this CA (issuer domain names %s): found %s%s",
			name, strings.Join(v.cfg.Persist.IssuerDomainNames, ", "), excerpt([]byte(txts[0])), andMore(len(txts)))
	}
	return time.Time{}, acme.NewProblem(fails[0].typ, "%s%s", fails[0].detail, andMore(len(fails)))
}

// checkPersistRecord says why rec, a well-formed record naming this CA,
// does not validate req, or nil if it does.
func (v *Validator) checkPersistRecord(rec PersistRecord, t target, req acme.ValidationRequest) *persistFailure {
	prefix, acctURL := v.cfg.Persist.AccountHashPrefix, v.accountURL(req.AccountID)
	acct := persistAccount{URL: acctURL, URLPrefix: v.cfg.AccountURIPrefix, HashPrefix: prefix, Name: t.name,
		Hashes: [2]string{PersistAccountURI(prefix, t.name, req.Thumbprint, acctURL), PersistAccountURI(prefix, "*", req.Thumbprint, acctURL)}}
	if f := matchAccountURI(rec.AccountURI, acct); f != nil {
		return f
	}
	if !rec.PersistUntil.IsZero() && !v.cfg.Now().Before(rec.PersistUntil) {
		return &persistFailure{acme.ProbUnauthorized, fmt.Sprintf("expired at %s (persistUntil)", rec.PersistUntil.Format(time.RFC3339))}
	}
	if req.Wildcard && !rec.Wildcard {
		return &persistFailure{acme.ProbUnauthorized, fmt.Sprintf("has no policy=wildcard, which a wildcard authorization (*.%s) needs", t.name)}
	}
	return nil
}
