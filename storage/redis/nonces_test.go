// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/noncetest"
	"github.com/weir-pki/weir/storage/redis"
)

// TestNonceStoreSuite runs the NonceStore suite on Redis: the stores of a
// test share one prefix, as replicas share one Redis, and expiry is the
// Redis server's.
func TestNonceStoreSuite(t *testing.T) {
	c := testClient(t)
	prefix := testPrefix(t, c)
	noncetest.Run(t, noncetest.Config{
		New: func(t *testing.T, lifetime time.Duration) acme.NonceStore {
			opts := redis.NonceOptions{Prefix: prefix, Lifetime: lifetime, Timeout: 10 * time.Second}
			if err := opts.Validate(); err != nil {
				t.Fatal(err)
			}
			return redis.NewNonceStore(c, opts)
		},
		Shared:   true,
		Elapse:   func(_ *testing.T, d time.Duration) { time.Sleep(d) },
		Lifetime: time.Second,
	})
}

// TestNonceStoreKeys: a nonce is one key under the prefix and hash tag,
// expiring with the nonce, and gone once redeemed.
func TestNonceStoreKeys(t *testing.T) {
	c := testClient(t)
	prefix := testPrefix(t, c)
	s := redis.NewNonceStore(c, redis.NonceOptions{Prefix: prefix, HashTag: "tag", Lifetime: time.Hour})
	n, err := s.Nonce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	key := s.Key(n)
	if want := prefix + "{tag}" + n; key != want {
		t.Fatalf("Key = %q, want %q", key, want)
	}
	ttl, err := c.PTTL(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("PTTL of a new nonce = %v, want just under the 1h lifetime", ttl)
	}
	if ok, err := s.Redeem(t.Context(), n); err != nil || !ok {
		t.Fatalf("Redeem = %v, %v; want true", ok, err)
	}
	if k, err := c.Exists(t.Context(), key).Result(); err != nil || k != 0 {
		t.Errorf("after Redeem: EXISTS = %d, %v; want 0", k, err)
	}
	if def := redis.NewNonceStore(c, redis.NonceOptions{Lifetime: time.Hour}); !strings.HasPrefix(def.Key("x"), "weir:nonce:{weir}") {
		t.Errorf("default Key(x) = %q, want weir:nonce:{weir}x", def.Key("x"))
	}
}

// TestNonceStoreUnreachable: with Redis gone, Nonce and Redeem fail
// promptly with an error (never a false "unknown nonce", which would
// wrongly blame the client), and a string that cannot be a nonce is still
// refused without asking Redis.
func TestNonceStoreUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := redis.NewClient(redis.Config{Addrs: []string{addr}, DialTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := redis.NewNonceStore(c, redis.NonceOptions{Lifetime: time.Hour, Timeout: 500 * time.Millisecond})
	start := time.Now()
	if n, err := s.Nonce(t.Context()); err == nil {
		t.Errorf("Nonce with Redis down = %q, nil; want an error", n)
	}
	if ok, err := s.Redeem(t.Context(), "q3iW2d0tq7w7l8Wc3uI1GQ"); err == nil {
		t.Errorf("Redeem with Redis down = %v, nil; want an error", ok)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("two calls with Redis down took %v; want them bounded by the timeout", d)
	}
	if ok, err := s.Redeem(t.Context(), "not a nonce"); ok || err != nil {
		t.Errorf("Redeem(not a nonce) with Redis down = %v, %v; want false, nil", ok, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping with Redis down = nil, want an error")
	}
}

func TestNonceOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    redis.NonceOptions
		bad  []string
	}{
		{"ok", redis.NonceOptions{Lifetime: time.Hour}, nil},
		{"no lifetime", redis.NonceOptions{}, []string{"lifetime"}},
		{"everything", redis.NonceOptions{Lifetime: -1, Prefix: "a{", HashTag: "}"}, []string{"lifetime", "prefix", "hash tag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if (err != nil) != (len(tc.bad) > 0) {
				t.Fatalf("Validate() = %v, want errors about %v", err, tc.bad)
			}
			for _, b := range tc.bad {
				if !strings.Contains(err.Error(), b) {
					t.Errorf("Validate() = %v, want it to mention %q", err, b)
				}
			}
			if len(tc.bad) > 0 {
				s := redis.NewNonceStore(nil, tc.o)
				if _, err := s.Nonce(t.Context()); err == nil {
					t.Error("Nonce on a store with invalid options = nil error")
				}
			}
		})
	}
}
