// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

func TestLimiterStatus(t *testing.T) {
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	now := start
	clock := func() time.Time { return now }
	cfg := DefaultPolicy()
	cfg.Limits[OrderCreation] = Limit{Count: 20, Period: time.Hour, Burst: 2} // T = 3 min
	cfg.Limits[PendingAuthorizations] = Limit{Max: 2}
	cfg.Overrides = map[string]Limit{BucketKey(SANBudget, "7"): {Count: 10, Period: time.Hour, Burst: 10}}
	lim, err := New(cfg, NewMemorySource(clock), clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	reqs := []Request{
		{Name: OrderCreation, Key: "7"},
		{Name: SANBudget, Key: "7"},
		{Name: PendingAuthorizations, Key: "7"},
		{Name: RegisteredDomain, Key: "example.com"},
	}
	st, err := lim.Status(ctx, reqs...)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		enabled, override   bool
		capacity, remaining int64
		next, full          time.Time
	}
	check := func(when string, st []BucketStatus, want []row) {
		t.Helper()
		for i, w := range want {
			g := st[i]
			got := row{g.Enabled, g.Override, g.Capacity, g.Remaining, g.NextAt, g.FullAt}
			if got != w {
				t.Errorf("%s: %s:%s = %+v, want %+v", when, g.Name, g.Key, got, w)
			}
		}
	}
	check("fresh", st, []row{
		{true, false, 2, 2, time.Time{}, start},
		{true, true, 10, 10, time.Time{}, start},
		{true, false, 2, 2, time.Time{}, start},
		{false, false, 0, 0, time.Time{}, time.Time{}},
	})

	// Spend both order tokens and both pending slots.
	exp1, exp2 := start.Add(time.Hour), start.Add(2*time.Hour)
	for i, exp := range []time.Time{exp1, exp2} {
		d, _, err := lim.Spend(ctx, Request{Name: OrderCreation, Key: "7"}, Request{Name: SANBudget, Key: "7", Cost: 3},
			Request{Name: PendingAuthorizations, Key: "7", Member: string(rune('a' + i)), MemberTime: exp})
		if err != nil || !d.Allowed {
			t.Fatalf("spend %d: %+v, %v", i, d, err)
		}
	}
	st, err = lim.Status(ctx, reqs...)
	if err != nil {
		t.Fatal(err)
	}
	check("spent", st, []row{
		// TAT = start + 2T = +6 min; one token fits at TAT − (2−1)T = +3 min.
		{true, false, 2, 0, start.Add(3 * time.Minute), start.Add(6 * time.Minute)},
		// 6 of 10 at 6 min a token: TAT = +36 min, 4 left.
		{true, true, 10, 4, time.Time{}, start.Add(36 * time.Minute)},
		// Full until the first member leaves; empty when the last does.
		{true, false, 2, 0, exp1, exp2},
		{false, false, 0, 0, time.Time{}, time.Time{}},
	})
	// Status spends nothing: the next order still waits for the same time.
	d, err := lim.Check(ctx, Request{Name: OrderCreation, Key: "7"})
	if err != nil || d.Allowed || d.RetryAfter != 3*time.Minute {
		t.Errorf("Check after Status = %+v, %v; want denied for 3m0s", d, err)
	}

	if err := lim.Reset(ctx, "order-creation:7"); err != nil {
		t.Fatal(err)
	}
	st, _ = lim.Status(ctx, reqs[0])
	check("reset", st, []row{{true, false, 2, 2, time.Time{}, start}})

	for _, bad := range []string{"order-creation", "nope:7", "order-creation:", ""} {
		if err := lim.Reset(ctx, bad); err == nil {
			t.Errorf("Reset(%q) = nil, want an error", bad)
		}
	}
	if _, err := lim.Status(ctx, Request{Name: OrderCreation}); err == nil {
		t.Error("Status with an empty key = nil error")
	}
}

func TestParseBucketKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name Name
		key  string
		ok   bool
	}{
		{"order-creation:42", OrderCreation, "42", true},
		{"failed-validation:42:*.example.com", FailedValidation, "42:*.example.com", true},
		{"account-creation:2001:db8::/64", AccountCreation, "2001:db8::/64", true},
		{"orders:42", 0, "", false},
		{"42", 0, "", false},
	} {
		n, k, err := ParseBucketKey(tc.in)
		if (err == nil) != tc.ok || n != tc.name || k != tc.key {
			t.Errorf("ParseBucketKey(%q) = %v, %q, %v; want %v, %q, ok=%v", tc.in, n, k, err, tc.name, tc.key, tc.ok)
		}
	}
}

func TestEdgePeekForget(t *testing.T) {
	e, err := NewEdge(Limit{Count: 60, Period: time.Minute, Burst: 3}, 512) // T = 1 s
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddr("192.0.2.9")
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	if r, full := e.Peek(a, now); r != 3 || full != now {
		t.Errorf("fresh Peek = %d, %d; want 3, now", r, full)
	}
	e.Allow(a, now)
	e.Allow(a, now)
	if r, full := e.Peek(a, now); r != 1 || full != now+2_000_000 {
		t.Errorf("Peek after 2 = %d, %d; want 1, now+2s", r, full-now)
	}
	if r, _ := e.Peek(a, now); r != 1 {
		t.Errorf("Peek spent a token: %d left", r)
	}
	e.Forget(a)
	if r, _ := e.Peek(a, now); r != 3 {
		t.Errorf("Peek after Forget = %d, want 3", r)
	}
	if b, em := e.Limit(); b != 3 || em != time.Second {
		t.Errorf("Limit = %d, %s; want 3, 1s", b, em)
	}
}

// TestCheckCount: several adds judged together, as one batch would add
// them, and the wait until enough members leave.
func TestCheckCount(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { return now }
	cfg := DefaultPolicy()
	cfg.Limits[PendingAuthorizations] = Limit{Max: 3}
	lim, err := New(cfg, NewMemorySource(clock), clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	r := Request{Name: PendingAuthorizations, Key: "9"}
	for i, exp := range []time.Duration{time.Hour, 2 * time.Hour} {
		if d, _, err := lim.Spend(ctx, Request{Name: PendingAuthorizations, Key: "9", Member: string(rune('a' + i)), MemberTime: now.Add(exp)}); err != nil || !d.Allowed {
			t.Fatalf("spend %d: %+v %v", i, d, err)
		}
	}
	for _, tc := range []struct {
		n       int
		allowed bool
		wait    time.Duration
		never   bool
		left    int64
	}{
		{0, true, 0, false, 0},
		{1, true, 0, false, 0},
		{2, false, time.Hour, false, 0},     // one must leave: the first, at +1h
		{3, false, 2 * time.Hour, false, 0}, // both must leave
		{4, false, 0, true, 0},              // more than Max at once
	} {
		d, err := lim.CheckCount(ctx, r, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != tc.allowed || d.RetryAfter != tc.wait || d.Never != tc.never || (d.Allowed && tc.n > 0 && d.Remaining != tc.left) {
			t.Errorf("CheckCount(%d) = allowed %v wait %s never %v left %d; want %v %s %v %d", tc.n, d.Allowed, d.RetryAfter, d.Never, d.Remaining, tc.allowed, tc.wait, tc.never, tc.left)
		}
		if !d.Allowed && (len(d.Denied) != 1 || d.Limit != PendingAuthorizations || d.Key != "9") {
			t.Errorf("CheckCount(%d) denial = %+v", tc.n, d)
		}
	}
	// Checking wrote nothing: a real add still fits.
	if d, _, err := lim.Spend(ctx, Request{Name: PendingAuthorizations, Key: "9", Member: "c", MemberTime: now.Add(time.Hour)}); err != nil || !d.Allowed {
		t.Errorf("add after the checks: %+v %v", d, err)
	}
	if _, err := lim.CheckCount(ctx, Request{Name: OrderCreation, Key: "9"}, 1); err == nil {
		t.Error("CheckCount of a rate limit: no error")
	}
}
