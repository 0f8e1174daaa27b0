// SPDX-License-Identifier: Apache-2.0

package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// TestOverrideKey: a request's OverrideKey makes its bucket take the
// group's override ("order-creation:eab:team-x"); the bucket's own
// override wins over the group's, and of several groups (GroupKeys) the
// first with an override gives it (account > eab > tenant > default); each bucket still counts apart; and
// Status, Check and CheckCount judge by the same limit.
func TestOverrideKey(t *testing.T) {
	l, clock, _ := newLimiter(t, func(c *ratelimit.Policy) {
		c.Overrides = map[string]ratelimit.Limit{
			"order-creation:eab:team-x":         {Count: 100, Period: time.Hour, Burst: 10},
			"order-creation:7":                  {Count: 20, Period: time.Hour, Burst: 2},
			"pending-authorizations:eab:team-x": {Max: 3},
			"order-creation:tenant:team-a":      {Count: 60, Period: time.Hour, Burst: 6},
			"order-creation:11":                 {Count: 30, Period: time.Hour, Burst: 3},
		}
	})
	const group = "eab:team-x"
	grouped := func(r ratelimit.Request) ratelimit.Request { r.OverrideKey = group; return r }

	tests := []struct {
		name string
		req  ratelimit.Request
		want int // orders admitted in a row
	}{
		{"no override key: the default burst", order("1"), 5},
		{"the group's override", grouped(order("2")), 10},
		{"another account of the group counts apart", grouped(order("3")), 10},
		{"the account's own override wins over the group's", grouped(order("7")), 2},
		{"a group without an override: the default", ratelimit.Request{Name: ratelimit.OrderCreation, Key: "4", OverrideKey: "eab:team-y"}, 5},
		{"the label's override wins over the tenant's", ratelimit.Request{Name: ratelimit.OrderCreation, Key: "5",
			OverrideKey: ratelimit.GroupKeys("eab:team-x", "tenant:team-a")}, 10},
		{"a label without one: the tenant's", ratelimit.Request{Name: ratelimit.OrderCreation, Key: "6",
			OverrideKey: ratelimit.GroupKeys("eab:team-y", "tenant:team-a")}, 6},
		{"the account's own wins over its label's and tenant's", ratelimit.Request{Name: ratelimit.OrderCreation, Key: "11",
			OverrideKey: ratelimit.GroupKeys("eab:team-x", "tenant:team-a")}, 3},
		{"a tenant without one: the default", ratelimit.Request{Name: ratelimit.OrderCreation, Key: "8",
			OverrideKey: ratelimit.GroupKeys("", "tenant:team-b")}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := 0
			for range 20 {
				d, _ := spend(t, l, tt.req)
				if !d.Allowed {
					break
				}
				got++
			}
			if got != tt.want {
				t.Errorf("admitted %d orders in a row; want %d", got, tt.want)
			}
		})
	}

	// Status reports the group's override as the bucket's limit.
	st, err := l.Status(t.Context(), grouped(order("9")), order("9"))
	if err != nil {
		t.Fatal(err)
	}
	if !st[0].Override || st[0].Capacity != 10 || st[0].Remaining != 10 {
		t.Errorf("Status with the override key = %+v; want an override of capacity 10, 10 left", st[0])
	}
	if st[1].Override || st[1].Capacity != 5 {
		t.Errorf("Status without it = %+v; want the default capacity 5", st[1])
	}

	// Count limits too: three pending authorizations for the group.
	exp := clock.Now().Add(time.Hour)
	for i := range 3 {
		if d, _ := spend(t, l, grouped(pending("5", fmt.Sprint("z", i), exp))); !d.Allowed {
			t.Fatalf("pending authorization %d refused: %+v", i, d)
		}
	}
	if d, _ := spend(t, l, grouped(pending("5", "z3", exp))); d.Allowed {
		t.Error("a fourth pending authorization of the group was admitted; want its max of 3")
	}
	d, err := l.CheckCount(t.Context(), grouped(ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: "5"}), 1)
	if err != nil || d.Allowed {
		t.Errorf("CheckCount with the override key = %+v, %v; want denied at the group's max", d, err)
	}
	d, err = l.CheckCount(t.Context(), ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: "5"}, 1)
	if err != nil || !d.Allowed {
		t.Errorf("CheckCount without it = %+v, %v; want allowed under the default max of 30", d, err)
	}
}
