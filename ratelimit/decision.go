// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"fmt"
	"time"
)

// Decision is the limiter's answer to one request. A denial is a Decision
// with Allowed false, not an error: acme turns it into a rateLimited problem
// whose detail is [Decision.Detail] and whose Retry-After is RetryAfter,
// and each entry of Denied can become a subproblem.
//
// An allowed Decision describes the bucket with the fewest tokens or slots
// left; a denied one describes the strictest denial, the one with the
// longest wait. Buckets has the part of every bucket, so that the
// RateLimit response fields can describe the one they choose without
// reading the limiter again.
type Decision struct {
	// Allowed reports that every bucket of the request fits.
	Allowed bool
	// Limit is the limit this decision describes; 0 when no enabled limit
	// applied to the request.
	Limit Name
	// Key is that bucket's key, without the limit name.
	Key string
	// Remaining is the tokens or member slots left in that bucket.
	Remaining int64
	// RetryAfter is the exact time from At until the request may succeed;
	// 0 when allowed. Not rounded: the HTTP layer rounds up.
	RetryAfter time.Duration
	// Never reports a request larger than the limit's burst: it can never
	// succeed, and RetryAfter is 0.
	Never bool
	// ResetAt is when the bucket will be entirely full (rate) or empty
	// (count) again if nothing more is spent.
	ResetAt time.Time
	// At is the source's clock when it decided.
	At time.Time
	// Policy is the limit the bucket was held to: its own override, else
	// its group's ([Request.OverrideKey]), else the default of Limit.
	Policy Limit
	// Denied lists every denied bucket, in request order, when Allowed is
	// false. Its entries have no Denied or Buckets of their own.
	Denied []Decision
	// Buckets is each bucket's part in the decision, one per request of
	// an enabled limit, in request order (an allowed one's Remaining and
	// ResetAt are after the request). Its entries have no Denied or
	// Buckets of their own.
	Buckets []Decision
}

// Detail describes a denial for the client: the limit, the key, and the
// time it frees up in RFC 3339, rounded up to the second so a client that
// waits until then is not refused again. It is "" for an allowed decision.
func (d Decision) Detail() string {
	switch {
	case d.Allowed:
		return ""
	case d.Never:
		return fmt.Sprintf("%s limit for %q: the request is larger than the limit's burst and can never be allowed", d.Limit, d.Key)
	default:
		return fmt.Sprintf("%s limit exceeded for %q: retry after %s", d.Limit, d.Key, d.RetryAt().Format(time.RFC3339))
	}
}

// RetryAt is when a denied request may succeed: At + RetryAfter in UTC,
// rounded up to the whole second, as every time a client is told is, so
// that a client that waits until then is not refused again.
func (d Decision) RetryAt() time.Time {
	t := d.At.Add(d.RetryAfter).UTC()
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}

// CeilSeconds is d in whole seconds, rounded up: how a wait is told to a
// client (Retry-After, RFC 9110 §10.2.3, the RateLimit fields, a
// problem's window), so that a client that waits that long is not
// refused again.
func CeilSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return s
}

// decide builds the Decision of a batch of limiter ops.
func decide(ops []Op, names []Name, res *BatchResult) Decision {
	now := time.UnixMicro(res.Now)
	buckets := make([]Decision, len(res.Results))
	var denied []Decision
	best := -1
	for i, r := range res.Results {
		buckets[i] = Decision{
			Allowed:    r.Allowed,
			Limit:      names[i],
			Key:        ops[i].Key[len(names[i].String())+1:],
			Remaining:  r.Remaining,
			RetryAfter: time.Duration(r.RetryAfter) * time.Microsecond,
			Never:      r.Never,
			ResetAt:    time.UnixMicro(r.TAT),
			At:         now,
			Policy:     ops[i].Limit,
		}
		switch {
		case r.Allowed && len(denied) == 0:
			if best < 0 || r.Remaining < res.Results[best].Remaining {
				best = i
			}
		case !r.Allowed:
			if len(denied) == 0 || stricter(r, res.Results[best]) {
				best = i
			}
			denied = append(denied, buckets[i])
		}
	}
	d := buckets[best]
	d.Denied, d.Buckets = denied, buckets
	return d
}

// stricter reports whether denial a outranks denial b: one that can never
// succeed first, then the longest wait; on a tie the earlier request wins.
func stricter(a, b OpResult) bool {
	if a.Never != b.Never {
		return a.Never
	}
	return !b.Never && a.RetryAfter > b.RetryAfter
}

// Join is the Decision of a and b taken together, as if one Spend had
// decided both sets of requests: allowed when both are, headed by the
// strictest denial (one that can never succeed first, then the longest
// wait) or else by the bucket with the least left, with the buckets and
// denials of a, then b. A zero Decision (no request) leaves the other.
func Join(a, b Decision) Decision {
	if len(a.Buckets) == 0 && a.Allowed {
		return b
	}
	if len(b.Buckets) == 0 && b.Allowed {
		return a
	}
	head := a
	switch {
	case a.Allowed && !b.Allowed:
		head = b
	case !a.Allowed && !b.Allowed:
		if stricter(OpResult{Never: b.Never, RetryAfter: b.RetryAfter.Microseconds()}, OpResult{Never: a.Never, RetryAfter: a.RetryAfter.Microseconds()}) {
			head = b
		}
	case a.Allowed && b.Allowed && b.Remaining < a.Remaining:
		head = b
	}
	head.Denied = append(append([]Decision(nil), a.Denied...), b.Denied...)
	head.Buckets = append(append([]Decision(nil), a.Buckets...), b.Buckets...)
	if len(head.Denied) == 0 {
		head.Denied = nil
	}
	return head
}
