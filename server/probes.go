// SPDX-License-Identifier: Apache-2.0

package server

import "context"

// watchProbes has /metrics report the readiness checks, the served CRL,
// the served root CRL and the renewal plan's capacity at each scrape,
// for the alerts of
// docs/prometheus-rules.yaml.
func (s *Server) watchProbes() {
	s.metrics.WatchReadiness(func(ctx context.Context) map[string]bool {
		out := map[string]bool{}
		for name, v := range s.health.Check(ctx).Checks {
			out[name] = v == "ok"
		}
		return out
	})
	s.metrics.WatchCRL(s.svc.CurrentCRL)
	s.metrics.WatchRootCRL(s.rootCRLTimes)
	s.metrics.WatchRenewalPlan(s.svc.RenewalCapacity)
}
