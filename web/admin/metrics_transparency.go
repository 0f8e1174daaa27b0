// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// LogState is what a replica reads of the verifiable log at a scrape:
// the size of its tree and how long its oldest waiting entry has waited
// (0 when none waits).
type LogState struct {
	Size   int64
	Oldest time.Duration
	// Served is the size of the checkpoint served: Size, unless
	// witnesses must cosign a checkpoint before it is served.
	Served int64
}

// LogMetrics are the verifiable log's metrics (acme/transparency).
type LogMetrics struct {
	lag     prometheus.Histogram
	errors  prometheus.Counter
	witness *prometheus.CounterVec
}

// WitnessFailure counts a witness that did not cosign a checkpoint.
func (l *LogMetrics) WitnessFailure(witness string) { l.witness.WithLabelValues(witness).Inc() }

// ObserveLag records how long one entry waited to be integrated.
func (l *LogMetrics) ObserveLag(d time.Duration) { l.lag.Observe(d.Seconds()) }

// SequencerError counts a failed integration.
func (l *LogMetrics) SequencerError() { l.errors.Inc() }

// SetLog exports the verifiable log's metrics: the tree's size and the
// wait of its oldest pending entry, read by state at each scrape (ok
// false when the store did not answer: both are then absent), the
// integration lag of each entry this replica's sequencer integrated, and
// its failed integrations.
func (m *Metrics) SetLog(state func() (LogState, bool)) *LogMetrics {
	l := &LogMetrics{
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "weir_log_integration_lag_seconds",
			Help:    "How long each entry of the verifiable log waited between its writing and its integration into the tree, on the replica that sequenced it.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30, 60, 300},
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weir_log_sequencer_errors_total",
			Help: "Integrations of the verifiable log's pending entries that failed on this replica (each is also logged); the entries stay pending.",
		}),
		witness: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_log_witness_failures_total",
			Help: "Requests to a witness to cosign the verifiable log's checkpoint that failed or were refused, by witness (each is also logged).",
		}, []string{"witness"}),
	}
	m.reg.MustRegister(l.lag, l.errors, l.witness, logStateCollector{state: state,
		size:   prometheus.NewDesc("weir_log_tree_size", "Entries integrated into the verifiable log's tree (the size of its latest checkpoint).", nil, nil),
		served: prometheus.NewDesc("weir_log_served_size", "The size of the verifiable log's checkpoint served under /log: the tree's, or with transparency.witnesses-required that of the newest checkpoint the witnesses cosigned enough.", nil, nil),
		oldest: prometheus.NewDesc("weir_log_oldest_pending_seconds",
			"How long the verifiable log's oldest pending entry has waited to be integrated; 0 when none waits. It grows while the sequencer or its key is down.", nil, nil)})
	return l
}

// logStateCollector reads the log's state at each scrape.
type logStateCollector struct {
	state                func() (LogState, bool)
	size, served, oldest *prometheus.Desc
}

func (c logStateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.size
	ch <- c.served
	ch <- c.oldest
}

func (c logStateCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.state()
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(st.Size))
	ch <- prometheus.MustNewConstMetric(c.served, prometheus.GaugeValue, float64(st.Served))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, st.Oldest.Seconds())
}
