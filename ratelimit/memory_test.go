// SPDX-License-Identifier: Apache-2.0

package ratelimit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

func TestMemorySourceContract(t *testing.T) {
	sourcetest.Run(t, func(t *testing.T, now func() time.Time) ratelimit.Source {
		return ratelimit.NewMemorySource(now)
	})
}

// TestMemorySweep checks that idle buckets are dropped, lazily on write and
// by Sweep, and that live ones stay.
func TestMemorySweep(t *testing.T) {
	clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	src := ratelimit.NewMemorySource(clock.Now)
	rate := ratelimit.Limit{Count: 20, Period: time.Hour, Burst: 5}
	dup := ratelimit.Limit{Max: 5, Window: 168 * time.Hour}
	apply := func(ops ...ratelimit.Op) {
		t.Helper()
		if _, err := src.Apply(t.Context(), &ratelimit.Batch{Ops: ops}); err != nil {
			t.Fatal(err)
		}
	}
	apply(
		ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:short", Limit: rate, Cost: 1},
		ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:long", Limit: rate, Cost: 5},
		ratelimit.Op{Kind: ratelimit.OpAdd, Key: "duplicate-certificate:a:1", Limit: dup, Member: "s1"},
		ratelimit.Op{Kind: ratelimit.OpSpend, Key: "order-creation:refunded", Limit: rate, Cost: 2},
	)
	apply(ratelimit.Op{Kind: ratelimit.OpRefund, Key: "order-creation:refunded", Limit: rate, Cost: 2})
	if got, want := src.Len(), 3; got != want {
		t.Fatalf("after a full refund: Len = %d, want %d (a full bucket is dropped at once)", got, want)
	}

	steps := []struct {
		advance     time.Duration
		wantDropped int
		wantLen     int
	}{
		{advance: 3 * time.Minute, wantDropped: 1, wantLen: 2},  // short's TAT is now
		{advance: 12 * time.Minute, wantDropped: 1, wantLen: 1}, // long's TAT (15 min)
		{advance: 167 * time.Hour, wantDropped: 0, wantLen: 1},  // s1 still in the window
		{advance: 45 * time.Minute, wantDropped: 1, wantLen: 0}, // s1 has left
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if got := src.Sweep(clock.Now()); got != s.wantDropped {
			t.Errorf("step %d: Sweep dropped %d, want %d", i, got, s.wantDropped)
		}
		if got := src.Len(); got != s.wantLen {
			t.Errorf("step %d: Len = %d, want %d", i, got, s.wantLen)
		}
	}
}

// TestMemoryRun checks the sweeping loop on synctest's fake clock.
func TestMemoryRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := ratelimit.NewMemorySource(nil) // time.Now: the bubble's clock
		rate := ratelimit.Limit{Count: 1, Period: time.Minute, Burst: 1}
		if _, err := src.Apply(t.Context(), &ratelimit.Batch{Ops: []ratelimit.Op{
			{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: rate, Cost: 1},
		}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- src.Run(ctx, 30*time.Second) }()

		time.Sleep(31 * time.Second)
		synctest.Wait()
		if got := src.Len(); got != 1 {
			t.Errorf("after one sweep at 30 s: Len = %d, want 1 (the TAT is at 60 s)", got)
		}
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if got := src.Len(); got != 0 {
			t.Errorf("after the sweep at 60 s: Len = %d, want 0", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v, want nil after cancel", err)
		}
	})
	if err := ratelimit.NewMemorySource(nil).Run(t.Context(), 0); err == nil {
		t.Error("Run with a zero interval = nil, want an error")
	}
}

// BenchmarkMemorySpendOrderBatch measures one new-order Spend through the
// Limiter: order-creation, a 3-name san-budget, the duplicate-certificate
// and failed-validation checks, and three pending-authorization adds.
// Accounts rotate and the fake clock moves a minute per order, so every
// batch finds refilled buckets and is admitted (the expensive path).
func BenchmarkMemorySpendOrderBatch(b *testing.B) {
	sourcetest.BenchOrderBatches(b, func(b *testing.B) (*ratelimit.Limiter, *sourcetest.Clock) {
		clock := sourcetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		l, err := ratelimit.New(ratelimit.DefaultPolicy(), ratelimit.NewMemorySource(clock.Now), clock.Now)
		if err != nil {
			b.Fatal(err)
		}
		return l, clock
	}, nil)
}
