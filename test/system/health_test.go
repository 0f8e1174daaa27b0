// SPDX-License-Identifier: Apache-2.0

package system

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// readyz fetches /readyz and decodes its body.
func (e *env) readyz() (int, map[string]any, string) {
	e.t.Helper()
	res := e.Get(e.t, e.Base+"/readyz")
	var body map[string]any
	if err := json.Unmarshal(res.Body, &body); err != nil {
		e.t.Fatalf("/readyz body %q: %v", res.Body, err)
	}
	return res.Status, body, string(res.Body)
}

// healthcheck runs weir healthcheck with args and returns its exit code
// and output.
func healthcheck(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := builder.Run(t, append([]string{"healthcheck"}, args...), &out, &out)
	return code, out.String()
}

// TestHealthEndpoints: /healthz always answers ok; /readyz is 200 with
// every check ok, on each limiter backend, outside the ACME wrapper (no
// nonce, no global limit); weir healthcheck exits 0 against it.
func TestHealthEndpoints(t *testing.T) {
	for _, backend := range []string{"sqlite", "memory"} {
		t.Run(backend, func(t *testing.T) {
			e := startEnv(t, func(c *server.Config) {
				c.RateLimiting.Backend = backend
				// A global limit of one request: the probes must not count.
				c.RateLimiting.Global = ratelimit.GlobalConfig{Enabled: true, RequestsPerMinute: 1, Burst: 1}
			})
			for range 3 {
				res := e.Get(t, e.Base+"/healthz")
				if res.Status != http.StatusOK || string(res.Body) != "ok\n" {
					t.Fatalf("/healthz: %d %q", res.Status, res.Body)
				}
				if res.Header.Get("Replay-Nonce") != "" {
					t.Error("/healthz carries a Replay-Nonce: it went through the ACME wrapper")
				}
				status, body, raw := e.readyz()
				if status != http.StatusOK || body["status"] != "ok" {
					t.Fatalf("/readyz: %d %s", status, raw)
				}
				checks, _ := body["checks"].(map[string]any)
				if checks["storage"] != "ok" || checks["ratelimit"] != "ok" || len(checks) != 2 {
					t.Errorf("/readyz checks = %v, want storage and ratelimit ok", checks)
				}
			}
			code, out := healthcheck(t, "-config", e.cli.Config, "-url", e.Base+"/readyz")
			if code != 0 || !strings.Contains(out, "200 OK") {
				t.Errorf("healthcheck: exit %d, output %q", code, out)
			}
		})
	}
}

// TestHealthcheckDefaultURL: with the admin listener off, weir healthcheck
// finds the ACME listener from the configuration alone and trusts the
// data directory's root.
func TestHealthcheckDefaultURL(t *testing.T) {
	e := startEnv(t, func(c *server.Config) {
		off := false
		c.Admin.Enabled = &off
	})
	code, out := healthcheck(t, "-config", e.cli.Config)
	if code != 0 || !strings.Contains(out, e.Base+"/readyz: 200 OK") {
		t.Errorf("healthcheck: exit %d, output %q", code, out)
	}
	// Nothing listening: exit 1, quickly.
	ln := acmeenv.ListenLoopback(t)
	addr := ln.Addr().String()
	ln.Close()
	start := time.Now()
	if code, out := healthcheck(t, "-config", e.cli.Config, "-url", "https://"+addr+"/readyz", "-timeout", "2s"); code != 1 {
		t.Errorf("healthcheck of a closed port: exit %d, output %q", code, out)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("healthcheck took %v, want within its 2 s timeout", d)
	}
}

// TestReadyzRedisDown: with the limiter on a Redis that stops, and
// on-backend-error: deny, /readyz turns 503 within its 1 s bound, names
// the failing check without internals, and weir healthcheck exits 1; when
// Redis is back, ready again. (Under degrade see TestReadyzDegraded.)
func TestReadyzRedisDown(t *testing.T) {
	rs := systest.StartRedis(t)
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.Backend = "redis"
		c.RateLimiting.Redis.Addrs = []string{rs.Addr()}
		c.RateLimiting.OnBackendError = "deny"
	})
	if status, _, raw := e.readyz(); status != http.StatusOK {
		t.Fatalf("/readyz with Redis up: %d %s", status, raw)
	}

	rs.Stop()
	start := time.Now()
	status, body, raw := e.readyz()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("/readyz with Redis down took %v; each check is bounded by 1 s", d)
	}
	if status != http.StatusServiceUnavailable || body["status"] != "unavailable" {
		t.Fatalf("/readyz with Redis down: %d %s, want 503 unavailable", status, raw)
	}
	checks, _ := body["checks"].(map[string]any)
	if checks["storage"] != "ok" {
		t.Errorf("storage check = %v, want ok", checks["storage"])
	}
	if rl, _ := checks["ratelimit"].(string); !strings.HasPrefix(rl, "error: ") {
		t.Errorf("ratelimit check = %q, want an error", rl)
	}
	if strings.Contains(raw, rs.Addr()) || strings.Contains(raw, "127.0.0.1") {
		t.Errorf("/readyz body shows internals: %s", raw)
	}
	if code, out := healthcheck(t, "-config", e.cli.Config, "-url", e.Base+"/readyz"); code != 1 || !strings.Contains(out, "503") {
		t.Errorf("healthcheck with Redis down: exit %d, output %q", code, out)
	}

	rs.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, raw = e.readyz()
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz 10 s after Redis came back: %d %s", status, raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReadyzDegraded: under on-backend-error: degrade, with nonces kept
// in process, a Redis that stops leaves /readyz 200 with a "ratelimit"
// warning while the fallback decides, 503 once the limiter has been
// degraded longer than degraded-ready-after, and 200 again by itself when
// Redis is back. The persistence warning names the Redis without
// persistence all along.
func TestReadyzDegraded(t *testing.T) {
	rs := systest.StartRedis(t)
	const after = time.Second
	e := startEnv(t, func(c *server.Config) {
		c.RateLimiting.Backend = "redis"
		c.RateLimiting.Redis.Addrs = []string{rs.Addr()}
		c.RateLimiting.DegradedReadyAfter = after
		c.ACME.Nonces.Backend = "memory"
	})
	status, body, raw := e.readyz()
	if status != http.StatusOK {
		t.Fatalf("/readyz with Redis up: %d %s", status, raw)
	}
	warns, _ := body["warnings"].(map[string]any)
	if w, _ := warns["ratelimit-persistence"].(string); !strings.Contains(w, "no persistence") {
		t.Errorf("warnings %v, want ratelimit-persistence about a Redis without persistence", warns)
	}

	rs.Stop()
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

	rs.Start()
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
	if w := server.BackendWarnings(t.Context(), server.DefaultConfig(), time.Second); len(w) != 0 {
		t.Errorf("warnings for the defaults: %q", w)
	}
	rs := systest.StartRedis(t)
	cfg := server.DefaultConfig()
	cfg.RateLimiting.Backend = "redis"
	cfg.RateLimiting.Redis.Addrs = []string{rs.Addr()}
	w := strings.Join(server.BackendWarnings(t.Context(), cfg, 2*time.Second), "\n")
	if !strings.Contains(w, "no persistence") || !strings.Contains(w, "nonces are on Redis") {
		t.Errorf("warnings for a Redis without persistence holding the nonces:\n%s", w)
	}
}
