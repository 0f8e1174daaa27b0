// SPDX-License-Identifier: Apache-2.0

package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
)

func TestRateLimitFieldsFormat(t *testing.T) {
	oc := ratelimit.OrderCreation
	for _, tc := range []struct {
		name          string
		q             limits.Quota
		elapsed       time.Duration
		policy, limit string
	}{
		{"full bucket", limits.Quota{Limit: oc, Capacity: 5, Window: 15 * time.Minute, Remaining: 5},
			0, `"order-creation";q=5;w=900`, `"order-creation";r=5;t=0`},
		{"t rounds up", limits.Quota{Limit: oc, Capacity: 5, Window: 15 * time.Minute, Remaining: 3, Reset: 359*time.Second + time.Millisecond},
			0, `"order-creation";q=5;w=900`, `"order-creation";r=3;t=360`},
		{"a cached read ages", limits.Quota{Limit: oc, Capacity: 5, Window: 15 * time.Minute, Remaining: 3, Reset: 360 * time.Second},
			1500 * time.Millisecond, `"order-creation";q=5;w=900`, `"order-creation";r=3;t=359`},
		{"aged past its reset", limits.Quota{Limit: oc, Capacity: 5, Window: 15 * time.Minute, Remaining: 4, Reset: time.Second},
			2 * time.Second, `"order-creation";q=5;w=900`, `"order-creation";r=4;t=0`},
		{"a denial's t is its Retry-After", limits.Quota{Limit: oc, Capacity: 5, Window: 15 * time.Minute, Reset: 2100 * time.Millisecond, Denied: true},
			0, `"order-creation";q=5;w=900`, `"order-creation";r=0;t=3`},
		{"a Retry-After is at least 1", limits.Quota{Limit: oc, Capacity: 5, Window: 15 * time.Minute, Reset: time.Millisecond, Denied: true},
			0, `"order-creation";q=5;w=900`, `"order-creation";r=0;t=1`},
		{"a sub-second window is 1", limits.Quota{Limit: ratelimit.SANBudget, Capacity: 100, Window: 300 * time.Millisecond, Remaining: 99, Reset: 3 * time.Millisecond},
			0, `"san-budget";q=100;w=1`, `"san-budget";r=99;t=1`},
		{"a count without a window", limits.Quota{Limit: ratelimit.PendingAuthorizations, Capacity: 30, Remaining: 28, Reset: 168 * time.Hour},
			0, `"pending-authorizations";q=30`, `"pending-authorizations";r=28;t=604800`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			policy, limit := rateLimitFields(tc.q, tc.elapsed)
			if policy != tc.policy || limit != tc.limit {
				t.Errorf("got %s / %s, want %s / %s", policy, limit, tc.policy, tc.limit)
			}
		})
	}
}

func TestSFString(t *testing.T) {
	for in, want := range map[string]string{"order-creation": `"order-creation"`, `a"b\c`: `"a\"b\\c"`, "x\ny": `"xy"`} {
		if got := sfString(in); got != want {
			t.Errorf("sfString(%q) = %s, want %s", in, got, want)
		}
	}
}

// fakeClock is a settable clock for the limiter and the server.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestRateLimitFieldsFromLimiter drains an order-creation bucket of burst
// 3 at one order an hour on a fake clock and checks the fields of each
// decision, of the refusal, and of reads through the per-account cache.
func TestRateLimitFieldsFromLimiter(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)}
	cfg := ratelimit.Policy{
		Limits:  map[ratelimit.Name]ratelimit.Limit{ratelimit.OrderCreation: {Count: 1, Period: time.Hour, Burst: 3}},
		Enabled: map[ratelimit.Name]bool{ratelimit.OrderCreation: true},
	}
	lim, err := ratelimit.New(cfg, ratelimit.NewMemorySource(clock.now), clock.now)
	if err != nil {
		t.Fatal(err)
	}
	rl := limits.New(limits.Config{BackendTimeout: time.Second}, lim, nil)
	s := &Server{log: slog.New(slog.DiscardHandler), now: clock.now}
	s.SetRateLimits(rl)
	acct := &acme.Account{ID: "12", Status: acme.StatusValid}
	order := func() (limits.Quota, error) {
		ev := &acme.RequestEvent{}
		o := &acme.Order{AccountID: acct.ID, Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "a.example"}}}
		_, err := rl.NewOrder(acme.WithRequestEvent(context.Background(), ev), acct, o, nil)
		return limits.QuotaFromDecision(ev.Quota), err
	}
	fields := func(q limits.Quota, elapsed time.Duration) string {
		p, l := rateLimitFields(q, elapsed)
		return p + " | " + l
	}
	const policy = `"order-creation";q=3;w=10800`
	for i, want := range []string{
		policy + ` | "order-creation";r=2;t=3600`,
		policy + ` | "order-creation";r=1;t=7140`,
		policy + ` | "order-creation";r=0;t=3480`,
	} {
		q, err := order()
		if err != nil {
			t.Fatalf("order %d: %v", i+1, err)
		}
		if got := fields(q, 0); got != want {
			t.Errorf("order %d: %s, want %s", i+1, got, want)
		}
		clock.advance(time.Minute)
	}
	// Refused three minutes into the first token's hour: Retry-After 57 min.
	q, err := order()
	var p *acme.Problem
	if !errors.As(err, &p) || p.Type != acme.ProbRateLimited {
		t.Fatalf("fourth order: %v, want rateLimited", err)
	}
	if got, want := fields(q, 0), policy+` | "order-creation";r=0;t=`+retryAfter(p.RetryAfter); got != want || p.RetryAfter != 57*time.Minute {
		t.Errorf("refusal: %s (Retry-After %v), want %s (57m)", got, p.RetryAfter, want)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]any
	if err := json.Unmarshal(b, &members); err != nil {
		t.Fatal(err)
	}
	wantFrees := clock.now().Add(57 * time.Minute).Format(time.RFC3339)
	// The members describe the limit as RateLimit-Policy does (quota 3
	// per window 10800 s: q and w), with its rate (1 per 3600 s).
	if members["limit"] != "order-creation" || members["key"] != "12" || members["remaining"] != 0.0 ||
		members["quota"] != 3.0 || members["window"] != 10800.0 || members["count"] != 1.0 || members["period"] != 3600.0 || members["freesAt"] != wantFrees {
		t.Errorf("problem members %s, want limit, key 12, remaining 0, quota 3, window 10800, count 1, period 3600, freesAt %s", b, wantFrees)
	}

	// Reads without spending, cached for a second per account.
	read := func() string {
		c, ok := s.cachedQuota(context.Background(), rl, acct)
		if !ok {
			t.Fatal("no cached quota")
		}
		return fields(c.q, s.now().Sub(c.read))
	}
	if got, want := read(), policy+` | "order-creation";r=0;t=3420`; got != want {
		t.Errorf("first read: %s, want %s", got, want)
	}
	clock.advance(58 * time.Minute) // a token is back
	if got, want := read(), policy+` | "order-creation";r=1;t=7140`; got != want {
		t.Errorf("read after an hour: %s, want %s", got, want)
	}
	// Spent behind the cache's back: a read within the second still
	// shows the cached bucket, aged; after it, the new state.
	if _, err := rl.NewOrder(context.Background(), acct, &acme.Order{AccountID: acct.ID, Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "b.example"}}}, nil); err != nil {
		t.Fatal(err)
	}
	clock.advance(500 * time.Millisecond)
	if got, want := read(), policy+` | "order-creation";r=1;t=7140`; got != want {
		t.Errorf("read within the cache's second: %s, want %s (cached, aged 0.5 s)", got, want)
	}
	clock.advance(500 * time.Millisecond)
	if got, want := read(), policy+` | "order-creation";r=0;t=3539`; got != want {
		t.Errorf("read after the cache's second: %s, want %s", got, want)
	}
	// A spend without the account's order-creation bucket drops its entry.
	s.noteSpent(acct.ID, ratelimit.Decision{})
	if _, hit := s.quota.cache[acct.ID]; hit {
		t.Error("noteSpent without an order-creation bucket kept the entry")
	}
	// An allowed new order's order-creation bucket, as the spend left it,
	// becomes the cached read: the fields a read of the bucket gives.
	clock.advance(2 * time.Hour)
	ev := &acme.RequestEvent{}
	ctx := acme.WithRequestEvent(context.Background(), ev)
	if _, err := rl.NewOrder(ctx, acct, &acme.Order{AccountID: acct.ID, Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "c.example"}}}, nil); err != nil {
		t.Fatal(err)
	}
	if ev.OrderCreation.Limit != ratelimit.OrderCreation {
		t.Fatalf("new order noted order-creation %+v", ev.OrderCreation)
	}
	s.noteSpent(acct.ID, ev.OrderCreation)
	if c, hit := s.quota.cache[acct.ID]; !hit || !c.ok || !c.read.Equal(s.now()) {
		t.Fatalf("after noteSpent the cache holds %+v (hit %v), want the new order's bucket read now", c, hit)
	}
	kept := read()
	q, ok, err := rl.AccountQuota(context.Background(), acct)
	if err != nil || !ok {
		t.Fatalf("AccountQuota: %v, %v", ok, err)
	}
	if want := fields(q, 0); kept != want || kept != policy+` | "order-creation";r=1;t=7139` {
		t.Errorf("kept after a new order: %s, want %s as read", kept, want)
	}
}
