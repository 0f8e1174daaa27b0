// SPDX-License-Identifier: Apache-2.0

package sourcetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// This file holds the scripted tests: one bucket, one op per batch, every
// field of every result compared with worked numbers.

// orderLimit is 20 per hour, burst 5: T = 180 s, capacity 900 s.
func orderLimit() ratelimit.Limit {
	return ratelimit.Limit{Count: 20, Period: time.Hour, Burst: 5}
}

// testRate walks one GCRA bucket through spends, checks, retries at and
// just before retryAfter, refunds, an impossible cost and an idle period.
func testRate(t *testing.T, newSource newSourceFunc) {
	e := newEnv(t, newSource)
	const key = "order-creation:acct-1"
	op := func(kind ratelimit.OpKind, cost int64) ratelimit.Op {
		return ratelimit.Op{Kind: kind, Key: key, Limit: orderLimit(), Cost: cost}
	}
	const T = 180 * time.Second
	var steps []step
	for i := range int64(5) {
		steps = append(steps, step{
			name: fmt.Sprintf("fresh bucket: spend %d of 5", i+1),
			op:   op(ratelimit.OpSpend, 1),
			want: want{allowed: true, applied: true, remaining: 4 - i, tat: time.Duration(i+1) * T},
		})
	}
	steps = append(steps, []step{
		{name: "sixth spend denied", op: op(ratelimit.OpSpend, 1),
			want: want{retry: T, tat: 5 * T}},
		{name: "status check costs nothing", op: op(ratelimit.OpCheck, 0),
			want: want{allowed: true, tat: 5 * T}},
		{name: "1 s before retryAfter", advance: T - time.Second, op: op(ratelimit.OpSpend, 1),
			want: want{retry: time.Second, tat: 5 * T}},
		{name: "1 µs before retryAfter", advance: time.Second - time.Microsecond, op: op(ratelimit.OpSpend, 1),
			want: want{retry: time.Microsecond, tat: 5 * T}},
		{name: "exactly at retryAfter", advance: time.Microsecond, op: op(ratelimit.OpSpend, 1),
			want: want{allowed: true, applied: true, tat: 6 * T}},
		{name: "t=540 s: cost 3 with 2 left", advance: 2 * T, op: op(ratelimit.OpSpend, 3),
			want: want{retry: T, remaining: 2, tat: 6 * T}},
		{name: "cost 2 check fits, writes nothing", op: op(ratelimit.OpCheck, 2),
			want: want{allowed: true, remaining: 0, tat: 8 * T}},
		{name: "refund 2", op: op(ratelimit.OpRefund, 2),
			want: want{allowed: true, applied: true, remaining: 4, tat: 4 * T}},
		{name: "refund 5 stops at now", op: op(ratelimit.OpRefund, 5),
			want: want{allowed: true, applied: true, remaining: 5, tat: 3 * T}},
		{name: "refund of a full bucket changes nothing", op: op(ratelimit.OpRefund, 1),
			want: want{allowed: true, remaining: 5, tat: 3 * T}},
		{name: "cost above burst can never pass", op: op(ratelimit.OpSpend, 6),
			want: want{never: true, remaining: 5, tat: 3 * T}},
		{name: "after 10 idle hours: still only 5", advance: 10 * time.Hour, op: op(ratelimit.OpSpend, 5),
			want: want{allowed: true, applied: true, remaining: 0, tat: 3*T + 10*time.Hour + 5*T}},
		{name: "and the sixth waits one interval", op: op(ratelimit.OpSpend, 1),
			want: want{retry: T, tat: 3*T + 10*time.Hour + 5*T}},
	}...)
	e.runSteps(steps)
}

// dupLimit is 5 certificates per 168 h.
func dupLimit() ratelimit.Limit { return ratelimit.Limit{Max: 5, Window: 168 * time.Hour} }

// testDuplicateCertificate slides the 168 h window over five certificates:
// Retry-After is when the oldest leaves, a re-add is idempotent, and a
// revocation (remove) frees a slot.
func testDuplicateCertificate(t *testing.T, newSource newSourceFunc) {
	e := newEnv(t, newSource)
	const key = "duplicate-certificate:acct-1:0f1e2d"
	const day = 24 * time.Hour
	const week = 7 * day
	add := func(member string) ratelimit.Op {
		return ratelimit.Op{Kind: ratelimit.OpAdd, Key: key, Limit: dupLimit(), Member: member}
	}
	var steps []step
	for d := range int64(5) {
		steps = append(steps, step{
			name:    fmt.Sprintf("issue on day %d, timestamped with the source's now", d),
			advance: min(time.Duration(d), 1) * day,
			op:      add(fmt.Sprintf("serial-%d", d)),
			want:    want{allowed: true, applied: true, remaining: 4 - d, tat: time.Duration(d)*day + week},
		})
	}
	steps = append(steps, []step{
		{name: "day 5: a sixth waits for day 0's to leave", advance: day, op: add("serial-5"),
			want: want{retry: 2 * day, tat: 4*day + week}},
		{name: "re-adding a counted certificate is idempotent", op: add("serial-3"),
			want: want{allowed: true, tat: 4*day + week}},
		{name: "count without a member", op: ratelimit.Op{Kind: ratelimit.OpCount, Key: key, Limit: dupLimit()},
			want: want{retry: 2 * day, tat: 4*day + week}},
		{name: "1 µs before day 0's leaves", advance: 2*day - time.Microsecond, op: add("serial-5"),
			want: want{retry: time.Microsecond, tat: 4*day + week}},
		{name: "day 7: day 0's has left", advance: time.Microsecond, op: add("serial-5"),
			want: want{allowed: true, applied: true, tat: 7*day + week}},
		{name: "next slot frees when day 1's leaves", op: add("serial-6"),
			want: want{retry: day, tat: 7*day + week}},
		{name: "revoking day 3's frees a slot", op: ratelimit.Op{Kind: ratelimit.OpRemove, Key: key, Limit: dupLimit(), Member: "serial-3"},
			want: want{allowed: true, applied: true, remaining: 1, tat: 7*day + week}},
		{name: "removing it again changes nothing", op: ratelimit.Op{Kind: ratelimit.OpRemove, Key: key, Limit: dupLimit(), Member: "serial-3"},
			want: want{allowed: true, remaining: 1, tat: 7*day + week}},
		{name: "the freed slot admits", op: add("serial-6"),
			want: want{allowed: true, applied: true, tat: 7*day + week}},
		{name: "a member already out of the window is not stored",
			op:   ratelimit.Op{Kind: ratelimit.OpAdd, Key: key, Limit: dupLimit(), Member: "ancient", MemberTime: e.t0},
			want: want{allowed: true, tat: 7*day + week}},
	}...)
	e.runSteps(steps)

	got := e.get(key)[key].Members
	for _, m := range []string{"serial-0", "serial-3", "ancient"} {
		if _, ok := got[m]; ok {
			t.Errorf("member %q is stored, want it gone", m)
		}
	}
	for _, m := range []string{"serial-1", "serial-2", "serial-4", "serial-5", "serial-6"} {
		if _, ok := got[m]; !ok {
			t.Errorf("member %q is missing; stored: %v", m, got)
		}
	}
}

// pendingLimit is 3 pending authorizations.
func pendingLimit() ratelimit.Limit { return ratelimit.Limit{Max: 3} }

// testPendingAuthorizations counts members by their own expiry: Retry-After
// is the soonest expiry, and an expired member frees its slot by itself.
func testPendingAuthorizations(t *testing.T, newSource newSourceFunc) {
	e := newEnv(t, newSource)
	const key = "pending-authorizations:acct-1"
	add := func(member string, expires time.Duration) ratelimit.Op {
		return ratelimit.Op{Kind: ratelimit.OpAdd, Key: key, Limit: pendingLimit(), Member: member, MemberTime: e.t0 + expires.Microseconds()}
	}
	m := time.Minute
	e.runSteps([]step{
		{name: "add a1 expiring at +30m", op: add("a1", 30*m), want: want{allowed: true, applied: true, remaining: 2, tat: 30 * m}},
		{name: "add a2 expiring at +10m", op: add("a2", 10*m), want: want{allowed: true, applied: true, remaining: 1, tat: 30 * m}},
		{name: "add a3 expiring at +20m", op: add("a3", 20*m), want: want{allowed: true, applied: true, remaining: 0, tat: 30 * m}},
		{name: "full: retry at the soonest expiry", op: add("a4", 60*m), want: want{retry: 10 * m, tat: 30 * m}},
		{name: "1 µs before a2 expires", advance: 10*m - time.Microsecond, op: add("a4", 60*m),
			want: want{retry: time.Microsecond, tat: 30 * m}},
		{name: "a2 expired", advance: time.Microsecond, op: add("a4", 60*m),
			want: want{allowed: true, applied: true, remaining: 0, tat: 60 * m}},
		{name: "an already expired authorization is not stored", op: add("a5", 0),
			want: want{allowed: true, remaining: 0, tat: 60 * m}},
		{name: "a1 left pending", op: ratelimit.Op{Kind: ratelimit.OpRemove, Key: key, Limit: pendingLimit(), Member: "a1"},
			want: want{allowed: true, applied: true, remaining: 1, tat: 60 * m}},
		{name: "after all expired: count", advance: 2 * time.Hour, op: ratelimit.Op{Kind: ratelimit.OpCount, Key: key, Limit: pendingLimit()},
			want: want{allowed: true, remaining: 2, tat: 10*m + 2*time.Hour}},
	})
}
