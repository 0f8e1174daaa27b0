// SPDX-License-Identifier: Apache-2.0

package ratelimit

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDefaultConfig: the defaults are valid, and DefaultPolicy is what they
// enforce, so the two cannot drift apart.
func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	got, err := c.Policy()
	if err != nil {
		t.Fatalf("DefaultConfig().Policy() = %v", err)
	}
	want := DefaultPolicy()
	if !maps.Equal(got.Limits, want.Limits) || !maps.Equal(got.Enabled, want.Enabled) || len(got.Overrides) != 0 {
		t.Errorf("DefaultConfig().Policy() = %+v\nwant DefaultPolicy() %+v", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   []string // each a whole line of the report
	}{
		{"unknown backend", func(c *Config) { c.Backend = "etcd" },
			[]string{`rate-limiting.backend: "etcd" must be sqlite, redis or memory`}},
		{"redis without an address", func(c *Config) { c.Backend, c.Redis.Addrs = "redis", nil },
			[]string{"rate-limiting.redis.addrs: at least one address is needed for backend redis"}},
		{"unknown backend policy", func(c *Config) { c.OnBackendError = "retry" },
			[]string{`rate-limiting.on-backend-error: "retry" must be degrade, deny or allow`}},
		{"zero timeout", func(c *Config) { c.BackendTimeout = 0 },
			[]string{"rate-limiting.backend-timeout: must be a positive duration, got 0s"}},
		{"explicit zero", func(c *Config) { c.OrderCreation.OrderBurst = 0 },
			[]string{"rate-limiting.order-creation.order-burst: must be at least 1, got 0 (to turn the limit off, set enabled: false)"}},
		{"a disabled limit is checked too", func(c *Config) { c.RegisteredDomain.Window = -time.Hour },
			[]string{"rate-limiting.registered-domain.window: must be a positive duration, got -1h0m0s"}},
		{"a rate the Limiter would refuse", func(c *Config) { c.Global.RequestsPerMinute = 100_000_000 },
			[]string{"rate-limiting.global: 100000000 per 1m0s is more than one per microsecond"}},
		{"a SAN budget the Limiter would refuse", func(c *Config) { c.OrderCreation.SANBudgetPerAccountPerHour = 1 << 40 },
			[]string{"rate-limiting.order-creation: 1099511627776 per 1h0m0s is more than one per microsecond"}},
		{"a window the Limiter would refuse", func(c *Config) { c.DuplicateCertificate.Window = 1_000_000 * time.Hour },
			[]string{"rate-limiting.duplicate-certificate: window must be between 0 and 876000h0m0s, got 1000000h0m0s"}},
		{"a century of burst", func(c *Config) { c.AccountCreation = AccountCreationConfig{PerIPPerHour: 1, Burst: 1_000_000} },
			[]string{"rate-limiting.account-creation: burst 1000000 at one per 1h0m0s spans more than 876000h0m0s"}},
		{"a limit with a bad field is not judged further", func(c *Config) { c.Global = GlobalConfig{RequestsPerMinute: 100_000_000} },
			[]string{"rate-limiting.global.burst: must be at least 1, got 0 (to turn the limit off, set enabled: false)"}},
		{"every problem at once, in the order of the block", func(c *Config) {
			c.Global.Burst = 0
			c.AccountCreation.PerIPPerHour = -1
			c.DuplicateCertificate.MaxPerWindow = 0
			c.FailedValidation.Window = 0
			c.PendingAuthorizations.Max = 0
		}, []string{
			"rate-limiting.global.burst: must be at least 1, got 0 (to turn the limit off, set enabled: false)",
			"rate-limiting.account-creation.per-ip-per-hour: must be at least 1, got -1 (to turn the limit off, set enabled: false)",
			"rate-limiting.duplicate-certificate.max-per-window: must be at least 1, got 0 (to turn the limit off, set enabled: false)",
			"rate-limiting.failed-validation.window: must be a positive duration, got 0s",
			"rate-limiting.pending-authorizations.max: must be at least 1, got 0 (to turn the limit off, set enabled: false)",
		}},
		{"override of an unknown limit", func(c *Config) { c.Overrides = []Override{{Limit: "global", Key: "ip:10.0.0.1"}} },
			[]string{`rate-limiting.overrides[0]: limit "global" cannot be overridden (one of account-creation, order-creation, duplicate-certificate, failed-validation, pending-authorizations, registered-domain)`}},
		{"override key without a kind", func(c *Config) { c.Overrides = []Override{{Limit: "order-creation", Key: "42"}} },
			[]string{`rate-limiting.overrides[0]: key "42" must be account:ID, eab:LABEL, tenant:NAME, ip:ADDRESS or domain:NAME`}},
		{"override key of another limit", func(c *Config) {
			c.Overrides = []Override{{Limit: "order-creation", Key: "account:1"}, {Limit: "duplicate-certificate", Key: "eab:team-x"}}
		}, []string{`rate-limiting.overrides[1]: limit duplicate-certificate takes a key of the form account:…, not "eab:team-x"`}},
		{"override of a window limit by tenant", func(c *Config) { c.Overrides = []Override{{Limit: "failed-validation", Key: "tenant:team-a"}} },
			[]string{`rate-limiting.overrides[0]: limit failed-validation takes a key of the form account:…, not "tenant:team-a"`}},
		{"override of an account limit by IP", func(c *Config) { c.Overrides = []Override{{Limit: "pending-authorizations", Key: "ip:10.0.0.1"}} },
			[]string{`rate-limiting.overrides[0]: limit pending-authorizations takes a key of the form account:…, eab:… or tenant:…, not "ip:10.0.0.1"`}},
		{"override by a bad address", func(c *Config) { c.Overrides = []Override{{Limit: "account-creation", Key: "ip:10.0.0"}} },
			[]string{`rate-limiting.overrides[0]: key "ip:10.0.0": "10.0.0" is not an IP address`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate() = nil, want an error")
			}
			if got := strings.Split(err.Error(), "\n"); !slices.Equal(got, tt.want) {
				t.Errorf("Validate() =\n%s\nwant\n%s", err, strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestConfigPolicy: what each key of the block becomes in the Policy, and
// how an override puts the fields it sets over the block's. Every number
// differs, so that a field read for another shows.
func TestConfigPolicy(t *testing.T) {
	c := DefaultConfig()
	c.Global = GlobalConfig{Enabled: true, RequestsPerMinute: 101, Burst: 11}
	c.AccountCreation = AccountCreationConfig{Enabled: true, PerIPPerHour: 6, Burst: 3}
	c.OrderCreation = OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 21, OrderBurst: 7, SANBudgetPerAccountPerHour: 102}
	c.DuplicateCertificate = WindowConfig{Enabled: true, MaxPerWindow: 4, Window: 100 * time.Hour}
	c.FailedValidation = WindowConfig{Enabled: false, MaxPerWindow: 8, Window: 2 * time.Hour}
	c.PendingAuthorizations = PendingConfig{Enabled: true, Max: 31}
	c.RegisteredDomain = WindowConfig{Enabled: true, MaxPerWindow: 51, Window: 3 * time.Hour}
	c.Overrides = []Override{
		{Limit: "order-creation", Key: "account:42", OrderBurst: new(int64(50)), OrdersPerAccountPerHour: new(int64(0))}, // 0 keeps the block's 21
		{Limit: "order-creation", Key: "eab:team-x", SANBudgetPerAccountPerHour: new(int64(1000))},
		{Limit: "account-creation", Key: "ip:::ffff:10.1.2.3", PerIPPerHour: new(int64(100))},
		{Limit: "account-creation", Key: "ip:2001:db8:1:2::7", Burst: new(int64(9))},
		{Limit: "duplicate-certificate", Key: "account:42", Window: new(time.Hour)},
		{Limit: "failed-validation", Key: "account:42", MaxPerWindow: new(int64(30))},
		{Limit: "pending-authorizations", Key: "eab:team-x", Max: new(int64(300))},
		{Limit: "pending-authorizations", Key: "tenant:team-a", Max: new(int64(400))},
		{Limit: "registered-domain", Key: "domain:example.com", MaxPerWindow: new(int64(500))},
	}
	p, err := c.Policy()
	if err != nil {
		t.Fatal(err)
	}
	wantLimits := map[Name]Limit{
		Global:                {Count: 101, Period: time.Minute, Burst: 11},
		AccountCreation:       {Count: 6, Period: time.Hour, Burst: 3},
		OrderCreation:         {Count: 21, Period: time.Hour, Burst: 7},
		SANBudget:             {Count: 102, Period: time.Hour, Burst: 102},
		DuplicateCertificate:  {Max: 4, Window: 100 * time.Hour},
		FailedValidation:      {Count: 8, Period: 2 * time.Hour, Burst: 8},
		PendingAuthorizations: {Max: 31},
		RegisteredDomain:      {Count: 51, Period: 3 * time.Hour, Burst: 51},
	}
	if !maps.Equal(p.Limits, wantLimits) {
		t.Errorf("Limits = %v\nwant %v", p.Limits, wantLimits)
	}
	for _, n := range Names() {
		if got, want := p.Enabled[n], n != FailedValidation; got != want {
			t.Errorf("Enabled[%s] = %v, want %v", n, got, want)
		}
	}
	wantOverrides := map[string]Limit{
		"order-creation:42":                    {Count: 21, Period: time.Hour, Burst: 50},
		"san-budget:42":                        {Count: 102, Period: time.Hour, Burst: 102},
		"order-creation:eab:team-x":            {Count: 21, Period: time.Hour, Burst: 7},
		"san-budget:eab:team-x":                {Count: 1000, Period: time.Hour, Burst: 1000},
		"account-creation:10.1.2.3":            {Count: 100, Period: time.Hour, Burst: 3},
		"account-creation:2001:db8:1:2::/64":   {Count: 6, Period: time.Hour, Burst: 9},
		"duplicate-certificate:42":             {Max: 4, Window: time.Hour},
		"failed-validation:42":                 {Count: 30, Period: 2 * time.Hour, Burst: 30},
		"pending-authorizations:eab:team-x":    {Max: 300},
		"pending-authorizations:tenant:team-a": {Max: 400},
		"registered-domain:example.com":        {Count: 500, Period: 3 * time.Hour, Burst: 500},
	}
	if !maps.Equal(p.Overrides, wantOverrides) {
		t.Errorf("Overrides = %v\nwant %v", p.Overrides, wantOverrides)
	}
}

// TestConfigPolicyRefusesWhatValidateRefuses: Policy gives the same
// report as Validate, so no caller can build a Limiter from a block that
// Validate refuses.
func TestConfigPolicyRefusesWhatValidateRefuses(t *testing.T) {
	c := DefaultConfig()
	c.Global.Burst = 0
	c.Overrides = []Override{{Limit: "order-creation", Key: "account:42", OrderBurst: new(int64(-5))}}
	want := c.Validate()
	if want == nil {
		t.Fatal("Validate() = nil, want problems")
	}
	if _, err := c.Policy(); err == nil || err.Error() != want.Error() {
		t.Errorf("Policy() = %v\nwant Validate()'s %v", err, want)
	}
}
