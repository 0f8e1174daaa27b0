// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weir-pki/weir/acme"
)

// The store's series: its commits (from a store that reports them, an
// acme.CommitReporter: SQLite) and its writer queue and connection pool,
// read at every scrape (from an acme.StatsReporter: SQLite and
// PostgreSQL). The commit latency is the one to alert on: with SQLite it is
// the write-ahead log's write and fsync, so a slow or failing disk shows
// there first, and every ACME write waits for it.

// storeCommits holds the commit series.
type storeCommits struct {
	commits  prometheus.Counter
	writes   prometheus.Counter
	duration prometheus.Histogram
}

func newStoreCommits() *storeCommits {
	return &storeCommits{
		commits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weir_store_commits_total",
			Help: "Write transactions the ACME store committed (SQLite: each commit is one fsync of the write-ahead log).",
		}),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weir_store_committed_writes_total",
			Help: "Writes those transactions held: the SQLite writer groups concurrent writes into one commit, so this over weir_store_commits_total is the mean group size.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "weir_store_commit_duration_seconds",
			Help:    "Time one COMMIT of the ACME store took (SQLite: writing the write-ahead log and its fsync); every write waits for its group's.",
			Buckets: []float64{.0002, .0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}),
	}
}

// StoreCommit implements acme.StoreObserver.
func (m *Metrics) StoreCommit(writes int, d time.Duration) {
	if m.store == nil {
		return
	}
	m.store.commits.Inc()
	m.store.writes.Add(float64(writes))
	m.store.duration.Observe(d.Seconds())
}

var _ acme.StoreObserver = (*Metrics)(nil)

// storeStats reads the store's writer queue and pool at scrape time.
type storeStats struct {
	store                                 acme.StatsReporter
	queue, conns, maxConns, waits, waited *prometheus.Desc
}

func newStoreStats(s acme.StatsReporter) storeStats {
	return storeStats{
		store: s,
		queue: prometheus.NewDesc("weir_store_write_queue",
			"Writes waiting for the ACME store's writer (SQLite; always 0 for PostgreSQL, where writes run on pool connections).", nil, nil),
		conns: prometheus.NewDesc("weir_store_connections",
			"Open connections of the ACME store's pool (SQLite: the readers), by state: in_use or idle.", []string{"state"}, nil),
		maxConns: prometheus.NewDesc("weir_store_connections_max",
			"The most connections the ACME store's pool opens.", nil, nil),
		waits: prometheus.NewDesc("weir_store_connection_waits_total",
			"Queries of the ACME store that found every pool connection busy and waited for one.", nil, nil),
		waited: prometheus.NewDesc("weir_store_connection_wait_seconds_total",
			"Total time queries of the ACME store waited for a pool connection.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c storeStats) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.queue, c.conns, c.maxConns, c.waits, c.waited} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c storeStats) Collect(ch chan<- prometheus.Metric) {
	st := c.store.StoreStats()
	ch <- prometheus.MustNewConstMetric(c.queue, prometheus.GaugeValue, float64(st.QueuedWrites))
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(st.ConnsInUse), "in_use")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(max(st.Conns-st.ConnsInUse, 0)), "idle")
	ch <- prometheus.MustNewConstMetric(c.maxConns, prometheus.GaugeValue, float64(st.MaxConns))
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(st.ConnWaits))
	ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, st.ConnWait.Seconds())
}
