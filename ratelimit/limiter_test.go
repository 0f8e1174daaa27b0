// SPDX-License-Identifier: Apache-2.0

package ratelimit_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
)

// t0 is the fake clock's start.
func t0() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// newLimiter returns a Limiter over a fresh MemorySource on a fake clock,
// with cfg (nil for the defaults) edited by edit.
func newLimiter(t *testing.T, edit func(c *ratelimit.Policy)) (*ratelimit.Limiter, *sourcetest.Clock, *ratelimit.MemorySource) {
	t.Helper()
	clock := sourcetest.NewClock(t0())
	src := ratelimit.NewMemorySource(clock.Now)
	cfg := ratelimit.DefaultPolicy()
	if edit != nil {
		edit(&cfg)
	}
	l, err := ratelimit.New(cfg, src, clock.Now)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return l, clock, src
}

func order(acct string) ratelimit.Request {
	return ratelimit.Request{Name: ratelimit.OrderCreation, Key: acct}
}

func sans(acct string, n int64) ratelimit.Request {
	return ratelimit.Request{Name: ratelimit.SANBudget, Key: acct, Cost: n}
}

func pending(acct, id string, expires time.Time) ratelimit.Request {
	return ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: acct, Member: id, MemberTime: expires}
}

// spend calls Spend and fails the test on an error.
func spend(t *testing.T, l *ratelimit.Limiter, reqs ...ratelimit.Request) (ratelimit.Decision, *ratelimit.Spent) {
	t.Helper()
	d, s, err := l.Spend(t.Context(), reqs...)
	if err != nil {
		t.Fatalf("Spend: %v", err)
	}
	if (s == nil) == d.Allowed {
		t.Fatalf("Spend: allowed %v with Spent %v", d.Allowed, s)
	}
	return d, s
}

// remaining reads a bucket's tokens or slots through a read-only Check.
func remaining(t *testing.T, l *ratelimit.Limiter, r ratelimit.Request) int64 {
	t.Helper()
	r.Cost, r.Member = 1, ""
	d, err := l.Check(t.Context(), r)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !d.Allowed {
		return 0
	}
	return d.Remaining + 1 // Check reports what a spend of 1 would leave
}

func TestSpendAllOrNothing(t *testing.T) {
	l, clock, _ := newLimiter(t, nil)
	exp := clock.Now().Add(time.Hour)
	spend(t, l, order("a"), sans("a", 95), pending("a", "z1", exp))

	// 5 SANs left: a 10-name order is refused and spends nothing anywhere.
	d, _ := spend(t, l, order("a"), sans("a", 10), pending("a", "z2", exp))
	if d.Allowed || d.Limit != ratelimit.SANBudget || d.Key != "a" {
		t.Fatalf("Spend = %+v, want denied by san-budget for a", d)
	}
	for _, tt := range []struct {
		req  ratelimit.Request
		want int64
	}{
		{order("a"), 4},
		{sans("a", 1), 5},
		{pending("a", "", time.Time{}), 29},
	} {
		if got := remaining(t, l, tt.req); got != tt.want {
			t.Errorf("%s after the denied spend: %d left, want %d", tt.req.Name, got, tt.want)
		}
	}

	// Check spends nothing either.
	for range 10 {
		if _, err := l.Check(t.Context(), order("a"), sans("a", 5)); err != nil {
			t.Fatal(err)
		}
	}
	if got := remaining(t, l, order("a")); got != 4 {
		t.Errorf("after 10 checks: %d orders left, want 4", got)
	}
}

func TestSpendCheckOnlyDeniesTheRequest(t *testing.T) {
	l, _, _ := newLimiter(t, nil)
	failed := ratelimit.Request{Name: ratelimit.FailedValidation, Key: ratelimit.FailedValidationKey("a", "www.example.com")}
	for range 5 {
		spend(t, l, failed) // five challenge failures
	}
	failed.CheckOnly = true
	d, _ := spend(t, l, order("a"), sans("a", 1), failed)
	if d.Allowed || d.Limit != ratelimit.FailedValidation || d.Key != "a:www.example.com" {
		t.Errorf("new-order with 5 failures = %+v, want denied by failed-validation", d)
	}
	if d.RetryAfter != 12*time.Minute {
		t.Errorf("RetryAfter = %v, want 12m (one failure of 5/h refills)", d.RetryAfter)
	}
	if got := remaining(t, l, order("a")); got != 5 {
		t.Errorf("orders left = %d, want 5: the check-only denial must deny the whole request", got)
	}
	// A check-only bucket is not spent when the request passes.
	other := ratelimit.Request{Name: ratelimit.FailedValidation, Key: "a:other.example.com", CheckOnly: true}
	spend(t, l, order("a"), other)
	if got := remaining(t, l, other); got != 5 {
		t.Errorf("failed-validation after a passing check-only request: %d left, want 5", got)
	}
}

func TestStrictestDenialWins(t *testing.T) {
	l, clock, _ := newLimiter(t, nil)
	exp := clock.Now().Add(45 * time.Minute)
	var fill []ratelimit.Request
	for i := range 30 {
		fill = append(fill, pending("a", string(rune('A'+i)), exp))
	}
	spend(t, l, append(fill, sans("a", 100), order("a"), order("a"), order("a"), order("a"), order("a"))...)

	d, _ := spend(t, l, order("a"), sans("a", 2), pending("a", "new", exp))
	// order-creation: 1 token in 3 min; san-budget: 2 tokens in 72 s;
	// pending: the soonest expiry in 45 min.
	if d.Allowed || d.Limit != ratelimit.PendingAuthorizations || d.RetryAfter != 45*time.Minute {
		t.Errorf("Decision = %v %s %v, want denied by pending-authorizations for 45m", d.Allowed, d.Limit, d.RetryAfter)
	}
	var got []string
	for _, sub := range d.Denied {
		got = append(got, sub.Limit.String()+" "+sub.RetryAfter.String())
	}
	if want := "order-creation 3m0s, san-budget 1m12s, pending-authorizations 45m0s"; strings.Join(got, ", ") != want {
		t.Errorf("Denied = %s, want %s (request order)", strings.Join(got, ", "), want)
	}

	// A request that can never fit outranks any wait.
	d, _ = spend(t, l, order("a"), sans("a", 101))
	if d.Allowed || !d.Never || d.Limit != ratelimit.SANBudget || d.RetryAfter != 0 {
		t.Errorf("101 SANs = %+v, want Never from san-budget", d)
	}
	if !strings.Contains(d.Detail(), "can never be allowed") {
		t.Errorf("Detail() = %q, want it to say the request can never succeed", d.Detail())
	}
}

func TestAllowedDecisionReportsTheTightestBucket(t *testing.T) {
	l, _, _ := newLimiter(t, nil)
	d, _ := spend(t, l, order("a"), sans("a", 3))
	if !d.Allowed || d.Limit != ratelimit.OrderCreation || d.Remaining != 4 || len(d.Denied) != 0 {
		t.Errorf("Decision = %+v, want allowed, order-creation with 4 left", d)
	}
	if want := t0().Add(3 * time.Minute); !d.ResetAt.Equal(want) || !d.At.Equal(t0()) {
		t.Errorf("ResetAt, At = %v, %v; want %v, %v", d.ResetAt, d.At, want, t0())
	}
	if d.Detail() != "" {
		t.Errorf("Detail() of an allowed decision = %q, want \"\"", d.Detail())
	}
}

func TestDecisionDetail(t *testing.T) {
	l, clock, _ := newLimiter(t, nil)
	clock.Advance(500 * time.Millisecond)
	for range 5 {
		spend(t, l, order("acct-7"))
	}
	d, _ := spend(t, l, order("acct-7"))
	want := `order-creation limit exceeded for "acct-7": retry after 2026-01-01T00:03:01Z`
	if got := d.Detail(); got != want {
		t.Errorf("Detail() = %q, want %q (00:03:00.5 rounded up)", got, want)
	}
	if d.RetryAfter != 3*time.Minute {
		t.Errorf("RetryAfter = %v, want exactly 3m", d.RetryAfter)
	}
}

func TestRefund(t *testing.T) {
	l, clock, _ := newLimiter(t, nil)
	exp := clock.Now().Add(time.Hour)
	spend(t, l, order("a"))
	_, s := spend(t, l, order("a"), sans("a", 10), pending("a", "z", exp))

	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := l.Refund(t.Context(), s); err != nil {
				t.Errorf("Refund: %v", err)
			}
		})
	}
	wg.Wait()
	if err := l.Refund(t.Context(), s); err != nil {
		t.Errorf("a later Refund = %v, want nil", err)
	}
	if got := remaining(t, l, order("a")); got != 4 {
		t.Errorf("orders left = %d, want 4: the refund gives back one order, once", got)
	}
	if got := remaining(t, l, sans("a", 1)); got != 100 {
		t.Errorf("SANs left = %d, want 100", got)
	}
	if got := remaining(t, l, pending("a", "", time.Time{})); got != 30 {
		t.Errorf("pending slots left = %d, want 30", got)
	}
	if err := l.Refund(t.Context(), nil); err != nil {
		t.Errorf("Refund(nil) = %v, want nil", err)
	}
}

func TestRefundNeverBelowNow(t *testing.T) {
	l, clock, _ := newLimiter(t, nil)
	_, s := spend(t, l, order("a"), order("a"), order("a"))
	clock.Advance(7 * time.Minute) // two of the three have refilled
	if err := l.Refund(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		d, _ := spend(t, l, order("a"))
		if got, want := d.Allowed, i < 5; got != want {
			t.Errorf("spend %d after the refund: allowed %v, want %v (a refund never adds beyond the burst)", i+1, got, want)
		}
	}
}

func TestRefundKeepsMembersItDidNotAdd(t *testing.T) {
	l, clock, _ := newLimiter(t, nil)
	exp := clock.Now().Add(time.Hour)
	spend(t, l, pending("a", "z", exp))
	_, s := spend(t, l, pending("a", "z", exp), pending("a", "y", exp)) // z again: idempotent
	if err := l.Refund(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	if got := remaining(t, l, pending("a", "", time.Time{})); got != 29 {
		t.Errorf("pending slots left = %d, want 29: z stays, y goes", got)
	}
}

func TestRemove(t *testing.T) {
	l, _, _ := newLimiter(t, nil)
	key := ratelimit.FQDNSetKey("a", []string{"example.com"})
	dup := func(serial string) ratelimit.Request {
		return ratelimit.Request{Name: ratelimit.DuplicateCertificate, Key: key, Member: serial}
	}
	for _, s := range []string{"s1", "s2", "s3", "s4", "s5"} {
		spend(t, l, dup(s))
	}
	if d, _ := spend(t, l, dup("s6")); d.Allowed || d.RetryAfter != 168*time.Hour {
		t.Fatalf("sixth certificate = %+v, want denied for 168h", d)
	}
	if err := l.Remove(t.Context(), dup("s3")); err != nil { // s3 revoked
		t.Fatal(err)
	}
	if d, _ := spend(t, l, dup("s6")); !d.Allowed {
		t.Errorf("after a revocation: %+v, want allowed", d)
	}
	if err := l.Remove(t.Context(), order("a")); err == nil {
		t.Error("Remove of a rate limit = nil, want an error")
	}
}

func TestDisabledLimitsAreDropped(t *testing.T) {
	l, _, src := newLimiter(t, func(c *ratelimit.Policy) {
		c.Enabled[ratelimit.OrderCreation] = false
		c.Enabled[ratelimit.PendingAuthorizations] = false
	})
	for range 20 {
		d, _ := spend(t, l, order("a"), pending("a", "z", time.Time{}))
		if !d.Allowed || d.Limit != 0 {
			t.Fatalf("Spend on disabled limits = %+v, want allowed with no limit", d)
		}
	}
	d, _ := spend(t, l, order("a"), sans("a", 1))
	if !d.Allowed || d.Limit != ratelimit.SANBudget || d.Remaining != 99 {
		t.Errorf("Spend = %+v, want only san-budget counted", d)
	}
	if got := src.Len(); got != 1 {
		t.Errorf("source holds %d buckets, want 1 (nothing for disabled limits)", got)
	}
	if err := l.Remove(t.Context(), pending("a", "z", time.Time{})); err != nil {
		t.Errorf("Remove on a disabled limit = %v, want nil", err)
	}
}

func TestOverrides(t *testing.T) {
	l, _, _ := newLimiter(t, func(c *ratelimit.Policy) {
		c.Overrides = map[string]ratelimit.Limit{
			ratelimit.BucketKey(ratelimit.OrderCreation, "big"): {Count: 1000, Period: time.Hour, Burst: 50},
		}
	})
	count := func(acct string) int {
		n := 0
		for range 100 {
			if d, _ := spend(t, l, order(acct)); d.Allowed {
				n++
			}
		}
		return n
	}
	if got := count("big"); got != 50 {
		t.Errorf("overridden account: %d orders at once, want 50", got)
	}
	if got := count("small"); got != 5 {
		t.Errorf("default account: %d orders at once, want 5", got)
	}
}

func TestLimiterErrors(t *testing.T) {
	l, _, _ := newLimiter(t, nil)
	bad := map[string]ratelimit.Request{
		"unknown name":         {Name: 99, Key: "a"},
		"empty key":            {Name: ratelimit.OrderCreation},
		"negative cost":        {Name: ratelimit.SANBudget, Key: "a", Cost: -1},
		"count cost 2":         {Name: ratelimit.DuplicateCertificate, Key: "a:ff", Member: "s", Cost: 2},
		"pending add, no time": {Name: ratelimit.PendingAuthorizations, Key: "a", Member: "z"},
		"add without member":   {Name: ratelimit.DuplicateCertificate, Key: "a:ff"},
	}
	for name, r := range bad {
		if _, _, err := l.Spend(t.Context(), order("a"), r); err == nil {
			t.Errorf("%s: Spend = nil error", name)
		}
	}
	if got := remaining(t, l, order("a")); got != 5 {
		t.Errorf("orders left after rejected requests = %d, want 5", got)
	}
	if _, err := ratelimit.New(ratelimit.Policy{Enabled: map[ratelimit.Name]bool{ratelimit.Global: true}}, ratelimit.NewMemorySource(nil), nil); err == nil {
		t.Error("New with an enabled limit without a Limit = nil error")
	}
	if _, err := ratelimit.New(ratelimit.DefaultPolicy(), nil, nil); err == nil {
		t.Error("New with a nil Source = nil error")
	}
}

// TestEnforced: the requests of disabled limits are dropped, and a list
// with none comes back as it is.
func TestEnforced(t *testing.T) {
	l, _, _ := newLimiter(t, func(c *ratelimit.Policy) { c.Enabled[ratelimit.SANBudget] = false })
	all := []ratelimit.Request{order("1"), pending("1", "z", t0().Add(time.Hour))}
	if got := l.Enforced(all); len(got) != 2 || &got[0] != &all[0] {
		t.Errorf("Enforced of enabled requests: %+v, want the same slice", got)
	}
	mixed := []ratelimit.Request{sans("1", 2), order("1"), sans("2", 1)}
	if got := l.Enforced(mixed); len(got) != 1 || got[0] != order("1") {
		t.Errorf("Enforced: %+v, want only order-creation (san-budget is disabled)", got)
	}
}

// TestLimiterPolicy: the limit a request's bucket is held to, as a
// decision reports it; none for a disabled limit.
func TestLimiterLimitFor(t *testing.T) {
	own := ratelimit.Limit{Count: 1, Period: time.Hour, Burst: 1}
	l, _, _ := newLimiter(t, func(c *ratelimit.Policy) {
		c.Overrides = map[string]ratelimit.Limit{"san-budget:9": own}
	})
	def := ratelimit.DefaultPolicy().Limits[ratelimit.SANBudget]
	for _, tc := range []struct {
		req  ratelimit.Request
		want ratelimit.Limit
		ok   bool
	}{
		{sans("1", 0), def, true},
		{sans("9", 0), own, true},
		{ratelimit.Request{Name: ratelimit.RegisteredDomain, Key: "example.com"}, ratelimit.Limit{}, false},
	} {
		got, ok := l.LimitFor(tc.req)
		if got != tc.want || ok != tc.ok {
			t.Errorf("LimitFor(%s %s) = %+v, %v; want %+v, %v", tc.req.Name, tc.req.Key, got, ok, tc.want, tc.ok)
		}
		if !ok {
			continue
		}
		d, _ := spend(t, l, tc.req)
		if d.Policy != got {
			t.Errorf("%s %s: the spend held the bucket to %+v, Policy says %+v", tc.req.Name, tc.req.Key, d.Policy, got)
		}
	}
}
