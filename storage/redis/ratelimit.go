// SPDX-License-Identifier: Apache-2.0

package redis

import (
	"context"
	_ "embed" // the Lua scripts
	"errors"
	"fmt"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
)

//go:embed apply.lua
var applySource string

//go:embed get.lua
var getSource string

// The scripts, by their SHA-1 (EVALSHA) and source (SCRIPT LOAD, EVAL).
var (
	applyScript = goredis.NewScript(applySource)
	getScript   = goredis.NewScript(getSource)
)

const (
	// DefaultPrefix is the key prefix when Options.Prefix is empty.
	DefaultPrefix = "weir:rl:"
	// DefaultHashTag is the hash tag when Options.HashTag is empty.
	DefaultHashTag = "weir"
	// DefaultTimeout bounds each call when Options.Timeout is 0.
	DefaultTimeout = time.Second
)

// maxExact is the largest integer a Lua number (a double) holds exactly.
// Every value the script computes with must stay at or below it.
const maxExact = 1<<53 - 1

// Options configures a [RateLimitSource]. The zero value is the production
// configuration.
type Options struct {
	// Prefix starts every key; empty means DefaultPrefix ("weir:rl:"). It
	// must not contain "{" or "}", which would change the hash tag.
	Prefix string
	// HashTag is the Redis Cluster hash tag of every key, so that any
	// batch may touch any buckets in one atomic script; empty means
	// DefaultHashTag ("weir"). See the package documentation for why it is
	// one tag for the whole source. It must not contain "{" or "}".
	HashTag string
	// Timeout bounds each Apply, Get and Reset on top of the caller's
	// context; 0 means DefaultTimeout (1 s) and a negative value none.
	Timeout time.Duration
	// Marker makes the source keep an epoch marker key, which
	// [RateLimitSource.Restore] writes: while it is missing (Redis
	// restarted empty, or weir never restored it), Apply decides nothing
	// and returns ratelimit.ErrStateLost, so that weir rebuilds the exact
	// counts from its store first (ratelimit.Recovering). weir's server
	// sets it.
	Marker bool
	// Clock is FOR TESTS ONLY and must be nil in production.
	//
	// When nil (production), the script reads the Redis server's clock
	// with TIME inside its atomic section, so every replica decides on the
	// same clock and key expiry agrees with it. When set, the script is
	// given Clock() instead of calling TIME, and key expiries become
	// relative to that fake time, padded by an hour because the fake
	// clock does not run at Redis's speed. Replicas sharing Redis would
	// then each decide on their own clock, which breaks the guarantees of
	// ratelimit.Source. It exists so that the ratelimit/sourcetest suite
	// can move time.
	Clock func() time.Time
}

// Validate reports every problem with o, joined with errors.Join.
func (o Options) Validate() error {
	var errs []error
	if strings.ContainsAny(o.Prefix, "{}") {
		errs = append(errs, fmt.Errorf("redis: ratelimit: prefix %q must not contain braces", o.Prefix))
	}
	if strings.ContainsAny(o.HashTag, "{}") {
		errs = append(errs, fmt.Errorf("redis: ratelimit: hash tag %q must not contain braces", o.HashTag))
	}
	return errors.Join(errs...)
}

// RateLimitSource is a ratelimit.Source kept in Redis: one Lua script per
// Apply, on the Redis server's clock. It is safe for concurrent use, and
// any number of RateLimitSources (one per replica) may share one Redis.
type RateLimitSource struct {
	client    goredis.UniversalClient
	keyPrefix string // Prefix + "{" + HashTag + "}"
	timeout   time.Duration
	clock     func() time.Time
	marker    bool
	err       error // invalid options, returned by every call
}

var _ ratelimit.Source = (*RateLimitSource)(nil)

// NewRateLimitSource returns a source storing buckets through client (see
// [NewClient]). Invalid options make every call fail; check them at
// startup with [Options.Validate], and call [RateLimitSource.Load] so
// that the first requests need no extra round trip.
func NewRateLimitSource(client goredis.UniversalClient, opts Options) *RateLimitSource {
	s := &RateLimitSource{client: client, clock: opts.Clock, timeout: opts.Timeout, marker: opts.Marker, err: opts.Validate()}
	if client == nil {
		s.err = errors.Join(s.err, errors.New("redis: ratelimit: nil client"))
	}
	prefix, tag := opts.Prefix, opts.HashTag
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if tag == "" {
		tag = DefaultHashTag
	}
	s.keyPrefix = prefix + "{" + tag + "}"
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	return s
}

// Key returns the Redis key that stores a bucket key, such as
// "weir:rl:{weir}order-creation:acct-42" for "order-creation:acct-42".
func (s *RateLimitSource) Key(bucketKey string) string { return s.keyPrefix + bucketKey }

// Load loads the scripts into Redis's script cache (on every primary of a
// Cluster) and checks that the server answers. After it, each Apply is one
// EVALSHA; without it, the first Apply on each server also sends the
// script. Call it at startup; it may be called again at any time.
func (s *RateLimitSource) Load(ctx context.Context) error {
	if s.err != nil {
		return s.err
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	for _, sc := range []*goredis.Script{applyScript, getScript} {
		sha, err := sc.Load(ctx, s.client).Result()
		if err != nil {
			return s.fail(ctx, "script load", err)
		}
		if sha != sc.Hash() {
			return fmt.Errorf("redis: ratelimit: script load: server returned SHA-1 %s, want %s", sha, sc.Hash())
		}
	}
	return nil
}

// Apply implements ratelimit.Source with one script call covering the
// whole batch.
func (s *RateLimitSource) Apply(ctx context.Context, b *ratelimit.Batch) (*ratelimit.BatchResult, error) {
	if err := s.ready(ctx, "apply"); err != nil {
		return nil, err
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("redis: ratelimit: %w", err)
	}
	keys, args, err := s.encode(b.Ops)
	if err != nil {
		return nil, err
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	reply, err := s.run(ctx, applyScript, keys, args)
	if err != nil && strings.HasPrefix(err.Error(), "WEIRLOST") {
		return nil, fmt.Errorf("redis: ratelimit: apply: %w", ratelimit.ErrStateLost)
	}
	if err != nil {
		return nil, s.fail(ctx, "apply", err)
	}
	res, err := decodeApply(reply, len(b.Ops))
	if err != nil {
		return nil, fmt.Errorf("redis: ratelimit: apply: %w", err)
	}
	return res, nil
}

// Get implements ratelimit.Source with one script call. Rate buckets whose
// TAT is not after now are left out, as if expired; count buckets are
// returned as stored, which may include members that no longer count
// (the source does not know their window).
func (s *RateLimitSource) Get(ctx context.Context, keys []string) (*ratelimit.Snapshot, error) {
	if err := s.ready(ctx, "get"); err != nil {
		return nil, err
	}
	redisKeys := make([]string, len(keys))
	for i, k := range keys {
		redisKeys[i] = s.Key(k)
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	reply, err := s.run(ctx, getScript, redisKeys, []any{s.now()})
	if err != nil {
		return nil, s.fail(ctx, "get", err)
	}
	snap, err := decodeGet(reply, keys)
	if err != nil {
		return nil, fmt.Errorf("redis: ratelimit: get: %w", err)
	}
	return snap, nil
}

// Reset implements ratelimit.Source: it deletes the bucket's key.
func (s *RateLimitSource) Reset(ctx context.Context, key string) error {
	if err := s.ready(ctx, "reset"); err != nil {
		return err
	}
	if key == "" {
		return errors.New("redis: ratelimit: reset: empty bucket key")
	}
	ctx, cancel := s.context(ctx)
	defer cancel()
	if err := s.client.Del(ctx, s.Key(key)).Err(); err != nil {
		return s.fail(ctx, "reset", err)
	}
	return nil
}

// ready returns the source's configuration error or the context's.
func (s *RateLimitSource) ready(ctx context.Context, what string) error {
	if s.err != nil {
		return s.err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redis: ratelimit: %s: %w", what, err)
	}
	return nil
}

// context applies Options.Timeout to ctx.
func (s *RateLimitSource) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return ctx, func() {}
}

// fail wraps a Redis error, adding the context's error when the deadline
// or a cancellation caused it, so callers can test for either. The network
// deadline go-redis derives from the context can fire a moment before the
// context itself reports it, so a passed deadline counts too.
func (s *RateLimitSource) fail(ctx context.Context, what string, err error) error {
	cerr := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cerr == nil && !time.Now().Before(dl) {
		cerr = context.DeadlineExceeded
	}
	if cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("redis: ratelimit: %s: %w: %w", what, cerr, err)
	}
	return fmt.Errorf("redis: ratelimit: %s: %w", what, err)
}

// now is the clock the script is given: 0, meaning Redis TIME, unless a
// test set Options.Clock.
func (s *RateLimitSource) now() int64 {
	if s.clock == nil {
		return 0
	}
	return max(s.clock().UnixMicro(), 1)
}

// run calls the script by SHA-1, sending its source only if the server
// does not have it (NOSCRIPT: nothing ran, so sending it is safe).
func (s *RateLimitSource) run(ctx context.Context, sc *goredis.Script, keys []string, args []any) ([]any, error) {
	v, err := sc.EvalSha(ctx, s.client, keys, args...).Result()
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		v, err = sc.Eval(ctx, s.client, keys, args...).Result()
	}
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("script returned %T, want an array", v)
	}
	return arr, nil
}
