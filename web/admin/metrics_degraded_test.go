// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"errors"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
)

// TestDegradedDecisions: a degraded decision is counted once per limit it
// asked about, by outcome, in the metric and in the dashboard's view, and
// its backend error is counted under policy degrade.
func TestDegradedDecisions(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m := NewMetrics(MetricsOptions{Now: func() time.Time { return at }})
	reqs := []ratelimit.Request{{Name: ratelimit.OrderCreation, Key: "7"}, {Name: ratelimit.PendingAuthorizations, Key: "7"}}
	m.Limiter(acme.LimiterEvent{Action: "new-order", Requests: reqs, Err: errors.New("down"), Ignored: true, Degraded: true,
		Decision: ratelimit.Decision{Allowed: true, Limit: ratelimit.OrderCreation, Key: "7"}})
	m.Limiter(acme.LimiterEvent{Action: "new-order", Requests: reqs[:1], Err: errors.New("down"), Ignored: true, Degraded: true,
		Decision: ratelimit.Decision{Limit: ratelimit.OrderCreation, Key: "7"}})
	scrapeMetrics(t, m).expect(t, []series{
		{"weir_ratelimit_degraded_decisions_total", []string{"limit", "order-creation", "outcome", "allowed"}, 1},
		{"weir_ratelimit_degraded_decisions_total", []string{"limit", "order-creation", "outcome", "denied"}, 1},
		{"weir_ratelimit_degraded_decisions_total", []string{"limit", "pending-authorizations", "outcome", "allowed"}, 1},
		{"weir_ratelimit_backend_errors_total", []string{"action", "new-order", "policy", "degrade"}, 2},
	})
	v := m.Degraded()
	if v.ByLimit["order-creation"] != 2 || v.ByLimit["pending-authorizations"] != 1 || v.Last == nil || !v.Last.Equal(at) {
		t.Errorf("dashboard view %+v, want order-creation 2, pending-authorizations 1, last %v", v, at)
	}
}
