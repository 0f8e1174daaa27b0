// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// LogMonitorMetrics are the Prometheus metrics of "weir log monitor",
// which watches weir's verifiable log from another host: a registry of
// their own, served by the monitor's own listener, not weir's /metrics.
// They live here because the Prometheus library lives in this package
// (docs/ARCHITECTURE.md); they use nothing else of it.
type LogMonitorMetrics struct {
	reg      *prometheus.Registry
	reasons  []string
	alarm    *prometheus.GaugeVec
	size     prometheus.Gauge
	verified prometheus.Gauge
	grew     prometheus.Gauge
	checks   *prometheus.CounterVec
}

// The results of a check, the label of weir_log_monitor_checks_total.
var logCheckResults = []string{"ok", "alarm", "error"}

// NewLogMonitorMetrics registers the monitor's metrics, with a series of
// weir_log_monitor_alarm for each of the alarms' reasons (0 until one is
// raised), so that an alert can watch each before it ever fires.
func NewLogMonitorMetrics(reasons []string) *LogMonitorMetrics {
	m := &LogMonitorMetrics{
		reg:     prometheus.NewRegistry(),
		reasons: reasons,
		alarm: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "weir_log_monitor_alarm",
			Help: "1 while the last check raised an alarm of this reason (fork, rewind, bad-signature, bad-tile, entry-mismatch, unparseable-entry, stale), else 0.",
		}, []string{"reason"}),
		size: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "weir_log_monitor_verified_size",
			Help: "The tree size of the checkpoint the monitor holds, the last it verified.",
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
			Help: "The monitor's checks, by result: ok, alarm, or error (the log could not be read; retried, and only counted towards staleness).",
		}, []string{"result"}),
	}
	m.reg.MustRegister(m.alarm, m.size, m.verified, m.grew, m.checks)
	for _, r := range reasons {
		m.alarm.WithLabelValues(r)
	}
	for _, r := range logCheckResults {
		m.checks.WithLabelValues(r)
	}
	return m
}

// Record sets the metrics after one check: alarm is the reason of the
// alarm it raised ("" for none), failed whether it could not be made,
// size the tree size held, verified and grew when a checkpoint last
// verified and when the tree last grew (zero: never).
func (m *LogMonitorMetrics) Record(alarm string, failed bool, size int64, verified, grew time.Time) {
	for _, r := range m.reasons {
		v := 0.0
		if r == alarm {
			v = 1
		}
		m.alarm.WithLabelValues(r).Set(v)
	}
	result := logCheckResults[0]
	switch {
	case alarm != "":
		result = logCheckResults[1]
	case failed:
		result = logCheckResults[2]
	}
	m.checks.WithLabelValues(result).Inc()
	m.size.Set(float64(size))
	if !verified.IsZero() {
		m.verified.Set(float64(verified.Unix()))
	}
	if !grew.IsZero() {
		m.grew.Set(float64(grew.Unix()))
	}
}

// Handler serves the metrics in the Prometheus exposition format.
func (m *LogMonitorMetrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
