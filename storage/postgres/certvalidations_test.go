package postgres

import "testing"

// TestCertValidationsMigration: a certificate stored before migration
// 0013 (the column dropped again and the migration forgotten, as a schema
// of an older weir is) reads back after it with its validations unknown
// (nil), not empty and not invented.
func TestCertValidationsMigration(t *testing.T) {
	_, dsn := freshSchema(t)
	s, err := Open(t.Context(), Config{DSN: dsn, MaxConns: 2}, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	_, c := seed(t, s)
	if _, err := s.pool.Exec(t.Context(), `ALTER TABLE certificates DROP COLUMN validations`); err != nil {
		t.Fatal(err)
	}
	tag, err := s.pool.Exec(t.Context(), `DELETE FROM schema_migrations WHERE name = 'cert_validations'`)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("forgetting the migration: %d rows, %v; want 1", tag.RowsAffected(), err)
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
