// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weir-pki/weir/migrations"
)

// SchemaTooNewError is returned by Open for a database whose schema was
// written by a newer weir: a version the binary does not know has been
// applied, so the binary cannot safely use the database.
type SchemaTooNewError struct {
	Schema   string // the PostgreSQL schema holding weir's tables
	Database int    // the highest schema version applied to the database
	Known    int    // the highest schema version the binary knows
}

// Error implements error.
func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("postgres: schema %q has weir schema version %d but this weir knows only up to %d; "+
		"refusing to use it (run a weir at least as new as the one that last migrated it)",
		e.Schema, e.Database, e.Known)
}

// migrationLockClass is the first key of the advisory lock that migrations
// run under ("weir" in ASCII); the second is a hash of the schema, so that
// weir installations in different schemas of one database do not wait for
// one another, while replicas of one installation do.
const migrationLockClass int32 = 0x77656972

// lockKey is the second key of the migration lock of schema.
func lockKey(schema string) int32 {
	h := fnv.New32a()
	h.Write([]byte(schema))
	return int32(h.Sum32())
}

// errNoSchema is currentSchema's error when no schema of the connection's
// search_path exists.
var errNoSchema = errors.New("no schema of the search_path exists: create it (CREATE SCHEMA …) or fix search_path in the DSN")

// currentSchema returns the schema of weir's tables on q's connection:
// the first schema of its search_path that exists, else errNoSchema.
func currentSchema(ctx context.Context, q querier) (string, error) {
	var schema *string
	if err := q.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return "", fmt.Errorf("reading the current schema: %w", err)
	}
	if schema == nil {
		return "", errNoSchema
	}
	return *schema, nil
}

// AppliedMigration is a schema version recorded in schema_migrations.
type AppliedMigration struct {
	Version   int
	Name      string
	AppliedAt time.Time
}

// migrate brings the schema up to date: on one connection holding the
// session advisory lock of the schema, it creates schema_migrations if
// needed and applies, in order and each in its own transaction with its
// record, the embedded migrations not yet recorded there. A replica that
// starts at the same time waits for the lock and then finds them applied.
func migrate(ctx context.Context, pool *pgxpool.Pool, now func() time.Time) error {
	ms, err := migrations.List(migrations.Postgres(), migrations.PostgresDir)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if len(ms) == 0 {
		return errors.New("postgres: no embedded migrations")
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: connecting: %w", err)
	}
	defer conn.Release()
	schema, err := currentSchema(ctx, conn)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	key := lockKey(schema)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2)`, migrationLockClass, key); err != nil {
		// The lock may or may not be held: drop the connection, and the
		// session's locks with it.
		conn.Conn().Close(context.WithoutCancel(ctx))
		return fmt.Errorf("postgres: schema %q: taking the migration lock: %w", schema, err)
	}
	err = applyMigrations(ctx, conn.Conn(), schema, ms, now)
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if _, uerr := conn.Exec(uctx, `SELECT pg_advisory_unlock($1, $2)`, migrationLockClass, key); uerr != nil {
		conn.Conn().Close(uctx)
		if err == nil {
			err = fmt.Errorf("postgres: schema %q: releasing the migration lock: %w", schema, uerr)
		}
	}
	return err
}

// applyMigrations applies those of ms (sorted by version) that the schema
// lacks, holding the migration lock.
func applyMigrations(ctx context.Context, conn *pgx.Conn, schema string, ms []migrations.Migration, now func() time.Time) error {
	_, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL
	)`)
	if err != nil {
		return fmt.Errorf("postgres: schema %q: creating schema_migrations: %w", schema, err)
	}
	applied, err := appliedMigrations(ctx, conn)
	if err != nil {
		return fmt.Errorf("postgres: schema %q: %w", schema, err)
	}
	names := make(map[int]string, len(applied))
	for _, m := range applied {
		names[m.Version] = m.Name
	}
	pending, err := migrations.Plan(ms, names)
	var tooNew *migrations.TooNewError
	if errors.As(err, &tooNew) {
		return &SchemaTooNewError{Schema: schema, Database: tooNew.Database, Known: tooNew.Known}
	}
	if err != nil {
		return fmt.Errorf("postgres: schema %q: %w", schema, err)
	}
	for _, m := range pending {
		if err := applyMigration(ctx, conn, m, now); err != nil {
			return fmt.Errorf("postgres: schema %q: %w", schema, err)
		}
	}
	return nil
}

// appliedMigrations reads schema_migrations, by version.
func appliedMigrations(ctx context.Context, q querier) ([]AppliedMigration, error) {
	rows, err := q.Query(ctx, `SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (AppliedMigration, error) {
		var m AppliedMigration
		err := row.Scan(&m.Version, &m.Name, &m.AppliedAt)
		m.AppliedAt = m.AppliedAt.UTC()
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	return out, nil
}

// applyMigration runs m and records it in one transaction. m.SQL may hold
// several statements: without arguments, pgx sends it with the simple
// query protocol.
func applyMigration(ctx context.Context, conn *pgx.Conn, m migrations.Migration, now func() time.Time) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			m.Version, m.Name, now().UTC()); err != nil {
			return fmt.Errorf("migration %d (%s): recording: %w", m.Version, m.Name, err)
		}
		return nil
	})
}

// Migrations returns the schema versions applied to the database, in
// order: what weir migrate prints.
func (s *Store) Migrations(ctx context.Context) ([]AppliedMigration, error) {
	ms, err := appliedMigrations(ctx, s.pool)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return ms, nil
}
