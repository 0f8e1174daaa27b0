// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"context"
	"crypto/x509"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// probeTimeout bounds what a scrape waits for the CRL or the readiness
// checks.
const probeTimeout = 2 * time.Second

// WatchCRL publishes, at every scrape, the CRL that this replica serves
// (current: acme.Service.CurrentCRL, which makes a new one when it is
// due): weir_crl_available (0 while it cannot be had, e.g. the store does
// not answer), and its thisUpdate and nextUpdate. Relying parties refuse a
// CRL past its nextUpdate, so that is what an alert watches.
func (m *Metrics) WatchCRL(current func(ctx context.Context) ([]byte, time.Time, error)) {
	m.reg.MustRegister(crlProbe{current: current,
		available: prometheus.NewDesc("weir_crl_available",
			"1 when this replica has a CRL to serve, 0 when it cannot make one (the store does not answer, signing failed).", nil, nil),
		this: prometheus.NewDesc("weir_crl_this_update_timestamp_seconds",
			"Unix time of the served CRL's thisUpdate: when it was signed.", nil, nil),
		next: prometheus.NewDesc("weir_crl_next_update_timestamp_seconds",
			"Unix time of the served CRL's nextUpdate: relying parties refuse it after this.", nil, nil),
	})
}

type crlProbe struct {
	current               func(ctx context.Context) ([]byte, time.Time, error)
	available, this, next *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c crlProbe) Describe(ch chan<- *prometheus.Desc) { ch <- c.available; ch <- c.this; ch <- c.next }

// Collect implements prometheus.Collector.
func (c crlProbe) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	der, _, err := c.current(ctx)
	var rl *x509.RevocationList
	if err == nil {
		rl, err = x509.ParseRevocationList(der)
	}
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.available, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.available, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(c.this, prometheus.GaugeValue, float64(rl.ThisUpdate.Unix()))
	ch <- prometheus.MustNewConstMetric(c.next, prometheus.GaugeValue, float64(rl.NextUpdate.Unix()))
}

// WatchRootCRL publishes, at every scrape, the root's CRL that this
// replica serves (current: its thisUpdate and nextUpdate, ok false
// without one): weir_root_crl_available, and its thisUpdate and
// nextUpdate. It is signed offline, a year at a time by default; past
// its nextUpdate relying parties that check every CA of a chain refuse
// every certificate under the root, so that is what an alert watches.
func (m *Metrics) WatchRootCRL(current func() (thisUpdate, nextUpdate time.Time, ok bool)) {
	m.reg.MustRegister(rootCRLProbe{current: current,
		available: prometheus.NewDesc("weir_root_crl_available",
			"1 when this replica serves a root CRL (ca.root-crl-file, the data directory's ca/root-crl.der), 0 when it has none.", nil, nil),
		this: prometheus.NewDesc("weir_root_crl_this_update_timestamp_seconds",
			"Unix time of the served root CRL's thisUpdate: when it was signed (weir ca sign-root-crl).", nil, nil),
		next: prometheus.NewDesc("weir_root_crl_next_update_timestamp_seconds",
			"Unix time of the served root CRL's nextUpdate: relying parties refuse it, and the chains under the root, after this.", nil, nil),
	})
}

type rootCRLProbe struct {
	current               func() (time.Time, time.Time, bool)
	available, this, next *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c rootCRLProbe) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.available
	ch <- c.this
	ch <- c.next
}

// Collect implements prometheus.Collector.
func (c rootCRLProbe) Collect(ch chan<- prometheus.Metric) {
	this, next, ok := c.current()
	if !ok {
		ch <- prometheus.MustNewConstMetric(c.available, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.available, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(c.this, prometheus.GaugeValue, float64(this.Unix()))
	ch <- prometheus.MustNewConstMetric(c.next, prometheus.GaugeValue, float64(next.Unix()))
}

// WatchReadiness publishes, at every scrape, the outcome of the readiness
// checks that /readyz runs (check: each check's name to whether it
// passed): weir_ready, 1 when all pass, and weir_readiness_check by check.
func (m *Metrics) WatchReadiness(check func(ctx context.Context) map[string]bool) {
	m.reg.MustRegister(readinessProbe{check: check,
		ready: prometheus.NewDesc("weir_ready",
			"1 when every readiness check passes (/readyz answers 200), 0 otherwise.", nil, nil),
		each: prometheus.NewDesc("weir_readiness_check",
			"1 when the readiness check passes, 0 when it fails, by check (storage, ratelimit, nonces, ...).", []string{"check"}, nil),
	})
}

type readinessProbe struct {
	check       func(ctx context.Context) map[string]bool
	ready, each *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c readinessProbe) Describe(ch chan<- *prometheus.Desc) { ch <- c.ready; ch <- c.each }

// Collect implements prometheus.Collector.
func (c readinessProbe) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	all := 1.0
	for name, ok := range c.check(ctx) {
		v := 0.0
		if ok {
			v = 1
		} else {
			all = 0
		}
		ch <- prometheus.MustNewConstMetric(c.each, prometheus.GaugeValue, v, name)
	}
	ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, all)
}
