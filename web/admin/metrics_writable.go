// SPDX-License-Identifier: Apache-2.0

package admin

import "github.com/prometheus/client_golang/prometheus"

// writableGauge is weir_store_writable: whether the ACME store and a
// SQLite limiter can write, as their write health last found.
func writableGauge() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "weir_store_writable",
		Help: "1 while the store can write, 0 while it cannot (a full disk, a read-only file, an I/O error: /readyz then answers 503), " +
			"by store: storage (the ACME store) or ratelimit (a SQLite limiter file).",
	}, []string{"store"})
}

// SetWritable records whether the store named by its readiness check
// (storage, ratelimit) can write.
func (m *Metrics) SetWritable(store string, ok bool) {
	v := 0.0
	if ok {
		v = 1
	}
	m.writable.WithLabelValues(store).Set(v)
}
