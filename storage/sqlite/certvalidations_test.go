// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
)

// TestCertValidationsMigration: a certificate stored before migration
// 0017, which adds the column without a default, has its validations
// NULL after it (set here on a stored row), and reads back with them
// unknown (nil), not empty and not invented.
func TestCertValidationsMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	_, c := seed(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.ExecContext(t.Context(), `UPDATE certificates SET validations = NULL WHERE serial = ?`, c.Serial)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("the row as before the migration: %d rows, %v; want 1", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := openAt(t, path).GetCertificate(t.Context(), c.Serial)
	if err != nil {
		t.Fatalf("GetCertificate after the migration: %v", err)
	}
	if got.Validations != nil {
		t.Errorf("validations of a certificate stored before the migration: %+v, want nil (unknown)", got.Validations)
	}
}
