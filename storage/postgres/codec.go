// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weir-pki/weir/storage/sqlrow"
)

// querier is what a pool and a transaction have in common.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SQLSTATE codes the store tells apart.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
	codeUndefinedTable      = "42P01"
)

// pgCode returns the SQLSTATE of a server error, "" for any other error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// isUniqueViolation reports whether err is a UNIQUE or PRIMARY KEY
// violation (including a unique partial index).
func isUniqueViolation(err error) bool { return pgCode(err) == codeUniqueViolation }

// drv begins the store's errors (sqlrow.Driver).
const drv sqlrow.Driver = "postgres"

// constraint tells which constraint a write's error violated.
func constraint(err error) sqlrow.Constraint {
	switch pgCode(err) {
	case codeUniqueViolation:
		return sqlrow.Unique
	case codeForeignKeyViolation:
		return sqlrow.ForeignKey
	}
	return sqlrow.NoConstraint
}

// writeErr wraps the error of a write of what: a uniqueness failure
// becomes acme.ErrConflict, a dangling reference acme.ErrNotFound, and a
// server that cannot write acme.ErrUnavailable (diskfault.go).
func writeErr(what string, err error) error {
	return drv.WriteErr(what, unavailable(err), constraint(err))
}

// missErr explains a compare-and-set UPDATE of what that changed no row,
// by asking in the same transaction whether the row exists (the query
// exists with arg): sqlrow.Driver.Missed.
func missErr(ctx context.Context, q querier, what, reason, exists string, arg any) error {
	var one int
	return drv.Missed(what, reason, q.QueryRow(ctx, exists, arg).Scan(&one))
}

// validKey reports whether s can be a stored key. PostgreSQL refuses text
// that is not UTF-8 or holds NUL, with an error; a lookup of such a key
// (say, an order ID from a URL) finds nothing instead.
func validKey[S ~string](s S) bool {
	return utf8.ValidString(string(s)) && !strings.ContainsRune(string(s), 0)
}

// collect runs a query and reads every row with scan.
func collect[T any](ctx context.Context, q querier, what, query string, args []any, scan func(sqlrow.Scanner) (T, error)) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, drv.Wrap(what, err)
	}
	defer rows.Close()
	return sqlrow.Collect(drv, what, rows, scan)
}
