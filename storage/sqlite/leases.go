// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// Leases (acme/lease.go, migration 0006). Every write runs on the single
// writer connection, in the writer's transaction, so an UPDATE that tests
// a lease and takes it is atomic against every other write of the store,
// and SQLite's file lock (BEGIN IMMEDIATE) extends that to other processes
// on the same file. A lease is live while now < until.

// keepLeaseSQL, in an UPDATE of challenges whose new status is ?1,
// keeps the lease of a challenge that stays processing and frees that of
// one leaving it: a settled challenge is nobody's job.
const keepLeaseSQL = `lease_owner = CASE WHEN ?1 = 'processing' THEN lease_owner END,
	lease_until = CASE WHEN ?1 = 'processing' THEN lease_until END`

// startChallengeSQL moves a challenge from ?5 (pending) to ?1
// (processing) at ?2, leased to ?3 until ?4.
const startChallengeSQL = `UPDATE challenges SET status = ?1, updated_at = ?2, lease_owner = ?3, lease_until = ?4
	WHERE id = ?6 AND status = ?5`

// claimChallengeSQL leases one processing challenge to ?1 until ?2 unless
// another owner's lease is live at ?4.
const claimChallengeSQL = `UPDATE challenges SET lease_owner = ?1, lease_until = ?2
	WHERE id = ?3 AND status = ?5 AND (lease_until IS NULL OR lease_until <= ?4 OR lease_owner = ?1)`

// claimChallengesSQL leases to ?1 until ?2 up to ?4 processing challenges
// whose lease is free or ended at ?3, least recently updated first (by the
// partial index challenges_processing), and returns them.
//
// The status is a literal, as in every query served by a partial index: a
// parameter there would make SQLite prepare the statement again whenever
// it is bound.
const claimChallengesSQL = `UPDATE challenges SET lease_owner = ?1, lease_until = ?2
	WHERE id IN (SELECT id FROM challenges
	             WHERE status = 'processing' AND (lease_until IS NULL OR lease_until <= ?3)
	             ORDER BY updated_at, id LIMIT ?4)
	RETURNING ` + sqlrow.ChallengeCols

// releaseChallengeSQL frees the lease of a challenge if ?2 holds it.
const releaseChallengeSQL = `UPDATE challenges SET lease_owner = NULL, lease_until = NULL
	WHERE id = ?1 AND lease_owner = ?2`

// startFinalizeSQL moves an order from ?6 (pending) to ?1 (processing)
// with the CSR ?2, leased to ?3 until ?4.
const startFinalizeSQL = `UPDATE orders SET status = ?1, csr = ?2, lease_owner = ?3, lease_until = ?4
	WHERE id = ?5 AND status = ?6`

// claimOrdersSQL leases to ?1 until ?2 up to ?4 processing orders whose
// lease is free or ended at ?3, oldest first (by the partial index
// orders_processing), and returns them after their seq.
const claimOrdersSQL = `UPDATE orders SET lease_owner = ?1, lease_until = ?2
	WHERE seq IN (SELECT seq FROM orders
	              WHERE status = 'processing' AND (lease_until IS NULL OR lease_until <= ?3)
	              ORDER BY seq LIMIT ?4)
	RETURNING seq, ` + sqlrow.OrderCols

// tryLeaseSQL takes or renews the named lease ?1 for ?2 until ?3 if it is
// absent, ended at ?4 or already ?2's; it changes no row otherwise.
const tryLeaseSQL = `INSERT INTO leases (name, owner, until) VALUES (?1, ?2, ?3)
	ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until
	WHERE leases.until <= ?4 OR leases.owner = excluded.owner`

// releaseLeaseSQL ends the named lease ?1 if ?2 holds it.
const releaseLeaseSQL = `DELETE FROM leases WHERE name = ?1 AND owner = ?2`

// ClaimChallenges implements acme.Store.
func (s *Store) ClaimChallenges(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*acme.Challenge, error) {
	const what = "claim challenges"
	if err := sqlrow.CheckLimit(drv, what, limit); err != nil {
		return nil, err
	}
	until, err := sqlrow.LeaseUntil(drv, what, owner, now, lease)
	if err != nil {
		return nil, err
	}
	var cs []*acme.Challenge
	err = s.write(ctx, func(w *writeTx) error {
		rows, err := w.stmt(wClaimChallenges).QueryContext(writeCtx,
			owner, sqlrow.ToNanos(until), sqlrow.ToNanos(now), limit)
		if err != nil {
			return drv.Wrap(what, err)
		}
		defer rows.Close()
		// Assigned, not appended: the operation may run again in a new
		// transaction.
		cs, err = sqlrow.Collect(drv, what, rows, sqlrow.ScanChallenge)
		return err
	})
	if err != nil {
		return nil, err
	}
	sqlrow.SortClaimed(cs)
	return cs, nil
}

// StartChallenge implements acme.Store.
func (s *Store) StartChallenge(ctx context.Context, id acme.ChallengeID, owner string, now time.Time, lease time.Duration) error {
	what := fmt.Sprintf("start challenge %q", id)
	until, err := sqlrow.LeaseUntil(drv, what, owner, now, lease)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wStartChallenge, string(acme.StatusProcessing), sqlrow.ToNanos(now), owner, sqlrow.ToNanos(until),
			string(acme.StatusPending), id)
		if err != nil {
			return drv.Wrap(what, err)
		}
		if err := checkAffected(w, res, what, "status is not pending", wChallengeExists, id); err != nil {
			return err
		}
		w.edit(editStartChallenge(id, sqlrow.ToNanos(now)))
		return nil
	})
}

// ClaimChallenge implements acme.Store.
func (s *Store) ClaimChallenge(ctx context.Context, id acme.ChallengeID, owner string, now time.Time, lease time.Duration) error {
	what := fmt.Sprintf("claim challenge %q", id)
	until, err := sqlrow.LeaseUntil(drv, what, owner, now, lease)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wClaimChallenge, owner, sqlrow.ToNanos(until), id, sqlrow.ToNanos(now), string(acme.StatusProcessing))
		if err != nil {
			return drv.Wrap(what, err)
		}
		return checkAffected(w, res, what, "not processing, or leased to another owner", wChallengeExists, id)
	})
}

// StartFinalize implements acme.Store.
func (s *Store) StartFinalize(ctx context.Context, id acme.OrderID, owner string, csr []byte, now time.Time, lease time.Duration) error {
	what := fmt.Sprintf("start finalizing order %q", id)
	if len(csr) == 0 {
		return drv.Errorf("%s: empty CSR", what)
	}
	until, err := sqlrow.LeaseUntil(drv, what, owner, now, lease)
	if err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wStartFinalize, string(acme.StatusProcessing), csr, owner, sqlrow.ToNanos(until), id,
			string(acme.StatusPending))
		if err != nil {
			return drv.Wrap(what, err)
		}
		if err := checkAffected(w, res, what, "status is not pending", wOrderExists, id); err != nil {
			return err
		}
		w.edit(editStartFinalize(id, bytes.Clone(csr)))
		return nil
	})
}

// ClaimOrders implements acme.Store.
func (s *Store) ClaimOrders(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) ([]*acme.Order, error) {
	const what = "claim orders"
	if err := sqlrow.CheckLimit(drv, what, limit); err != nil {
		return nil, err
	}
	until, err := sqlrow.LeaseUntil(drv, what, owner, now, lease)
	if err != nil {
		return nil, err
	}
	var rows []sqlrow.Seq[*acme.Order]
	err = s.write(ctx, func(w *writeTx) error {
		rs, err := w.stmt(wClaimOrders).QueryContext(writeCtx,
			owner, sqlrow.ToNanos(until), sqlrow.ToNanos(now), limit)
		if err != nil {
			return drv.Wrap(what, err)
		}
		defer rs.Close()
		rows, err = sqlrow.Collect(drv, what, rs, sqlrow.ScanSeqOrder) // assigned: the operation may run again
		return err
	})
	if err != nil {
		return nil, err
	}
	return sqlrow.BySeq(rows), nil // RETURNING gives the rows in no particular order
}

// ReleaseChallenge implements acme.Store.
func (s *Store) ReleaseChallenge(ctx context.Context, id acme.ChallengeID, owner string) error {
	return s.write(ctx, func(w *writeTx) error {
		if _, err := w.exec(wReleaseChallenge, id, owner); err != nil {
			return drv.Errorf("release challenge %q: %w", id, err)
		}
		return nil
	})
}

// TryLease implements acme.Store.
func (s *Store) TryLease(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error) {
	what := fmt.Sprintf("lease %q", name)
	until, err := sqlrow.LeaseUntil(drv, what, owner, now, ttl)
	if err != nil {
		return false, err
	}
	var held bool
	err = s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wTryLease, name, owner, sqlrow.ToNanos(until), sqlrow.ToNanos(now))
		if err != nil {
			return drv.Wrap(what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return drv.Errorf("%s: rows affected: %w", what, err)
		}
		held = n > 0
		return nil
	})
	if err != nil {
		return false, err
	}
	return held, nil
}

// ReleaseLease implements acme.Store.
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	return s.write(ctx, func(w *writeTx) error {
		if _, err := w.exec(wReleaseLease, name, owner); err != nil {
			return drv.Errorf("release lease %q: %w", name, err)
		}
		return nil
	})
}
