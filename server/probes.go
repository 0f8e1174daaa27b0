// SPDX-License-Identifier: Apache-2.0

package server

import "context"

// watchProbes has /metrics report the readiness checks, the served CRL
// and the served root CRL at each scrape, for the alerts of
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
}
