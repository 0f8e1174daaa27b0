// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultPolicyValid(t *testing.T) {
	c := DefaultPolicy()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultPolicy().Validate() = %v", err)
	}
	for _, n := range Names() {
		if _, ok := c.Limits[n]; !ok {
			t.Errorf("DefaultPolicy has no limit for %s", n)
		}
		if got, want := c.Enabled[n], n != RegisteredDomain; got != want {
			t.Errorf("DefaultPolicy: %s enabled = %v, want %v", n, got, want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Policy)
		want   []string // substrings, each of which must appear
	}{
		{"explicit zero count", func(c *Policy) { c.Limits[OrderCreation] = Limit{Count: 0, Period: time.Hour, Burst: 5} },
			[]string{"order-creation: count must be positive, got 0"}},
		{"all zero", func(c *Policy) { c.Limits[AccountCreation] = Limit{} },
			[]string{"account-creation: set either count, period and burst"}},
		{"negative period and zero burst together", func(c *Policy) { c.Limits[SANBudget] = Limit{Count: 100, Period: -time.Hour} },
			[]string{"san-budget: period must be positive", "san-budget: burst must be at least 1, got 0"}},
		{"faster than one per microsecond", func(c *Policy) { c.Limits[Global] = Limit{Count: 2000, Period: time.Millisecond, Burst: 1} },
			[]string{"global: 2000 per 1ms is more than one per microsecond"}},
		{"absurd burst", func(c *Policy) { c.Limits[Global] = Limit{Count: 1, Period: 24 * time.Hour, Burst: 1 << 20} },
			[]string{"global: burst 1048576 at one per 24h0m0s spans more than"}},
		{"rate fields on a count limit", func(c *Policy) { c.Limits[PendingAuthorizations] = Limit{Count: 30, Period: time.Hour, Burst: 30} },
			[]string{"pending-authorizations is an exact count"}},
		{"count fields on a rate limit", func(c *Policy) { c.Limits[FailedValidation] = Limit{Max: 5, Window: time.Hour} },
			[]string{"failed-validation is a rate limit"}},
		{"both kinds at once", func(c *Policy) { c.Limits[OrderCreation] = Limit{Count: 20, Period: time.Hour, Burst: 5, Max: 3} },
			[]string{"order-creation: set either"}},
		{"duplicate-certificate needs a window", func(c *Policy) { c.Limits[DuplicateCertificate] = Limit{Max: 5} },
			[]string{"duplicate-certificate: window must be positive"}},
		{"pending-authorizations takes no window", func(c *Policy) { c.Limits[PendingAuthorizations] = Limit{Max: 30, Window: time.Hour} },
			[]string{"pending-authorizations: window must be 0"}},
		{"zero max", func(c *Policy) { c.Limits[DuplicateCertificate] = Limit{Max: 0, Window: time.Hour} },
			[]string{"duplicate-certificate: max must be at least 1, got 0"}},
		{"enabled without a limit", func(c *Policy) { delete(c.Limits, OrderCreation) },
			[]string{"order-creation is enabled but has no limit"}},
		{"unknown name", func(c *Policy) { c.Limits[Name(99)] = Limit{Max: 1} },
			[]string{"unknown limit name 99"}},
		{"override with an unknown name", func(c *Policy) {
			c.Overrides = map[string]Limit{"orders:acct-1": {Count: 1, Period: time.Hour, Burst: 1}}
		},
			[]string{`override "orders:acct-1": the key must start with a limit name`}},
		{"override without a key", func(c *Policy) {
			c.Overrides = map[string]Limit{"order-creation:": {Count: 1, Period: time.Hour, Burst: 1}}
		},
			[]string{`override "order-creation:": empty key`}},
		{"override of the wrong kind", func(c *Policy) { c.Overrides = map[string]Limit{"order-creation:big": {Max: 100}} },
			[]string{"override order-creation:big: order-creation is a rate limit"}},
		{"several problems at once", func(c *Policy) {
			c.Limits[OrderCreation] = Limit{Count: -1, Period: time.Hour, Burst: 5}
			c.Limits[DuplicateCertificate] = Limit{Max: -5, Window: time.Hour}
		}, []string{"order-creation: count must be positive", "duplicate-certificate: max must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultPolicy()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate() = nil, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "ratelimit: ") {
				t.Errorf("Validate() = %q, want the ratelimit: prefix", err)
			}
		})
	}
}

func TestLimitKindAndEmission(t *testing.T) {
	tests := []struct {
		limit    Limit
		kind     Kind
		emission int64
	}{
		{Limit{Count: 20, Period: time.Hour, Burst: 5}, KindRate, 180_000_000},
		{Limit{Count: 200, Period: time.Minute, Burst: 20}, KindRate, 300_000},
		{Limit{Count: 3, Period: time.Second, Burst: 1}, KindRate, 333_333},
		{Limit{Max: 30}, KindCount, 0},
		{Limit{Max: 5, Window: time.Hour}, KindCount, 0},
		{Limit{}, KindInvalid, 0},
		{Limit{Burst: 1, Max: 1}, KindInvalid, 0},
	}
	for _, tt := range tests {
		if got := tt.limit.Kind(); got != tt.kind {
			t.Errorf("%+v.Kind() = %v, want %v", tt.limit, got, tt.kind)
		}
		if got := tt.limit.Emission(); got != tt.emission {
			t.Errorf("%+v.Emission() = %d, want %d", tt.limit, got, tt.emission)
		}
	}
}
