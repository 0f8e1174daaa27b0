// SPDX-License-Identifier: Apache-2.0

package sourcetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// trials is how many times each race runs; every one must be exact.
const trials = 20

// raceSizes are the numbers of simultaneous requests per race.
func raceSizes() []int { return []int{10, 50, 200} }

// concurrencyPolicy has limits with 10 to spare after each race's setup.
func concurrencyPolicy() ratelimit.Policy {
	cfg := ratelimit.DefaultPolicy()
	cfg.Limits[ratelimit.OrderCreation] = ratelimit.Limit{Count: 10, Period: time.Hour, Burst: 20}
	cfg.Limits[ratelimit.SANBudget] = ratelimit.Limit{Count: 10, Period: time.Hour, Burst: 25}
	cfg.Limits[ratelimit.PendingAuthorizations] = ratelimit.Limit{Max: 30}
	cfg.Limits[ratelimit.DuplicateCertificate] = ratelimit.Limit{Max: 10, Window: 168 * time.Hour}
	return cfg
}

// replicas returns two Limiters sharing src, as two weir replicas share one
// backend.
func replicas(t *testing.T, cfg ratelimit.Policy, src ratelimit.Source, now func() time.Time) [2]*ratelimit.Limiter {
	t.Helper()
	var out [2]*ratelimit.Limiter
	for i := range out {
		l, err := ratelimit.New(cfg, src, now)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		out[i] = l
	}
	return out
}

// race releases n Spends at once, alternating between the replicas, and
// returns how many were allowed.
func race(t *testing.T, lims [2]*ratelimit.Limiter, n int, reqs func(i int) []ratelimit.Request) int {
	t.Helper()
	return Race(t, n, func(i int) (ratelimit.Decision, error) {
		d, _, err := lims[i%2].Spend(t.Context(), reqs(i)...)
		return d, err
	})
}

// Race releases n calls of spend at once, from n goroutines, and returns
// how many were allowed; an error fails the test.
func Race(t *testing.T, n int, spend func(i int) (ratelimit.Decision, error)) int {
	t.Helper()
	var (
		wg       sync.WaitGroup
		admitted atomic.Int64
		failed   atomic.Pointer[error]
		gate     = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-gate
			d, err := spend(i)
			switch {
			case err != nil:
				failed.Store(&err)
			case d.Allowed:
				admitted.Add(1)
			}
		})
	}
	close(gate)
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatalf("Spend: %v", *err)
	}
	return int(admitted.Load())
}

// mustSpend spends reqs, which must be allowed.
func mustSpend(t *testing.T, l *ratelimit.Limiter, reqs ...ratelimit.Request) {
	t.Helper()
	d, _, err := l.Spend(t.Context(), reqs...)
	if err != nil || !d.Allowed {
		t.Fatalf("setup Spend = %+v, %v; want allowed", d, err)
	}
}

// testConcurrency races N simultaneous requests through two replicas at a
// bucket with exactly 10 left, for a rate limit, both exact counts and a
// two-bucket batch, on a frozen clock: exactly min(N, 10) must pass, in
// every trial.
func testConcurrency(t *testing.T, newSource newSourceFunc) {
	type setup func(t *testing.T, l *ratelimit.Limiter, key string, expires time.Time)
	tests := []struct {
		name  string
		setup setup
		reqs  func(key string, i int, expires time.Time) []ratelimit.Request
		after func(t *testing.T, l *ratelimit.Limiter, key string, expires time.Time)
	}{
		{
			name: "rate",
			setup: func(t *testing.T, l *ratelimit.Limiter, key string, _ time.Time) {
				mustSpend(t, l, ratelimit.Request{Name: ratelimit.OrderCreation, Key: key, Cost: 10})
			},
			reqs: func(key string, _ int, _ time.Time) []ratelimit.Request {
				return []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: key}}
			},
		},
		{
			name: "pending-authorizations",
			setup: func(t *testing.T, l *ratelimit.Limiter, key string, expires time.Time) {
				var reqs []ratelimit.Request
				for i := range 20 {
					reqs = append(reqs, ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: key, Member: fmt.Sprintf("old-%d", i), MemberTime: expires})
				}
				mustSpend(t, l, reqs...)
			},
			reqs: func(key string, i int, expires time.Time) []ratelimit.Request {
				return []ratelimit.Request{{Name: ratelimit.PendingAuthorizations, Key: key, Member: fmt.Sprintf("authz-%d", i), MemberTime: expires}}
			},
		},
		{
			name: "duplicate-certificate",
			reqs: func(key string, i int, _ time.Time) []ratelimit.Request {
				return []ratelimit.Request{{Name: ratelimit.DuplicateCertificate, Key: key, Member: fmt.Sprintf("serial-%d", i)}}
			},
		},
		{
			// Overlapping two-bucket batches taken in both orders: no
			// deadlock, and no partial write from a denied batch (b
			// starts with 15, so it must end with exactly 5).
			name: "two buckets, both orders",
			setup: func(t *testing.T, l *ratelimit.Limiter, key string, _ time.Time) {
				mustSpend(t, l,
					ratelimit.Request{Name: ratelimit.OrderCreation, Key: key, Cost: 10},
					ratelimit.Request{Name: ratelimit.SANBudget, Key: key, Cost: 10})
			},
			reqs: func(key string, i int, _ time.Time) []ratelimit.Request {
				a := ratelimit.Request{Name: ratelimit.OrderCreation, Key: key}
				b := ratelimit.Request{Name: ratelimit.SANBudget, Key: key}
				if i%4 < 2 {
					return []ratelimit.Request{a, b}
				}
				return []ratelimit.Request{b, a}
			},
			after: func(t *testing.T, l *ratelimit.Limiter, key string, _ time.Time) {
				d, err := l.Check(t.Context(), ratelimit.Request{Name: ratelimit.SANBudget, Key: key, Cost: 5})
				if err != nil || !d.Allowed || d.Remaining != 0 {
					t.Errorf("san-budget after the race: Check(5) = %+v, %v; want allowed with 0 left (exactly 5 were left)", d, err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, newSource)
			lims := replicas(t, concurrencyPolicy(), e.src, e.clock.Now)
			expires := e.clock.Now().Add(time.Hour)
			for _, n := range raceSizes() {
				for trial := range trials {
					key := fmt.Sprintf("acct-%d-%d", n, trial)
					if tt.setup != nil {
						tt.setup(t, lims[0], key, expires)
					}
					got := race(t, lims, n, func(i int) []ratelimit.Request { return tt.reqs(key, i, expires) })
					if want := min(n, 10); got != want {
						t.Errorf("N=%d trial %d: %d admitted, want %d", n, trial+1, got, want)
					}
					if tt.after != nil {
						tt.after(t, lims[1], key, expires)
					}
				}
			}
		})
	}
}
