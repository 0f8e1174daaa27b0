// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/redis"
)

// testAddr returns the address of the Redis at WEIR_TEST_REDIS_ADDR.
// Without the variable the test is skipped, except in CI, where it fails.
func testAddr(tb testing.TB) string {
	tb.Helper()
	addr := os.Getenv("WEIR_TEST_REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatal("WEIR_TEST_REDIS_ADDR must be set in CI")
		}
		tb.Skip("set WEIR_TEST_REDIS_ADDR=127.0.0.1:6379 to run the Redis tests")
	}
	return addr
}

// testClient returns a client for the Redis at WEIR_TEST_REDIS_ADDR
// (testAddr), closed when the test ends.
func testClient(tb testing.TB) goredis.UniversalClient {
	tb.Helper()
	addr := testAddr(tb)
	c, err := redis.NewClient(redis.Config{Addrs: []string{addr}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		tb.Fatalf("ping %s: %v", addr, err)
	}
	return c
}

// testPrefix returns a key prefix no other test (nor a concurrent run on
// the same server) uses, and deletes every key under it when the test
// ends. It holds no glob metacharacters, so SCAN MATCH prefix* is exact.
func testPrefix(tb testing.TB, c goredis.UniversalClient) string {
	tb.Helper()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		tb.Fatal(err)
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, tb.Name())
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	prefix := "weirtest:" + name + ":" + hex.EncodeToString(rnd[:]) + ":"
	tb.Cleanup(func() { deleteKeys(tb, c, prefix) })
	return prefix
}

// deleteKeys unlinks every key starting with prefix, on every primary of
// a Cluster.
func deleteKeys(tb testing.TB, c goredis.UniversalClient, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cc, ok := c.(*goredis.ClusterClient); ok {
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *goredis.Client) error {
			deleteKeysOn(ctx, tb, node, prefix)
			return nil
		})
		if err != nil {
			tb.Errorf("cleanup: %v", err)
		}
		return
	}
	deleteKeysOn(ctx, tb, c, prefix)
}

// deleteKeysOn unlinks the keys starting with prefix on one server.
func deleteKeysOn(ctx context.Context, tb testing.TB, c goredis.Cmdable, prefix string) {
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var batch []string
	flush := func() {
		if len(batch) > 0 {
			if err := c.Unlink(ctx, batch...).Err(); err != nil {
				tb.Errorf("cleanup: unlink: %v", err)
			}
			batch = batch[:0]
		}
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 500 {
			flush()
		}
	}
	flush()
	if err := iter.Err(); err != nil {
		tb.Errorf("cleanup: scan %s*: %v", prefix, err)
	}
}

// newSource returns a loaded source under a fresh prefix of c.
func newSource(tb testing.TB, c goredis.UniversalClient, clock func() time.Time) *redis.RateLimitSource {
	tb.Helper()
	return newSourceAt(tb, c, testPrefix(tb, c), clock)
}

// newSourceAt returns a loaded source under prefix, as another replica
// sharing it would have.
func newSourceAt(tb testing.TB, c goredis.UniversalClient, prefix string, clock func() time.Time) *redis.RateLimitSource {
	tb.Helper()
	opts := redis.Options{Prefix: prefix, Clock: clock, Timeout: 10 * time.Second}
	if err := opts.Validate(); err != nil {
		tb.Fatal(err)
	}
	s := redis.NewRateLimitSource(c, opts)
	if err := s.Load(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return s
}

// isTimeNow reports whether now is time.Now itself, which the sourcetest
// suite passes for its real-clock test: that test then runs on Redis TIME,
// the production clock, instead of through Options.Clock.
func isTimeNow(now func() time.Time) bool {
	return reflect.ValueOf(now).Pointer() == reflect.ValueOf(time.Now).Pointer()
}

// orderBatch returns the requests of one new-order Spend, the shape of
// ratelimit's BenchmarkMemorySpendOrderBatch: order-creation, a 3-name
// san-budget, the duplicate-certificate and failed-validation checks, and
// three pending-authorization adds.
func orderBatch(acct string, expires time.Time, seq string) []ratelimit.Request {
	names := []string{"a.example.com", "b.example.com", "c.example.com"}
	reqs := []ratelimit.Request{
		{Name: ratelimit.OrderCreation, Key: acct},
		{Name: ratelimit.SANBudget, Key: acct, Cost: 3},
		{Name: ratelimit.DuplicateCertificate, Key: ratelimit.FQDNSetKey(acct, names), CheckOnly: true},
	}
	for _, n := range names {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.FailedValidation, Key: ratelimit.FailedValidationKey(acct, n), CheckOnly: true})
	}
	for j := range 3 {
		reqs = append(reqs, ratelimit.Request{Name: ratelimit.PendingAuthorizations, Key: acct, Member: "authz-" + seq + "-" + string(rune('0'+j)), MemberTime: expires})
	}
	return reqs
}
