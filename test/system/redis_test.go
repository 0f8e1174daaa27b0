// SPDX-License-Identifier: Apache-2.0

package system

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/server"
)

// redisServer is a redis-server process of the test's own, so that it can
// be stopped and started again without touching anyone else's.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is required under CI=true (apt-get install -y redis-server)")
		}
		t.Skip("redis-server not installed; apt-get install -y redis-server to run the Redis failure test")
	}
	ln := acmeenv.ListenLoopback(t)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &redisServer{t: t, bin: bin, port: port}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

func (r *redisServer) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", r.t.TempDir())
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", r.addr(), 200*time.Millisecond); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("redis-server on %s did not start", r.addr())
}

// stop ends the process by its PID and waits for it.
func (r *redisServer) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-done
	}
	r.cmd = nil
}

// TestRedisBackendFailure: with the limiter on a Redis that stops mid-test,
// the server neither hangs nor crashes, follows on-backend-error, and
// recovers when Redis is back.
func TestRedisBackendFailure(t *testing.T) {
	for _, policy := range []string{"allow", "deny"} {
		t.Run(policy, func(t *testing.T) {
			rs := startRedis(t)
			e := startEnv(t, func(c *server.Config) {
				c.RateLimiting.Backend = "redis"
				c.RateLimiting.Redis.Addrs = []string{rs.addr()}
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

			rs.stop()
			before := scrapeServer(t, e.srv).get("weir_ratelimit_backend_errors_total")
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
			if scrapeServer(t, e.srv).get("weir_ratelimit_backend_errors_total") <= before {
				t.Error("the backend error was not counted")
			}

			rs.start() // an empty Redis: the limits apply afresh
			var last acmeenv.Response
			for i := range 3 {
				last = e.RawOrder(key, kid, fmt.Sprintf("back%d.weir.test", i))
			}
			acmeenv.Want429(t, last, "order-creation", strings.TrimPrefix(kid, e.Base+"/acme/account/"))
		})
	}
}
