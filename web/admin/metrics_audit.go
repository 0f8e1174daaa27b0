// SPDX-License-Identifier: Apache-2.0

package admin

import "github.com/prometheus/client_golang/prometheus"

// SetAuditFailures exports failures, the audit events that could not be
// written, as weir_audit_write_failures_total.
func (m *Metrics) SetAuditFailures(failures func() uint64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "weir_audit_write_failures_total",
		Help: "Audit events that could not be written to the audit trail (each is also logged at error level).",
	}, func() float64 { return float64(failures()) }))
}
