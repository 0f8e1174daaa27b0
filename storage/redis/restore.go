// SPDX-License-Identifier: Apache-2.0

package redis

import (
	"context"
	"crypto/rand"
	_ "embed" // the Lua script
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
)

//go:embed restore.lua
var restoreSource string

var restoreScript = goredis.NewScript(restoreSource)

var _ ratelimit.Restorer = (*RateLimitSource)(nil)

// restoreLockTTL is how long a replica may take to restore before another
// may take over; restoreChunk is the most ARGV values one script call gets.
const (
	restoreLockTTL = time.Minute
	restoreChunk   = 20000
)

// markerKey is the epoch marker of Options.Marker, and lockKey the lock of
// a restore in progress. A bucket key always holds a ":", these never do.
func (s *RateLimitSource) markerKey() string { return s.keyPrefix + "!epoch" }
func (s *RateLimitSource) lockKey() string   { return s.keyPrefix + "!restoring" }

// Restore implements ratelimit.Restorer: under a lock in Redis (one
// replica restores; the others get ratelimit.ErrStateLost until it has
// finished), it adds the members of buckets in chunks and, with the last
// chunk, writes the epoch marker. It ignores the source's Timeout: a
// restore runs on its caller's context.
func (s *RateLimitSource) Restore(ctx context.Context, buckets []ratelimit.CountBucket) error {
	if err := s.ready(ctx, "restore"); err != nil {
		return err
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	ok, err := s.client.SetNX(ctx, s.lockKey(), token, restoreLockTTL).Result()
	if err != nil {
		return s.fail(ctx, "restore", err)
	}
	if !ok {
		return fmt.Errorf("redis: ratelimit: restore: another replica is restoring: %w", ratelimit.ErrStateLost)
	}
	keys := []string{s.markerKey(), s.lockKey()}
	args := []any{token, 0}
	flush := func(final bool) error {
		if final {
			args[1] = 1
		}
		_, err := s.run(ctx, restoreScript, keys, args)
		if err != nil && strings.HasPrefix(err.Error(), "WEIRLOCK") {
			return fmt.Errorf("redis: ratelimit: restore: the lock was lost (Redis restarted?): %w", ratelimit.ErrStateLost)
		}
		if err != nil {
			return s.fail(ctx, "restore", err)
		}
		keys, args = keys[:2], args[:2]
		return nil
	}
	for _, cb := range buckets {
		if len(cb.Members) == 0 {
			continue
		}
		if len(args)+2+2*len(cb.Members) > restoreChunk && len(keys) > 2 {
			if err := flush(false); err != nil {
				return err
			}
		}
		keys = append(keys, s.Key(cb.Key))
		args = append(args, cb.Window, len(cb.Members))
		for m, ts := range cb.Members {
			args = append(args, m, ts)
		}
	}
	return flush(true)
}

// Persistence reports whether the Redis server keeps its data across a
// restart: append-only file on, or RDB save rules. ok false with a nil
// error means it does not; an error means it could not tell (CONFIG may be
// disabled on a managed Redis).
func (s *RateLimitSource) Persistence(ctx context.Context) (ok bool, detail string, err error) {
	if err := s.ready(ctx, "persistence"); err != nil {
		return false, "", err
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	cfg, err := s.client.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		return false, "", s.fail(ctx, "config get appendonly", err)
	}
	save, err := s.client.ConfigGet(ctx, "save").Result()
	if err != nil {
		return false, "", s.fail(ctx, "config get save", err)
	}
	aof, rdb := cfg["appendonly"], strings.TrimSpace(save["save"])
	detail = fmt.Sprintf("appendonly %s, save %q", aof, rdb)
	return aof == "yes" || rdb != "", detail, nil
}
