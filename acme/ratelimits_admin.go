package acme

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// limitsOrder is o, placed by acct, as the limits see it; overrideKey is
// the account's group override.
func limitsOrder(acct *Account, o *Order, overrideKey string) ratelimit.Order {
	return ratelimit.Order{ID: o.ID, Account: acct.ID, OverrideKey: overrideKey, Names: IdentifierValues(o.Identifiers),
		Renewal: o.Replaces != "", Urgent: o.Urgent}
}

// limitsOrder is o with the override of acct's EAB label.
func (r *RateLimits) limitsOrder(ctx context.Context, acct *Account, o *Order) ratelimit.Order {
	return limitsOrder(acct, o, r.overrideKey(ctx, acct))
}

// newOrderRequests are ratelimit.NewOrderRequests of o and its new
// authorizations.
func newOrderRequests(o ratelimit.Order, fresh []*Authorization) []ratelimit.Request {
	authzs := make([]ratelimit.Authz, len(fresh))
	for i, a := range fresh {
		authzs[i] = ratelimit.Authz{ID: a.ID, Expires: a.Expires}
	}
	return ratelimit.NewOrderRequests(o, authzs)
}

// ExplainNewOrder predicts what NewOrder would decide for o now, spending
// nothing. Several fresh authorizations are judged together against the
// pending-authorizations bucket, as the real spend would add them.
func (r *RateLimits) ExplainNewOrder(ctx context.Context, acct *Account, o *Order, fresh []*Authorization) (ratelimit.Decision, error) {
	lim := r.state.Load().lim
	var (
		checks  []ratelimit.Request
		pending *ratelimit.Request
		adds    int
	)
	for _, rq := range newOrderRequests(r.limitsOrder(ctx, acct, o), fresh) {
		if rq.Name == ratelimit.PendingAuthorizations {
			pending, adds = &rq, adds+1
			continue
		}
		checks = append(checks, rq)
	}
	d, err := lim.Check(ctx, checks...)
	if err != nil || pending == nil {
		return d, err
	}
	pd, err := lim.CheckCount(ctx, *pending, adds)
	if err != nil {
		return d, err
	}
	return mergeDecisions(d, pd), nil
}

// mergeDecisions combines two decisions on disjoint buckets as one batch
// would: denied if either is, the strictest denial (never, then the
// longest wait) first; the buckets of both.
func mergeDecisions(a, b ratelimit.Decision) ratelimit.Decision {
	buckets := slices.Concat(a.Buckets, b.Buckets)
	if a.Allowed && b.Allowed {
		d := a
		if b.Limit != 0 && (a.Limit == 0 || b.Remaining < a.Remaining) {
			d = b
		}
		d.Buckets = buckets
		return d
	}
	denied := slices.Concat(a.Denied, b.Denied)
	strictest := denied[0]
	for _, d := range denied[1:] {
		if (d.Never && !strictest.Never) || (d.Never == strictest.Never && d.RetryAfter > strictest.RetryAfter) {
			strictest = d
		}
	}
	strictest.Denied, strictest.Buckets = denied, buckets
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
func (r *RateLimits) Config() ratelimit.Config { return r.state.Load().lim.Config() }

// statusWindow is how far back AccountBuckets looks for names: the longest
// default window (duplicate-certificate, 168 h).
const statusWindow = 7 * 24 * time.Hour

// RenewalsPerHour is how many renewals of names identifiers an hour the
// account can make without a 429 from the limits a renewal pays
// (san-budget; order-creation and duplicate-certificate exempt renewals):
// the renewal planner keeps each account's windows within it. +Inf when
// san-budget is off.
func (r *RateLimits) RenewalsPerHour(accountID string, names int) float64 {
	l, ok := r.state.Load().lim.Policy(ratelimit.Request{Name: ratelimit.SANBudget, Key: accountID})
	if !ok || l.Period <= 0 || l.Count <= 0 {
		return math.Inf(1)
	}
	return float64(l.Count) * float64(time.Hour) / float64(l.Period) / float64(max(names, 1))
}
