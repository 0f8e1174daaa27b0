// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/weir-pki/weir/migrations"
)

// SchemaTooNewError is returned by Open for a database whose schema was
// written by a newer weir: a version the binary does not know has been
// applied, so the binary cannot safely use the database.
type SchemaTooNewError struct {
	Path     string // the database file
	Database int    // the highest schema version applied to the database
	Known    int    // the highest schema version the binary knows
}

// Error implements error.
func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("sqlite: database %s has schema version %d but this weir knows only up to %d; "+
		"refusing to open it (run a weir at least as new as the one that last migrated it)",
		e.Path, e.Database, e.Known)
}

// migrate brings the schema of db up to date: it applies, in order and each
// in its own transaction, the embedded migrations not yet recorded in
// schema_migrations.
func migrate(ctx context.Context, db *sql.DB, path string, now func() time.Time) error {
	ms, err := migrations.List(migrations.SQLite(), migrations.SQLiteDir)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if len(ms) == 0 {
		return errors.New("sqlite: no embedded migrations")
	}
	return applyMigrations(ctx, db, path, ms, now)
}

// applyMigrations applies those of ms (sorted by version) that db lacks.
func applyMigrations(ctx context.Context, db *sql.DB, path string, ms []migrations.Migration, now func() time.Time) error {
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	) STRICT`)
	if err != nil {
		return fmt.Errorf("sqlite: %s: creating schema_migrations: %w", path, err)
	}
	applied, err := appliedMigrations(ctx, db)
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", path, err)
	}
	pending, err := migrations.Plan(ms, applied)
	var tooNew *migrations.TooNewError
	if errors.As(err, &tooNew) {
		return &SchemaTooNewError{Path: path, Database: tooNew.Database, Known: tooNew.Known}
	}
	if err != nil {
		return fmt.Errorf("sqlite: %s: %w", path, err)
	}
	for _, m := range pending {
		if err := applyMigration(ctx, db, m, now); err != nil {
			return fmt.Errorf("sqlite: %s: %w", path, err)
		}
	}
	return nil
}

// appliedMigrations returns the names of the applied migrations by version.
func appliedMigrations(ctx context.Context, db *sql.DB) (map[int]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT version, name FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := make(map[int]string)
	for rows.Next() {
		var (
			v    int
			name string
		)
		if err := rows.Scan(&v, &name); err != nil {
			return nil, fmt.Errorf("reading schema_migrations: %w", err)
		}
		applied[v] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	return applied, nil
}

// applyMigration runs m and records it in one (immediate) transaction,
// unless another process applied it first.
func applyMigration(ctx context.Context, db *sql.DB, m migrations.Migration, now func() time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %d (%s): begin: %w", m.Version, m.Name, err)
	}
	defer tx.Rollback() // a no-op after Commit
	var one int
	switch err := tx.QueryRowContext(ctx,
		`SELECT 1 FROM schema_migrations WHERE version = ?`, m.Version).Scan(&one); {
	case err == nil:
		return nil // applied concurrently by another process
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, now().UTC().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("migration %d (%s): recording: %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %d (%s): commit: %w", m.Version, m.Name, err)
	}
	return nil
}
