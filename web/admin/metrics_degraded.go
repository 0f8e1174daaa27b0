// SPDX-License-Identifier: Apache-2.0

package admin

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/weir-pki/weir/acme"
)

// degraded counts the decisions of on-backend-error: degrade, made by the
// in-process fallback limiter while the backend could not decide.
type degraded struct {
	total *prometheus.CounterVec

	mu      sync.Mutex
	byLimit map[string]uint64
	last    time.Time
}

func newDegraded() *degraded {
	return &degraded{byLimit: map[string]uint64{}, total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "weir_ratelimit_degraded_decisions_total",
		Help: "Rate-limit decisions made by the in-process fallback limiter (on-backend-error: degrade) because the backend " +
			"failed or missed backend-timeout, per limit asked about and outcome (allowed or denied). " +
			"Each replica decides alone then: across N replicas at most N times a limit is admitted.",
	}, []string{"limit", "outcome"})}
}

// record counts one degraded decision, once per limit it asked about.
func (g *degraded) record(ev acme.LimiterEvent, at time.Time) {
	outcome := "allowed"
	if !ev.Decision.Allowed {
		outcome = "denied"
	}
	var seen names
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range ev.Requests {
		if seen.first(r.Name) {
			g.total.WithLabelValues(r.Name.String(), outcome).Inc()
			g.byLimit[r.Name.String()]++
		}
	}
	g.last = at
}

// DegradedView is the dashboard's view of the degraded decisions of this
// replica since it started.
type DegradedView struct {
	// ByLimit counts degraded decisions per limit asked about.
	ByLimit map[string]uint64 `json:"by_limit"`
	// Last is the time of the last one; nil if none.
	Last *time.Time `json:"last,omitempty"`
}

// Degraded returns the degraded decisions of this replica.
func (m *Metrics) Degraded() DegradedView {
	m.degraded.mu.Lock()
	defer m.degraded.mu.Unlock()
	v := DegradedView{ByLimit: make(map[string]uint64, len(m.degraded.byLimit))}
	for k, n := range m.degraded.byLimit {
		v.ByLimit[k] = n
	}
	if !m.degraded.last.IsZero() {
		t := m.degraded.last
		v.Last = &t
	}
	return v
}
