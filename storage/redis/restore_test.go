// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"errors"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/redis"
)

// markedSource is a source with Options.Marker under a prefix of the
// test's own, which it returns with the client.
func markedSource(t *testing.T) (goredis.UniversalClient, string, *redis.RateLimitSource) {
	c := testClient(t)
	prefix := testPrefix(t, c)
	return c, prefix, redis.NewRateLimitSource(c, redis.Options{Prefix: prefix, Marker: true, Timeout: 5 * time.Second})
}

// TestRestoreMarker: a source with Options.Marker decides nothing while
// its marker is missing (a Redis restarted empty), and after Restore it
// holds the restored members (even beyond the limit) and decides again;
// deleting the marker (what a restart does) makes it refuse again.
func TestRestoreMarker(t *testing.T) {
	c, prefix, src := markedSource(t)
	ctx := t.Context()
	dup := ratelimit.Limit{Max: 2, Window: time.Hour}
	key := "duplicate-certificate:1:abc"
	add := &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpAdd, Key: key, Limit: dup, Member: "order-9"}}}

	if _, err := src.Apply(ctx, add); !errors.Is(err, ratelimit.ErrStateLost) {
		t.Fatalf("apply before any restore: %v, want ErrStateLost", err)
	}
	now := time.Now()
	members := map[string]int64{
		"order-1": now.Add(-time.Minute).UnixMicro(),
		"order-2": now.Add(-2 * time.Minute).UnixMicro(),
		"order-3": now.Add(-3 * time.Minute).UnixMicro(),
		"gone":    now.Add(-2 * time.Hour).UnixMicro(), // out of the window
	}
	if err := src.Restore(ctx, []ratelimit.CountBucket{{Key: key, Window: dup.WindowMicros(), Members: members}}); err != nil {
		t.Fatal(err)
	}
	res, err := src.Apply(ctx, add)
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || res.Results[0].Allowed {
		t.Errorf("add after restoring 3 live members against a max of 2: %+v, want denied", res.Results[0])
	}
	snap, err := src.Get(ctx, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(snap.Buckets[key].Members); got != 3 {
		t.Errorf("restored members: %d (%v), want 3 (the one out of its window left out)", got, snap.Buckets[key].Members)
	}
	ttl, err := c.PTTL(ctx, src.Key(key)).Result()
	if err != nil || ttl <= 0 || ttl > time.Hour {
		t.Errorf("the restored bucket expires in %v (%v), want within the window", ttl, err)
	}

	if err := c.Del(ctx, prefix+"{weir}!epoch").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Apply(ctx, add); !errors.Is(err, ratelimit.ErrStateLost) {
		t.Fatalf("apply after the marker vanished: %v, want ErrStateLost", err)
	}
}

// TestRestoreLock: while one restore holds the lock, another gets
// ErrStateLost and writes nothing; the marker stays missing.
func TestRestoreLock(t *testing.T) {
	c, prefix, src := markedSource(t)
	ctx := t.Context()
	if err := c.Set(ctx, prefix+"{weir}!restoring", "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	err := src.Restore(ctx, []ratelimit.CountBucket{{Key: "pending-authorizations:1", Members: map[string]int64{"a": time.Now().Add(time.Hour).UnixMicro()}}})
	if !errors.Is(err, ratelimit.ErrStateLost) {
		t.Fatalf("restore under another's lock: %v, want ErrStateLost", err)
	}
	if n, err := c.Exists(ctx, prefix+"{weir}!epoch", src.Key("pending-authorizations:1")).Result(); err != nil || n != 0 {
		t.Errorf("keys written by a refused restore: %d (%v)", n, err)
	}
}

// TestPersistence reads the shared Redis's persistence settings without
// changing them.
func TestPersistence(t *testing.T) {
	c := testClient(t)
	src := redis.NewRateLimitSource(c, redis.Options{Prefix: testPrefix(t, c)})
	ok, detail, err := src.Persistence(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if detail == "" {
		t.Error("no detail")
	}
	t.Logf("shared Redis persistent=%v (%s)", ok, detail)
}
