// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestDriverErrors: every error begins with the driver's name and wraps
// the sentinel its cause calls for, and the driver's own error with it.
func TestDriverErrors(t *testing.T) {
	const d Driver = "postgres"
	cause := errors.New("connection reset")
	noRows := fmt.Errorf("driver's own: %w", sql.ErrNoRows) // as pgx.ErrNoRows matches it
	for _, tc := range []struct {
		name  string
		err   error
		wants []error // errors.Is targets
		nots  []error // errors.Is must not hold
		text  string
	}{
		{"not found", d.NotFound(`order "x"`), []error{acme.ErrNotFound}, []error{acme.ErrConflict}, `postgres: order "x": not found`},
		{"row: no row", d.RowErr("account 7", noRows), []error{acme.ErrNotFound}, []error{cause}, "postgres: account 7: "},
		{"row: other", d.RowErr("account 7", cause), []error{cause}, []error{acme.ErrNotFound}, "postgres: account 7: connection reset"},
		{"write: unique", d.WriteErr("create order", cause, Unique), []error{acme.ErrConflict, cause}, []error{acme.ErrNotFound}, "postgres: create order: already exists: "},
		{"write: foreign key", d.WriteErr("create order", cause, ForeignKey), []error{acme.ErrNotFound, cause}, []error{acme.ErrConflict}, "postgres: create order: references a missing object: "},
		{"write: other", d.WriteErr("create order", cause, NoConstraint), []error{cause}, []error{acme.ErrConflict, acme.ErrNotFound}, "postgres: create order: connection reset"},
		{"missed: no row", d.Missed("update order", "status is not pending", noRows), []error{acme.ErrNotFound}, []error{acme.ErrConflict}, "postgres: update order: "},
		{"missed: exists", d.Missed("update order", "status is not pending", nil), []error{acme.ErrConflict}, []error{acme.ErrNotFound}, "postgres: update order: status is not pending: "},
		{"missed: check failed", d.Missed("update order", "status is not pending", cause), []error{cause}, []error{acme.ErrConflict, acme.ErrNotFound}, "postgres: update order: connection reset"},
	} {
		if !strings.HasPrefix(tc.err.Error(), tc.text) {
			t.Errorf("%s: %q; want it to begin with %q", tc.name, tc.err, tc.text)
		}
		for _, w := range tc.wants {
			if !errors.Is(tc.err, w) {
				t.Errorf("%s: %v does not wrap %v", tc.name, tc.err, w)
			}
		}
		for _, n := range tc.nots {
			if errors.Is(tc.err, n) {
				t.Errorf("%s: %v wraps %v", tc.name, tc.err, n)
			}
		}
	}
}

// TestCheckTimes: the zero time and the storable range pass; a time
// beyond it is refused with its value and the range.
func TestCheckTimes(t *testing.T) {
	const d Driver = "sqlite"
	now := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, tc := range []struct {
		ts   []time.Time
		want string // "" for no error
	}{
		{nil, ""},
		{[]time.Time{{}, now, MinTime, MaxTime}, ""},
		{[]time.Time{now, MaxTime.Add(time.Nanosecond)}, "sqlite: create order: time 2262-04-11T23:47:16Z is outside the storable range"},
		{[]time.Time{MinTime.Add(-time.Nanosecond)}, "sqlite: create order: time 1677-09-21T00:12:43Z is outside the storable range"},
	} {
		err := d.CheckTimes("create order", tc.ts...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckTimes(%v) = %v; want nil", tc.ts, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("CheckTimes(%v) = %v; want %q…", tc.ts, err, tc.want)
		}
	}
}
