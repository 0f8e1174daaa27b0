// SPDX-License-Identifier: Apache-2.0

package ratelimit

// This file is the generic cell rate algorithm as pure functions of now.
// Every backend decides with exactly this arithmetic (the Redis Lua script
// mirrors it line for line), in integer microseconds, so a decision never
// depends on floating point or on which process made it.
//
// A bucket's only state is its theoretical arrival time (TAT): the instant
// at which the bucket would be full again. With emission interval T (the
// time one token takes to refill) and capacity Burst tokens, the bucket
// holds floor((Burst×T − max(TAT−now, 0)) / T) tokens at time now. A fresh
// or long-idle bucket (TAT <= now) holds exactly Burst tokens: idle time
// never accumulates beyond the burst.
//
// Worked example, 20 orders per hour with burst 5: T = 3600 s / 20 = 180 s
// and the capacity is 5 × 180 s = 900 s.
//
//	t = 0, fresh bucket:          5 spends allowed; TAT 180 s, 360 s, … 900 s; remaining 4, 3, … 0
//	t = 0, a sixth spend:         new TAT would be 1080 s; 1080 − 0 = 1080 s > 900 s: denied,
//	                              retry after 1080 − 0 − 900 = 180 s; remaining 0
//	t = 180 s − 1 µs:             denied, retry after 1 µs
//	t = 180 s:                    1080 − 180 = 900 s <= 900 s: allowed; TAT 1080 s; remaining 0
//	t = 540 s, cost 3:            TAT would be 1620 s; 1620 − 540 = 1080 s > 900 s: denied,
//	                              retry after 180 s; remaining floor((900 − 540) / 180) = 2
//	t = 540 s, refund 2:          TAT 1080 − 360 = 720 s; remaining floor((900 − 180) / 180) = 4
//	t = 540 s, refund 5 more:     TAT max(720 − 900, 540) = 540 s = now: the bucket is full
//	t = 10 h, idle:               TAT <= now: 5 tokens, not 5 + 10 h of refill
//
// A cost larger than Burst can never be allowed, however long the caller
// waits; the verdict says so (never) instead of inventing a retry time.
// Configuration rejects limits where that can happen for a fixed cost.

// rateVerdict is the outcome of one GCRA decision.
type rateVerdict struct {
	// tat is the bucket's TAT after the decision: advanced when allowed,
	// unchanged when denied.
	tat     int64
	allowed bool
	// never is set when cost exceeds the bucket's capacity, so no wait
	// would help; retryAfter is then 0.
	never bool
	// retryAfter is the exact time, in microseconds, from now until the
	// same request would be allowed: at now+retryAfter it is allowed, one
	// microsecond earlier it is not. It is 0 when allowed.
	retryAfter int64
	// remaining is the whole number of tokens left after the decision.
	remaining int64
}

// gcra decides whether cost tokens may be taken at time now from a bucket
// whose TAT is tat, with emission interval emission and capacity burst
// tokens (all times in microseconds). A spend moves the TAT to
// max(tat, now) + cost×emission; it is denied when that would put the TAT
// more than burst×emission ahead of now. The caller stores verdict.tat only
// for an allowed spend; a check is the same computation without the store.
// A cost of 0 is a pure status query and is always allowed.
func gcra(tat, now, emission, burst, cost int64) rateVerdict {
	capacity := burst * emission
	base := max(tat, now)
	if cost > burst {
		return rateVerdict{tat: tat, never: true, remaining: tokensLeft(base, now, emission, capacity)}
	}
	next := base + cost*emission
	if over := next - now - capacity; over > 0 {
		return rateVerdict{tat: tat, retryAfter: over, remaining: tokensLeft(base, now, emission, capacity)}
	}
	return rateVerdict{tat: next, allowed: true, remaining: tokensLeft(next, now, emission, capacity)}
}

// tokensLeft is the number of whole tokens a bucket with the given TAT holds
// at now: floor((capacity − max(tat − now, 0)) / emission), never negative
// (a limit lowered by an override can leave a TAT beyond the new capacity).
func tokensLeft(tat, now, emission, capacity int64) int64 {
	used := max(tat-now, 0)
	if used >= capacity {
		return 0
	}
	return (capacity - used) / emission
}

// gcraRefund returns the TAT after giving cost tokens back to a bucket at
// now: tat − cost×emission, but never below now, because a TAT in the past
// already means a full bucket and going further back would credit tokens
// that were never spent. A bucket that is already full is unchanged.
func gcraRefund(tat, now, emission, cost int64) int64 {
	if tat <= now {
		return tat
	}
	// cost×emission >= tat−now, written to avoid overflow for a huge cost.
	if cost >= (tat-now+emission-1)/emission {
		return now
	}
	return tat - cost*emission
}
