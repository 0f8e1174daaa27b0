// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"

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
	s.txMu.Lock()
	defer s.txMu.Unlock()
	defer s.cache.clear() // the rows it adds are not worked out
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
	for _, r := range restoreRows(buckets, s.clock()) {
		if _, err := stmt.ExecContext(ctx, r.key, r.member, r.ts, r.expires); err != nil {
			return fmt.Errorf("sqlite: ratelimit: restore %s: %w", r.key, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: ratelimit: restore: %w", err)
	}
	return nil
}

// restoreRow is one member as the buckets table stores it.
type restoreRow struct {
	key, member string
	ts, expires int64
}

// restoreRows is the members of buckets that still count at now, in the
// order of the table's primary key. Inserted in that order, each row goes
// next to the one before it: the B-tree's pages fill one after the other
// and stay in the page cache, where rows in a hash's order (keys are
// hashes of names) each land on a page of their own, read and written
// back again and again once the table outgrows the cache
// (BenchmarkRateLimitRestore; figures in docs/performance.md).
func restoreRows(buckets []ratelimit.CountBucket, now int64) []restoreRow {
	n := 0
	for _, cb := range buckets {
		n += len(cb.Members)
	}
	rows := make([]restoreRow, 0, n)
	for _, cb := range buckets {
		key := storageKey(cb.Key)
		for member, ts := range cb.Members {
			if ts <= now-cb.Window {
				continue // no longer counts
			}
			rows = append(rows, restoreRow{key: key, member: member, ts: ts, expires: memberExpiry(ts, cb.Window)})
		}
	}
	slices.SortFunc(rows, func(a, b restoreRow) int {
		return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.member, b.member))
	})
	return rows
}
