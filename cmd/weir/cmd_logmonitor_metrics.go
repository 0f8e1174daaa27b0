// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weir-pki/weir/acme/transparency"
)

// The results of a check, the label of weir_log_monitor_checks_total.
const (
	checkOK    = "ok"
	checkAlarm = "alarm"
	checkError = "error"
)

// monitorMetrics are the Prometheus metrics of "weir log monitor", in a
// registry of their own.
type monitorMetrics struct {
	reg      *prometheus.Registry
	alarm    *prometheus.GaugeVec
	size     prometheus.Gauge
	verified prometheus.Gauge
	grew     prometheus.Gauge
	checks   *prometheus.CounterVec
}

func newMonitorMetrics() *monitorMetrics {
	m := &monitorMetrics{
		reg: prometheus.NewRegistry(),
		alarm: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "weir_log_monitor_alarm",
			Help: "1 while the last check raised an alarm of this reason, else 0.",
		}, []string{"reason"}),
		size: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "weir_log_monitor_verified_size",
			Help: "The size of the last checkpoint the monitor verified.",
		}),
		verified: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "weir_log_monitor_last_verified_timestamp_seconds",
			Help: "When the monitor last verified a checkpoint (Unix time; 0: never).",
		}),
		grew: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "weir_log_monitor_last_growth_timestamp_seconds",
			Help: "When the monitor last saw the tree grow (Unix time; 0: never).",
		}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_log_monitor_checks_total",
			Help: "The checks made, by result: ok, alarm, or error (a transient failure to fetch).",
		}, []string{"result"}),
	}
	m.reg.MustRegister(m.alarm, m.size, m.verified, m.grew, m.checks)
	for _, r := range transparency.Reasons {
		m.alarm.WithLabelValues(string(r))
	}
	for _, r := range []string{checkOK, checkAlarm, checkError} {
		m.checks.WithLabelValues(r)
	}
	return m
}

// record sets the metrics from a check's result.
func (m *monitorMetrics) record(r transparency.Result, err error) {
	for _, reason := range transparency.Reasons {
		v := 0.0
		if r.Alarm != nil && r.Alarm.Reason == reason {
			v = 1
		}
		m.alarm.WithLabelValues(string(reason)).Set(v)
	}
	switch {
	case r.Alarm != nil:
		m.checks.WithLabelValues(checkAlarm).Inc()
	case err != nil:
		m.checks.WithLabelValues(checkError).Inc()
	default:
		m.checks.WithLabelValues(checkOK).Inc()
	}
	m.size.Set(float64(r.Checkpoint.Size))
	if !r.Verified.IsZero() {
		m.verified.Set(float64(r.Verified.Unix()))
	}
	if !r.Grew.IsZero() {
		m.grew.Set(float64(r.Grew.Unix()))
	}
}

func (m *monitorMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
