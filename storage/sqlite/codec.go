package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// scanner is what *sql.Row and *sql.Rows have in common.
type scanner interface {
	Scan(dest ...any) error
}

// checkAffected turns the result of a compare-and-set UPDATE into nil when
// it changed a row, and otherwise into an error wrapping acme.ErrNotFound if
// the row does not exist (per the statement exists and arg, run in the same
// transaction) or acme.ErrConflict, explained by reason, if it does. what
// names the operation in the error message.
func checkAffected(w *writeTx, res sql.Result, what, reason string, exists writeStmt, arg any) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlite: %s: rows affected: %w", what, err)
	}
	if n > 0 {
		return nil
	}
	var one int
	switch err := w.queryRow(exists, arg).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlite: %s: %w", what, acme.ErrNotFound)
	case err != nil:
		return fmt.Errorf("sqlite: %s: %w", what, err)
	}
	return fmt.Errorf("sqlite: %s: %s: %w", what, reason, acme.ErrConflict)
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

// insertErr wraps an INSERT error about what: a uniqueness failure becomes
// acme.ErrConflict and a dangling reference acme.ErrNotFound.
func insertErr(what string, err error) error {
	switch {
	case isUniqueViolation(err):
		return fmt.Errorf("sqlite: %s: already exists: %w (%w)", what, acme.ErrConflict, err)
	case isForeignKeyViolation(err):
		return fmt.Errorf("sqlite: %s: references a missing object: %w (%w)", what, acme.ErrNotFound, err)
	default:
		return fmt.Errorf("sqlite: %s: %w", what, err)
	}
}

// rowErr wraps the error of reading one row of what, mapping sql.ErrNoRows
// to acme.ErrNotFound.
func rowErr(what string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("sqlite: %s: %w", what, acme.ErrNotFound)
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

// checkTimes returns an error if a non-zero time is outside the range that
// Unix nanoseconds in an int64 can represent (about 1678 to 2262).
func checkTimes(what string, ts ...time.Time) error {
	lo, hi := sqlrow.MinTime, sqlrow.MaxTime
	for _, t := range ts {
		if !t.IsZero() && (t.Before(lo) || t.After(hi)) {
			return fmt.Errorf("sqlite: %s: time %s is outside the storable range %s to %s",
				what, t.UTC().Format(time.RFC3339), lo.UTC().Format(time.RFC3339), hi.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// fromNanos is the inverse of toNanos. A NULL reads as the zero time.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid || n.Int64 == 0 {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// boolInt is the stored form of a boolean.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// nullStr is the *string form (nil for NULL) of a nullable text column.
func nullStr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	v := s.String
	return &v
}
