// SPDX-License-Identifier: Apache-2.0

package pgschema

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Schema is a PostgreSQL schema of the caller's own on a shared server:
// weir replicas given DSN keep their tables in it and no one else's.
type Schema struct {
	Name string // the schema, also the application_name of DSN
	DSN  string // the base DSN with search_path and application_name set to Name

	mu   sync.Mutex
	conn *pgx.Conn // the connection that made it; drops it
}

var schemaPrefix = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,40}$`)

// Create connects to baseDSN and creates a schema named prefix
// (lower-case letters, digits and _) followed by random hex. The
// connection stays open, to drop it.
func Create(ctx context.Context, baseDSN, prefix string) (*Schema, error) {
	if !schemaPrefix.MatchString(prefix) {
		return nil, fmt.Errorf("pgschema: schema prefix %q: lower-case letters, digits and _ only", prefix)
	}
	conn, err := pgx.Connect(ctx, baseDSN)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("CREATE SCHEMA %s: %w", name, err)
	}
	return &Schema{
		Name: name,
		DSN:  WithParams(baseDSN, map[string]string{"search_path": name, "application_name": name}),
		conn: conn,
	}, nil
}

// Drop drops the schema with its tables and closes the connection. Stop
// the weir servers that use it first.
func (s *Schema) Drop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	_, err := s.conn.Exec(ctx, "DROP SCHEMA "+s.Name+" CASCADE")
	s.conn.Close(context.Background())
	s.conn = nil
	if err != nil {
		return fmt.Errorf("DROP SCHEMA %s: %w", s.Name, err)
	}
	return nil
}

// BackendPIDs lists the server processes (as pg_stat_activity shows them)
// that work for the schema's users: ours are the client backends whose
// application_name is Name (weir's connections through DSN); aux are the
// server's own processes (WAL writer, checkpointer, background writer,
// autovacuum), which every user of the server shares. The PIDs are those
// of /proc when PostgreSQL runs on this machine, outside a container.
func (s *Schema) BackendPIDs(ctx context.Context) (ours, aux []int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil, nil, fmt.Errorf("pgschema: schema %s was dropped", s.Name)
	}
	rows, err := s.conn.Query(ctx, `SELECT pid, coalesce(backend_type, ''), coalesce(application_name, '') FROM pg_stat_activity WHERE pid <> pg_backend_pid()`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		var typ, app string
		if err := rows.Scan(&pid, &typ, &app); err != nil {
			return nil, nil, err
		}
		switch {
		case typ == "client backend" && app == s.Name:
			ours = append(ours, pid)
		case typ != "client backend" && typ != "":
			aux = append(aux, pid)
		}
	}
	return ours, aux, rows.Err()
}

// Ensure connects to baseDSN, creates the schema name (lower-case
// letters, digits and _) unless it exists, and returns the DSN of weir on
// it: a schema that outlives the caller, which never drops it.
func Ensure(ctx context.Context, baseDSN, name string) (string, error) {
	if !schemaPrefix.MatchString(name) {
		return "", fmt.Errorf("pgschema: schema %q: lower-case letters, digits and _ only", name)
	}
	conn, err := pgx.Connect(ctx, baseDSN)
	if err != nil {
		return "", fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+name); err != nil {
		return "", fmt.Errorf("CREATE SCHEMA %s: %w", name, err)
	}
	return WithParams(baseDSN, map[string]string{"search_path": name, "application_name": name}), nil
}
