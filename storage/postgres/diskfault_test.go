// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/weir-pki/weir/acme"
)

// TestWriteErrUnavailable: a server that cannot write (disk full, a
// read-only standby, an I/O error) is acme.ErrUnavailable, a constraint
// is not.
func TestWriteErrUnavailable(t *testing.T) {
	for code, want := range map[string]bool{
		codeDiskFull: true, codeReadOnlySQLTx: true, codeIOError: true, codeInsufficientRs: true,
		codeUniqueViolation: false, "42P01": false,
	} {
		err := writeErr("create order", &pgconn.PgError{Code: code})
		if got := errors.Is(err, acme.ErrUnavailable); got != want {
			t.Errorf("SQLSTATE %s: unavailable %v, want %v (%v)", code, got, want, err)
		}
	}
	if err := writeErr("create order", &pgconn.PgError{Code: codeUniqueViolation}); !errors.Is(err, acme.ErrConflict) {
		t.Errorf("unique violation: %v, want ErrConflict", err)
	}
}
