// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/redis"
	"github.com/weir-pki/weir/web"
)

// NoncesConfig is the acme.nonces block: where Replay-Nonces live.
type NoncesConfig struct {
	// Backend is auto, memory, redis or postgres; see nonceBackend.
	Backend string `yaml:"backend"`
}

// The acme.nonces.backend values.
const (
	nonceAuto     = "auto"
	nonceMemory   = "memory"
	nonceRedis    = "redis"
	noncePostgres = "postgres"
)

// memoryNoncesMax bounds the redeemed nonces acme.MemoryNonces remembers.
const memoryNoncesMax = 1 << 20

// nonceStoreProvider is an ACME store that keeps nonces itself, shared by
// every replica on it: the PostgreSQL store. lifetime is
// acme.nonce-lifetime. The store's NonceStore must pass acme/noncetest
// with Shared set.
type nonceStoreProvider interface {
	NonceStore(lifetime time.Duration) acme.NonceStore
}

// nonceBackend resolves acme.nonces.backend: auto is postgres when the
// ACME objects are there (the replicas share it, and a Redis outage then
// stops only the limiter, which degrades, not every signed request), else
// redis when the limiter is on Redis (the replicas share it), else
// memory, which is right for one replica only.
func (c Config) nonceBackend() string {
	if b := c.ACME.Nonces.Backend; b != nonceAuto {
		return b
	}
	switch {
	case c.Storage.Driver == noncePostgres:
		return noncePostgres
	case c.RateLimiting.Backend == "redis":
		return nonceRedis
	}
	return nonceMemory
}

// validateNonces checks the acme.nonces block against the rest.
func (c Config) validateNonces() []error {
	key := "acme.nonces.backend"
	switch b := c.ACME.Nonces.Backend; b {
	case nonceAuto, nonceMemory:
	case nonceRedis:
		if len(c.RateLimiting.Redis.Addrs) == 0 {
			return []error{fmt.Errorf("%s: redis keeps nonces on the Redis of rate-limiting.redis, which lists no address", key)}
		}
	case noncePostgres:
		if c.Storage.Driver != noncePostgres {
			return []error{fmt.Errorf("%s: postgres keeps nonces in the PostgreSQL store, so it needs storage.driver: postgres (it is %q)", key, c.Storage.Driver)}
		}
	default:
		return []error{fmt.Errorf("%s: %q must be auto, memory, redis or postgres", key, b)}
	}
	return nil
}

// openNonces makes the nonce store of acme.nonces; store is the ACME
// store, which may keep nonces itself (nonceStoreProvider). The redis
// backend reuses the limiter's Redis client when the limiter is on Redis,
// and otherwise opens its own client from rate-limiting.redis (closed by
// Close). An unreachable Redis is not fatal: requests get badNonce and
// new-nonce 503, both with Retry-After, until it is back.
func (s *Server) openNonces(store any) (acme.NonceStore, error) {
	lifetime := s.cfg.ACME.NonceLifetime
	switch s.cfg.nonceBackend() {
	case nonceRedis:
		opts := redis.NonceOptions{Lifetime: lifetime}
		if err := opts.Validate(); err != nil {
			return nil, fmt.Errorf("acme.nonces: %w", err)
		}
		client := s.backend.redis
		if client == nil {
			c, err := newRedisClient(s.cfg.RateLimiting.Redis)
			if err != nil {
				return nil, fmt.Errorf("acme.nonces: %w", err)
			}
			client, s.closeNonces = c, c.Close
		}
		s.log.Info("nonces are shared on Redis", "redis_addrs", s.cfg.RateLimiting.Redis.Addrs)
		return client.NonceStore(opts), nil
	case noncePostgres:
		if p, ok := store.(nonceStoreProvider); ok {
			if ns := p.NonceStore(lifetime); ns != nil {
				s.log.Info("nonces are shared in the PostgreSQL store")
				return ns, nil
			}
		}
		if s.cfg.ACME.Nonces.Backend == noncePostgres {
			return nil, fmt.Errorf("acme.nonces.backend: postgres, but the %s store does not keep nonces", s.cfg.Storage.Driver)
		}
		s.log.Warn("the store keeps no nonces: they are this replica's own, so replicas cannot redeem each other's", "storage_driver", s.cfg.Storage.Driver)
	}
	return acme.NewMemoryNonces(lifetime, memoryNoncesMax, nil)
}

// addNoncesCheck adds the readiness check "nonces" of a shared nonce
// store that can be pinged (Redis); the in-process store has nothing to
// check.
func addNoncesCheck(checks map[string]web.Check, ns acme.NonceStore) {
	if p, ok := ns.(interface{ Ping(context.Context) error }); ok {
		checks["nonces"] = p.Ping
	}
}

// noncesOnRedis is the readiness warning of nonces on Redis.
const noncesOnRedis = "nonces are on Redis: while it is unreachable every signed request fails (badNonce) whatever on-backend-error says; " +
	"with a PostgreSQL store set acme.nonces.backend: postgres (docs/high-availability.md)"

// addNoncesWarning adds the warning of nonces kept on Redis, which a
// Redis outage stops: /readyz says so in its warnings (and fails its
// "nonces" check while Redis does not answer).
func addNoncesWarning(h *web.Health, ns acme.NonceStore) {
	if _, ok := ns.(*redis.NonceStore); ok {
		h.AddWarning("nonces", func(context.Context) string { return noncesOnRedis })
	}
}
