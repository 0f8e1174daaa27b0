// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/redis"
)

// openRedisBackend connects the limiter backend shared by several
// replicas. The script is loaded at start so that each decision is one
// round trip; an unreachable Redis at start is not fatal, because
// on-backend-error decides requests until it is back.
func openRedisBackend(ctx context.Context, c ratelimit.RedisConfig, log func(msg string, args ...any)) (*limiterBackend, error) {
	client, err := newRedisClient(c)
	if err != nil {
		return nil, err
	}
	src := client.RateLimitSource(redis.Options{Marker: true})
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := src.Load(lctx); err != nil {
		log("redis is not reachable at start; on-backend-error decides until it is", "redis", client.String(), "err", err)
	} else {
		warnPersistence(lctx, src.Persistence, log)
	}
	return &limiterBackend{src: src, close: client.Close, redis: client, marker: true, persistence: src.Persistence}, nil
}

// noPersistence is the warning of a Redis that loses everything when it
// restarts.
const noPersistence = "the limiter's Redis has no persistence (appendonly no and no save rules): a restart empties it, the exact counts are rebuilt from the store but every rate bucket starts full; set appendonly yes (docs/high-availability.md)"

// warnPersistence logs noPersistence when check says so.
func warnPersistence(ctx context.Context, check func(context.Context) (bool, string, error), log func(msg string, args ...any)) {
	ok, detail, err := check(ctx)
	switch {
	case err != nil:
		log("could not read the limiter's Redis persistence settings (CONFIG GET)", "err", err)
	case !ok:
		log(noPersistence, "redis_config", detail)
	}
}

// newRedisClient makes a client for the rate-limiting.redis block, which
// the limiter and the nonces (acme.nonces.backend: redis) share. It does
// not connect.
func newRedisClient(c ratelimit.RedisConfig) (*redis.Client, error) {
	rc := redis.Config{Addrs: c.Addrs, MasterName: c.MasterName, DB: c.DB, TLS: c.TLS,
		DialTimeout: 2 * time.Second, ReadTimeout: time.Second}
	if c.PasswordFile != "" {
		pw, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("redis.password-file: %w", err)
		}
		rc.Password = strings.TrimRight(string(pw), "\r\n")
	}
	return redis.Open(rc)
}

// BackendWarnings are what weir check-config says of the backends cfg
// names, beyond the file itself: a limiter Redis without persistence (when
// it can be reached within timeout) and nonces kept on Redis. They do not
// make the file invalid.
func BackendWarnings(ctx context.Context, cfg Config, timeout time.Duration) []string {
	var out []string
	if cfg.nonceBackend() == nonceRedis {
		out = append(out, noncesOnRedis)
	}
	if cfg.RateLimiting.Backend != "redis" {
		return out
	}
	client, err := newRedisClient(cfg.RateLimiting.Redis)
	if err != nil {
		return append(out, "rate-limiting.redis: "+err.Error())
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ok, detail, err := client.RateLimitSource(redis.Options{}).Persistence(ctx)
	switch {
	case err != nil:
		out = append(out, fmt.Sprintf("rate-limiting.redis: could not check the persistence of %s: %v", client, err))
	case !ok:
		out = append(out, fmt.Sprintf("rate-limiting.redis: %s (%s)", noPersistence, detail))
	}
	return out
}
