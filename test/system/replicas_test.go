// SPDX-License-Identifier: Apache-2.0

package system

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
	"github.com/weir-pki/weir/server"
	"github.com/weir-pki/weir/web/admin"
)

// roundRobin is a load balancer in the client: every request opens a new
// connection, to the next replica in turn, so consecutive requests of one
// client land on different replicas.
type roundRobin struct {
	addrs []string
	next  atomic.Uint64
}

func (rr *roundRobin) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	addr := rr.addrs[(rr.next.Add(1)-1)%uint64(len(rr.addrs))]
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// startReplicas starts two weir servers that share everything that is
// shared in production: the ACME store on one PostgreSQL schema (a SQLite
// database is one process's: sqlite.Open locks it), one data directory
// (the CA and the limiter's file), one external URL, the challenge
// responders and DNS of the first, and nonces on a Redis of the test's
// own. It returns them and a client HTTP transport that spreads requests
// over both.
func startReplicas(t *testing.T) (a, b *env, lb *http.Client) {
	t.Helper()
	return startReplicasOn(t, systest.StartRedis(t), func(c *server.Config) { c.ACME.Nonces.Backend = "redis" })
}

// startReplicasOn starts the two replicas of startReplicas on rs, with
// mutate applied to both configurations.
func startReplicasOn(t *testing.T, rs *systest.Redis, mutate func(*server.Config)) (a, b *env, lb *http.Client) {
	t.Helper()
	return startReplicasAt(t, rs, postgresSchema(t), "", mutate)
}

// startReplicasAt is startReplicasOn on the PostgreSQL schema of dsn and,
// unless dataDir is "", that data directory. The replicas have no
// plain-HTTP listener: their certificates name the CRLs at the shared
// external URL, which the balancer's client reaches on either replica.
func startReplicasAt(t *testing.T, rs *systest.Redis, dsn, dataDir string, mutate func(*server.Config)) (a, b *env, lb *http.Client) {
	t.Helper()
	shared := func(c *server.Config) {
		c.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: dsn, MaxConns: 8}
		c.RateLimiting.Redis.Addrs = []string{rs.Addr()}
		c.Server.HTTP.Listen = ""
		if dataDir != "" {
			c.DataDir = dataDir
		}
		mutate(c)
	}
	a = startEnv(t, shared)
	b = startEnv(t, func(c *server.Config) {
		shared(c)
		c.DataDir = a.cfg.DataDir
		c.Server.ExternalURL = a.Base
		c.Challenges = a.cfg.Challenges
	})
	if b.Base != a.Base {
		t.Fatalf("replica bases %s and %s differ", a.Base, b.Base)
	}
	rr := &roundRobin{addrs: []string{a.cfg.Server.Listen, b.cfg.Server.Listen}}
	lb = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: a.Roots},
		DialContext:       rr.dial,
		DisableKeepAlives: true,
		ForceAttemptHTTP2: false,
	}}
	return a, b, lb
}

// direct returns an HTTP client that always reaches e's own listener,
// whatever the (shared) URL says.
func direct(e *env) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.Roots},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, e.cfg.Server.Listen)
		},
	}}
}

// TestReplicas: two replicas behind a round-robin balancer serve one
// client as one server would. An account made on one is used on the
// other; a key rollover done on one is honoured by the other at once
// (although the other cached the account) for signatures and for the key
// authorization its validation expects; and a certificate revoked on one
// is listed by the CRL that both serve.
func TestReplicas(t *testing.T) {
	a, b, lb := startReplicas(t)
	for _, e := range []*env{a, b} {
		e.HTTP = direct(e)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c := &xacme.Client{Key: acmeenv.NewKey(t), DirectoryURL: a.Base + "/directory", HTTPClient: lb, UserAgent: "weir-replicas"}
	if _, err := c.Register(ctx, &xacme.Account{}, xacme.AcceptTOS); err != nil {
		t.Fatal(err)
	}
	// Both replicas read (and cache) the account.
	for i := range 4 {
		if _, err := c.GetReg(ctx, ""); err != nil {
			t.Fatalf("account fetch %d: %v", i, err)
		}
	}
	chain, _ := a.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "one.weir.test"})
	first := a.VerifyChain(chain, "one.weir.test")

	// Roll the key over on one replica, then go on at once: the next
	// requests, half of them on the other replica, sign with the new key
	// and answer challenges with its key authorizations.
	newAcctKey := acmeenv.NewKey(t)
	if err := c.AccountKeyRollover(ctx, newAcctKey); err != nil {
		t.Fatalf("key rollover: %v", err)
	}
	for i := range 2 {
		if _, err := c.GetReg(ctx, ""); err != nil {
			t.Fatalf("account fetch %d with the new key: %v", i, err)
		}
	}
	for i, name := range []string{"two.weir.test", "three.weir.test"} {
		chain, _ := a.Issue(ctx, c, acmeenv.NewKey(t), []string{"http-01", "dns-01"}[i], xacme.AuthzID{Type: "dns", Value: name})
		a.VerifyChain(chain, name)
	}

	// Revoke through the balancer: each replica's CRL lists it, whichever
	// one revoked.
	crlURL := first.CRLDistributionPoints[0]
	for _, e := range []*env{a, b} {
		// e.http dials e's own listener: the base is shared.
		if _, listed := e.CRLAt(crlURL)[first.SerialNumber.String()]; listed {
			t.Fatal("the certificate is on a CRL before it is revoked")
		}
	}
	if err := c.RevokeCert(ctx, nil, first.Raw, xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	for _, e := range []*env{a, b} {
		if _, listed := e.CRLAt(crlURL)[first.SerialNumber.String()]; !listed {
			t.Errorf("the CRL served by %s does not list the revoked certificate", e.cfg.Server.Listen)
		}
	}
	// The admin listener of each shows the same.
	for _, e := range []*env{a, b} {
		var v admin.CRLView
		e.adminJSON(t, "/api/v1/crl", &v)
		if len(v.Entries) != 1 {
			t.Errorf("admin CRL of %s lists %d certificates, want 1", e.cfg.Server.Listen, len(v.Entries))
		}
	}
}
