// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOverrideValidate: an override may set only the fields of its own
// limit, counting a field as set when the file has it (0 included); each
// misplaced field is named by its key, and every problem of every override
// is reported at once.
func TestOverrideValidate(t *testing.T) {
	one := func(o Override) []Override { return []Override{o} }
	tests := []struct {
		name      string
		block     func(c *Config) // edits the defaults; nil keeps them
		overrides []Override
		want      []string // the whole report, line by line; nil: valid
	}{
		{name: "fields of the limit", overrides: []Override{
			{Limit: "account-creation", Key: "ip:10.0.0.1", PerIPPerHour: new(int64(50)), Burst: new(int64(5))},
			{Limit: "order-creation", Key: "account:1", OrdersPerAccountPerHour: new(int64(50)), OrderBurst: new(int64(5)), SANBudgetPerAccountPerHour: new(int64(500))},
			{Limit: "duplicate-certificate", Key: "account:1", MaxPerWindow: new(int64(9)), Window: new(time.Hour)},
			{Limit: "failed-validation", Key: "account:1", MaxPerWindow: new(int64(9)), Window: new(time.Hour)},
			{Limit: "pending-authorizations", Key: "eab:team-x", Max: new(int64(300))},
			{Limit: "registered-domain", Key: "domain:example.com", MaxPerWindow: new(int64(500)), Window: new(time.Hour)},
		}},
		{name: "0 in a field of the limit keeps the block's value",
			overrides: one(Override{Limit: "order-creation", Key: "account:1", OrderBurst: new(int64(0))})},
		{name: "burst on an order-creation override", overrides: []Override{
			{Limit: "order-creation", Key: "account:1", OrderBurst: new(int64(9))},
			{Limit: "pending-authorizations", Key: "account:1", Max: new(int64(9))},
			{Limit: "order-creation", Key: "account:2", Burst: new(int64(50))},
		}, want: []string{"rate-limiting.overrides[2].burst: order-creation overrides take orders-per-account-per-hour, order-burst and san-budget-per-account-per-hour"}},
		{name: "a misplaced field set to 0 is still set",
			overrides: one(Override{Limit: "order-creation", Key: "account:1", Burst: new(int64(0))}),
			want:      []string{"rate-limiting.overrides[0].burst: order-creation overrides take orders-per-account-per-hour, order-burst and san-budget-per-account-per-hour"}},
		{name: "order-burst on an account-creation override",
			overrides: one(Override{Limit: "account-creation", Key: "ip:10.0.0.1", OrderBurst: new(int64(9))}),
			want:      []string{"rate-limiting.overrides[0].order-burst: account-creation overrides take per-ip-per-hour and burst"}},
		{name: "window on a pending-authorizations override",
			overrides: one(Override{Limit: "pending-authorizations", Key: "account:1", Max: new(int64(9)), Window: new(time.Hour)}),
			want:      []string{"rate-limiting.overrides[0].window: pending-authorizations overrides take max"}},
		{name: "max on a duplicate-certificate override",
			overrides: one(Override{Limit: "duplicate-certificate", Key: "account:1", Max: new(int64(9))}),
			want:      []string{"rate-limiting.overrides[0].max: duplicate-certificate overrides take max-per-window and window"}},
		{name: "every misplaced field, in the order of the type",
			overrides: one(Override{Limit: "registered-domain", Key: "domain:example.com", PerIPPerHour: new(int64(1)), Burst: new(int64(1)), Max: new(int64(1))}),
			want: []string{
				"rate-limiting.overrides[0].per-ip-per-hour: registered-domain overrides take max-per-window and window",
				"rate-limiting.overrides[0].burst: registered-domain overrides take max-per-window and window",
				"rate-limiting.overrides[0].max: registered-domain overrides take max-per-window and window",
			}},
		{name: "a misplaced field and a bad key, both",
			overrides: one(Override{Limit: "failed-validation", Key: "ip:10.0.0.1", Burst: new(int64(1))}),
			want: []string{
				"rate-limiting.overrides[0].burst: failed-validation overrides take max-per-window and window",
				`rate-limiting.overrides[0]: limit failed-validation takes a key of the form account:…, not "ip:10.0.0.1"`,
			}},
		{name: "negative values",
			overrides: one(Override{Limit: "failed-validation", Key: "account:1", MaxPerWindow: new(int64(-5)), Window: new(-time.Hour)}),
			want: []string{
				"rate-limiting.overrides[0].max-per-window: must be positive, got -5 (leave it out to keep the block's value)",
				"rate-limiting.overrides[0].window: must be positive, got -1h0m0s (leave it out to keep the block's value)",
			}},
		{name: "a limit the Limiter would refuse",
			overrides: one(Override{Limit: "order-creation", Key: "account:1", OrdersPerAccountPerHour: new(int64(5_000_000_000))}),
			want:      []string{"rate-limiting.overrides[0]: 5000000000 per 1h0m0s is more than one per microsecond"}},
		{name: "the block's fault is reported once, not again for its overrides",
			block:     func(c *Config) { c.OrderCreation.OrderBurst = 0 },
			overrides: one(Override{Limit: "order-creation", Key: "account:1", OrdersPerAccountPerHour: new(int64(50))}),
			want:      []string{"rate-limiting.order-creation.order-burst: must be at least 1, got 0 (to turn the limit off, set enabled: false)"}},
		{name: "no fields are read of a limit that cannot be overridden",
			overrides: one(Override{Limit: "global", Key: "ip:10.0.0.1", Burst: new(int64(1))}),
			want:      []string{`rate-limiting.overrides[0]: limit "global" cannot be overridden (one of account-creation, order-creation, duplicate-certificate, failed-validation, pending-authorizations, registered-domain)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			if tt.block != nil {
				tt.block(&c)
			}
			c.Overrides = tt.overrides
			err := c.Validate()
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Validate() =\n%v\nwant\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestOverrideFieldsFollowTheBlock: each limit field of Override is a key
// of a block that some override may set, so none is unreachable.
func TestOverrideFieldsFollowTheBlock(t *testing.T) {
	var all []string
	for _, l := range []string{"account-creation", "order-creation", "duplicate-certificate", "failed-validation", "pending-authorizations", "registered-domain"} {
		r, ok := overrideRuleOf(l)
		if !ok {
			t.Fatalf("overrideRuleOf(%s): not overridable", l)
		}
		all = append(all, r.fields()...)
	}
	o := Override{PerIPPerHour: new(int64(1)), Burst: new(int64(1)), OrdersPerAccountPerHour: new(int64(1)), OrderBurst: new(int64(1)),
		SANBudgetPerAccountPerHour: new(int64(1)), MaxPerWindow: new(int64(1)), Window: new(time.Hour), Max: new(int64(1))}
	set := o.set()
	if want := reflect.TypeOf(o).NumField() - 2; len(set) != want { // all but limit and key
		t.Fatalf("set() = %d fields, want all %d", len(set), want)
	}
	for _, f := range set {
		if !slices.Contains(all, f.key) {
			t.Errorf("Override field %s is no limit's field", f.key)
		}
	}
}
