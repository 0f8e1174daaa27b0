package acme

import (
	"context"
	"math"
	"net/netip"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// newOrderRequests are the buckets a new order touches; see
// RateLimits.NewOrder. The pending-authorizations requests, one per fresh
// authorization, come last.
func newOrderRequests(acct *Account, o *Order, fresh []*Authorization) []ratelimit.Request {
	names := IdentifierValues(o.Identifiers)
	urgent := o.Replaces != "" && o.Urgent
	var reqs []ratelimit.Request
	// An ARI renewal is exempt from order-creation and
	// duplicate-certificate; it still pays the SAN budget, which the
	// renewal planner keeps each account's windows within.
	if o.Replaces == "" {
		reqs = append(reqs,
			ratelimit.Request{Name: ratelimit.OrderCreation, Key: acct.ID},
			ratelimit.Request{Name: ratelimit.DuplicateCertificate, Key: ratelimit.FQDNSetKey(acct.ID, names), CheckOnly: true},
		)
	}
	if !urgent {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.SANBudget, Key: acct.ID, Cost: int64(len(names))})
	}
	for _, n := range names {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.FailedValidation, Key: ratelimit.FailedValidationKey(acct.ID, n), CheckOnly: true})
	}
	for _, d := range registeredDomains(o.Identifiers) {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.RegisteredDomain, Key: d, CheckOnly: true})
	}
	if urgent {
		// Incident mode reserves capacity for the wave: an urgent
		// replacement pays no account-level limit (incident.go).
		return reqs
	}
	for _, a := range fresh {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: acct.ID, Member: a.ID, MemberTime: a.Expires})
	}
	return reqs
}

// ExplainNewOrder predicts what NewOrder would decide for o now, spending
// nothing. Several fresh authorizations are judged together against the
// pending-authorizations bucket, as the real spend would add them.
func (r *RateLimits) ExplainNewOrder(ctx context.Context, acct *Account, o *Order, fresh []*Authorization) (ratelimit.Decision, error) {
	lim := r.state.Load().lim
	reqs := r.withEABOverride(ctx, acct, newOrderRequests(acct, o, nil))
	d, err := lim.Check(ctx, reqs...)
	if err != nil {
		return d, err
	}
	pending := r.withEABOverride(ctx, acct, []ratelimit.Request{{Name: ratelimit.PendingAuthorizations, Key: acct.ID}})
	pd, err := lim.CheckCount(ctx, pending[0], len(fresh))
	if err != nil {
		return d, err
	}
	return mergeDecisions(d, pd), nil
}

// mergeDecisions combines two decisions on disjoint buckets as one batch
// would: denied if either is, the strictest denial (never, then the
// longest wait) first.
func mergeDecisions(a, b ratelimit.Decision) ratelimit.Decision {
	if a.Allowed && b.Allowed {
		if b.Limit != 0 && (a.Limit == 0 || b.Remaining < a.Remaining) {
			return b
		}
		return a
	}
	denied := append(append([]ratelimit.Decision{}, a.Denied...), b.Denied...)
	strictest := denied[0]
	for _, d := range denied[1:] {
		if (d.Never && !strictest.Never) || (d.Never == strictest.Never && d.RetryAfter > strictest.RetryAfter) {
			strictest = d
		}
	}
	strictest.Denied = denied
	strictest.Allowed = false
	return strictest
}

// Status reads buckets without spending (ratelimit.Limiter.Status).
func (r *RateLimits) Status(ctx context.Context, reqs ...ratelimit.Request) ([]ratelimit.BucketStatus, error) {
	return r.state.Load().lim.Status(ctx, reqs...)
}

// Reset makes a bucket fresh (an administrator's action).
func (r *RateLimits) Reset(ctx context.Context, bucketKey string) error {
	return r.state.Load().lim.Reset(ctx, bucketKey)
}

// Config returns the limiter's current configuration.
func (r *RateLimits) Config() ratelimit.Policy { return r.state.Load().lim.Policy() }

// AccountRequests names the limiter buckets of an account: its own
// (order-creation, san-budget, pending-authorizations), failed-validation
// for each of names, and duplicate-certificate and registered-domain for
// each name set and name.
func AccountRequests(accountID string, names []string, sets [][]string) []ratelimit.Request {
	reqs := []ratelimit.Request{
		{Name: ratelimit.OrderCreation, Key: accountID},
		{Name: ratelimit.SANBudget, Key: accountID},
		{Name: ratelimit.PendingAuthorizations, Key: accountID},
	}
	seen := map[string]bool{}
	for _, n := range names {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.FailedValidation, Key: ratelimit.FailedValidationKey(accountID, n)})
	}
	var idents []Identifier
	for _, set := range sets {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.DuplicateCertificate, Key: ratelimit.FQDNSetKey(accountID, set)})
		for _, n := range set {
			idents = append(idents, Identifier{Type: IdentifierDNS, Value: n})
		}
	}
	for _, n := range names {
		idents = append(idents, Identifier{Type: IdentifierDNS, Value: n})
	}
	for _, d := range registeredDomains(idents) {
		if !seen[d] {
			seen[d] = true
			reqs = append(reqs, ratelimit.Request{Name: ratelimit.RegisteredDomain, Key: d})
		}
	}
	return reqs
}

// IPRequests names the limiter buckets of a client address kept by the
// backend (account-creation); the global bucket lives in each replica's
// ratelimit.Edge.
func IPRequests(ip netip.Addr) []ratelimit.Request {
	return []ratelimit.Request{{Name: ratelimit.AccountCreation, Key: ratelimit.IPKey(ip)}}
}

// statusWindow is how far back AccountBuckets looks for names: the longest
// default window (duplicate-certificate, 168 h).
const statusWindow = 7 * 24 * time.Hour

// RenewalsPerHour is how many renewals of names identifiers an hour the
// account can make without a 429 from the limits a renewal pays
// (san-budget; order-creation and duplicate-certificate exempt renewals):
// the renewal planner keeps each account's windows within it. +Inf when
// san-budget is off.
func (r *RateLimits) RenewalsPerHour(accountID string, names int) float64 {
	cfg := r.state.Load().lim.Policy()
	if !cfg.Enabled[ratelimit.SANBudget] {
		return math.Inf(1)
	}
	l, ok := cfg.Overrides[ratelimit.BucketKey(ratelimit.SANBudget, accountID)]
	if !ok {
		l = cfg.Limits[ratelimit.SANBudget]
	}
	if l.Period <= 0 || l.Count <= 0 {
		return math.Inf(1)
	}
	return float64(l.Count) * float64(time.Hour) / float64(l.Period) / float64(max(names, 1))
}
