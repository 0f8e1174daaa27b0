// SPDX-License-Identifier: Apache-2.0

package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/postgres"
	"github.com/weir-pki/weir/storage/sqlite"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The storage.driver values.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Store is what the server needs of its ACME store, whichever the
// driver: the use cases' Store, the administrators' Inventory and EAB
// keys, the named admin credentials, the CRL shards in use, the readiness
// check and shutdown. *sqlite.Store and
// *postgres.Store are ones.
type Store interface {
	acme.Store
	acme.Inventory
	acme.EABStore
	acme.AdminCredentialStore
	acme.CRLShardLister
	Ping(ctx context.Context) error
	Close() error
}

var (
	_ Store = (*sqlite.Store)(nil)
	_ Store = (*postgres.Store)(nil)
)

// validate checks the storage block: a known driver and the keys it
// needs, and none of the other driver's.
func (c StorageConfig) validate() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch c.Driver {
	case DriverSQLite:
		if c.Path == "" {
			add("storage.path: must not be empty")
		}
		if c.DSN != "" || c.DSNFile != "" {
			add("storage.dsn, storage.dsn-file: only for driver postgres (the driver is sqlite, which uses storage.path)")
		}
	case DriverPostgres:
		switch {
		case c.DSN == "" && c.DSNFile == "":
			add("storage.dsn: driver postgres needs dsn or dsn-file")
		case c.DSN != "" && c.DSNFile != "":
			add("storage.dsn-file: set dsn or dsn-file, not both")
		case c.DSN != "":
			if err := (postgres.Config{DSN: c.DSN}).Validate(); err != nil {
				add("storage.dsn: %v", err)
			}
		}
	default:
		add("storage.driver: %q is not supported (use sqlite or postgres)", c.Driver)
	}
	if c.MaxConns < 0 {
		add("storage.max-conns: %d must not be negative (0 is the default)", c.MaxConns)
	}
	return errs
}

// postgresConfig returns the PostgreSQL store's configuration, reading the
// DSN from storage.dsn-file (the path as given; trailing line breaks and
// spaces are dropped) when that is set.
func (c StorageConfig) postgresConfig() (postgres.Config, error) {
	pc := postgres.Config{DSN: c.DSN, MaxConns: c.MaxConns}
	if c.DSNFile != "" {
		b, err := os.ReadFile(c.DSNFile)
		if err != nil {
			return pc, fmt.Errorf("storage.dsn-file: %w", err)
		}
		pc.DSN = strings.TrimSpace(string(b))
		if pc.DSN == "" {
			return pc, fmt.Errorf("storage.dsn-file: %s is empty", c.DSNFile)
		}
	}
	if err := pc.Validate(); err != nil {
		return pc, fmt.Errorf("storage: %w", err)
	}
	return pc, nil
}

// dsnPassword matches the password of a key=value DSN, quoted or not.
var dsnPassword = regexp.MustCompile(`(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// redacted returns c with the password of its DSN, if any, replaced by
// "xxxxx": what the admin surface shows of the running configuration.
func (c StorageConfig) redacted() StorageConfig {
	if c.DSN == "" {
		return c
	}
	if u, err := url.Parse(c.DSN); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		c.DSN = u.String()
		return c
	}
	c.DSN = dsnPassword.ReplaceAllString(c.DSN, "${1}xxxxx")
	return c
}

// openStore opens the ACME store of cfg, whose DataDir is absolute, and
// brings its schema up to date.
func openStore(ctx context.Context, cfg Config) (Store, error) {
	switch cfg.Storage.Driver {
	case DriverPostgres:
		pc, err := cfg.Storage.postgresConfig()
		if err != nil {
			return nil, err
		}
		s, err := postgres.Open(ctx, pc, nil)
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		return s, nil
	case DriverSQLite:
		s, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, cfg.Storage.Path), nil)
		if err != nil {
			return nil, fmt.Errorf("storage: %w", err)
		}
		return s, nil
	}
	return nil, fmt.Errorf("storage.driver: %q is not supported", cfg.Storage.Driver)
}

// unexpiredOf counts the certificates of issuer id in the ACME store of
// cfg (whose DataDir is absolute) that are unexpired at now, revoked or
// not, whichever the driver and while weir runs on it: each driver reads
// on a connection of its own, never writing.
func unexpiredOf(ctx context.Context, cfg Config, id string, now time.Time) (sqlrow.Unexpired, error) {
	switch cfg.Storage.Driver {
	case DriverPostgres:
		pc, err := cfg.Storage.postgresConfig()
		if err != nil {
			return sqlrow.Unexpired{}, err
		}
		return postgres.Unexpired(ctx, pc, id, now)
	case DriverSQLite:
		return sqlite.Unexpired(ctx, filepath.Join(cfg.DataDir, cfg.Storage.Path), id, now)
	}
	return sqlrow.Unexpired{}, fmt.Errorf("storage.driver: %q is not supported", cfg.Storage.Driver)
}

// schemaVersion is one applied migration of the ACME store.
type schemaVersion struct {
	Version   int
	Name      string
	AppliedAt time.Time
}

// schemaVersions lists the migrations applied to store, oldest first.
func schemaVersions(ctx context.Context, store Store) ([]schemaVersion, error) {
	var out []schemaVersion
	switch s := store.(type) {
	case *postgres.Store:
		ms, err := s.Migrations(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out = append(out, schemaVersion{m.Version, m.Name, m.AppliedAt})
		}
	case *sqlite.Store:
		rows, err := s.DB().QueryContext(ctx, `SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
		if err != nil {
			return nil, fmt.Errorf("sqlite: reading schema_migrations: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				v       schemaVersion
				applied string
			)
			if err := rows.Scan(&v.Version, &v.Name, &applied); err != nil {
				return nil, fmt.Errorf("sqlite: reading schema_migrations: %w", err)
			}
			v.AppliedAt, _ = time.Parse(time.RFC3339Nano, applied)
			out = append(out, v)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: reading schema_migrations: %w", err)
		}
	default:
		return nil, errors.New("storage: this store does not list its schema versions")
	}
	return out, nil
}
