// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/acme/limits"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/redis"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/web"
)

// limiterBackend is an opened ratelimit.Source with its housekeeping.
type limiterBackend struct {
	src ratelimit.Source
	run func(ctx context.Context) error // sweeps idle buckets; may be nil
	// sweep, when set, sweeps the idle buckets of a backend that several
	// processes may share, under the store's lease sweepLease (leases.go).
	sweep      func(ctx context.Context) error
	sweepLease string
	close      func() error
	// redis is the client of the redis backend, which the nonces reuse;
	// nil for the other backends.
	redis *redis.Client
	// fallback holds the buckets of on-backend-error: degrade, in
	// process; it outlives reloads. nil for the memory backend, which
	// does not fail.
	fallback *ratelimit.MemorySource
	// seed fills fallback's exact counts from the store (guardCounts).
	seed func(ctx context.Context) error
	// marker is set when the backend keeps an epoch marker and reports a
	// lost state (ratelimit.ErrStateLost): Redis.
	marker bool
	// persistence reports whether the backend keeps its data across a
	// restart (Redis); nil when that is not a question.
	persistence func(ctx context.Context) (ok bool, detail string, err error)
}

// fileRateLimitDB is the limiter's own SQLite file, apart from ACME data.
const fileRateLimitDB = "ratelimit.db"

// openLimiterBackend opens the source named by rate-limiting.backend,
// with the in-process fallback of on-backend-error: degrade.
func openLimiterBackend(ctx context.Context, cfg Config, log *slog.Logger) (*limiterBackend, error) {
	b, err := openLimiterSource(ctx, cfg, log)
	if err == nil && cfg.RateLimiting.Backend != "memory" {
		b.fallback = ratelimit.NewMemorySource(nil)
	}
	return b, err
}

// openLimiterSource opens the source named by rate-limiting.backend.
func openLimiterSource(ctx context.Context, cfg Config, log *slog.Logger) (*limiterBackend, error) {
	switch cfg.RateLimiting.Backend {
	case "memory":
		m := ratelimit.NewMemorySource(nil)
		return &limiterBackend{src: m, run: func(ctx context.Context) error { return m.Run(ctx, time.Minute) }, close: func() error { return nil }}, nil
	case "sqlite":
		path := filepath.Join(cfg.DataDir, fileRateLimitDB)
		// On SQLite one weir has the data directory (weir.db's lock), so
		// it has the limiter file alone and keeps its buckets cached;
		// replicas on PostgreSQL may share a data directory, and the file.
		open := sqlite.OpenRateLimitShared
		if cfg.Storage.Driver == DriverSQLite {
			open = sqlite.OpenRateLimit
		}
		s, err := open(ctx, path, nil)
		if err != nil {
			return nil, err
		}
		sweep := func(ctx context.Context) error { _, err := s.Sweep(ctx); return err }
		return &limiterBackend{src: s, sweep: sweep, sweepLease: limiterSweepLease(path), close: s.Close}, nil
	case "redis":
		return openRedisBackend(ctx, cfg.RateLimiting.Redis, log.Warn)
	}
	return nil, fmt.Errorf("rate-limiting.backend: %q is not supported", cfg.RateLimiting.Backend)
}

// limiterSettings derives everything the limiter layers need from cfg.
type limiterSettings struct {
	limiter *ratelimit.Limiter
	adapter limits.Config
	edge    web.EdgeConfig
	global  ratelimit.Limit
}

func newLimiterSettings(cfg Config, b *limiterBackend) (*limiterSettings, error) {
	lcfg, err := cfg.RateLimiting.Policy()
	if err != nil {
		return nil, err
	}
	lim, err := ratelimit.New(lcfg, b.src, nil)
	if err != nil {
		return nil, err
	}
	var fallback *ratelimit.Limiter
	if b.fallback != nil {
		if fallback, err = ratelimit.New(lcfg, b.fallback, nil); err != nil {
			return nil, err
		}
	}
	white, _ := parsePrefixes("rate-limiting.whitelist", cfg.RateLimiting.Whitelist)
	trusted, _ := parsePrefixes("server.trusted-proxies", cfg.Server.TrustedProxies)
	return &limiterSettings{
		limiter: lim,
		adapter: limits.Config{OnBackendError: limits.BackendPolicy(cfg.RateLimiting.OnBackendError),
			BackendTimeout: cfg.RateLimiting.BackendTimeout, Whitelist: white, HelpURL: cfg.RateLimiting.HelpURL, Fallback: fallback, FallbackSeed: b.seed,
			DegradedReadyAfter: cfg.RateLimiting.DegradedReadyAfter},
		edge: web.EdgeConfig{Whitelist: white, TrustedProxies: trusted, HelpURL: cfg.RateLimiting.HelpURL,
			Policy: lcfg.Limits[ratelimit.Global]},
		global: lcfg.Limits[ratelimit.Global],
	}, nil
}

// edgeEntries sizes the in-process global table (1.5 MiB).
const edgeEntries = 65536

// applyLimiter installs settings: a new Limiter over the same Source (what
// was spent stays spent), and the global layer updated in place.
func (s *Server) applyLimiter(ls *limiterSettings, globalEnabled bool) error {
	if s.edge == nil {
		e, err := ratelimit.NewEdge(ls.global, edgeEntries)
		if err != nil {
			return err
		}
		s.edge = e
	} else if err := s.edge.SetLimit(ls.global); err != nil {
		return err
	}
	if globalEnabled {
		ls.edge.Edge = s.edge
	}
	if s.limits == nil {
		s.limits = limits.New(ls.adapter, ls.limiter, s.log)
	} else {
		s.limits.Update(ls.adapter, ls.limiter)
	}
	if s.web != nil {
		s.web.SetEdge(ls.edge)
	}
	return nil
}
