// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/internal/systest"
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

// startReplicasOn starts two weir servers that share everything that is
// shared in production: the ACME store on one PostgreSQL schema (a SQLite
// database is one process's: sqlite.Open locks it), one data directory
// (the CA and the limiter's file), one external URL, the challenge
// responders and DNS of the first, and the Redis rs; mutate applies to
// both configurations. It returns them and a client HTTP transport that
// spreads requests over both.
func startReplicasOn(t *testing.T, rs *systest.Redis, mutate func(*Config)) (a, b *testEnv, lb *http.Client) {
	t.Helper()
	return startReplicasAt(t, rs, postgresSchema(t), "", mutate)
}

// startReplicasAt is startReplicasOn on the PostgreSQL schema of dsn and,
// unless dataDir is "", that data directory. The replicas have no
// plain-HTTP listener: their certificates name the CRLs at the shared
// external URL, which the balancer's client reaches on either replica.
func startReplicasAt(t *testing.T, rs *systest.Redis, dsn, dataDir string, mutate func(*Config)) (a, b *testEnv, lb *http.Client) {
	t.Helper()
	shared := func(c *Config) {
		c.Storage = StorageConfig{Driver: DriverPostgres, DSN: dsn, MaxConns: 8}
		c.RateLimiting.Redis.Addrs = []string{rs.Addr()}
		c.Server.HTTP.Listen = ""
		if dataDir != "" {
			c.DataDir = dataDir
		}
		mutate(c)
	}
	a = startEnv(t, shared)
	b = startEnv(t, func(c *Config) {
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
