// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// preparedRows is how many keys (a load) or rows (an insert) the
// statements prepared at open cover: a request's batch has a few keys.
// A larger statement is prepared where it runs.
const preparedRows = 8

// rlStmts are the limiter's statements, prepared once at open (on the
// writer connection, and on each reader connection as it is first used)
// so that a batch runs them without parsing them again: preparing the
// load's statement was most of its cost.
type rlStmts struct {
	load   [preparedRows + 1]*sql.Stmt // by key count, on the writer
	insert [preparedRows + 1]*sql.Stmt // by row count, on the writer
	single map[string]*sql.Stmt        // the single-row writes, by text
	get    *sql.Stmt                   // one bucket's rows, on the readers
}

// loadSQL reads the rows of n buckets.
func loadSQL(n int) string {
	return "WITH k(key) AS (VALUES (?)" + strings.Repeat(",(?)", n-1) +
		") SELECT key, member, ts, expires FROM k CROSS JOIN buckets USING (key)"
}

// insertSQL inserts n rows of four values.
func insertSQL(n int) string {
	const row = "(?,?,?,?)"
	return insertRowsSQL + row + strings.Repeat(","+row, n-1)
}

// getBucketSQL reads one bucket's rows.
const getBucketSQL = `SELECT member, ts, expires FROM buckets WHERE key = ?`

// prepareRateLimit prepares the statements on w (the writer) and r (the
// readers).
func prepareRateLimit(ctx context.Context, w, r *sql.DB) (*rlStmts, error) {
	p := &rlStmts{single: map[string]*sql.Stmt{}}
	var err error
	prep := func(db *sql.DB, q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		st, e := db.PrepareContext(ctx, q)
		if e != nil {
			err = fmt.Errorf("sqlite: ratelimit: preparing %q: %w", q, e)
		}
		return st
	}
	for n := 1; n <= preparedRows; n++ {
		p.load[n] = prep(w, loadSQL(n))
		p.insert[n] = prep(w, insertSQL(n))
	}
	for _, q := range []string{updateTATSQL, deleteTATSQL, updateMemberSQL, deleteMemberSQL, pruneMembersSQL} {
		p.single[q] = prep(w, q)
	}
	p.get = prep(r, getBucketSQL)
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// close closes every statement.
func (p *rlStmts) close() error {
	if p == nil {
		return nil
	}
	var errs []error
	closeSt := func(st *sql.Stmt) {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	for n := range p.load {
		closeSt(p.load[n])
		closeSt(p.insert[n])
	}
	for _, st := range p.single {
		closeSt(st)
	}
	closeSt(p.get)
	return errors.Join(errs...)
}

// in returns st bound to tx, or, when st is nil (a statement not
// prepared at open), query prepared in tx.
func in(ctx context.Context, tx *sql.Tx, st *sql.Stmt, query string) (*sql.Stmt, error) {
	if st != nil {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// loadStmt is the load of n keys in tx.
func (p *rlStmts) loadStmt(ctx context.Context, tx *sql.Tx, n int) (*sql.Stmt, error) {
	var st *sql.Stmt
	if p != nil && n <= preparedRows {
		st = p.load[n]
	}
	return in(ctx, tx, st, loadSQL(n))
}

// insertStmt is the insert of n rows in tx.
func (p *rlStmts) insertStmt(ctx context.Context, tx *sql.Tx, n int) (*sql.Stmt, error) {
	var st *sql.Stmt
	if p != nil && n <= preparedRows {
		st = p.insert[n]
	}
	return in(ctx, tx, st, insertSQL(n))
}

// singleStmt is one of the single-row writes in tx.
func (p *rlStmts) singleStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	var st *sql.Stmt
	if p != nil {
		st = p.single[query]
	}
	return in(ctx, tx, st, query)
}

// getStmt is the read of one bucket in tx, on a reader.
func (p *rlStmts) getStmt(ctx context.Context, tx *sql.Tx) (*sql.Stmt, error) {
	var st *sql.Stmt
	if p != nil {
		st = p.get
	}
	return in(ctx, tx, st, getBucketSQL)
}
