// SPDX-License-Identifier: Apache-2.0

package redis

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Config says how to reach Redis. It is what package server reads from
// weir's configuration file.
type Config struct {
	// Addrs are host:port addresses: one for a single node, the Sentinel
	// nodes when MasterName is set, or two or more seed nodes of a Redis
	// Cluster. go-redis treats a single address without MasterName as a
	// single node, so list at least two seeds for a Cluster.
	Addrs []string
	// MasterName selects Sentinel: the name of the monitored master.
	MasterName string
	// Password authenticates to Redis (not to Sentinel). The caller reads
	// it from a file; it is never logged.
	Password string
	// DB is the database number; it must be 0 for a Cluster.
	DB int
	// TLS connects with TLS 1.2 or later, verifying the server's
	// certificate against the system roots.
	TLS bool
	// DialTimeout bounds connecting; 0 means go-redis's default (5 s).
	DialTimeout time.Duration
	// ReadTimeout bounds each read; 0 means go-redis's default (3 s). A
	// context deadline, such as Options.Timeout, is shorter in practice.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write; 0 means ReadTimeout.
	WriteTimeout time.Duration
}

// cluster reports whether c describes a Redis Cluster.
func (c Config) cluster() bool { return c.MasterName == "" && len(c.Addrs) > 1 }

// String describes c for logs, without the password.
func (c Config) String() string {
	mode := "single node"
	switch {
	case c.MasterName != "":
		mode = "sentinel master " + strconv.Quote(c.MasterName)
	case c.cluster():
		mode = "cluster"
	}
	return fmt.Sprintf("redis %s at %v db %d tls %v", mode, c.Addrs, c.DB, c.TLS)
}

// Validate reports every problem with c at once, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("redis: config: "+format, args...))
	}
	if len(c.Addrs) == 0 {
		bad("no addresses")
	}
	seen := make(map[string]bool, len(c.Addrs))
	for _, a := range c.Addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			bad("address %q: %v", a, err)
			continue
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			bad("address %q: port must be a number from 1 to 65535", a)
		}
		if host == "" {
			bad("address %q: empty host", a)
		}
		if seen[a] {
			bad("address %q is listed twice", a)
		}
		seen[a] = true
	}
	if c.DB < 0 {
		bad("db must not be negative, got %d", c.DB)
	}
	if c.cluster() && c.DB != 0 {
		bad("db must be 0 for a cluster (%d addresses and no master name), got %d", len(c.Addrs), c.DB)
	}
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"dial", c.DialTimeout}, {"read", c.ReadTimeout}, {"write", c.WriteTimeout}} {
		if t.d < 0 {
			bad("%s timeout must not be negative, got %v", t.name, t.d)
		}
	}
	return errors.Join(errs...)
}

// NewClient validates cfg and returns a client for it: a single node, a
// Sentinel-managed master or a Cluster, by go-redis's NewUniversalClient.
// Retries are off (a timed-out script may have run, and a retry would
// spend twice) and contexts bound every network wait. It does not connect:
// call Ping, or [RateLimitSource.Load], to check the server at startup.
func NewClient(cfg Config) (goredis.UniversalClient, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := &goredis.UniversalOptions{
		Addrs:                 cfg.Addrs,
		MasterName:            cfg.MasterName,
		Password:              cfg.Password,
		DB:                    cfg.DB,
		DialTimeout:           cfg.DialTimeout,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1,
	}
	if cfg.TLS {
		opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return goredis.NewUniversalClient(opts), nil
}

// Client is a client of the Redis of a Config (a single node, a
// Sentinel-managed master or a Cluster) that a RateLimitSource and a
// NonceStore can share. It keeps go-redis inside this package: a caller
// opens, shares and closes it without naming go-redis's types.
type Client struct {
	rdb goredis.UniversalClient
	cfg Config
}

// Open validates cfg and returns a client for it, as NewClient builds
// one. It does not connect: [RateLimitSource.Load] or a Ping checks the
// server at startup.
func Open(cfg Config) (*Client, error) {
	rdb, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Client{rdb: rdb, cfg: cfg}, nil
}

// String describes the client's Redis for logs, without the password.
func (c *Client) String() string { return c.cfg.String() }

// Close closes the client's connections; the sources and stores made on
// it fail after that.
func (c *Client) Close() error { return c.rdb.Close() }

// RateLimitSource returns a source storing buckets through the client
// (NewRateLimitSource).
func (c *Client) RateLimitSource(opts Options) *RateLimitSource {
	return NewRateLimitSource(c.rdb, opts)
}

// NonceStore returns a nonce store on the client (NewNonceStore).
func (c *Client) NonceStore(opts NonceOptions) *NonceStore {
	return NewNonceStore(c.rdb, opts)
}
