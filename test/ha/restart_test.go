// SPDX-License-Identifier: Apache-2.0

package ha_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/storage/postgres/pgtest"
)

// TestRestartRedisUnderLoad: the private Redis (limiter buckets and
// nonces of all three replicas) is stopped by its PID under load and
// started again on the same port 2 s later. Clients see only retryable
// answers (badNonce, or a 5xx serverInternal with Retry-After) and no
// connection error; nothing is left half written; the load completes
// with the same weir processes.
func TestRestartRedisUnderLoad(t *testing.T) {
	_, dsn := requirePostgres(t)
	rs := startRedis(t)
	cl := startCluster(t, clusterOpts{dsn: dsn, redis: rs})
	restartUnderLoad(t, cl, "redis", func() error {
		pid := rs.pid()
		rs.stop()
		t.Logf("stopped redis-server pid %d", pid)
		time.Sleep(2 * time.Second)
		if err := rs.start(); err != nil {
			return err
		}
		t.Logf("redis-server started again on %s as pid %d", rs.addr(), rs.pid())
		return nil
	})
}

// TestRestartPostgresUnderLoad: a private PostgreSQL cluster holding the
// store of all three replicas is stopped (pg_ctl stop -m fast) under load
// and started again 2 s later. The same assertions as
// TestRestartRedisUnderLoad.
func TestRestartPostgresUnderLoad(t *testing.T) {
	// The test runs a PostgreSQL of its own, but is run with the others:
	// only when the PostgreSQL tests are asked for.
	if os.Getenv(pgtest.EnvDSN) == "" {
		missing(t, pgtest.EnvDSN)
	}
	requireRedis(t)
	pg := startPGCluster(t)
	rs := startRedis(t)
	cl := startCluster(t, clusterOpts{dsn: pg.dsn(), redis: rs})
	restartUnderLoad(t, cl, "postgres", func() error {
		pid := pg.postmasterPID()
		if err := pg.stop(); err != nil {
			return err
		}
		t.Logf("stopped PostgreSQL (postmaster pid %d) with pg_ctl stop -m fast", pid)
		time.Sleep(2 * time.Second)
		if err := pg.start(); err != nil {
			return err
		}
		t.Logf("PostgreSQL started again on 127.0.0.1:%d (postmaster pid %d)", pg.port, pg.postmasterPID())
		return nil
	})
}

// restartUnderLoad runs an issuance load, restarts a backend with
// restart after 10 certificates, and checks what the restart tests
// assert.
func restartUnderLoad(t *testing.T, cl *cluster, what string, restart func() error) {
	pids := cl.pids()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	mon := startMonitor(cl.db)
	defer mon.finish()

	const target = 60
	reached := make(chan struct{})
	var once sync.Once
	loadDone := make(chan *loadResult, 1)
	go func() {
		loadDone <- cl.runLoad(ctx, loadOpts{label: what, workers: 6, target: target, attempts: 10, perIssue: time.Minute}, func(n int64) {
			if n >= 10 {
				once.Do(func() { close(reached) })
			}
		})
	}()
	select {
	case <-reached:
	case res := <-loadDone:
		t.Fatalf("the load ended before the restart: %d certificates; failures:%s", len(res.certs), res.summary())
	}
	downAt := time.Now()
	if err := restart(); err != nil {
		t.Fatalf("restarting %s: %v", what, err)
	}
	upAt := time.Now()
	res := <-loadDone
	t.Logf("load: %d certificates in %s, %d attempts, %d failed:%s", len(res.certs), res.elapsed.Round(time.Millisecond), res.attempts.Load(), len(res.failures), res.summary())
	t.Logf("%s down for %s; load finished %s after it was back", what, upAt.Sub(downAt).Round(time.Millisecond), time.Since(upAt).Round(time.Millisecond))
	if len(res.fatal) > 0 || len(res.certs) != target {
		t.Errorf("the load did not complete: %d of %d certificates: %s", len(res.certs), target, strings.Join(res.fatal, "; "))
	}
	for _, is := range res.certs {
		if err := cl.verify(is); err != nil {
			t.Error(err)
		}
	}

	// Only retryable answers, and no connection errors: no replica died.
	all := cl.rec.all()
	window := cl.rec.since(downAt)
	t.Logf("%d responses in all: %s", len(all), kinds(all))
	t.Logf("from the stop of %s on (%d): %s", what, len(window), kinds(window))
	bad := map[string]int{}
	for _, r := range all {
		if !r.retryable() {
			k := fmt.Sprintf("%s %s: %s", r.method, routeOf(r.path), r.kind())
			if r.badBody != "" {
				k += " (" + r.badBody + ")"
			}
			bad[k]++
		}
	}
	for k, n := range bad {
		t.Errorf("%dx not retryable: %s", n, k)
	}

	// Nothing half written, nothing stuck after the lease.
	limit := validationLease + 10*time.Second
	chals, orders, err := waitQuiet(ctx, cl.db, upAt.Add(limit))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range chals {
		t.Errorf("challenge %s is still processing (lease %q until %s) %s after %s was back", j.id, j.owner, j.until.Format(time.RFC3339Nano), time.Since(upAt).Round(time.Millisecond), what)
	}
	for _, id := range orders {
		t.Errorf("order %s is still processing %s after %s was back", id, time.Since(upAt).Round(time.Millisecond), what)
	}
	mon.finish()
	ord, chs, overOrders, overChals := mon.report(limit)
	t.Logf("%s; %s", ord, chs)
	for _, o := range overOrders {
		t.Errorf("order %s stayed processing longer than the lease + 10 s (%s)", o, limit)
	}
	for _, c := range overChals {
		t.Errorf("challenge %s stayed processing longer than the lease + 10 s (%s)", c, limit)
	}
	checkReceived(t, ctx, cl.db, res.certs)
	hw, err := halfWritten(ctx, cl.db)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hw {
		t.Error(h)
	}
	cl.alive(t, pids)
}

// routeOf shortens an ACME path to its route (without IDs).
func routeOf(p string) string {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "acme":
		r := "/acme/" + parts[1] + "/…"
		if len(parts) > 3 {
			r += "/" + parts[3]
		}
		return r
	}
	return p
}

// registerRaw makes an account by hand through the round-robin.
func (cl *cluster) registerRaw(t *testing.T, ctx context.Context) account {
	t.Helper()
	key := newKey()
	url := cl.base + "/acme/new-account"
	for range 5 {
		nc, err := cl.nonce(ctx, cl.lb)
		if err != nil {
			t.Fatal(err)
		}
		b, err := signJWS(key, "", nc, url, []byte(`{"termsOfServiceAgreed":true}`))
		if err != nil {
			t.Fatal(err)
		}
		r, err := postRaw(ctx, cl.lb, url, b)
		if err != nil {
			t.Fatal(err)
		}
		if r.status == http.StatusCreated {
			kid := r.header.Get("Location")
			return account{key: key, kid: kid, id: path.Base(kid)}
		}
		if r.problem.Type != probBadNonce {
			t.Fatalf("new-account: %d %s", r.status, r.body)
		}
	}
	t.Fatal("new-account: badNonce five times")
	return account{}
}

// owners finds each replica's lease owner name (acme.Config.Owner, made
// by package server's newOwner): an order of a mapping account on each replica
// alone, whose challenge that replica starts and leases to itself, read
// while the responder holds its validation (a settled challenge has no
// lease).
func (cl *cluster) owners(t *testing.T, ctx context.Context) []string {
	t.Helper()
	base := cl.acmeClient(nil)
	acct, err := base.Register(ctx, &xacme.Account{}, xacme.AcceptTOS)
	if err != nil {
		t.Fatal(err)
	}
	var owners []string
	for i := range cl.procs {
		c := &xacme.Client{Key: base.Key, KID: xacme.KeyID(acct.URI), DirectoryURL: cl.base + "/directory",
			HTTPClient: cl.direct(i), UserAgent: "weir-ha-test", RetryBackoff: backoff}
		o, err := c.AuthorizeOrder(ctx, xacme.DomainIDs(fmt.Sprintf("owner%d.ha.weir.test", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := http01(ctx, c, o.AuthzURLs[0])
		if err != nil {
			t.Fatal(err)
		}
		ka, _ := c.HTTP01ChallengeResponse(ch.Token)
		cl.resp.set(ch.Token, ka)
		resume := cl.resp.pause(ch.Token)
		if _, err := c.Accept(ctx, ch); err != nil {
			resume()
			t.Fatal(err)
		}
		_, owner, _, err := challengeState(ctx, cl.db, path.Base(ch.URI))
		resume()
		if err != nil {
			t.Fatal(err)
		}
		if owner == "" {
			t.Fatalf("the challenge accepted on replica %d has no lease owner", i+1)
		}
		owners = append(owners, owner)
	}
	hosts := map[string]bool{}
	for i, o := range owners {
		for j := range i {
			if owners[j] == o {
				t.Fatalf("replicas %d and %d have the same lease owner %q", j+1, i+1, o)
			}
		}
		if k := strings.LastIndexByte(o, '-'); k > 0 {
			hosts[o[:k]] = true
		}
	}
	t.Logf("lease owners: %v (host parts %v: the processes differ by newOwner's 48 random bits)", owners, keysOf(hosts))
	return owners
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
