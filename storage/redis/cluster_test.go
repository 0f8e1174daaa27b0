// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/ratelimit/sourcetest"
	"github.com/weir-pki/weir/storage/redis"
)

// TestCluster runs the Source suite and a new-order batch against a Redis
// Cluster, when WEIR_TEST_REDIS_CLUSTER_ADDRS lists its seed nodes
// (comma-separated): the shared hash tag puts every key of a batch in one
// slot, so the script may touch them all. Without the tag, the same
// multi-key script is refused (the control below), which is what the tag
// is for.
func TestCluster(t *testing.T) {
	addrs := os.Getenv("WEIR_TEST_REDIS_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("set WEIR_TEST_REDIS_CLUSTER_ADDRS=host:port,host:port,… to run against a Redis Cluster")
	}
	c, err := redis.NewClient(redis.Config{Addrs: strings.Split(addrs, ",")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, ok := c.(*goredis.ClusterClient); !ok {
		t.Fatalf("NewClient gave %T, want a cluster client (list at least two seeds)", c)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	t.Run("control: untagged keys are refused", func(t *testing.T) {
		err := c.Eval(t.Context(), "return redis.call('GET', KEYS[1])", []string{"weirtest:a", "weirtest:b"}).Err()
		if err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
			t.Errorf("EVAL over two untagged keys = %v, want CROSSSLOT", err)
		}
	})
	t.Run("contract", func(t *testing.T) {
		sourcetest.Run(t, func(t *testing.T, now func() time.Time) ratelimit.Source {
			if isTimeNow(now) {
				return newSource(t, c, nil)
			}
			return newSource(t, c, now)
		})
	})
	t.Run("new-order batch", func(t *testing.T) {
		src := newSource(t, c, nil) // Load puts the scripts on every primary
		lim, err := ratelimit.New(ratelimit.DefaultPolicy(), src, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			d, _, err := lim.Spend(t.Context(), orderBatch("acct-1", time.Now().Add(time.Hour), string(rune('a'+i)))...)
			if err != nil {
				t.Fatalf("Spend %d: %v", i, err)
			}
			if want := i < 5; d.Allowed != want {
				t.Errorf("Spend %d: allowed %v, want %v (order-creation's burst is 5)", i, d.Allowed, want)
			}
		}
	})
}
