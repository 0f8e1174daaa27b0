// SPDX-License-Identifier: Apache-2.0

package system

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// TestRedisBackendFailure: with the limiter on a Redis that stops mid-test,
// the server neither hangs nor crashes, follows on-backend-error, and
// recovers when Redis is back.
func TestRedisBackendFailure(t *testing.T) {
	for _, policy := range []string{"allow", "deny"} {
		t.Run(policy, func(t *testing.T) {
			rs := systest.StartRedis(t)
			e := startEnv(t, func(c *server.Config) {
				c.RateLimiting.Backend = "redis"
				c.RateLimiting.Redis.Addrs = []string{rs.Addr()}
				c.RateLimiting.OnBackendError = policy
				// The nonces stay in memory: this test is about the
				// limiter's policy (nonce_e2e_test.go stops the nonces'
				// Redis).
				c.ACME.Nonces.Backend = "memory"
				c.RateLimiting.OrderCreation = ratelimit.OrderCreationConfig{Enabled: true, OrdersPerAccountPerHour: 20, OrderBurst: 2, SANBudgetPerAccountPerHour: 100}
			})
			key := acmeenv.NewKey(t)
			_, kid := e.RawAccount(key)
			acmeenv.WantStatus(t, e.RawOrder(key, kid, "r1.weir.test"), http.StatusCreated)
			acmeenv.WantStatus(t, e.RawOrder(key, kid, "r2.weir.test"), http.StatusCreated)
			acmeenv.Want429(t, e.RawOrder(key, kid, "r3.weir.test"), "order-creation", strings.TrimPrefix(kid, e.Base+"/acme/account/"))

			rs.Stop()
			before := scrapeServer(t, e.srv).Get("weir_ratelimit_backend_errors_total")
			start := time.Now()
			res := e.RawOrder(key, kid, "r4.weir.test")
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("new-order with Redis down took %s: the decision must come within a bounded time", d)
			}
			if policy == "allow" {
				acmeenv.WantStatus(t, res, http.StatusCreated)
			} else {
				acmeenv.WantStatus(t, res, http.StatusServiceUnavailable)
				if res.Header.Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
			}
			if scrapeServer(t, e.srv).Get("weir_ratelimit_backend_errors_total") <= before {
				t.Error("the backend error was not counted")
			}

			rs.Start() // an empty Redis: the limits apply afresh
			var last acmeenv.Response
			for i := range 3 {
				last = e.RawOrder(key, kid, fmt.Sprintf("back%d.weir.test", i))
			}
			acmeenv.Want429(t, last, "order-creation", strings.TrimPrefix(kid, e.Base+"/acme/account/"))
		})
	}
}
