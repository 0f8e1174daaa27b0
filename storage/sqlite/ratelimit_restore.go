package sqlite

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/ratelimit"
)

var _ ratelimit.Restorer = (*RateLimitSource)(nil)

// Fresh reports whether the open that made s created the file's schema: a
// limiter file that is new (a first start, or one deleted or lost with
// its disk) holds no counts, and weir restores the exact counts into it
// from the store at start.
func (s *RateLimitSource) Fresh() bool { return s.fresh }

// Restore implements ratelimit.Restorer: it adds the members of buckets
// that still count, in one write transaction, keeping any member already
// stored. The file has no marker: Apply never reports a lost state, and
// the server restores a Fresh file once, at start.
func (s *RateLimitSource) Restore(ctx context.Context, buckets []ratelimit.CountBucket) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: ratelimit: restore: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	stmt, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO buckets (key, member, ts, expires) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("sqlite: ratelimit: restore: %w", err)
	}
	defer stmt.Close()
	now := s.clock()
	for _, cb := range buckets {
		for member, ts := range cb.Members {
			if ts <= now-cb.Window {
				continue // no longer counts
			}
			if _, err := stmt.ExecContext(ctx, storageKey(cb.Key), member, ts, memberExpiry(ts, cb.Window)); err != nil {
				return fmt.Errorf("sqlite: ratelimit: restore %s: %w", cb.Key, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: ratelimit: restore: %w", err)
	}
	return nil
}
