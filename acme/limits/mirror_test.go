// SPDX-License-Identifier: Apache-2.0

package limits_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// switchSource is a backend that fails at once while down and is a
// memory source otherwise.
type switchSource struct {
	*ratelimit.MemorySource
	down atomic.Bool
}

func (s *switchSource) Apply(ctx context.Context, b *ratelimit.Batch) (*ratelimit.BatchResult, error) {
	if s.down.Load() {
		return nil, errors.New("backend unreachable")
	}
	return s.MemorySource.Apply(ctx, b)
}

// TestMirrorRecordsBeyondTheFallback: what the backend admits is recorded
// in the fallback even when the fallback's bucket is already empty, so
// that the replica's admissions, by the fallback and the backend together,
// keep to the limit. Order-creation 10 an hour, burst 10: the fallback
// admits 10 while the backend is down; the backend, back, admits one more
// (its own bucket is full); one emission interval (6 min) later the
// backend is down again, and the replica has already admitted 11 = burst
// plus the one token refilled: the next order is refused. A mirror that
// the full fallback dropped left that token free, and the replica admitted
// a 12th (seen with Redis pausing under load, TestOrderLimitWithRedisPaused).
func TestMirrorRecordsBeyondTheFallback(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	pol := ratelimit.Policy{
		Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 10, Period: time.Hour, Burst: 10}},
		Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
	}
	backend := &switchSource{MemorySource: ratelimit.NewMemorySource(clock)}
	lim, err := ratelimit.New(pol, backend, clock)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := ratelimit.New(pol, ratelimit.NewMemorySource(clock), clock)
	if err != nil {
		t.Fatal(err)
	}
	rl := limits.New(limits.Config{OnBackendError: limits.BackendDegrade, BackendTimeout: time.Second, Fallback: fb}, lim, nil)
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	order := func() error {
		_, err := rl.NewOrder(t.Context(), acct, &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}, nil)
		return err
	}
	refused := func(err error) bool {
		var p *acme.Problem
		return errors.As(err, &p) && p.Type == acme.ProbRateLimited
	}

	backend.down.Store(true)
	for i := range 10 {
		if err := order(); err != nil {
			t.Fatalf("degraded order %d: %v, want admitted (the fallback's burst is 10)", i+1, err)
		}
	}
	if err := order(); !refused(err) {
		t.Fatalf("11th degraded order: %v, want rateLimited", err)
	}
	backend.down.Store(false)
	if err := order(); err != nil {
		t.Fatalf("the backend, back, refused an order its own full bucket allows: %v", err)
	}
	now.Add(int64(6 * time.Minute))
	backend.down.Store(true)
	if err := order(); !refused(err) {
		t.Fatalf("degraded order after one refill: %v, want rateLimited: the replica has admitted 11 (burst 10 + 1 refilled) and must not admit a 12th", err)
	}
	if n := rl.DegradedDecisions(); n != 12 {
		t.Errorf("degraded decisions %d, want 12", n)
	}
}

// BenchmarkNewOrderMirrored: a new-order the backend admits, mirrored in
// the in-process fallback (the path of every admitted request on Redis).
func BenchmarkNewOrderMirrored(b *testing.B) {
	pol := ratelimit.Policy{
		Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 1 << 30, Period: time.Hour, Burst: 1 << 20}},
		Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
	}
	lim, err := ratelimit.New(pol, ratelimit.NewMemorySource(nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	fb, err := ratelimit.New(pol, ratelimit.NewMemorySource(nil), nil)
	if err != nil {
		b.Fatal(err)
	}
	rl := limits.New(limits.Config{OnBackendError: limits.BackendDegrade, Fallback: fb}, lim, nil)
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	o := &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}
	for b.Loop() {
		if _, err := rl.NewOrder(b.Context(), acct, o, nil); err != nil {
			b.Fatal(err)
		}
	}
}
