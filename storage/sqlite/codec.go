// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"database/sql"
	"errors"

	"github.com/weir-pki/weir/storage/sqlrow"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// drv begins the store's errors (sqlrow.Driver).
const drv sqlrow.Driver = "sqlite"

// checkAffected turns the result of a compare-and-set UPDATE into nil when
// it changed a row, and otherwise into an error wrapping acme.ErrNotFound if
// the row does not exist (per the statement exists and arg, run in the same
// transaction) or acme.ErrConflict, explained by reason, if it does. what
// names the operation in the error message.
func checkAffected(w *writeTx, res sql.Result, what, reason string, exists writeStmt, arg any) error {
	n, err := res.RowsAffected()
	if err != nil {
		return drv.Errorf("%s: rows affected: %w", what, err)
	}
	if n > 0 {
		return nil
	}
	var one int
	return drv.Missed(what, reason, w.queryRow(exists, arg).Scan(&one))
}

// isUniqueViolation reports whether err is a UNIQUE or PRIMARY KEY
// constraint failure.
func isUniqueViolation(err error) bool {
	var se *msqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code()
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// isForeignKeyViolation reports whether err is a FOREIGN KEY constraint
// failure.
func isForeignKeyViolation(err error) bool {
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// constraint tells which constraint a write's error violated.
func constraint(err error) sqlrow.Constraint {
	switch {
	case isUniqueViolation(err):
		return sqlrow.Unique
	case isForeignKeyViolation(err):
		return sqlrow.ForeignKey
	}
	return sqlrow.NoConstraint
}

// writeErr wraps the error of a write of what: a uniqueness failure
// becomes acme.ErrConflict and a dangling reference acme.ErrNotFound.
func writeErr(what string, err error) error { return drv.WriteErr(what, err, constraint(err)) }

// nullStr is the *string form (nil for NULL) of a nullable text column.
func nullStr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}
