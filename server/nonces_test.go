// SPDX-License-Identifier: Apache-2.0

package server

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/redis"
)

func TestNonceBackendConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mutate  func(*Config)
		want    string // the resolved backend
		wantErr string
	}{
		{name: "default", mutate: func(*Config) {}, want: nonceMemory},
		{name: "auto with the limiter on redis", mutate: func(c *Config) { c.RateLimiting.Backend = "redis" }, want: nonceRedis},
		{name: "auto with the store on postgres", mutate: func(c *Config) { c.Storage.Driver = "postgres" }, want: noncePostgres},
		{name: "auto prefers the postgres store, which outlives a Redis outage", mutate: func(c *Config) { c.RateLimiting.Backend, c.Storage.Driver = "redis", "postgres" }, want: noncePostgres},
		{name: "explicit memory with redis", mutate: func(c *Config) { c.RateLimiting.Backend, c.ACME.Nonces.Backend = "redis", "memory" }, want: nonceMemory},
		{name: "explicit redis with the limiter on sqlite", mutate: func(c *Config) { c.ACME.Nonces.Backend = "redis" }, want: nonceRedis},
		{name: "explicit redis without an address", mutate: func(c *Config) { c.ACME.Nonces.Backend, c.RateLimiting.Redis.Addrs = "redis", nil },
			wantErr: "acme.nonces.backend: redis keeps nonces on the Redis of rate-limiting.redis"},
		{name: "explicit postgres on sqlite", mutate: func(c *Config) { c.ACME.Nonces.Backend = "postgres" },
			wantErr: "acme.nonces.backend: postgres keeps nonces in the PostgreSQL store, so it needs storage.driver: postgres"},
		{name: "unknown", mutate: func(c *Config) { c.ACME.Nonces.Backend = "etcd" },
			wantErr: `acme.nonces.backend: "etcd" must be auto, memory, redis or postgres`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mutate(&c)
			errs := c.validateNonces()
			if tc.wantErr != "" {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr) {
					t.Fatalf("validateNonces() = %v, want %q", errs, tc.wantErr)
				}
				if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Validate() = %v, want it to report %q", err, tc.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("validateNonces() = %v", errs)
			}
			if got := c.nonceBackend(); got != tc.want {
				t.Errorf("nonceBackend() = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ParseConfig("", []byte("acme:\n  nonces: { backend: redis }\n")); err != nil {
		t.Errorf("acme.nonces.backend: redis in a file: %v", err)
	}
	if _, err := ParseConfig("", []byte("acme:\n  nonces: { backend: redis, prefix: x }\n")); err == nil {
		t.Error("an unknown key under acme.nonces was accepted")
	}
}

// fakeNonceProvider is a store that keeps nonces itself, as the
// PostgreSQL store does.
type fakeNonceProvider struct{ ns acme.NonceStore }

func (f fakeNonceProvider) NonceStore(time.Duration) acme.NonceStore { return f.ns }

// TestOpenNoncesPostgres: the postgres backend takes the store's own
// nonce store when it offers one; auto falls back to memory when it does
// not, and an explicit postgres refuses to start.
func TestOpenNoncesPostgres(t *testing.T) {
	shared, err := acme.NewMemoryNonces(time.Hour, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, backend string
		store         any
		wantShared    bool
		wantErr       bool
	}{
		{name: "auto, store with nonces", backend: nonceAuto, store: fakeNonceProvider{shared}, wantShared: true},
		{name: "explicit postgres, store with nonces", backend: noncePostgres, store: fakeNonceProvider{shared}, wantShared: true},
		{name: "auto, store without nonces", backend: nonceAuto, store: struct{}{}},
		{name: "explicit postgres, store without nonces", backend: noncePostgres, store: struct{}{}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler), backend: &limiterBackend{}}
			s.cfg.Storage.Driver = "postgres"
			s.cfg.ACME.Nonces.Backend = tc.backend
			ns, err := s.openNonces(tc.store)
			switch {
			case tc.wantErr:
				if err == nil {
					t.Fatalf("openNonces() = %T, nil error; want an error", ns)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantShared && ns != shared:
				t.Errorf("openNonces() = %T, want the store's own", ns)
			case !tc.wantShared:
				if _, ok := ns.(*acme.MemoryNonces); !ok || ns == shared {
					t.Errorf("openNonces() = %T, want the memory fallback", ns)
				}
			}
		})
	}
}

// TestOpenNoncesOwnRedisClient: acme.nonces.backend redis with the limiter
// elsewhere opens a client of the nonces' own from rate-limiting.redis,
// which Close closes; with the limiter on Redis it reuses the limiter's.
func TestOpenNoncesOwnRedisClient(t *testing.T) {
	s := &Server{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler), backend: &limiterBackend{}}
	s.cfg.ACME.Nonces.Backend = nonceRedis
	s.cfg.RateLimiting.Redis.Addrs = []string{"127.0.0.1:1"} // never dialled here
	ns, err := s.openNonces(struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ns.(*redis.NonceStore); !ok || s.closeNonces == nil {
		t.Fatalf("openNonces() = %T, own client %v; want *redis.NonceStore with a client to close", ns, s.closeNonces != nil)
	}
	if err := s.closeNonces(); err != nil {
		t.Errorf("closing the nonces' client: %v", err)
	}

	client, err := newRedisClient(s.cfg.RateLimiting.Redis)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s2 := &Server{cfg: s.cfg, log: s.log, backend: &limiterBackend{redis: client}}
	if _, err := s2.openNonces(struct{}{}); err != nil || s2.closeNonces != nil {
		t.Errorf("with the limiter's client: err %v, own client %v; want it reused", err, s2.closeNonces != nil)
	}
}
