// SPDX-License-Identifier: Apache-2.0

package redis_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/redis"
)

// These tests need no Redis server.

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  redis.Config
		want string // substring of the error; "" for valid
	}{
		{"single node", redis.Config{Addrs: []string{"127.0.0.1:6379"}, DB: 2}, ""},
		{"sentinel", redis.Config{Addrs: []string{"s1:26379", "s2:26379"}, MasterName: "weir", DB: 1}, ""},
		{"cluster", redis.Config{Addrs: []string{"n1:6379", "n2:6379", "[::1]:6379"}, TLS: true}, ""},
		{"no address", redis.Config{}, "no addresses"},
		{"no port", redis.Config{Addrs: []string{"localhost"}}, "missing port"},
		{"bad port", redis.Config{Addrs: []string{"localhost:99999"}}, "port must be"},
		{"empty host", redis.Config{Addrs: []string{":6379"}}, "empty host"},
		{"duplicate", redis.Config{Addrs: []string{"a:1", "a:1"}}, "listed twice"},
		{"negative db", redis.Config{Addrs: []string{"a:1"}, DB: -1}, "negative"},
		{"cluster db", redis.Config{Addrs: []string{"a:1", "b:1"}, DB: 3}, "must be 0 for a cluster"},
		{"negative timeout", redis.Config{Addrs: []string{"a:1"}, ReadTimeout: -time.Second}, "read timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	cfg := redis.Config{Addrs: []string{"a:1"}, Password: "hunter2"}
	if s := cfg.String(); strings.Contains(s, "hunter2") {
		t.Errorf("Config.String() = %q shows the password", s)
	}
}

// TestNewClient checks that each kind of configuration gets its kind of
// client, and that an invalid one gets none.
func TestNewClient(t *testing.T) {
	tests := []struct {
		cfg  redis.Config
		want string
	}{
		{redis.Config{Addrs: []string{"127.0.0.1:6379"}}, "*redis.Client"},
		{redis.Config{Addrs: []string{"s1:26379", "s2:26379"}, MasterName: "m"}, "*redis.Client"}, // failover
		{redis.Config{Addrs: []string{"n1:6379", "n2:6379"}}, "*redis.ClusterClient"},
	}
	for _, tt := range tests {
		c, err := redis.NewClient(tt.cfg)
		if err != nil {
			t.Fatalf("NewClient(%v): %v", tt.cfg, err)
		}
		if got := typeName(c); got != tt.want {
			t.Errorf("NewClient(%v) = %s, want %s", tt.cfg, got, tt.want)
		}
		c.Close()
	}
	if c, err := redis.NewClient(redis.Config{}); err == nil || c != nil {
		t.Errorf("NewClient of an empty config = %v, %v; want an error", c, err)
	}
}

func typeName(c goredis.UniversalClient) string {
	switch c.(type) {
	case *goredis.Client:
		return "*redis.Client"
	case *goredis.ClusterClient:
		return "*redis.ClusterClient"
	}
	return "other"
}

// TestKeys checks the key layout: every key of a source has the same hash
// tag, so any batch is one Cluster slot.
func TestKeys(t *testing.T) {
	c, _ := redis.NewClient(redis.Config{Addrs: []string{"127.0.0.1:1"}})
	defer c.Close()
	def := redis.NewRateLimitSource(c, redis.Options{})
	if got, want := def.Key("order-creation:acct-42"), "weir:rl:{weir}order-creation:acct-42"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	custom := redis.NewRateLimitSource(c, redis.Options{Prefix: "staging:", HashTag: "rl-2"})
	for _, k := range []string{"registered-domain:example.co.uk", "failed-validation:acct-1:*.example.com", "x:{y}"} {
		key := custom.Key(k)
		open := strings.IndexByte(key, '{')
		end := open + strings.IndexByte(key[open:], '}')
		if tag := key[open+1 : end]; tag != "rl-2" || !strings.HasPrefix(key, "staging:") {
			t.Errorf("Key(%q) = %q: hash tag %q, want rl-2 after the prefix", k, key, tag)
		}
	}
}

// TestInvalidOptions checks that bad options are reported by Validate and
// by every call of a source built with them.
func TestInvalidOptions(t *testing.T) {
	for _, o := range []redis.Options{{Prefix: "a{"}, {HashTag: "}"}} {
		if o.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", o)
		}
		s := redis.NewRateLimitSource(nil, o)
		ctx := t.Context()
		_, aerr := s.Apply(ctx, &ratelimit.Batch{})
		_, gerr := s.Get(ctx, nil)
		for _, err := range []error{s.Load(ctx), aerr, gerr, s.Reset(ctx, "k")} {
			if err == nil || !strings.Contains(err.Error(), "braces") || !strings.Contains(err.Error(), "nil client") {
				t.Errorf("call on a source with %+v and no client = %v, want both problems", o, err)
			}
		}
	}
}

// TestUnencodableBatch checks what the script could not compute exactly,
// or store, is refused before anything is sent.
func TestUnencodableBatch(t *testing.T) {
	c, _ := redis.NewClient(redis.Config{Addrs: []string{"127.0.0.1:1"}})
	defer c.Close()
	log := &cmdLog{}
	c.AddHook(log)
	s := redis.NewRateLimitSource(c, redis.Options{})
	rate := ratelimit.Limit{Count: 1, Period: time.Hour, Burst: 1}
	count := ratelimit.Limit{Max: 3}
	for name, ops := range map[string][]ratelimit.Op{
		"one key, two kinds": {
			{Kind: ratelimit.OpSpend, Key: "k", Limit: rate, Cost: 1},
			{Kind: ratelimit.OpAdd, Key: "k", Limit: count, Member: "m", MemberTime: 1},
		},
		"member time past 2^53": {{Kind: ratelimit.OpAdd, Key: "k", Limit: count, Member: "m", MemberTime: 1 << 53}},
		"max past 2^53":         {{Kind: ratelimit.OpCount, Key: "k", Limit: ratelimit.Limit{Max: 1 << 60}}},
	} {
		if _, err := s.Apply(t.Context(), &ratelimit.Batch{Ops: ops}); err == nil || !strings.HasPrefix(err.Error(), "redis: ratelimit: ") {
			t.Errorf("%s: Apply = %v, want a redis: ratelimit: error", name, err)
		}
	}
	if sent := log.take(); len(sent) != 0 {
		t.Errorf("refused batches sent %q", sent)
	}
}

// TestDeadline points a source at a server that accepts connections and
// never answers: each call fails as soon as its deadline passes, with an
// error that wraps context.DeadlineExceeded, whether the deadline is the
// caller's or Options.Timeout.
func TestDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { io.Copy(io.Discard, conn); conn.Close() })
		}
	})
	c, err := redis.NewClient(redis.Config{Addrs: []string{ln.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	batch := &ratelimit.Batch{Ops: []ratelimit.Op{{Kind: ratelimit.OpSpend, Key: "order-creation:a", Limit: ratelimit.Limit{Count: 1, Period: time.Hour, Burst: 1}, Cost: 1}}}

	const limit = 150 * time.Millisecond
	own := redis.NewRateLimitSource(c, redis.Options{Timeout: limit})
	callers := redis.NewRateLimitSource(c, redis.Options{Timeout: -1})
	for name, call := range map[string]func() error{
		"Options.Timeout": func() error { _, err := own.Apply(t.Context(), batch); return err },
		"caller's deadline": func() error {
			ctx, cancel := context.WithTimeout(t.Context(), limit)
			defer cancel()
			_, err := callers.Apply(ctx, batch)
			return err
		},
		"Get":   func() error { _, err := own.Get(t.Context(), []string{"k"}); return err },
		"Reset": func() error { return own.Reset(t.Context(), "k") },
		"Load":  func() error { return own.Load(t.Context()) },
	} {
		start := time.Now()
		err := call()
		took := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "redis: ratelimit: ") {
			t.Errorf("%s: err = %v, want a redis: ratelimit: error wrapping context.DeadlineExceeded", name, err)
		}
		if took > limit+500*time.Millisecond {
			t.Errorf("%s: took %v with a %v deadline", name, took, limit)
		}
	}
}
