// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// spendSubject is what a spend pays for: the account and the identifiers
// of an order, so that a denial can name the identifiers it is about.
// The zero value is a spend for no order (new-account).
type spendSubject struct {
	accountID acme.AccountID
	idents    []acme.Identifier
}

// RateLimitedProblem renders a denial that is about no account or order:
// the global layer's, which web decides in process. Its extension members
// are those of every other layer's refusal.
func RateLimitedProblem(d ratelimit.Decision, helpURL string) *acme.Problem {
	return rateLimitedProblem(d, helpURL, spendSubject{})
}

// rateLimitedProblem renders a denial. The strictest denied bucket names
// the limit, key and time it frees up, in the detail and in the extension
// members; a denial about identifiers (failed-validation for a hostname,
// duplicate-certificate for the name set, registered-domain for the names
// under it) becomes one subproblem per identifier, carrying it; and when
// several buckets denied, each of the others is a subproblem too.
func rateLimitedProblem(d ratelimit.Decision, helpURL string, sub spendSubject) *acme.Problem {
	p := acme.RateLimited(d.RetryAfter, helpURL, "%s", d.Detail())
	p.RateLimitInfo = rateLimitInfo(d)
	for _, dd := range d.Denied {
		one := func() *acme.Problem {
			q := acme.RateLimited(dd.RetryAfter, "", "%s", dd.Detail())
			q.RateLimitInfo = rateLimitInfo(dd)
			return q
		}
		ids := sub.offending(dd)
		if len(ids) == 0 {
			if len(d.Denied) > 1 {
				p.Subproblems = append(p.Subproblems, one())
			}
			continue
		}
		for _, id := range ids {
			q := one()
			q.Identifier = &id
			p.Subproblems = append(p.Subproblems, q)
		}
	}
	return p
}

// rateLimitInfo is the extension members of the denial d.
func rateLimitInfo(d ratelimit.Decision) *acme.RateLimitInfo {
	q := PolicyOf(d.Policy)
	info := &acme.RateLimitInfo{Limit: d.Limit.String(), Key: d.Key, Remaining: d.Remaining,
		Quota: q.Capacity, Window: q.WindowSeconds(), Count: q.Count, Period: q.PeriodSeconds()}
	if !d.Never {
		info.FreesAt = d.RetryAt()
	}
	return info
}

// offending returns the identifiers of the order that the denial dd is
// about: the hostname of a failed-validation bucket, every identifier of
// a duplicate-certificate bucket, the names under a registered-domain
// bucket. None for the account's own buckets.
func (sub spendSubject) offending(dd ratelimit.Decision) []acme.Identifier {
	if sub.accountID == "" {
		return nil
	}
	var out []acme.Identifier
	switch dd.Limit {
	case ratelimit.FailedValidation:
		for _, id := range sub.idents {
			if ratelimit.FailedValidationKey(string(sub.accountID), id.Value) == dd.Key {
				out = append(out, id)
			}
		}
	case ratelimit.DuplicateCertificate:
		if ratelimit.FQDNSetKey(string(sub.accountID), acme.IdentifierValues(sub.idents)) == dd.Key {
			out = append(out, sub.idents...)
		}
	case ratelimit.RegisteredDomain:
		for _, id := range sub.idents {
			if id.Type != acme.IdentifierDNS {
				continue
			}
			if k, err := ratelimit.RegisteredDomainKey(id.Value); err == nil && k == dd.Key {
				out = append(out, id)
			}
		}
	}
	return out
}
