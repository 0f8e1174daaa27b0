// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"testing"

	"github.com/weir-pki/weir/acme/renewal"
)

// TestRenewalPlanMetrics: the plan's capacity is read at each scrape, so
// a change (a ceiling raised) shows at the next one; with planning off
// no series is reported.
func TestRenewalPlanMetrics(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	plan := &renewal.Capacity{CeilingPerHour: 600, PeakPerHour: 17140, SlotsOver: 9, AccountsOver: 2, PlacedOverCeiling: 5, PlacedOverAccount: 3}
	m.WatchRenewalPlan(func() *renewal.Capacity { return plan })
	s := scrapeMetrics(t, m)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"weir_renewal_plan_ceiling_per_hour", nil, 600},
		{"weir_renewal_plan_peak_per_hour", nil, 17140},
		{"weir_renewal_plan_slots_over_ceiling", nil, 9},
		{"weir_renewal_plan_accounts_over_headroom", nil, 2},
		{"weir_renewal_plan_placed_over_capacity_total", []string{"capacity", "ceiling"}, 5},
		{"weir_renewal_plan_placed_over_capacity_total", []string{"capacity", "account"}, 3},
	} {
		if got := s.value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	plan = &renewal.Capacity{CeilingPerHour: 20000, PeakPerHour: 17140}
	if got := scrapeMetrics(t, m).value("weir_renewal_plan_slots_over_ceiling"); got != 0 {
		t.Errorf("after the ceiling was raised: %v slots over, want 0", got)
	}
	plan = nil
	if s := scrapeMetrics(t, m); s["weir_renewal_plan_ceiling_per_hour"] != nil || s["weir_renewal_plan_peak_per_hour"] != nil {
		t.Error("series reported with planning off")
	}
}
