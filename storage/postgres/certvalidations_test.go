// SPDX-License-Identifier: Apache-2.0

package postgres

import "testing"

// TestCertValidationsMigration: a certificate stored before migration
// 0013, which adds the column without a default, has its validations
// NULL after it (set here on a stored row), and reads back with them
// unknown (nil), not empty and not invented.
func TestCertValidationsMigration(t *testing.T) {
	_, dsn := freshSchema(t)
	s, err := Open(t.Context(), Config{DSN: dsn, MaxConns: 2}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	_, c := seed(t, s)
	tag, err := s.pool.Exec(t.Context(), `UPDATE certificates SET validations = NULL WHERE serial = $1`, c.Serial)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("the row as before the migration: %d rows, %v; want 1", tag.RowsAffected(), err)
	}
	s.Close()
	got, err := openDSN(t, dsn).GetCertificate(t.Context(), c.Serial)
	if err != nil {
		t.Fatalf("GetCertificate after the migration: %v", err)
	}
	if got.Validations != nil {
		t.Errorf("validations of a certificate stored before the migration: %+v, want nil (unknown)", got.Validations)
	}
}
