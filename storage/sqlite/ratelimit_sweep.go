// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weir-pki/weir/ratelimit"
)

// SweepChunk is about the most rows one transaction of
// [RateLimitSource.Sweep] examines (for rate buckets, in key order, plus
// the other members of the last count bucket reached) or deletes (count
// members), so that it holds the write lock for a few milliseconds at most.
const SweepChunk = 500

// Statements of Sweep. GCRA rows are not indexed by ts (see the
// migration), so they are swept by key range: ?1 is the last key of the
// previous chunk, ?2 now, ?3 the last key of this one. Members are swept by
// their expiry index, ?2 at a time.
const (
	sweepRateLimitSQL = `SELECT key FROM buckets WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?`
	sweepRatesSQL     = `DELETE FROM buckets WHERE key > ?1 AND key <= ?3 AND expires IS NULL AND ts <= ?2`
	sweepRatesLastSQL = `DELETE FROM buckets WHERE key > ?1 AND expires IS NULL AND ts <= ?2`
	sweepMembersSQL   = `DELETE FROM buckets WHERE (key, member) IN
		(SELECT key, member FROM buckets WHERE expires <= ?1 ORDER BY expires LIMIT ?2)`
)

// Get implements [ratelimit.Source]: from the bucket cache when it holds
// every bucket asked for, and otherwise from the reader pool in one read
// transaction; it never waits for the writer. Idle rate buckets and members
// that no longer count (by the window they were written with) are left
// out, as if swept.
func (s *RateLimitSource) Get(ctx context.Context, keys []string) (*ratelimit.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: ratelimit: get: %w", err)
	}
	skeys := make([]string, len(keys))
	for i, k := range keys {
		skeys[i] = storageKey(k)
	}
	if rows, ok := s.cache.lookup(skeys); ok {
		snap := &ratelimit.Snapshot{Now: s.clock(), Buckets: make(map[string]ratelimit.Bucket, len(keys))}
		for i, r := range rows {
			if b, ok := r.live(snap.Now); ok {
				snap.Buckets[keys[i]] = b
			}
		}
		return snap, nil
	}
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: ratelimit: get: begin: %w", err)
	}
	defer tx.Rollback()
	snap := &ratelimit.Snapshot{Now: s.clock(), Buckets: make(map[string]ratelimit.Bucket, len(keys))}
	for i, k := range keys {
		b, ok, err := getBucket(ctx, tx, s.stmts, skeys[i], snap.Now)
		if err != nil {
			return nil, fmt.Errorf("sqlite: ratelimit: get %q: %w", k, err)
		}
		if ok {
			snap.Buckets[k] = b
		}
	}
	return snap, nil
}

// live is the state of the bucket stored as r that is live at now (the
// rest is idle, as if swept); ok is false when there is none. Its members
// are a copy.
func (r *storedRows) live(now int64) (b ratelimit.Bucket, ok bool) {
	if r.hasTAT && r.tat > now {
		b.TAT, ok = r.tat, true
	}
	for m, e := range r.expires {
		if e > now {
			if b.Members == nil {
				b.Members = make(map[string]int64)
			}
			b.Members[m], ok = r.members[m], true
		}
	}
	return b, ok
}

// getBucket reads the live state of the bucket stored under skey at now;
// ok is false when there is none.
func getBucket(ctx context.Context, tx *sql.Tx, p *rlStmts, skey string, now int64) (b ratelimit.Bucket, ok bool, err error) {
	st, err := p.getStmt(ctx, tx)
	if err != nil {
		return b, false, err
	}
	rows, err := st.QueryContext(ctx, skey)
	if err != nil {
		return b, false, err
	}
	defer rows.Close()
	var r storedRows
	for rows.Next() {
		var (
			m       string
			ts      int64
			expires sql.NullInt64
		)
		if err := rows.Scan(&m, &ts, &expires); err != nil {
			return b, false, err
		}
		r.add(m, ts, expires.Int64)
	}
	if err := rows.Err(); err != nil {
		return b, false, err
	}
	b, ok = r.live(now)
	return b, ok, nil
}

// Reset implements [ratelimit.Source]: it deletes every row of the bucket
// in one write transaction.
func (s *RateLimitSource) Reset(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: ratelimit: reset: %w", err)
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	defer s.cache.drop(storageKey(key)) // committed or not, read it again
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: ratelimit: reset %q: begin: %w", key, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM buckets WHERE key = ?`, storageKey(key)); err != nil {
		return fmt.Errorf("sqlite: ratelimit: reset %q: %w", key, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: ratelimit: reset %q: commit: %w", key, err)
	}
	return nil
}

// Sweep deletes the state that is idle at the source's now: rate buckets
// whose TAT is not after now, and count members that no longer count by the
// window they were written with. Each transaction, which reads the clock
// anew, examines about [SweepChunk] rows in key order or deletes at most
// SweepChunk members, so Apply calls waiting for the writer run between
// chunks. It returns the number of rows deleted (rate buckets plus
// count members); on an error, those deleted so far.
func (s *RateLimitSource) Sweep(ctx context.Context) (int, error) {
	return s.sweep(ctx, SweepChunk)
}

// sweep is Sweep with a chunk size.
func (s *RateLimitSource) sweep(ctx context.Context, chunk int) (int, error) {
	total := 0
	for after, more := "", true; more; {
		var n int
		err := s.sweepTx(ctx, func(tx *sql.Tx, now int64) (err error) {
			n, after, more, err = sweepRates(ctx, tx, now, after, chunk)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("sqlite: ratelimit: sweep: %w", err)
		}
		total += n
	}
	for more := true; more; {
		var n int
		err := s.sweepTx(ctx, func(tx *sql.Tx, now int64) error {
			r, err := tx.ExecContext(ctx, sweepMembersSQL, now, chunk)
			if err != nil {
				return err
			}
			d, err := r.RowsAffected()
			n, more = int(d), d == int64(chunk)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("sqlite: ratelimit: sweep: %w", err)
		}
		total += n
	}
	return total, nil
}

// sweepRates deletes the idle rate buckets among the chunk keys that follow
// after, returning how many it deleted, the last key it examined and
// whether any follow.
func sweepRates(ctx context.Context, tx *sql.Tx, now int64, after string, chunk int) (n int, last string, more bool, err error) {
	var r sql.Result
	switch err = tx.QueryRowContext(ctx, sweepRateLimitSQL, after, chunk-1).Scan(&last); {
	case err == nil:
		more = true
		r, err = tx.ExecContext(ctx, sweepRatesSQL, after, now, last)
	case errors.Is(err, sql.ErrNoRows):
		r, err = tx.ExecContext(ctx, sweepRatesLastSQL, after, now)
	}
	if err != nil {
		return 0, "", false, err
	}
	d, err := r.RowsAffected()
	return int(d), last, more, err
}

// sweepTx runs f in a write transaction of its own, with the clock read
// once the write lock is held, and commits the transaction. The rows f
// reports deleted are deleted only if sweepTx returns nil. The bucket
// cache is emptied after it: which cached rows f deleted is not worked out.
func (s *RateLimitSource) sweepTx(ctx context.Context, f func(tx *sql.Tx, now int64) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	defer s.cache.clear()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := f(tx, s.clock()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Run sweeps every interval until ctx is done, then returns nil. Start it
// in its own goroutine and stop it before Close. A failed sweep (say, the
// write lock was busy past the timeout) is retried at the next tick: the
// rows it leaves are harmless, read as idle by Apply and Get. Without Run
// the source still expires what batches touch, but keeps idle rows that
// are never touched again.
func (s *RateLimitSource) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		return fmt.Errorf("sqlite: ratelimit: sweep interval must be positive, got %v", every)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			s.Sweep(ctx) //nolint:errcheck // retried at the next tick
		}
	}
}
