// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Driver is the name of a SQL driver as its errors begin with it,
// "sqlite" or "postgres". The shared code makes a driver's errors with
// its methods, so that every error says which store it comes from, and a
// missing object or a lost compare-and-set wraps the same sentinel on
// both.
type Driver string

// Errorf formats an error of the driver: its name, ": ", then format,
// whose %w verbs wrap as fmt.Errorf's do.
func (d Driver) Errorf(format string, args ...any) error {
	return fmt.Errorf(string(d)+": "+format, args...)
}

// Wrap is the error err of what.
func (d Driver) Wrap(what string, err error) error { return d.Errorf("%s: %w", what, err) }

// NotFound is the error of what, which does not exist: it wraps
// acme.ErrNotFound.
func (d Driver) NotFound(what string) error { return d.Errorf("%s: %w", what, acme.ErrNotFound) }

// RowErr is the error err of reading the one row of what: no row wraps
// acme.ErrNotFound. database/sql's sql.ErrNoRows is the sign of no row
// on both drivers (pgx.ErrNoRows matches it).
func (d Driver) RowErr(what string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return d.NotFound(what)
	}
	return d.Wrap(what, err)
}

// Constraint is the kind of constraint a failed write violated, as the
// driver tells it from the write's error.
type Constraint int

// The constraints a write can violate.
const (
	// NoConstraint: the write failed for another reason.
	NoConstraint Constraint = iota
	// Unique: a UNIQUE or PRIMARY KEY constraint, or a unique index.
	Unique
	// ForeignKey: the row refers to a row that does not exist.
	ForeignKey
)

// WriteErr is the error err of a write of what, which violated c: a
// second object with the same key wraps acme.ErrConflict and a reference
// to a missing object acme.ErrNotFound, each besides err.
func (d Driver) WriteErr(what string, err error, c Constraint) error {
	switch c {
	case Unique:
		return d.Errorf("%s: already exists: %w (%w)", what, acme.ErrConflict, err)
	case ForeignKey:
		return d.Errorf("%s: references a missing object: %w (%w)", what, acme.ErrNotFound, err)
	}
	return d.Wrap(what, err)
}

// Missed explains a compare-and-set of what that changed no row, from
// existsErr, the error of asking whether the row exists (nil when it
// does): a missing row wraps acme.ErrNotFound, and a row that exists but
// did not match acme.ErrConflict, explained by reason.
func (d Driver) Missed(what, reason string, existsErr error) error {
	switch {
	case errors.Is(existsErr, sql.ErrNoRows):
		return d.NotFound(what)
	case existsErr != nil:
		return d.Wrap(what, existsErr)
	}
	return d.Errorf("%s: %s: %w", what, reason, acme.ErrConflict)
}

// CheckTimes returns an error of what if a non-zero time of ts is outside
// the range that Unix nanoseconds in an int64 can represent (MinTime to
// MaxTime, about 1678 to 2262), and nil otherwise.
func (d Driver) CheckTimes(what string, ts ...time.Time) error {
	for _, t := range ts {
		if !TimesInRange(t) {
			return d.Errorf("%s: time %s is outside the storable range %s to %s", what,
				t.UTC().Format(time.RFC3339), MinTime.UTC().Format(time.RFC3339), MaxTime.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// AccountID parses id, the ID of an account that what reads or writes:
// an ID no store gives out names no account (acme.ErrNotFound).
func (d Driver) AccountID(what string, id acme.AccountID) (int64, error) {
	n, ok := ParseAccountID(id)
	if !ok {
		return 0, d.NotFound(what)
	}
	return n, nil
}

// AccountOf parses id, the ID of the account of an object that what
// writes: an ID no store gives out names no account (acme.ErrNotFound).
func (d Driver) AccountOf(what string, id acme.AccountID) (int64, error) {
	n, ok := ParseAccountID(id)
	if !ok {
		return 0, d.Errorf("%s: account %q: %w", what, id, acme.ErrNotFound)
	}
	return n, nil
}

// CheckRevocation checks the time at which what revokes something (a
// certificate, an EAB key): it must be set and storable.
func (d Driver) CheckRevocation(what string, at time.Time) error {
	if at.IsZero() {
		return d.Errorf("%s: zero revocation time", what)
	}
	return d.CheckTimes(what, at)
}
