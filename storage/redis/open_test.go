// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/storage/redis"
)

// TestOpen: Open refuses what NewClient refuses and describes the client
// without its password (no server needed).
func TestOpen(t *testing.T) {
	if c, err := redis.Open(redis.Config{}); err == nil || c != nil {
		t.Errorf("Open of an empty config = %v, %v; want an error", c, err)
	}
	cfg := redis.Config{Addrs: []string{"127.0.0.1:1"}, Password: "hunter2"} // never dialled
	c, err := redis.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := c.String(), cfg.String(); got != want || strings.Contains(got, "hunter2") {
		t.Errorf("String() = %q; want %q, without the password", got, want)
	}
}

// TestClientShared: a source and a nonce store made on one Client reach
// its Redis, and fail once it is closed.
func TestClientShared(t *testing.T) {
	c, err := redis.Open(redis.Config{Addrs: []string{testAddr(t)}})
	if err != nil {
		t.Fatal(err)
	}
	src := c.RateLimitSource(redis.Options{Timeout: time.Second})
	ns := c.NonceStore(redis.NonceOptions{Lifetime: time.Minute, Timeout: time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := src.Ping(ctx); err != nil {
		t.Fatalf("the source's Ping: %v", err)
	}
	n, err := ns.Nonce(ctx)
	if err != nil {
		t.Fatalf("Nonce: %v", err)
	}
	if ok, err := ns.Redeem(ctx, n); !ok || err != nil {
		t.Fatalf("Redeem(%q) = %v, %v; want true", n, ok, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := src.Ping(ctx); err == nil {
		t.Error("the source's Ping after Close = nil; want an error")
	}
	if _, err := ns.Nonce(ctx); err == nil {
		t.Error("Nonce after Close = nil error; want an error")
	}
}
