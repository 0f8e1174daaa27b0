// SPDX-License-Identifier: Apache-2.0

package ratelimit

import "slices"

// This file is the exact-count arithmetic as pure functions of now, shared
// by every backend written in Go (the Redis Lua script mirrors it).
//
// A count bucket is a set of members, each with a timestamp in microseconds.
// A member counts while ts > now − window:
//
//   - duplicate-certificate stores the issue time and a window of 168 h, so
//     a certificate issued at t counts until t + 168 h, exclusive;
//   - pending-authorizations stores the authorization's expiry and a window
//     of 0, so it counts while ts > now, until it expires.
//
// Worked example, max 5 per 168 h, certificates issued at day 0, 1, 2, 3, 4:
// on day 5 a sixth is denied and may retry when the day-0 certificate leaves
// the window, at day 7 exactly (retry after 2 days). Revoking the day-2
// certificate removes its member and admits the sixth at once.

// counts reports whether a member timestamped ts still counts at now.
func counts(ts, now, window int64) bool { return ts > now-window }

// pruneMembers deletes the members of m that no longer count at now. This
// is the lazy expiry of count buckets.
func pruneMembers(m map[string]int64, now, window int64) {
	for k, ts := range m {
		if ts != 0 && !counts(ts, now, window) {
			delete(m, k)
		}
	}
}

// countVerdict is the outcome of one exact-count decision.
type countVerdict struct {
	allowed bool
	// store is set when the member is new and counts, so an add must
	// insert it; an existing member or one already out of the window is
	// admitted without a change.
	store bool
	// retryAfter is the exact time, in microseconds, from now until enough
	// members leave for the add to be admitted; 0 when allowed.
	retryAfter int64
	// remaining is how many more members fit after the decision.
	remaining int64
}

// countAdd decides whether member, timestamped ts, may join members under
// capacity (the limit's Max) at now. members must hold only counting members
// (see pruneMembers); countAdd does not modify it. Adding a member that is
// already there is idempotent and always admitted, so a retried finalize
// cannot count one certificate twice. A member whose timestamp no longer
// counts is admitted and not stored. An empty member, or a ts of 0, asks
// whether a new counting member would fit.
func countAdd(members map[string]int64, now, window, capacity int64, member string, ts int64) countVerdict {
	n := int64(len(members))
	if _, ok := members[member]; ok && member != "" {
		return countVerdict{allowed: true, remaining: nonNegative(capacity - n)}
	}
	if ts != 0 && !counts(ts, now, window) {
		return countVerdict{allowed: true, remaining: nonNegative(capacity - n)}
	}
	if n+1 <= capacity {
		return countVerdict{allowed: true, store: true, remaining: capacity - n - 1}
	}
	return countVerdict{retryAfter: leaveAfter(members, now, window, n-capacity+1)}
}

// leaveAfter returns the time from now until k members have left the
// window: the k-th oldest timestamp plus the window. With the bucket at its
// maximum k is 1 and this is when the oldest member leaves (for
// pending-authorizations, the soonest expiry).
func leaveAfter(members map[string]int64, now, window, k int64) int64 {
	ts := make([]int64, 0, len(members))
	for _, t := range members {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts[k-1] + window - now
}

// countRemaining is how many more members fit under capacity.
func countRemaining(members map[string]int64, capacity int64) int64 {
	return nonNegative(capacity - int64(len(members)))
}

// countReset is the count bucket's analogue of a TAT: the instant the last
// member leaves and the bucket is entirely free, or 0 when it is empty
// (Eval reports at least now).
func countReset(members map[string]int64, window int64) int64 {
	var last int64
	for _, ts := range members {
		last = max(last, ts+window)
	}
	return last
}

func nonNegative(n int64) int64 { return max(n, 0) }
