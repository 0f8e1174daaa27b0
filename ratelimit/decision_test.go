// SPDX-License-Identifier: Apache-2.0

package ratelimit_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// TestDecisionBuckets: a decision has the part of every bucket of an
// enabled limit, in request order, each with what is left after the
// request and the limit it was held to; the top-level fields are those
// of the bucket with the least left, or of the strictest denial.
func TestDecisionBuckets(t *testing.T) {
	l, clock, _ := newLimiter(t, func(c *ratelimit.Policy) { c.Enabled[ratelimit.FailedValidation] = false })
	exp := clock.Now().Add(time.Hour)
	reqs := []ratelimit.Request{
		order("1"),
		sans("1", 3),
		{Name: ratelimit.FailedValidation, Key: "1:a.example", CheckOnly: true}, // disabled
		pending("1", "z1", exp),
		pending("1", "z2", exp),
	}
	d, _ := spend(t, l, reqs...)
	type part struct {
		limit     ratelimit.Name
		remaining int64
		reset     time.Duration
		policy    ratelimit.Limit
	}
	def := ratelimit.DefaultPolicy().Limits
	want := []part{
		{ratelimit.OrderCreation, 4, 3 * time.Minute, def[ratelimit.OrderCreation]},
		{ratelimit.SANBudget, 97, 108 * time.Second, def[ratelimit.SANBudget]},
		{ratelimit.PendingAuthorizations, 29, time.Hour, def[ratelimit.PendingAuthorizations]},
		{ratelimit.PendingAuthorizations, 28, time.Hour, def[ratelimit.PendingAuthorizations]},
	}
	if len(d.Buckets) != len(want) {
		t.Fatalf("%d buckets %+v, want %d (the disabled limit has none)", len(d.Buckets), d.Buckets, len(want))
	}
	for i, w := range want {
		b := d.Buckets[i]
		got := part{b.Limit, b.Remaining, b.ResetAt.Sub(b.At), b.Policy}
		if got != w || b.Key != "1" || !b.Allowed || !b.At.Equal(clock.Now()) || b.Buckets != nil || b.Denied != nil {
			t.Errorf("bucket %d: %+v (key %q, allowed %v, at %v), want %+v", i, got, b.Key, b.Allowed, b.At, w)
		}
	}
	if d.Limit != ratelimit.OrderCreation || d.Remaining != 4 || !d.Allowed {
		t.Errorf("decision %s remaining %d allowed %v, want order-creation, 4 (the least left)", d.Limit, d.Remaining, d.Allowed)
	}

	for range 4 {
		spend(t, l, order("1"))
	}
	d, _ = spend(t, l, order("1"), sans("1", 1))
	if d.Allowed || len(d.Buckets) != 2 || d.Buckets[0].Allowed || !d.Buckets[1].Allowed || len(d.Denied) != 1 || !reflect.DeepEqual(d.Denied[0], d.Buckets[0]) {
		t.Errorf("denied decision: buckets %+v, denied %+v; want order-creation denied and san-budget allowed", d.Buckets, d.Denied)
	}
	if d.Buckets[0].RetryAfter != 3*time.Minute || d.RetryAfter != 3*time.Minute {
		t.Errorf("Retry-After %v (bucket %v), want 3m", d.RetryAfter, d.Buckets[0].RetryAfter)
	}
}

// TestDecisionPolicy: each bucket's Policy is the limit the limiter
// applied: the bucket's own override, else its group's, else the
// default; a group override applies only to the requests that name it.
func TestDecisionPolicy(t *testing.T) {
	def := ratelimit.Limit{Count: 20, Period: time.Hour, Burst: 5}
	group := ratelimit.Limit{Count: 200, Period: time.Hour, Burst: 50}
	own := ratelimit.Limit{Count: 2, Period: time.Hour, Burst: 1}
	l, _, _ := newLimiter(t, func(c *ratelimit.Policy) {
		c.Limits[ratelimit.OrderCreation] = def
		c.Overrides = map[string]ratelimit.Limit{
			"order-creation:eab:team-x": group,
			"order-creation:9":          own,
		}
	})
	grouped := func(key string) ratelimit.Request {
		return ratelimit.Request{Name: ratelimit.OrderCreation, Key: key, OverrideKey: "eab:team-x"}
	}
	for _, tc := range []struct {
		name string
		reqs []ratelimit.Request
		want []ratelimit.Limit
	}{
		{"default", []ratelimit.Request{order("7")}, []ratelimit.Limit{def}},
		{"EAB group", []ratelimit.Request{grouped("7")}, []ratelimit.Limit{group}},
		{"own override wins over the group", []ratelimit.Request{grouped("9")}, []ratelimit.Limit{own}},
		{"another bucket's group does not apply", []ratelimit.Request{grouped("8"), order("6")}, []ratelimit.Limit{group, def}},
	} {
		d, _ := spend(t, l, tc.reqs...)
		for i, want := range tc.want {
			if got := d.Buckets[i].Policy; got != want {
				t.Errorf("%s: bucket %d: %+v, want %+v", tc.name, i, got, want)
			}
		}
		for _, b := range d.Buckets {
			if b.Key == d.Key && b.Policy != d.Policy {
				t.Errorf("%s: the decision's policy %+v is not its bucket's %+v", tc.name, d.Policy, b.Policy)
			}
		}
	}
	// CheckCount, which explain uses, tells its limit too.
	d, err := l.CheckCount(t.Context(), ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: "7"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := ratelimit.DefaultPolicy().Limits[ratelimit.PendingAuthorizations]; d.Policy != want || len(d.Buckets) != 1 || d.Buckets[0].Policy != want {
		t.Errorf("CheckCount: policy %+v, buckets %+v; want %+v", d.Policy, d.Buckets, want)
	}
}

// TestCeilSeconds: a wait in whole seconds is never shorter than the wait.
func TestCeilSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0}, {time.Nanosecond, 1}, {time.Second, 1}, {time.Second + time.Nanosecond, 2},
		{57 * time.Minute, 3420}, {-time.Nanosecond, 0}, {-1500 * time.Millisecond, -1},
	} {
		if got := ratelimit.CeilSeconds(tc.d); got != tc.want {
			t.Errorf("CeilSeconds(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestLimitSpan: the time a limit counts over.
func TestLimitSpan(t *testing.T) {
	def := ratelimit.DefaultPolicy().Limits
	for n, want := range map[ratelimit.Name]time.Duration{
		ratelimit.OrderCreation:         time.Hour,
		ratelimit.DuplicateCertificate:  168 * time.Hour,
		ratelimit.PendingAuthorizations: 0,
	} {
		if got := def[n].Span(); got != want {
			t.Errorf("%s: span %v, want %v", n, got, want)
		}
	}
}

// TestJoin: two decisions taken together are allowed only when both are,
// headed by the strictest denial or else the bucket with the least left,
// with the buckets and denials of both in order.
func TestJoin(t *testing.T) {
	bucket := func(n ratelimit.Name, allowed bool, left int64, wait time.Duration, never bool) ratelimit.Decision {
		return ratelimit.Decision{Allowed: allowed, Limit: n, Key: "k", Remaining: left, RetryAfter: wait, Never: never}
	}
	one := func(b ratelimit.Decision) ratelimit.Decision {
		d := b
		d.Buckets = []ratelimit.Decision{b}
		if !b.Allowed {
			d.Denied = []ratelimit.Decision{b}
		}
		return d
	}
	rateOK := bucket(ratelimit.OrderCreation, true, 4, 0, false)
	countOK := bucket(ratelimit.PendingAuthorizations, true, 2, 0, false)
	rateNo := bucket(ratelimit.OrderCreation, false, 0, time.Minute, false)
	countNo := bucket(ratelimit.PendingAuthorizations, false, 0, time.Hour, false)
	never := bucket(ratelimit.SANBudget, false, 0, 0, true)
	for _, tc := range []struct {
		name    string
		a, b    ratelimit.Decision
		head    ratelimit.Name
		allowed bool
		denied  int
	}{
		{"both allowed: the least left", one(rateOK), one(countOK), ratelimit.PendingAuthorizations, true, 0},
		{"one denied", one(rateOK), one(countNo), ratelimit.PendingAuthorizations, false, 1},
		{"the longer wait", one(countNo), one(rateNo), ratelimit.PendingAuthorizations, false, 2},
		{"never first", one(rateNo), one(never), ratelimit.SANBudget, false, 2},
		{"nothing asked", ratelimit.Decision{Allowed: true}, one(rateNo), ratelimit.OrderCreation, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ratelimit.Join(tc.a, tc.b)
			if d.Allowed != tc.allowed || d.Limit != tc.head || len(d.Denied) != tc.denied {
				t.Errorf("Join = allowed %v head %v denied %d, want %v %v %d", d.Allowed, d.Limit, len(d.Denied), tc.allowed, tc.head, tc.denied)
			}
			if want := len(tc.a.Buckets) + len(tc.b.Buckets); len(d.Buckets) != want {
				t.Errorf("%d buckets, want %d", len(d.Buckets), want)
			}
		})
	}
}
