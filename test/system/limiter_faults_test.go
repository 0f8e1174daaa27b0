// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/server"
)

// A fault test of the limiter backend (docs/rate-limits.md, "Failure
// modes: the limiter backend"): two in-process replicas on one
// PostgreSQL schema, the limiter on a redis-server of the test's own that
// the test kills (SIGKILL) by its PID, and nonces in PostgreSQL
// (acme.nonces.backend auto), which a Redis outage does not touch. The
// one that pauses Redis stays in package server (limiter_fault_test.go):
// it observes the limiter adapter's steps.

// limiterReplicas starts two replicas with the limiter on rs and the
// rate-limiting block changed by limits.
func limiterReplicas(t *testing.T, rs *systest.Redis, limits func(rl *server.Config)) (a, b *env, lb *http.Client) {
	t.Helper()
	return startReplicasOn(t, rs, func(c *server.Config) {
		c.RateLimiting.Backend = "redis"
		c.ACME.Nonces.Backend = "auto"
		limits(c)
	})
}

// TestDuplicateLimitSurvivesRedisLoss: duplicate-certificate 5; five
// certificates for one name set, the sixth order gets 429; Redis is
// killed with SIGKILL and started again empty on the same port; the next
// order for that name set still gets 429 rateLimited on each replica, the
// count rebuilt from the PostgreSQL store.
func TestDuplicateLimitSurvivesRedisLoss(t *testing.T) {
	rs := systest.StartRedis(t)
	a, b, lb := limiterReplicas(t, rs, func(c *server.Config) {
		c.RateLimiting.DuplicateCertificate.Enabled = true
		c.RateLimiting.DuplicateCertificate.MaxPerWindow = 5
	})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	key := acmeenv.NewKey(t)
	c := &xacme.Client{Key: key, DirectoryURL: a.Base + "/directory", HTTPClient: lb, RetryBackoff: noRetry}
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	ids := xacme.DomainIDs("dup.weir.test", "www.dup.weir.test")
	for i := range 5 {
		chain, _ := a.Issue(ctx, c, acmeenv.NewKey(t), "http-01", ids...)
		a.VerifyChain(chain, "dup.weir.test", "www.dup.weir.test")
		t.Logf("certificate %d issued", i+1)
	}
	if _, err := c.AuthorizeOrder(ctx, ids); !isRateLimited(err) {
		t.Fatalf("sixth order before the kill: %v, want 429 rateLimited", err)
	}

	rs.Kill9()
	rs.Start()
	for _, e := range []*env{a, b} {
		dc := &xacme.Client{Key: key, DirectoryURL: a.Base + "/directory", HTTPClient: direct(e), RetryBackoff: noRetry}
		start := time.Now()
		var err error
		// A 503 (the fallback still reading the counts) is retried, as
		// a client does after Retry-After; an admission never is.
		for try := 0; try < 10; try++ {
			_, err = dc.AuthorizeOrder(ctx, ids)
			var ae *xacme.Error
			if !errors.As(err, &ae) || ae.StatusCode != http.StatusServiceUnavailable {
				break
			}
			t.Logf("replica %s: 503 (%s), retrying", e.cfg.Server.Listen, ae.Detail)
			time.Sleep(200 * time.Millisecond)
		}
		if !isRateLimited(err) {
			t.Errorf("order on replica %s after Redis restarted empty: %v, want 429 rateLimited", e.cfg.Server.Listen, err)
		}
		t.Logf("replica %s after Redis restarted empty: %v (in %v)", e.cfg.Server.Listen, err, time.Since(start).Round(time.Millisecond))
	}
	for i, e := range []*env{a, b} {
		t.Logf("replica %d: %v degraded decisions", i+1, scrapeServer(t, e.srv).Get("weir_ratelimit_degraded_decisions_total"))
	}
	recs, err := a.srv.Store().(acme.LimitRecords).IssuedSince(ctx, time.Now().Add(-time.Hour))
	if err != nil || len(recs) != 5 {
		t.Errorf("certificates in the store: %d (%v), want 5", len(recs), err)
	}
}
