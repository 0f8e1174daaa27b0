// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/migrations"
)

// openRaw opens a bare writer connection to a new database file.
func openRaw(t *testing.T) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.db")
	if err := createFile(path); err != nil {
		t.Fatal(err)
	}
	db, err := openWriter(t.Context(), path)
	if err != nil {
		t.Fatalf("openWriter: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestApplyMigrations(t *testing.T) {
	db, path := openRaw(t)
	ctx := t.Context()
	m1 := migrations.Migration{Version: 1, Name: "one", SQL: `CREATE TABLE a (x INTEGER);`}
	m2 := migrations.Migration{Version: 2, Name: "two", SQL: `CREATE TABLE b (x INTEGER); INSERT INTO b VALUES (1);`}
	m3 := migrations.Migration{Version: 3, Name: "three", SQL: `CREATE TABLE c (x INTEGER);`}
	bad := migrations.Migration{Version: 4, Name: "bad", SQL: `CREATE TABLE d (x INTEGER); SELECT nonsense FROM nowhere;`}

	if err := applyMigrations(ctx, db, path, []migrations.Migration{m1, m2}, fixedNow); err != nil {
		t.Fatalf("applying 1, 2: %v", err)
	}
	if err := applyMigrations(ctx, db, path, []migrations.Migration{m1, m2, m3}, fixedNow); err != nil {
		t.Fatalf("applying 1, 2, 3: %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM b`).Scan(&n); err != nil || n != 1 {
		t.Errorf("rows of b: got %d, %v; want 1 (migration 2 ran once)", n, err)
	}

	// A failing migration leaves nothing behind.
	if err := applyMigrations(ctx, db, path, []migrations.Migration{m1, m2, m3, bad}, fixedNow); err == nil {
		t.Error("applying a failing migration succeeded")
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'd'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("table d after failed migration: got %d, %v; want 0", n, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&n); err != nil || n != 3 {
		t.Errorf("schema version after failed migration: got %d, %v; want 3", n, err)
	}

	renamed := m2
	renamed.Name = "deux"
	err := applyMigrations(ctx, db, path, []migrations.Migration{m1, renamed, m3}, fixedNow)
	if err == nil || !strings.Contains(err.Error(), "deux") {
		t.Errorf("applying a renamed migration: got %v, want an error naming it", err)
	}

	gap := migrations.Migration{Version: 5, Name: "five", SQL: `CREATE TABLE e (x INTEGER);`}
	if err := applyMigrations(ctx, db, path, []migrations.Migration{m1, m2, m3, gap}, fixedNow); err != nil {
		t.Fatalf("applying 5: %v", err)
	}
	late := migrations.Migration{Version: 4, Name: "four", SQL: `CREATE TABLE f (x INTEGER);`}
	if err := applyMigrations(ctx, db, path, []migrations.Migration{m1, m2, m3, late, gap}, fixedNow); err == nil {
		t.Error("applying 4 after 5 succeeded, want an error")
	}
}
