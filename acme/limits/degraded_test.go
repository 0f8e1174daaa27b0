// SPDX-License-Identifier: Apache-2.0

package limits_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

// stuckSource is a backend that answers nothing for d, ignoring its
// context (a paused Redis behind a client that waits too long), then fails.
type stuckSource struct {
	ratelimit.Source
	d time.Duration
}

func (s stuckSource) Apply(context.Context, *ratelimit.Batch) (*ratelimit.BatchResult, error) {
	time.Sleep(s.d)
	return nil, errors.New("backend unreachable")
}

// degradeAdapter is an adapter whose backend is stuck for stuck, with
// an in-process fallback at the same order-creation limit (burst 10).
func degradeAdapter(t *testing.T, policy limits.BackendPolicy, stuck time.Duration) *limits.Adapter {
	t.Helper()
	pol := ratelimit.Policy{
		Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 10, Period: time.Hour, Burst: 10}},
		Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
	}
	lim, err := ratelimit.New(pol, stuckSource{Source: ratelimit.NewMemorySource(nil), d: stuck}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := ratelimit.New(pol, ratelimit.NewMemorySource(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	return limits.New(limits.Config{OnBackendError: policy, BackendTimeout: 50 * time.Millisecond, Fallback: fb, DegradedReadyAfter: time.Hour}, lim, nil)
}

// TestDegradeDecidesAtTheLimit: with the backend stuck, degrade admits
// exactly the limit from the in-process fallback and refuses the rest
// with rateLimited; every call returns at backend-timeout, not when the
// stuck backend gives up; each degraded decision is counted and observed.
func TestDegradeDecidesAtTheLimit(t *testing.T) {
	rl := degradeAdapter(t, limits.BackendDegrade, 2*time.Second)
	obs := &limiterEvents{}
	rl.SetObserver(obs)
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	admitted, slowest := 0, time.Duration(0)
	for i := range 15 {
		start := time.Now()
		_, err := rl.NewOrder(t.Context(), acct, &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}, nil)
		slowest = max(slowest, time.Since(start))
		var p *acme.Problem
		switch {
		case err == nil:
			admitted++
		case errors.As(err, &p) && p.Type == acme.ProbRateLimited:
		default:
			t.Fatalf("order %d: %v, want admitted or rateLimited", i, err)
		}
	}
	if admitted != 10 {
		t.Errorf("admitted %d of 15 with the backend stuck, want the limit, 10", admitted)
	}
	if slowest > time.Second {
		t.Errorf("slowest decision %v, want about backend-timeout (50ms), never the stuck backend's 2s", slowest)
	}
	if n := rl.DegradedDecisions(); n != 15 {
		t.Errorf("degraded decisions %d, want 15", n)
	}
	if rl.DegradedSince().IsZero() {
		t.Error("no degraded episode recorded")
	}
	if _, tooLong := rl.Degraded(time.Now().Add(2 * time.Hour)); !tooLong {
		t.Error("a degraded episode longer than degraded-ready-after is not reported")
	}
	rl.NoteBackend(nil)
	if !rl.DegradedSince().IsZero() {
		t.Error("an answering backend did not end the episode")
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, ev := range obs.evs {
		if !ev.Degraded || ev.Err == nil {
			t.Errorf("event %+v, want a degraded decision carrying the backend error", ev)
		}
	}
}

// TestDenyStaysDeny: deny refuses with 503 and nothing is degraded.
func TestDenyStaysDeny(t *testing.T) {
	rl := degradeAdapter(t, limits.BackendDeny, 0)
	acct := &acme.Account{ID: "7", Status: acme.StatusValid}
	_, err := rl.NewOrder(t.Context(), acct, &acme.Order{AccountID: acct.ID, Identifiers: dnsIDs("a.example.com")}, nil)
	var p *acme.Problem
	if !errors.As(err, &p) || p.Status != 503 {
		t.Fatalf("deny with the backend down: %v, want a 503 problem", err)
	}
	if rl.DegradedDecisions() != 0 || rl.Degrades() {
		t.Error("deny degraded")
	}
}

// TestDegradeReseed: a degraded episode seeds the fallback's exact counts
// from the store, but a backend that flaps (an answer ends the episode, a
// failure starts the next) does not read the store again until
// reseedAfter (a minute) has passed since the last seed.
func TestDegradeReseed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seeds := 0
		pol := ratelimit.Policy{Limits: map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 10, Period: time.Hour, Burst: 10}},
			Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true}}
		lim, err := ratelimit.New(pol, ratelimit.NewMemorySource(nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := ratelimit.New(pol, ratelimit.NewMemorySource(nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		rl := limits.New(limits.Config{OnBackendError: limits.BackendDegrade, BackendTimeout: 50 * time.Millisecond, Fallback: fb,
			FallbackSeed: func(context.Context) error { seeds++; return nil }}, lim, nil)
		down := errors.New("backend down")
		flap := func() {
			rl.NoteBackend(down)
			synctest.Wait()
			rl.NoteBackend(nil)
		}
		flap()
		if seeds != 1 {
			t.Fatalf("%d seeds after the first episode, want 1", seeds)
		}
		for range 20 { // a flap every second
			time.Sleep(time.Second)
			flap()
		}
		if seeds != 1 {
			t.Errorf("%d seeds after 20 flaps within %v, want 1", seeds, 21*time.Second)
		}
		time.Sleep(time.Minute)
		flap()
		if seeds != 2 {
			t.Errorf("%d seeds after a flap a minute later, want 2", seeds)
		}
	})
}
