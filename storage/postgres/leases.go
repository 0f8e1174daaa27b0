// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// Leases (acme/lease.go, migration 0003), each one statement at READ
// COMMITTED. A lease is live while now < until. The claim of many locks
// the rows it takes with FOR UPDATE SKIP LOCKED, so concurrent claims on
// any replicas take different rows without waiting for each other; a row
// that another claim changed and committed meanwhile is tested again on
// its new version, whose lease is then live, and skipped. The claim of
// one and TryLease wait for a concurrent writer of their row and test the
// row it left.

// keepLease, in an UPDATE of challenges whose new status is $1, keeps
// the lease of a challenge that stays processing and frees that of one
// leaving it: a settled challenge is nobody's job.
const keepLease = `lease_owner = CASE WHEN $1 = 'processing' THEN lease_owner END,
	lease_until = CASE WHEN $1 = 'processing' THEN lease_until END`

// leaseArgs checks the arguments of a claim and returns the lease's end
// (sqlrow.LeaseUntil); PostgreSQL takes an owner only as UTF-8 text.
func leaseArgs(what, owner string, now time.Time, lease time.Duration) (time.Time, error) {
	if owner != "" && !validKey(owner) {
		return time.Time{}, drv.Errorf("%s: the owner is not valid UTF-8 text", what)
	}
	return sqlrow.LeaseUntil(drv, what, owner, now, lease)
}

// ClaimChallenges implements acme.Store.
func (s *Store) ClaimChallenges(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*acme.Challenge, error) {
	const what = "claim challenges"
	if err := sqlrow.CheckLimit(drv, what, limit); err != nil {
		return nil, err
	}
	until, err := leaseArgs(what, owner, now, lease)
	if err != nil {
		return nil, err
	}
	cs, err := collect(ctx, s.pool, what, `UPDATE challenges AS c SET lease_owner = $1, lease_until = $2
		FROM (SELECT id FROM challenges
		      WHERE status = 'processing' AND (lease_until IS NULL OR lease_until <= $3)
		      ORDER BY updated_at, id LIMIT $4
		      FOR UPDATE SKIP LOCKED) AS free
		WHERE c.id = free.id
		RETURNING c.id, c.authz_id, c.type, c.token, c.status, c.validated, c.error, c.updated_at`,
		[]any{owner, sqlrow.ToNanos(until), sqlrow.ToNanos(now), limit}, sqlrow.ScanChallenge)
	if err != nil {
		return nil, err
	}
	sqlrow.SortClaimed(cs)
	return cs, nil
}

// StartChallenge implements acme.Store.
func (s *Store) StartChallenge(ctx context.Context, id acme.ChallengeID, owner string, now time.Time, lease time.Duration) error {
	what := fmt.Sprintf("start challenge %q", id)
	if !validKey(id) {
		return drv.NotFound(what)
	}
	until, err := leaseArgs(what, owner, now, lease)
	if err != nil {
		return err
	}
	return s.cas(ctx, what, "status is not pending",
		`UPDATE challenges SET status = $1, updated_at = $2, lease_owner = $3, lease_until = $4
		WHERE id = $5 AND status = $6`,
		[]any{string(acme.StatusProcessing), sqlrow.ToNanos(now), owner, sqlrow.ToNanos(until), id, string(acme.StatusPending)},
		`SELECT 1 FROM challenges WHERE id = $1`, id)
}

// ClaimChallenge implements acme.Store.
func (s *Store) ClaimChallenge(ctx context.Context, id acme.ChallengeID, owner string, now time.Time, lease time.Duration) error {
	what := fmt.Sprintf("claim challenge %q", id)
	if !validKey(id) {
		return drv.NotFound(what)
	}
	until, err := leaseArgs(what, owner, now, lease)
	if err != nil {
		return err
	}
	return s.cas(ctx, what, "not processing, or leased to another owner",
		`UPDATE challenges SET lease_owner = $1, lease_until = $2
		WHERE id = $3 AND status = $4 AND (lease_until IS NULL OR lease_until <= $5 OR lease_owner = $1)`,
		[]any{owner, sqlrow.ToNanos(until), id, string(acme.StatusProcessing), sqlrow.ToNanos(now)},
		`SELECT 1 FROM challenges WHERE id = $1`, id)
}

// StartFinalize implements acme.Store.
func (s *Store) StartFinalize(ctx context.Context, id acme.OrderID, owner string, csr []byte, now time.Time, lease time.Duration) error {
	what := fmt.Sprintf("start finalizing order %q", id)
	if !validKey(id) {
		return drv.NotFound(what)
	}
	if len(csr) == 0 {
		return drv.Errorf("%s: empty CSR", what)
	}
	until, err := leaseArgs(what, owner, now, lease)
	if err != nil {
		return err
	}
	return s.cas(ctx, what, "status is not pending",
		`UPDATE orders SET status = $1, csr = $2, lease_owner = $3, lease_until = $4
		WHERE id = $5 AND status = $6`,
		[]any{string(acme.StatusProcessing), csr, owner, sqlrow.ToNanos(until), id, string(acme.StatusPending)},
		orderExists, id)
}

// ClaimOrders implements acme.Store.
func (s *Store) ClaimOrders(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*acme.Order, error) {
	const what = "claim orders"
	if err := sqlrow.CheckLimit(drv, what, limit); err != nil {
		return nil, err
	}
	until, err := leaseArgs(what, owner, now, lease)
	if err != nil {
		return nil, err
	}
	rows, err := collect(ctx, s.pool, what, `UPDATE orders AS o SET lease_owner = $1, lease_until = $2
		FROM (SELECT seq FROM orders
		      WHERE status = 'processing' AND (lease_until IS NULL OR lease_until <= $3)
		      ORDER BY seq LIMIT $4
		      FOR UPDATE SKIP LOCKED) AS free
		WHERE o.seq = free.seq
		RETURNING o.seq, `+sqlrow.OrderCols,
		[]any{owner, sqlrow.ToNanos(until), sqlrow.ToNanos(now), limit},
		sqlrow.ScanSeqOrder)
	if err != nil {
		return nil, err
	}
	return sqlrow.BySeq(rows), nil // RETURNING gives the rows in no particular order
}

// ReleaseChallenge implements acme.Store.
func (s *Store) ReleaseChallenge(ctx context.Context, id acme.ChallengeID, owner string) error {
	if !validKey(id) || !validKey(owner) {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE challenges SET lease_owner = NULL, lease_until = NULL
		WHERE id = $1 AND lease_owner = $2`, id, owner)
	if err != nil {
		return writeErr(fmt.Sprintf("release challenge %q", id), err)
	}
	return nil
}

// TryLease implements acme.Store.
func (s *Store) TryLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	what := fmt.Sprintf("lease %q", name)
	if !validKey(name) {
		return false, drv.Errorf("%s: the name is not valid UTF-8 text", what)
	}
	until, err := leaseArgs(what, owner, now, ttl)
	if err != nil {
		return false, err
	}
	var one int
	err = s.pool.QueryRow(ctx, `INSERT INTO leases (name, owner, until) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until
		WHERE leases.until <= $4 OR leases.owner = EXCLUDED.owner
		RETURNING 1`, name, owner, sqlrow.ToNanos(until), sqlrow.ToNanos(now)).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil // another owner's lease is live
	case err != nil:
		return false, writeErr(what, err)
	}
	return true, nil
}

// ReleaseLease implements acme.Store.
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	if !validKey(name) || !validKey(owner) {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND owner = $2`, name, owner); err != nil {
		return writeErr(fmt.Sprintf("release lease %q", name), err)
	}
	return nil
}
