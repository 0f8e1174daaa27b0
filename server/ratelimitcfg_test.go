// SPDX-License-Identifier: Apache-2.0

package server

import (
	"strings"
	"testing"
	"time"
)

// TestRateLimitingMisplacedOverrideField: through the YAML decoder, an
// override field counts as set when the file has it, so a field of another
// limit is refused, even at 0. It used to be ignored silently.
func TestRateLimitingMisplacedOverrideField(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"burst on an order-creation override",
			"rate-limiting:\n  overrides:\n    - { limit: order-creation, key: \"account:42\", burst: 50 }\n",
			"rate-limiting.overrides[0].burst: order-creation overrides take orders-per-account-per-hour, order-burst and san-budget-per-account-per-hour"},
		{"a misplaced field at 0",
			"rate-limiting:\n  overrides:\n    - { limit: pending-authorizations, key: \"account:42\", max: 40 }\n    - { limit: account-creation, key: \"ip:10.0.0.1\", max-per-window: 0 }\n",
			"rate-limiting.overrides[1].max-per-window: account-creation overrides take per-ip-per-hour and burst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseConfig("", []byte(tt.yaml)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("parseConfig error = %v; want one containing %q", err, tt.want)
			}
		})
	}
}

// TestRateLimitingOverrideDecoded: the fields an override has, a duration
// among them, are decoded over the block's values; those it leaves out
// keep them.
func TestRateLimitingOverrideDecoded(t *testing.T) {
	c, err := ParseConfig("", []byte("rate-limiting:\n  overrides:\n"+
		"    - { limit: duplicate-certificate, key: \"account:42\", window: 2h }\n"+
		"    - { limit: order-creation, key: \"account:42\", order-burst: 50 }\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.RateLimiting.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Overrides["duplicate-certificate:42"]; got.Window != 2*time.Hour || got.Max != 5 {
		t.Errorf("duplicate-certificate:42 = %+v, want the block's max 5 over 2h", got)
	}
	if got := p.Overrides["order-creation:42"]; got.Burst != 50 || got.Count != 20 {
		t.Errorf("order-creation:42 = %+v, want burst 50 and the block's 20 an hour", got)
	}
}

// TestRateLimitingLimiterRefusal: a limit the Limiter would refuse is
// reported when the file is checked, under its key; it used to pass
// check-config and stop serve.
func TestRateLimitingLimiterRefusal(t *testing.T) {
	const want = "rate-limiting.global: 100000000 per 1m0s is more than one per microsecond"
	_, err := ParseConfig("", []byte("rate-limiting:\n  global: { requests-per-minute: 100000000 }\n"))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("parseConfig error = %v; want one containing %q", err, want)
	}
}
