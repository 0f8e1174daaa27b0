// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weir-pki/weir/acme"
)

// Config is how to reach the database.
type Config struct {
	// DSN is a libpq connection string, URL ("postgres://user@host/db?…")
	// or key=value form. Its search_path, if any, chooses the schema of
	// weir's tables; application_name defaults to "weir".
	DSN string
	// MaxConns caps the pool; 0 means pgx's default, the greater of 4 and
	// the number of CPUs.
	MaxConns int
	// MinConns is the number of connections kept open when idle.
	MinConns int
	// ConnectTimeout bounds each new connection; 0 means the DSN's
	// connect_timeout, or 5 seconds if it sets none.
	ConnectTimeout time.Duration
}

// defaultConnectTimeout bounds a new connection when neither the Config
// nor the DSN does, so that requests fail fast while the server is down.
const defaultConnectTimeout = 5 * time.Second

// Validate reports every problem of c at once. It never shows the DSN's
// password.
func (c Config) Validate() error {
	var errs []error
	if c.DSN == "" {
		errs = append(errs, errors.New("postgres: the DSN is empty"))
	} else if _, err := pgxpool.ParseConfig(c.DSN); err != nil {
		errs = append(errs, fmt.Errorf("postgres: the DSN: %w", err))
	}
	if c.MaxConns < 0 {
		errs = append(errs, fmt.Errorf("postgres: max connections %d is negative", c.MaxConns))
	}
	if c.MinConns < 0 {
		errs = append(errs, fmt.Errorf("postgres: min connections %d is negative", c.MinConns))
	}
	if c.MaxConns > 0 && c.MinConns > c.MaxConns {
		errs = append(errs, fmt.Errorf("postgres: min connections %d exceed max connections %d", c.MinConns, c.MaxConns))
	}
	if c.ConnectTimeout < 0 {
		errs = append(errs, fmt.Errorf("postgres: connect timeout %s is negative", c.ConnectTimeout))
	}
	return errors.Join(errs...)
}

// poolConfig turns c into the pool's configuration.
func (c Config) poolConfig() (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(c.DSN)
	if err != nil {
		return nil, fmt.Errorf("postgres: the DSN: %w", err)
	}
	if c.MaxConns > 0 {
		pc.MaxConns = int32(min(c.MaxConns, 1<<20))
	}
	if c.MinConns > 0 {
		pc.MinConns = int32(min(c.MinConns, 1<<20))
	}
	switch {
	case c.ConnectTimeout > 0:
		pc.ConnConfig.ConnectTimeout = c.ConnectTimeout
	case pc.ConnConfig.ConnectTimeout == 0:
		pc.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	if _, ok := pc.ConnConfig.RuntimeParams["application_name"]; !ok {
		pc.ConnConfig.RuntimeParams["application_name"] = "weir"
	}
	return pc, nil
}

// Store is an acme.Store (with acme.Inventory and acme.EABStore) on a
// PostgreSQL database. It is safe for concurrent use. Close it when done.
type Store struct {
	pool      *pgxpool.Pool
	closeOnce sync.Once
}

// The interfaces a Store implements.
var (
	_ acme.Store     = (*Store)(nil)
	_ acme.Inventory = (*Store)(nil)
	_ acme.EABStore  = (*Store)(nil)
)

// Open connects to the database of cfg and brings its schema up to date
// (see Migrate). now is the clock that records when a migration was
// applied; nil means time.Now. It fails if the server cannot be reached
// within ctx.
func Open(ctx context.Context, cfg Config, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pc, err := cfg.poolConfig()
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting: %w", err)
	}
	if err := migrate(ctx, pool, now); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool}, nil
}

// Close closes every connection of the pool, waiting for those in use to
// be released. Calls made after Close fail.
func (s *Store) Close() error {
	s.closeOnce.Do(s.pool.Close)
	return nil
}

// Ping checks that a connection of the pool answers: the readiness check.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// rollbackTimeout bounds the rollback of a failed transaction, which runs
// even when the caller's context has ended.
const rollbackTimeout = 5 * time.Second

// cas runs a compare-and-set UPDATE (args) as a statement of its own,
// one round trip, and explains a miss with missErr: the query exists with
// key tells a missing row (acme.ErrNotFound) from a changed one
// (acme.ErrConflict, explained by reason). Rows are never deleted, so the
// check need not share the UPDATE's transaction.
func (s *Store) cas(ctx context.Context, what, reason, update string, args []any, exists string, key any) error {
	tag, err := s.pool.Exec(ctx, update, args...)
	if err != nil {
		return writeErr(what, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	return missErr(ctx, s.pool, what, reason, exists, key)
}

// inTx runs fn in a transaction and commits it if fn returns nil. fn's
// error is returned as is; what names the operation in the errors of
// BEGIN and COMMIT.
func (s *Store) inTx(ctx context.Context, what string, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: %s: begin: %w", what, err)
	}
	if err := fn(tx); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		_ = tx.Rollback(rctx) // a broken connection is discarded by the pool
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: %s: commit: %w", what, unavailable(err))
	}
	return nil
}

var _ acme.StatsReporter = (*Store)(nil)

// StoreStats implements acme.StatsReporter: the connection pool. Every
// write runs on a pool connection, so there is no writer queue; a query
// waited when it found no idle connection.
func (s *Store) StoreStats() acme.StoreStats {
	st := s.pool.Stat()
	return acme.StoreStats{
		Conns:      int(st.TotalConns()),
		ConnsInUse: int(st.AcquiredConns()),
		MaxConns:   int(st.MaxConns()),
		ConnWaits:  uint64(st.EmptyAcquireCount()),
		ConnWait:   st.EmptyAcquireWaitTime(),
	}
}
