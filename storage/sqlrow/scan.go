// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"fmt"
	"time"
)

// Scanner is a row to read: what database/sql's Row and Rows and pgx's
// Row and Rows have in common.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows is a result set being read: what database/sql's Rows and pgx's
// Rows have in common, but for Close, which the caller owns.
type Rows interface {
	Scanner
	Next() bool
	Err() error
}

// Collect reads every row of rows with scan; what names the query in
// errors. It does not close rows.
func Collect[T any](d Driver, what string, rows Rows, scan func(Scanner) (T, error)) ([]T, error) {
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, d.Wrap(what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, d.Wrap(what, err)
	}
	return out, nil
}

// WithSeq returns a Scanner that reads a leading column into seq (an
// order's sequence number) and the rest with row.
func WithSeq(row Scanner, seq *int64) Scanner { return seqScanner{row, seq} }

// seqScanner is WithSeq's Scanner.
type seqScanner struct {
	row Scanner
	seq *int64
}

// Scan implements Scanner.
func (s seqScanner) Scan(dest ...any) error {
	return s.row.Scan(append([]any{s.seq}, dest...)...)
}

// timeDest is the scan destination of a time column: what FromNanos
// makes of its Unix nanoseconds, and the zero time for NULL. It is a
// database/sql Scanner, which pgx scans into too, so one destination
// serves both drivers and a read allocates nothing for it.
type timeDest struct{ t *time.Time }

// nanos returns the scan destination of a time column that sets *t.
func nanos(t *time.Time) timeDest { return timeDest{t} }

// Scan implements database/sql's Scanner.
func (d timeDest) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.t = time.Time{}
	case int64:
		*d.t = FromNanos(v)
	default:
		return fmt.Errorf("a time column holds %T, not Unix nanoseconds", src)
	}
	return nil
}
