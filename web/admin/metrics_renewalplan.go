// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weir-pki/weir/acme/renewal"
)

// The renewal plan against its capacities (renewal.Capacity), read at
// each scrape, for the alerts WeirRenewalPlanOverCeiling and
// WeirRenewalPlanAccountOverBudget of docs/prometheus-rules.yaml. With
// planning off nothing is reported.

// WatchRenewalPlan publishes the plan's capacity that plan returns (nil
// with planning off) at every scrape.
func (m *Metrics) WatchRenewalPlan(plan func() *renewal.Capacity) {
	m.reg.MustRegister(renewalPlan{plan: plan,
		ceiling: prometheus.NewDesc("weir_renewal_plan_ceiling_per_hour",
			"renewal-info.max-renewals-per-hour: the renewals an hour the renewal planner spreads the ARI windows under.", nil, nil),
		peak: prometheus.NewDesc("weir_renewal_plan_peak_per_hour",
			"The highest expected renewal rate, per hour, of any slot ahead in the renewal plan: what the certificates issued will ask for at their busiest.", nil, nil),
		slotsOver: prometheus.NewDesc("weir_renewal_plan_slots_over_ceiling",
			"Slots ahead (hours, or minutes for short lifetimes) whose expected renewals exceed max-renewals-per-hour.", nil, nil),
		acctsOver: prometheus.NewDesc("weir_renewal_plan_accounts_over_headroom",
			"Accounts whose planned renewals exceed, in some slot ahead, the renewals an hour their san-budget allows "+
				"(those this replica placed over it since it started, at most 64).", nil, nil),
		placed: prometheus.NewDesc("weir_renewal_plan_placed_over_capacity_total",
			"ARI windows this replica placed where no start kept the plan under a capacity, by capacity: ceiling (max-renewals-per-hour) or account (its san-budget).",
			[]string{"capacity"}, nil),
	})
}

type renewalPlan struct {
	plan                                        func() *renewal.Capacity
	ceiling, peak, slotsOver, acctsOver, placed *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c renewalPlan) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.ceiling, c.peak, c.slotsOver, c.acctsOver, c.placed} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c renewalPlan) Collect(ch chan<- prometheus.Metric) {
	p := c.plan()
	if p == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.ceiling, prometheus.GaugeValue, p.CeilingPerHour)
	ch <- prometheus.MustNewConstMetric(c.peak, prometheus.GaugeValue, p.PeakPerHour)
	ch <- prometheus.MustNewConstMetric(c.slotsOver, prometheus.GaugeValue, float64(p.SlotsOver))
	ch <- prometheus.MustNewConstMetric(c.acctsOver, prometheus.GaugeValue, float64(p.AccountsOver))
	ch <- prometheus.MustNewConstMetric(c.placed, prometheus.CounterValue, float64(p.PlacedOverCeiling), "ceiling")
	ch <- prometheus.MustNewConstMetric(c.placed, prometheus.CounterValue, float64(p.PlacedOverAccount), "account")
}
