// SPDX-License-Identifier: Apache-2.0

package server

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReadyzDegraded: under on-backend-error: degrade, with nonces kept
// in process, a Redis that stops leaves /readyz 200 with a "ratelimit"
// warning while the fallback decides, 503 once the limiter has been
// degraded longer than degraded-ready-after, and 200 again by itself when
// Redis is back. The persistence warning names the Redis without
// persistence all along.
func TestReadyzDegraded(t *testing.T) {
	rs := startRedis(t)
	const after = time.Second
	e := startEnv(t, func(c *Config) {
		c.RateLimiting.Backend = "redis"
		c.RateLimiting.Redis.Addrs = []string{rs.addr()}
		c.RateLimiting.DegradedReadyAfter = after
		c.ACME.Nonces.Backend = nonceMemory
	})
	status, body, raw := e.readyz()
	if status != http.StatusOK {
		t.Fatalf("/readyz with Redis up: %d %s", status, raw)
	}
	warns, _ := body["warnings"].(map[string]any)
	if w, _ := warns["ratelimit-persistence"].(string); !strings.Contains(w, "no persistence") {
		t.Errorf("warnings %v, want ratelimit-persistence about a Redis without persistence", warns)
	}

	rs.stop()
	status, body, raw = e.readyz()
	warns, _ = body["warnings"].(map[string]any)
	if w, _ := warns["ratelimit"].(string); status != http.StatusOK || !strings.Contains(w, "degraded since") {
		t.Fatalf("/readyz just after Redis stopped: %d %s, want 200 with a degraded warning", status, raw)
	}
	time.Sleep(after + 200*time.Millisecond)
	status, body, raw = e.readyz()
	checks, _ := body["checks"].(map[string]any)
	if rl, _ := checks["ratelimit"].(string); status != http.StatusServiceUnavailable || !strings.HasPrefix(rl, "error: ") {
		t.Fatalf("/readyz degraded longer than %v: %d %s, want 503 naming ratelimit", after, status, raw)
	}

	rs.start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body, raw = e.readyz()
		warns, _ = body["warnings"].(map[string]any)
		if status == http.StatusOK && warns["ratelimit"] == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz 10 s after Redis came back: %d %s", status, raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBackendWarnings: what weir check-config adds for a limiter on a
// Redis without persistence and nonces kept on it; nothing for the
// defaults.
func TestBackendWarnings(t *testing.T) {
	if w := BackendWarnings(t.Context(), DefaultConfig(), time.Second); len(w) != 0 {
		t.Errorf("warnings for the defaults: %q", w)
	}
	rs := startRedis(t)
	cfg := DefaultConfig()
	cfg.RateLimiting.Backend = "redis"
	cfg.RateLimiting.Redis.Addrs = []string{rs.addr()}
	w := strings.Join(BackendWarnings(t.Context(), cfg, 2*time.Second), "\n")
	if !strings.Contains(w, "no persistence") || !strings.Contains(w, "nonces are on Redis") {
		t.Errorf("warnings for a Redis without persistence holding the nonces:\n%s", w)
	}
}
