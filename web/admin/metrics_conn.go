// SPDX-License-Identifier: Apache-2.0

package admin

import "github.com/prometheus/client_golang/prometheus"

// The ACME listener's connections (server.connections): what is open,
// what the caps refused and what the first-request deadline closed.
type connSeries struct {
	open     prometheus.Gauge
	refused  *prometheus.CounterVec
	timedOut prometheus.Counter
}

func newConnSeries() connSeries {
	c := connSeries{
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "weir_connections_open",
			Help: "Connections open on the ACME listener.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "weir_connections_refused_total",
			Help: "Connections the ACME listener closed at accept, by the cap they were beyond: per-ip (server.connections.max-per-ip) or total (max-total).",
		}, []string{"reason"}),
		timedOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "weir_connections_no_request_closed_total",
			Help: "Connections closed because they sent no request within server.connections.first-request-timeout (HTTP/1.1 or HTTP/2).",
		}),
	}
	c.refused.WithLabelValues("per-ip")
	c.refused.WithLabelValues("total")
	return c
}

func (c connSeries) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.open, c.refused, c.timedOut}
}

// ConnOpened counts an accepted connection.
func (m *Metrics) ConnOpened() { m.conns.open.Inc() }

// ConnClosed uncounts a closed connection.
func (m *Metrics) ConnClosed() { m.conns.open.Dec() }

// ConnRefused counts a connection refused at accept for reason (per-ip,
// total).
func (m *Metrics) ConnRefused(reason string) { m.conns.refused.WithLabelValues(reason).Inc() }

// ConnTimedOut counts a connection closed for sending no request.
func (m *Metrics) ConnTimedOut() { m.conns.timedOut.Inc() }
