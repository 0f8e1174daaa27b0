// SPDX-License-Identifier: Apache-2.0

package system

import (
	"testing"
	"time"
)

// TestProbeMetrics: a running server's /metrics has the series the alerts
// of docs/prometheus-rules.yaml watch that exist before any traffic:
// readiness, the served CRL and the build information.
func TestProbeMetrics(t *testing.T) {
	e := startEnv(t, nil)
	s := scrapeServer(t, e.srv)
	if s.Get("weir_ready") != 1 || s.Get("weir_readiness_check", "check", "storage") != 1 {
		t.Errorf("weir_ready %v, storage check %v; want 1 and 1", s.Get("weir_ready"), s.Get("weir_readiness_check", "check", "storage"))
	}
	if s.Get("weir_crl_available") != 1 {
		t.Errorf("weir_crl_available = %v, want 1", s.Get("weir_crl_available"))
	}
	now := float64(time.Now().Unix())
	if this, next := s.Get("weir_crl_this_update_timestamp_seconds"), s.Get("weir_crl_next_update_timestamp_seconds"); this > now+1 || this < now-3600 || next <= now {
		t.Errorf("CRL thisUpdate %v, nextUpdate %v, now %v", this, next, now)
	}
	if s["weir_build_info"] == nil {
		t.Error("no weir_build_info")
	}
}
