// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Pipelined transactions.
//
// A transaction of inTx costs a round trip for its BEGIN, one per
// statement and one for its COMMIT. Where the statements do not depend on
// each other's results, inPipelinedTx sends the BEGIN and every statement
// in one batch (one round trip), lets the caller judge the results (a
// compare-and-set that matched no row fails the transaction), and then
// sends COMMIT or ROLLBACK: two round trips however many statements. The
// transaction is the same as inTx's: an explicit one, at READ COMMITTED,
// which a failed statement aborts.

// stmtError is the failure of the batch's statement Index (0 is the first
// after BEGIN).
type stmtError struct {
	Index int
	Err   error
}

// inPipelinedTx runs the statements queue adds to a batch in one
// transaction. judge gets their command tags, or the first statement's
// failure (failed non-nil; tags then holds those before it), and may
// query q: the transaction's connection, inside it when no statement
// failed, after its rollback when one did. Its error rolls the
// transaction back and is returned; nil commits. judge must not use
// another connection of the pool: callers waiting on this transaction's
// locks may hold them all.
func (s *Store) inPipelinedTx(ctx context.Context, what string, queue func(b *pgx.Batch),
	judge func(q querier, tags []pgconn.CommandTag, failed *stmtError) error) error {
	return s.pipelined(ctx, what, false, queue, judge)
}

// inOneTrip is inPipelinedTx for statements with nothing to judge when
// they succeed (inserts, whose every failure is an error): the COMMIT goes
// in the batch too, one round trip in all. A failed statement aborts the
// transaction and PostgreSQL skips the rest of the batch, the COMMIT
// included (one Sync ends the batch); the transaction is then rolled back
// and judge gets the failure as from inPipelinedTx. On success judge is
// not called: the transaction has committed.
func (s *Store) inOneTrip(ctx context.Context, what string, queue func(b *pgx.Batch),
	judge func(q querier, tags []pgconn.CommandTag, failed *stmtError) error) error {
	return s.pipelined(ctx, what, true, queue, judge)
}

// pipelined is inPipelinedTx, with the COMMIT in the batch when commit is
// set (inOneTrip).
func (s *Store) pipelined(ctx context.Context, what string, commit bool, queue func(b *pgx.Batch),
	judge func(q querier, tags []pgconn.CommandTag, failed *stmtError) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %s: begin: %w", what, unavailable(err))
	}
	// A connection released inside a transaction (a failed COMMIT or
	// ROLLBACK) is closed by the pool, not reused.
	defer conn.Release()
	var b pgx.Batch
	b.Queue("BEGIN")
	queue(&b)
	stmts := b.Len() - 1
	if commit {
		b.Queue("COMMIT")
	}
	br := conn.SendBatch(ctx, &b)
	tags := make([]pgconn.CommandTag, 0, stmts)
	var failed *stmtError
	commitFailed := false
	for i := range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			if i == 0 {
				br.Close()
				return fmt.Errorf("postgres: %s: begin: %w", what, unavailable(err))
			}
			failed = &stmtError{Index: i - 1, Err: err}
			commitFailed = i > stmts
			break
		}
		if i > 0 && i <= stmts {
			tags = append(tags, tag)
		}
	}
	if err := br.Close(); err != nil && failed == nil {
		failed = &stmtError{Index: len(tags), Err: err}
	}
	rollback := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		_, _ = conn.Exec(rctx, "ROLLBACK")
	}
	if commitFailed {
		rollback()
		return fmt.Errorf("postgres: %s: commit: %w", what, unavailable(failed.Err))
	}
	if failed != nil {
		// The transaction is aborted: end it, so that judge's queries run
		// on the connection (outside it, as they would have run inside it
		// at READ COMMITTED) rather than on a second one of the pool,
		// which the other callers waiting on this transaction's locks may
		// hold.
		rollback()
		if err := judge(conn, tags, failed); err != nil {
			return err
		}
		// judge must fail a failed transaction; nothing was written.
		return writeErr(what, failed.Err)
	}
	if commit {
		return nil
	}
	if err := judge(conn, tags, nil); err != nil {
		rollback()
		return err
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("postgres: %s: commit: %w", what, unavailable(err))
	}
	return nil
}
