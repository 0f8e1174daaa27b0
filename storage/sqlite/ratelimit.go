// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weir-pki/weir/migrations"
	"github.com/weir-pki/weir/ratelimit"
)

// RateLimitSource is a [ratelimit.Source] stored in a SQLite database file
// of its own (for example <data-dir>/ratelimit.db), apart from the ACME
// data of [Store]. It is safe for concurrent use. Opened with
// [OpenRateLimit], one process at a time has the file: it takes an
// exclusive lock on path+".lock", which keeps the bucket cache
// (ratelimit_cache.go) true; read-only access (a backup's VACUUM INTO) does
// not take it. Opened with [OpenRateLimitShared], several processes may
// share the file (replicas on PostgreSQL sharing a data directory), and
// the source keeps no cache. Close it when done.
//
// Like Store it runs in WAL mode with one writer connection whose
// transactions begin with BEGIN IMMEDIATE, and a pool of query-only reader
// connections for [RateLimitSource.Get]. [RateLimitSource.Apply] evaluates
// each batch inside a write transaction: it takes the write lock, reads the
// clock, loads the batch's buckets, runs [ratelimit.Eval] and, if the batch
// is committed, writes back what changed. Concurrent batches share
// transactions (group commit), each still evaluated alone and in order. The
// write lock orders every batch, so clock readings never go backwards
// relative to decisions.
//
// Durability: the writer runs with synchronous=NORMAL. A committed batch
// survives a crash of the process, but a power loss or kernel crash may
// lose the last few transactions committed before it (never corrupt the
// database). For rate limits that is acceptable — the worst case is that an
// account gets back a few recent spends — and it saves an fsync per batch.
//
// Idle state is deleted by Apply when a batch makes it so (a refund that
// leaves a rate bucket full, a removed member), and otherwise by
// [RateLimitSource.Sweep], which [RateLimitSource.Run] calls periodically:
// full rate buckets and members that no longer count stay stored, harmless,
// until swept.
type RateLimitSource struct {
	path string
	now  func() time.Time
	w    *sql.DB // the single writer connection
	r    *sql.DB // the pool of query-only reader connections
	// stmts are the statements prepared at open (ratelimit_stmts.go).
	stmts *rlStmts

	fresh bool // the open created the schema: the file held no counts

	mu      sync.Mutex  // guards the group-commit state below
	leading bool        // an Apply is leading a group
	queue   []*applyReq // batches waiting for the next group, in arrival order

	// txMu is held by every write of the file (a group, Reset, a chunk of
	// Sweep, Restore), so that cache changes as the file does.
	txMu  sync.Mutex
	cache bucketCache
	lock  *os.File // the flock on path+".lock" (lockDB); nil where unsupported

	faults faultLog // the last batch that failed for a disk fault (diskfault.go)
}

// Compile-time check that RateLimitSource implements ratelimit.Source.
var _ ratelimit.Source = (*RateLimitSource)(nil)

// OpenRateLimit opens the rate-limit database at path, creating the file
// with mode 0600 if it does not exist, and brings its schema (the
// migrations of [migrations.SQLiteRateLimit]) up to date. now is the
// source's clock, read inside every transaction, and also dates the
// migrations; nil means time.Now.
func OpenRateLimit(ctx context.Context, path string, now func() time.Time) (*RateLimitSource, error) {
	return openRateLimitFile(ctx, path, now, true)
}

// OpenRateLimitShared is OpenRateLimit for a file other processes may
// have open too: it takes no lock and keeps no bucket cache, each batch
// reading its buckets from the file.
func OpenRateLimitShared(ctx context.Context, path string, now func() time.Time) (*RateLimitSource, error) {
	return openRateLimitFile(ctx, path, now, false)
}

// openRateLimitFile opens the file at path, with the lock and the bucket
// cache when exclusive.
func openRateLimitFile(ctx context.Context, path string, now func() time.Time, exclusive bool) (*RateLimitSource, error) {
	if now == nil {
		now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: ratelimit: resolving %s: %w", path, err)
	}
	if err := createFile(abs); err != nil {
		return nil, &sharedError{err}
	}
	var lock *os.File
	if exclusive {
		if lock, err = lockDB(abs); err != nil {
			return nil, &sharedError{err}
		}
	}
	s, err := openRateLimit(ctx, abs, now)
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	s.lock = lock
	s.cache.off = !exclusive
	return s, nil
}

// openRateLimit is OpenRateLimit once the file exists and is locked.
func openRateLimit(ctx context.Context, abs string, now func() time.Time) (s *RateLimitSource, err error) {
	s = &RateLimitSource{path: abs, now: now}
	if s.w, err = openRateLimitWriter(ctx, abs); err != nil {
		return nil, err
	}
	var tables int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'buckets'`).Scan(&tables); err != nil {
		s.w.Close()
		return nil, fmt.Errorf("sqlite: ratelimit: opening %s: %w", abs, err)
	}
	s.fresh = tables == 0
	if err := migrateRateLimit(ctx, s.w, abs, now); err != nil {
		s.w.Close()
		return nil, err
	}
	if s.r, err = openReaders(ctx, abs); err != nil {
		s.w.Close()
		return nil, &sharedError{err}
	}
	if s.stmts, err = prepareRateLimit(ctx, s.w, s.r); err != nil {
		s.r.Close()
		s.w.Close()
		return nil, err
	}
	return s, nil
}

// openRateLimitWriter opens the single writer connection with
// synchronous=NORMAL and checks that the pragmas took effect.
func openRateLimitWriter(ctx context.Context, path string) (*sql.DB, error) {
	pragmas := []string{
		fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis),
		"journal_mode(WAL)",
		"synchronous(NORMAL)",
	}
	db, err := sql.Open(driverName, dsn(path, pragmas, url.Values{"_txlock": {"immediate"}}))
	if err != nil {
		return nil, fmt.Errorf("sqlite: ratelimit: opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	checks := []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"synchronous", "1"}, // NORMAL
	}
	for _, c := range checks {
		var got string
		if err := db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlite: ratelimit: opening %s: reading pragma %s: %w", path, c.pragma, err)
		}
		if got != c.want {
			db.Close()
			return nil, fmt.Errorf("sqlite: ratelimit: opening %s: pragma %s is %q, want %q", path, c.pragma, got, c.want)
		}
	}
	return db, nil
}

// migrateRateLimit applies the rate-limit migrations db lacks.
func migrateRateLimit(ctx context.Context, db *sql.DB, path string, now func() time.Time) error {
	ms, err := migrations.List(migrations.SQLiteRateLimit(), migrations.SQLiteRateLimitDir)
	if err != nil {
		return fmt.Errorf("sqlite: ratelimit: %w", err)
	}
	if len(ms) == 0 {
		return errors.New("sqlite: ratelimit: no embedded migrations")
	}
	if err := applyMigrations(ctx, db, path, ms, now); err != nil {
		return &sharedError{err}
	}
	return nil
}

// Close closes the reader pool and then the writer connection, which,
// being the last connection, checkpoints the write-ahead log. Stop
// [RateLimitSource.Run] and wait for every Apply to return first.
func (s *RateLimitSource) Close() error {
	errS := s.stmts.close()
	errR := s.r.Close()
	errW := s.w.Close()
	var errL error
	if s.lock != nil {
		errL = s.lock.Close() // releases the flock
		s.lock = nil
	}
	if err := errors.Join(errS, errR, errW, errL); err != nil {
		return fmt.Errorf("sqlite: ratelimit: closing %s: %w", s.path, err)
	}
	return nil
}

// Ping checks that both the writer connection and the reader pool work.
func (s *RateLimitSource) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ratelimit: ping writer: %w", err)
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ratelimit: ping readers: %w", err)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *RateLimitSource) Path() string { return s.path }

// sharedError is an error of a helper shared with Store, whose messages
// begin "sqlite: ", renamed to read "sqlite: ratelimit: …". It unwraps to
// the original, so errors.As still finds a *SchemaTooNewError.
type sharedError struct{ err error }

// Error implements error.
func (e *sharedError) Error() string {
	return "sqlite: ratelimit: " + strings.TrimPrefix(e.err.Error(), "sqlite: ")
}

// Unwrap returns the original error.
func (e *sharedError) Unwrap() error { return e.err }

// clock returns the source's now in microseconds.
func (s *RateLimitSource) clock() int64 { return s.now().UnixMicro() }
