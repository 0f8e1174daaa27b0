// SPDX-License-Identifier: Apache-2.0

package admin

import "github.com/prometheus/client_golang/prometheus"

// SetBuildInfo publishes weir_build_info, a gauge that is always 1 and
// whose labels say which weir answers the scrape (the convention of
// Prometheus's own *_build_info metrics), so that a dashboard or an alert
// can join on the version, and see a fleet mid-upgrade. Call it once.
func (m *Metrics) SetBuildInfo(version, commit, goVersion string) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "weir_build_info",
		Help: "Always 1; the labels say the running weir's version, VCS commit and Go version.",
		ConstLabels: prometheus.Labels{
			"version": version, "commit": commit, "goversion": goVersion,
		},
	})
	g.Set(1)
	m.reg.MustRegister(g)
}
