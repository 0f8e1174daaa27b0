// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"maps"
	"testing"
	"time"
)

// TestCountAdd runs the worked example of count.go: at most 5 certificates
// per 168 h, issued on days 0 to 4; times are offsets in days from t0.
func TestCountAdd(t *testing.T) {
	const t0 = int64(1_767_225_600_000_000)
	day := us(24 * time.Hour)
	week := 7 * day
	fiveIssued := func() map[string]int64 {
		return map[string]int64{"c0": t0, "c1": t0 + day, "c2": t0 + 2*day, "c3": t0 + 3*day, "c4": t0 + 4*day}
	}
	tests := []struct {
		name     string
		members  map[string]int64
		max      int64
		now      int64 // offset from t0
		member   string
		ts       int64 // offset from t0, unless tsAbsent (ts 0)
		want     countVerdict
		tsAbsent bool
	}{
		{name: "room left", members: map[string]int64{"c0": t0}, max: 5, now: day, member: "new", ts: day,
			want: countVerdict{allowed: true, store: true, remaining: 3}},
		{name: "full: retry when the oldest leaves", members: fiveIssued(), max: 5, now: 5 * day, member: "new", ts: 5 * day,
			want: countVerdict{retryAfter: 2 * day}},
		{name: "existing member is idempotent", members: fiveIssued(), max: 5, now: 5 * day, member: "c2", ts: 5 * day,
			want: countVerdict{allowed: true}},
		{name: "member outside the window is not stored", members: fiveIssued(), max: 5, now: 5 * day, member: "old", ts: -2 * day,
			want: countVerdict{allowed: true}},
		{name: "empty member asks about a new one", members: fiveIssued(), max: 6, now: 5 * day, member: "", tsAbsent: true,
			want: countVerdict{allowed: true, store: true, remaining: 0}},
		{name: "lowered max: wait for the 3rd oldest", members: fiveIssued(), max: 3, now: 5 * day, member: "new", ts: 5 * day,
			want: countVerdict{retryAfter: 2*day + week - 5*day}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := maps.Clone(tt.members)
			ts := t0 + tt.ts
			if tt.tsAbsent {
				ts = 0
			}
			got := countAdd(tt.members, t0+tt.now, week, tt.max, tt.member, ts)
			if got != tt.want {
				t.Errorf("countAdd = %+v, want %+v", got, tt.want)
			}
			if !maps.Equal(before, tt.members) {
				t.Errorf("countAdd modified members: %v, was %v", tt.members, before)
			}
		})
	}
}

// TestCountPending: with a window of 0 a member counts until its
// timestamp, its expiry, and Retry-After is the soonest expiry.
func TestCountPending(t *testing.T) {
	const now = int64(1_000_000_000)
	m := us(time.Minute)
	members := map[string]int64{"a1": now + 30*m, "a2": now + 10*m, "a3": now + 20*m}
	if got, want := countAdd(members, now, 0, 3, "a4", now+60*m), (countVerdict{retryAfter: 10 * m}); got != want {
		t.Errorf("full: countAdd = %+v, want %+v", got, want)
	}
	pruneMembers(members, now+10*m, 0)
	if _, ok := members["a2"]; ok || len(members) != 2 {
		t.Errorf("after a2's expiry: members = %v, want a1 and a3", members)
	}
	if got, want := countAdd(members, now+10*m, 0, 3, "a4", now+60*m), (countVerdict{allowed: true, store: true}); got != want {
		t.Errorf("after a2's expiry: countAdd = %+v, want %+v", got, want)
	}
	if got, want := countReset(members, 0), now+30*m; got != want {
		t.Errorf("countReset = %d, want the latest expiry %d", got, want)
	}
}

// TestCountWindowBoundary: a member counts while ts > now − window, so it
// leaves exactly at ts + window.
func TestCountWindowBoundary(t *testing.T) {
	const ts, window = int64(1_000_000), int64(500)
	tests := []struct {
		now  int64
		want bool
	}{
		{ts, true},
		{ts + window - 1, true},
		{ts + window, false},
		{ts + window + 1, false},
	}
	for _, tt := range tests {
		if got := counts(ts, tt.now, window); got != tt.want {
			t.Errorf("counts(ts, ts%+d, %d) = %v, want %v", tt.now-ts, window, got, tt.want)
		}
	}
}
