// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"slices"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// ExplainNewOrder predicts what NewOrder would decide for o now, spending
// nothing. Several fresh authorizations are judged together against the
// pending-authorizations bucket, as the real spend would add them.
func (r *Adapter) ExplainNewOrder(ctx context.Context, acct *acme.Account, o *acme.Order, fresh []*acme.Authorization) (ratelimit.Decision, error) {
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
