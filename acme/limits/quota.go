// SPDX-License-Identifier: Apache-2.0

package limits

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// What a client is told about its limits: the bucket behind the RateLimit
// and RateLimit-Policy response fields (web formats them), and the
// extension members and per-identifier subproblems of a rateLimited
// problem. docs/rate-limits.md documents both.

// Quota is one limiter bucket as a client sees it in the RateLimit-Policy
// and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11): a policy
// of Capacity units per Window, of which Remaining are left, Reset being
// the effective window.
//
// It is the one description of a limit that clients get: the fields (q,
// w), the members of a rateLimited problem (quota, window, count,
// period) and the quota resource (capacity, window, count, period) all
// take it from here, so that they agree: a limit of 20 per hour with a
// burst of 5 is q=5 per w=900 s (5 × 3 min, the time an empty bucket
// takes to refill), at the sustained rate of count 20 per period 3600 s.
type Quota struct {
	// Limit and Key name the bucket (Key without the "limit:" prefix);
	// Limit 0 is no quota.
	Limit ratelimit.Name
	Key   string
	// Capacity is the policy's quota ("q"): a rate limit's burst, an
	// exact count's maximum.
	Capacity int64
	// Window is the policy's window ("w"): for a rate limit, burst ×
	// emission interval, the time an empty bucket takes to refill, so that
	// Capacity per Window is the sustained rate; for an exact count, its
	// window; 0 when it has none (pending-authorizations).
	Window time.Duration
	// Count per Period is a rate limit's configured rate, of which
	// Capacity can be spent at once; 0 for an exact count.
	Count  int64
	Period time.Duration
	// Remaining is the tokens or member slots left at At ("r").
	Remaining int64
	// Reset is the effective window ("t"), exact (web rounds it up): how
	// long from At until the bucket is whole again (a rate bucket full, a
	// count bucket empty) when Remaining > 0; until one more request fits
	// when Remaining is 0; and on a denial, the request's Retry-After.
	// For a count bucket emptied by a new order it is the time until it
	// is whole again, an upper bound on the wait for one slot.
	Reset time.Duration
	// Denied reports that the request was refused by this bucket (a 429).
	Denied bool
	// At is the limiter's clock when the bucket was read.
	At time.Time
}

// Valid reports whether q describes a bucket.
func (q Quota) Valid() bool { return q.Limit.Valid() }

// setPolicy fills in q's Capacity and Window from l.
func (q *Quota) setPolicy(l ratelimit.Limit) {
	switch l.Kind() {
	case ratelimit.KindRate:
		q.Capacity = l.Burst
		q.Window = time.Duration(l.Burst*l.Emission()) * time.Microsecond
		q.Count, q.Period = l.Count, l.Period
	case ratelimit.KindCount:
		q.Capacity, q.Window = l.Max, l.Window
	}
}

// PolicyOf is the Quota of limit l with only its policy filled in:
// Capacity, Window, Count and Period.
func PolicyOf(l ratelimit.Limit) Quota {
	var q Quota
	q.setPolicy(l)
	return q
}

// WindowSeconds is Window in whole seconds as clients are told it (w):
// rounded up, at least 1; 0 when the limit has no window.
func (q Quota) WindowSeconds() int64 { return wholeSeconds(q.Window) }

// PeriodSeconds is Period in whole seconds, as WindowSeconds.
func (q Quota) PeriodSeconds() int64 { return wholeSeconds(q.Period) }

func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return max(ratelimit.CeilSeconds(d), 1)
}

// QuotaFromDecision is the bucket a limiter decision names.
func QuotaFromDecision(d ratelimit.Decision) Quota {
	l := d.Policy
	q := Quota{Limit: d.Limit, Key: d.Key, Remaining: d.Remaining, Denied: !d.Allowed, At: d.At}
	q.setPolicy(l)
	switch {
	case !d.Allowed && !d.Never:
		q.Reset = d.RetryAfter
	case d.Remaining <= 0 && l.Kind() == ratelimit.KindRate:
		// One token fits once TAT − now ≤ (burst − 1) × T.
		next := d.ResetAt.Add(-time.Duration((l.Burst-1)*l.Emission()) * time.Microsecond)
		q.Reset = max(next.Sub(d.At), 0)
	default:
		q.Reset = max(d.ResetAt.Sub(d.At), 0)
	}
	return q
}

// QuotaFromStatus is the Quota of a bucket read with
// ratelimit.Limiter.Status; false when its limit is disabled.
func QuotaFromStatus(st ratelimit.BucketStatus) (Quota, bool) {
	if !st.Enabled {
		return Quota{}, false
	}
	q := Quota{Limit: st.Name, Key: st.Key, Remaining: st.Remaining, At: st.At}
	q.setPolicy(st.Limit)
	end := st.FullAt
	if st.Remaining <= 0 && !st.NextAt.IsZero() {
		end = st.NextAt
	}
	q.Reset = max(end.Sub(st.At), 0)
	return q, true
}

// AccountQuota reads the account's order-creation bucket without
// spending (with the limit of its EAB label, if any), for the RateLimit
// fields of a request that spent none of the account's buckets; false
// when order-creation is disabled. While the limiter is degraded it reads
// the in-process fallback, which decides then, so that no request waits
// on a failing backend for its response fields.
func (r *Adapter) AccountQuota(ctx context.Context, acct *acme.Account) (Quota, bool, error) {
	st := r.state.Load()
	reqs := []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: string(acct.ID), OverrideKey: r.overrideKey(ctx, acct)}}
	lim := st.lim
	if r.Degrades() && !r.DegradedSince().IsZero() {
		lim = st.cfg.Fallback
	}
	ctx, cancel := context.WithTimeout(ctx, st.cfg.BackendTimeout)
	defer cancel()
	sts, err := lim.Status(ctx, reqs...)
	if err != nil {
		return Quota{}, false, err
	}
	q, ok := QuotaFromStatus(sts[0])
	return q, ok, nil
}

// noteQuota records on the request's acme.RequestEvent the bucket the
// RateLimit fields describe: the denying bucket of a denial (so that
// their effective window is the Retry-After), and for an allowed new
// order the account's own bucket with the least left (order-creation,
// san-budget or pending-authorizations), as the spend left it, and its
// order-creation bucket, which web keeps as a fresh read.
func noteQuota(ctx context.Context, action string, d ratelimit.Decision) {
	re := acme.RequestEventFrom(ctx)
	if re == nil || !d.Limit.Valid() {
		return
	}
	if !d.Allowed {
		re.Quota = d
		return
	}
	if action != "new-order" {
		return
	}
	var best *ratelimit.Decision
	for i, b := range d.Buckets {
		if b.Limit.AccountLevel() && (best == nil || b.Remaining < best.Remaining) {
			best = &d.Buckets[i]
		}
		if b.Limit == ratelimit.OrderCreation {
			re.OrderCreation = b
		}
	}
	if best != nil {
		re.Quota = *best
	}
}
