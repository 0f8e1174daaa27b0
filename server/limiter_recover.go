// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ratelimit"
	"github.com/weir-pki/weir/storage/sqlite"
)

// The store is the truth for the exact counts (duplicate-certificate,
// pending-authorizations): a limiter backend that can lose them gets
// them back from the store's records (acme.LimitRecords) before it admits
// another spend. See docs/rate-limits.md, "Failure modes".

// countLoader is the loader of the exact counts from the store, nil when
// the store keeps no records the limiter can read. It reads the limits
// of the adapter current when it runs.
func (s *Server) countLoader() ratelimit.CountLoader {
	recs, ok := s.store.(acme.LimitRecords)
	if !ok {
		return nil
	}
	return func(ctx context.Context, now time.Time) ([]ratelimit.CountBucket, error) {
		return s.limits.CountLoader(recs)(ctx, now)
	}
}

// guardCounts wraps a backend that reports a lost state (Redis with its
// epoch marker) in a ratelimit.Recovering, before the limiter is built
// on it.
// It also gives the in-process fallback of on-backend-error: degrade its
// seed: the same counts, read at the start of each degraded episode.
func (s *Server) guardCounts() {
	load := s.countLoader()
	if load == nil {
		return
	}
	if r, ok := s.backend.src.(ratelimit.Restorer); ok && s.backend.marker {
		s.backend.src = ratelimit.NewRecovering(r, load, s.log)
	}
	if fb := s.backend.fallback; fb != nil {
		s.backend.seed = func(ctx context.Context) error { return ratelimit.NewRecovering(fb, load, nil).Rebuild(ctx) }
	}
}

// restoreCountsAtStart fills a backend that starts without counts with
// the exact counts of the store's records, once the adapter exists (the
// loader reads its limits): the in-process memory backend, empty at every
// start, and a SQLite limiter file that this start created (new, or
// deleted since the last).
func (s *Server) restoreCountsAtStart(ctx context.Context) error {
	load := s.countLoader()
	if load == nil {
		return nil
	}
	var r ratelimit.Restorer
	switch src := s.backend.src.(type) {
	case *ratelimit.MemorySource:
		r = src
	case *sqlite.RateLimitSource:
		if !src.Fresh() {
			return nil
		}
		r = src
	default:
		return nil
	}
	return ratelimit.NewRecovering(r, load, nil).Rebuild(ctx)
}
