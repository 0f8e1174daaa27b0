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
	src := client.RateLimitSource(redis.Options{})
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := src.Load(lctx); err != nil {
		log("redis is not reachable at start; on-backend-error decides until it is", "redis", client.String(), "err", err)
	}
	return &limiterBackend{src: src, close: client.Close, redis: client}, nil
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
