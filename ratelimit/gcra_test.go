// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"testing"
	"time"
)

// us converts a duration to microseconds, for readable tables.
func us(d time.Duration) int64 { return d.Microseconds() }

// TestGCRA runs the worked example of gcra.go: 20 per hour, burst 5, so
// T = 180 s and the capacity is 900 s. Times are offsets from t0.
func TestGCRA(t *testing.T) {
	const t0 = int64(1_767_225_600_000_000) // 2026-01-01T00:00:00Z
	T := us(180 * time.Second)
	tests := []struct {
		name          string
		tat, now      int64 // offsets from t0
		cost          int64
		wantTAT       int64 // offset from t0
		wantAllowed   bool
		wantNever     bool
		wantRetry     int64
		wantRemaining int64
	}{
		{name: "fresh bucket, first spend", tat: -t0, now: 0, cost: 1, wantTAT: T, wantAllowed: true, wantRemaining: 4},
		{name: "fifth spend empties the burst", tat: 4 * T, now: 0, cost: 1, wantTAT: 5 * T, wantAllowed: true, wantRemaining: 0},
		{name: "sixth spend denied for one interval", tat: 5 * T, now: 0, cost: 1, wantTAT: 5 * T, wantRetry: T},
		{name: "1 s before retryAfter", tat: 5 * T, now: T - us(time.Second), cost: 1, wantTAT: 5 * T, wantRetry: us(time.Second)},
		{name: "1 µs before retryAfter", tat: 5 * T, now: T - 1, cost: 1, wantTAT: 5 * T, wantRetry: 1},
		{name: "exactly at retryAfter", tat: 5 * T, now: T, cost: 1, wantTAT: 6 * T, wantAllowed: true},
		{name: "cost 3 with 2 left", tat: 6 * T, now: 3 * T, cost: 3, wantTAT: 6 * T, wantRetry: T, wantRemaining: 2},
		{name: "cost 2 with 2 left", tat: 6 * T, now: 3 * T, cost: 2, wantTAT: 8 * T, wantAllowed: true},
		{name: "cost 3 retried at its retryAfter", tat: 6 * T, now: 4 * T, cost: 3, wantTAT: 9 * T, wantAllowed: true},
		{name: "cost equal to the burst on a fresh bucket", tat: 0, now: 0, cost: 5, wantTAT: 5 * T, wantAllowed: true},
		{name: "cost above the burst can never pass", tat: 0, now: 0, cost: 6, wantTAT: 0, wantNever: true, wantRemaining: 5},
		{name: "cost above the burst on a used bucket", tat: 2 * T, now: 0, cost: 100, wantTAT: 2 * T, wantNever: true, wantRemaining: 3},
		{name: "idle 10 h holds only the burst", tat: 5 * T, now: us(10 * time.Hour), cost: 1, wantTAT: us(10*time.Hour) + T, wantAllowed: true, wantRemaining: 4},
		{name: "status query costs nothing", tat: 2 * T, now: 0, cost: 0, wantTAT: 2 * T, wantAllowed: true, wantRemaining: 3},
		{name: "partial token rounds down", tat: us(100 * time.Second), now: 0, cost: 1, wantTAT: us(280 * time.Second), wantAllowed: true, wantRemaining: 3},
		{name: "TAT beyond a lowered capacity", tat: us(2000 * time.Second), now: 0, cost: 1, wantTAT: us(2000 * time.Second), wantRetry: us(1280 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gcra(t0+tt.tat, t0+tt.now, T, 5, tt.cost)
			want := rateVerdict{tat: t0 + tt.wantTAT, allowed: tt.wantAllowed, never: tt.wantNever, retryAfter: tt.wantRetry, remaining: tt.wantRemaining}
			if got != want {
				t.Errorf("gcra(tat=t0%+d, now=t0%+d, cost=%d)\n got %+v\nwant %+v", tt.tat, tt.now, tt.cost, got, want)
			}
		})
	}
}

// TestGCRARetryIsExact drains buckets of several shapes with several costs
// and checks, at every denial, that the request fails 1 µs before
// retryAfter and succeeds exactly at it.
func TestGCRARetryIsExact(t *testing.T) {
	limits := []Limit{
		{Count: 20, Period: time.Hour, Burst: 5},
		{Count: 200, Period: time.Minute, Burst: 20},
		{Count: 3, Period: time.Second, Burst: 1}, // T truncates to 333,333 µs
		{Count: 50, Period: 168 * time.Hour, Burst: 50},
	}
	for _, l := range limits {
		T := l.Emission()
		for cost := int64(1); cost <= l.Burst; cost++ {
			tat, now := int64(0), int64(1_000_000_000)
			for range 3 * l.Burst {
				v := gcra(tat, now, T, l.Burst, cost)
				if v.allowed {
					tat = v.tat
					now += T / 3
					continue
				}
				if early := gcra(tat, now+v.retryAfter-1, T, l.Burst, cost); early.allowed || early.retryAfter != 1 {
					t.Fatalf("%+v cost %d: 1 µs early = %+v, want denied with 1 µs to go", l, cost, early)
				}
				if at := gcra(tat, now+v.retryAfter, T, l.Burst, cost); !at.allowed {
					t.Fatalf("%+v cost %d: at retryAfter %d µs = %+v, want allowed", l, cost, v.retryAfter, at)
				}
				now += v.retryAfter
			}
		}
	}
}

// TestGCRABurstAccumulation: however long a bucket idles, it never holds
// more than its burst.
func TestGCRABurstAccumulation(t *testing.T) {
	T := us(180 * time.Second)
	for _, idle := range []time.Duration{15 * time.Minute, time.Hour, 30 * 24 * time.Hour} {
		tat, now := int64(0), int64(1_000_000_000)
		allowed := 0
		for range 10 {
			if v := gcra(tat, now, T, 5, 1); v.allowed {
				tat = v.tat
				allowed++
			}
		}
		now += us(idle)
		allowed = 0
		for range 10 {
			if v := gcra(tat, now, T, 5, 1); v.allowed {
				tat = v.tat
				allowed++
			}
		}
		if allowed != 5 {
			t.Errorf("after %v idle: %d allowed at once, want the burst of 5", idle, allowed)
		}
	}
}

func TestGCRARefund(t *testing.T) {
	const now = int64(1_000_000_000)
	T := us(180 * time.Second)
	tests := []struct {
		name string
		tat  int64
		cost int64
		want int64
	}{
		{"refund 2 of 5 spent", now + 5*T, 2, now + 3*T},
		{"refund all 5", now + 5*T, 5, now},
		{"refund more than spent stops at now", now + 2*T, 5, now},
		{"huge refund does not overflow", now + 2*T, 1 << 62, now},
		{"partial token refund stops at now", now + 100_000_000, 1, now},
		{"full bucket unchanged", now - 5, 3, now - 5},
		{"fresh bucket unchanged", 0, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcraRefund(tt.tat, now, T, tt.cost); got != tt.want {
				t.Errorf("gcraRefund(now%+d, cost %d) = now%+d, want now%+d", tt.tat-now, tt.cost, got-now, tt.want-now)
			}
		})
	}
}
