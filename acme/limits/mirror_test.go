// SPDX-License-Identifier: Apache-2.0

package limits_test

import (
	"context"
	"errors"
	"sync"
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

// replicaRig is one replica's adapter over a backend that can be taken
// down, with an in-process fallback, at order-creation 10 an hour (burst
// 10), on a clock the test moves.
type replicaRig struct {
	now     atomic.Int64
	backend *switchSource
	lim     *ratelimit.Limiter
	rl      *limits.Adapter
	acct    *acme.Account
}

func newReplicaRig(t *testing.T) *replicaRig {
	t.Helper()
	g := &replicaRig{acct: &acme.Account{ID: "7", Status: acme.StatusValid}}
	g.now.Store(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, g.now.Load()) }
	pol := ratelimit.Policy{
		Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 10, Period: time.Hour, Burst: 10}},
		Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
	}
	g.backend = &switchSource{MemorySource: ratelimit.NewMemorySource(clock)}
	var err error
	if g.lim, err = ratelimit.New(pol, g.backend, clock); err != nil {
		t.Fatal(err)
	}
	fb, err := ratelimit.New(pol, ratelimit.NewMemorySource(clock), clock)
	if err != nil {
		t.Fatal(err)
	}
	g.rl = limits.New(limits.Config{OnBackendError: limits.BackendDegrade, BackendTimeout: time.Second, Fallback: fb}, g.lim, nil)
	return g
}

func (g *replicaRig) order(t *testing.T) error {
	_, err := g.rl.NewOrder(t.Context(), g.acct, &acme.Order{AccountID: g.acct.ID, Identifiers: dnsIDs("a.example.com")}, nil)
	return err
}

// backendLeft is what the backend's order-creation bucket has left.
func (g *replicaRig) backendLeft(t *testing.T) int64 {
	t.Helper()
	st, err := g.lim.Status(t.Context(), ratelimit.Request{Name: ratelimit.OrderCreation, Key: string(g.acct.ID), Cost: 1})
	if err != nil {
		t.Fatal(err)
	}
	return st[0].Remaining
}

func refused(err error) bool {
	var p *acme.Problem
	return errors.As(err, &p) && p.Type == acme.ProbRateLimited
}

// TestReplicaKeepsItsOwnCount: a replica's admissions, by the fallback and
// the backend together, keep to the limit. The fallback admits 10 while
// the backend is down; the backend, back, would admit more (the degraded
// decisions never reached it), but the replica refuses with the
// fallback's Retry-After and refunds the backend's spend. One emission
// interval (6 min) later it admits one more, the token refilled, and
// refuses the next. Before the reservation, the backend admitted 10 more
// (TestOrderLimitWithRedisPaused: 28 for a bound of 20).
func TestReplicaKeepsItsOwnCount(t *testing.T) {
	g := newReplicaRig(t)
	g.backend.down.Store(true)
	for i := range 10 {
		if err := g.order(t); err != nil {
			t.Fatalf("degraded order %d: %v, want admitted (the fallback's burst is 10)", i+1, err)
		}
	}
	if err := g.order(t); !refused(err) {
		t.Fatalf("11th degraded order: %v, want rateLimited", err)
	}
	g.backend.down.Store(false)
	err := g.order(t)
	var p *acme.Problem
	if !errors.As(err, &p) || p.Type != acme.ProbRateLimited {
		t.Fatalf("the backend back: %v, want rateLimited: the replica has admitted its 10 this hour", err)
	}
	if p.RetryAfter != 6*time.Minute {
		t.Errorf("Retry-After %v, want the fallback's exact 6m0s", p.RetryAfter)
	}
	if left := g.backendLeft(t); left != 10 {
		t.Errorf("the backend's bucket has %d left, want 10: the refused request's spend is refunded", left)
	}
	g.now.Add(int64(6 * time.Minute))
	if err := g.order(t); err != nil {
		t.Fatalf("after one refill: %v, want admitted", err)
	}
	if err := g.order(t); !refused(err) {
		t.Fatalf("12th order: %v, want rateLimited: burst 10 + 1 refilled", err)
	}
	if n := g.rl.DegradedDecisions(); n != 11 {
		t.Errorf("degraded decisions %d, want 11", n)
	}
}

// TestBackendWinsWithoutDegradedAdmissions: a fallback that is full only
// because the backend was reset behind it (another replica served the
// reset) does not refuse what the backend admits; the admission is
// recorded beyond the fallback's capacity. The adapter's own Reset resets
// the fallback too.
func TestBackendWinsWithoutDegradedAdmissions(t *testing.T) {
	g := newReplicaRig(t)
	for i := range 10 {
		if err := g.order(t); err != nil {
			t.Fatalf("order %d: %v", i+1, err)
		}
	}
	bucket := ratelimit.BucketKey(ratelimit.OrderCreation, string(g.acct.ID))
	if err := g.lim.Reset(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	if err := g.order(t); err != nil {
		t.Fatalf("after a reset of the backend: %v, want admitted (no degraded admission, the backend is right)", err)
	}
	g.backend.down.Store(true)
	if err := g.order(t); !refused(err) {
		t.Fatalf("degraded after 11 admitted: %v, want rateLimited", err)
	}
	g.backend.down.Store(false)
	if err := g.rl.Reset(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	g.backend.down.Store(true)
	if err := g.order(t); err != nil {
		t.Fatalf("degraded after the adapter's reset: %v, want admitted (the fallback is reset too)", err)
	}
}

// pausedSource is a backend that holds every call while paused and then
// applies it, late, as a paused Redis does with the commands queued in it.
type pausedSource struct {
	*ratelimit.MemorySource
	mu     sync.Mutex
	resume chan struct{}
}

func (s *pausedSource) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resume = make(chan struct{})
}

func (s *pausedSource) unpause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.resume)
}

func (s *pausedSource) Apply(ctx context.Context, b *ratelimit.Batch) (*ratelimit.BatchResult, error) {
	s.mu.Lock()
	wait := s.resume
	s.mu.Unlock()
	<-wait
	return s.MemorySource.Apply(ctx, b)
}

// TestPausedBackendAnswersLate: bursts of 30 orders against a backend that
// holds them past backend-timeout and then decides them all, while the
// replica's fallback decided the same ones on their timeout; a second
// burst is in flight when the backend resumes. The replica admits at most
// the limit (10) in all, however the answers interleave.
func TestPausedBackendAnswersLate(t *testing.T) {
	pol := ratelimit.Policy{
		Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 10, Period: time.Hour, Burst: 10}},
		Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
	}
	backend := &pausedSource{MemorySource: ratelimit.NewMemorySource(nil), resume: make(chan struct{})}
	close(backend.resume)
	lim, err := ratelimit.New(pol, backend, nil)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := ratelimit.New(pol, ratelimit.NewMemorySource(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	rl := limits.New(limits.Config{OnBackendError: limits.BackendDegrade, BackendTimeout: 30 * time.Millisecond, Fallback: fb}, lim, nil)
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	var admitted atomic.Int64
	burst := func(n int, during func()) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_, err := rl.NewOrder(t.Context(), acct, &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}, nil)
				switch {
				case err == nil:
					admitted.Add(1)
				case !refused(err):
					t.Errorf("order: %v, want admitted or rateLimited", err)
				}
			})
		}
		during()
		wg.Wait()
	}
	backend.pause()
	burst(30, func() {})
	burst(30, func() { time.Sleep(20 * time.Millisecond); backend.unpause() })
	burst(30, func() {})
	if n := admitted.Load(); n > 10 {
		t.Errorf("admitted %d orders, more than the limit, 10", n)
	}
	if n := admitted.Load(); n == 0 {
		t.Error("admitted none: the fallback and the backend both refused everything")
	}
}

// BenchmarkNewOrderMirrored: a new-order the backend admits, with its
// reservation on the in-process fallback (reserve.go): the path of every
// admitted request on a backend with a fallback.
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
