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
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/acme"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// driverName is the database/sql name of the modernc.org/sqlite driver.
const driverName = "sqlite"

// busyTimeoutMillis is how long a connection waits for a lock held by
// another process before failing with SQLITE_BUSY.
const busyTimeoutMillis = 5000

// minReaders is the least number of connections in the read pool.
const minReaders = 4

// Store is an acme.Store backed by a SQLite database file. It is safe for
// concurrent use. Close it when done.
//
// Open starts a goroutine, the writer, that runs every write of the store
// (see write); Close stops it, after the writes in progress, and waits for
// it.
type Store struct {
	path string
	w    *sql.DB // the single writer connection, used by the writer goroutine
	r    *sql.DB // the pool of query-only reader connections

	rs [numReadStmts]*sql.Stmt  // prepared on r
	ws [numWriteStmts]*sql.Stmt // prepared on w

	ops        chan *writeOp // the writer's queue, closed by Close
	writerDone chan struct{} // closed when the writer goroutine returns
	closeMu    sync.RWMutex  // held by enqueuers for reading, by Close to close ops
	closed     bool          // guarded by closeMu
	closeOnce  func() error  // closes the store once
	commits    atomic.Int64  // transactions the writer committed, for tests
	cache      *objCache     // orders and authorizations (cache.go)
	lock       *os.File      // the lock file, held until Close (lock.go); nil where unsupported

	commitObs atomic.Pointer[acme.StoreObserver] // where the writer reports its commits (ReportCommits)
	faults    faultLog                           // the last write that failed for a disk fault (diskfault.go)
}

// Compile-time check that Store implements acme.Store.
var _ acme.Store = (*Store)(nil)

// Open opens the SQLite database at path, creating the file with mode 0600
// if it does not exist, and brings its schema up to date. now is the clock
// used to record when migrations were applied; nil means time.Now.
func Open(ctx context.Context, path string, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	abs, lock, err := createLocked(path)
	if err != nil {
		return nil, err
	}
	unlock := func() {
		if lock != nil {
			lock.Close()
		}
	}

	s := &Store{path: abs, cache: newObjCache(cacheEntries, cacheCerts), lock: lock}
	if s.w, err = openWriter(ctx, abs); err != nil {
		unlock()
		return nil, err
	}
	if err := migrate(ctx, s.w, abs, now); err != nil {
		s.w.Close()
		unlock()
		return nil, err
	}
	if s.r, err = openReaders(ctx, abs); err != nil {
		s.w.Close()
		unlock()
		return nil, err
	}
	if err := s.prepareStmts(ctx); err != nil {
		s.closeStmts()
		s.r.Close()
		s.w.Close()
		unlock()
		return nil, err
	}
	s.ops = make(chan *writeOp, writeQueueLen)
	s.writerDone = make(chan struct{})
	s.closeOnce = sync.OnceValue(s.doClose)
	go s.runWriter()
	return s, nil
}

// createLocked resolves path, creates the database file there unless it
// exists (createFile) and takes its lock (lockDB: nil where unsupported),
// which the caller closes when it lets the file go.
func createLocked(path string) (abs string, lock *os.File, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", nil, fmt.Errorf("sqlite: resolving %s: %w", path, err)
	}
	if err := createFile(abs); err != nil {
		return "", nil, err
	}
	if lock, err = lockDB(abs); err != nil {
		return "", nil, err
	}
	return abs, lock, nil
}

// createFile creates the database file with mode 0600 unless it exists, so
// that SQLite (which would use 0644) never creates it; SQLite gives the
// -wal and -shm files the permissions of the database file.
func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: creating %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlite: creating %s: %w", path, err)
	}
	return nil
}

// dsn returns the modernc.org/sqlite data source name of the database file
// at the absolute path with the given pragmas and extra query parameters.
func dsn(path string, pragmas []string, extra url.Values) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	for k, vs := range extra {
		q[k] = append(q[k], vs...)
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}
	return u.String()
}

// openWriter opens the single writer connection and checks that the
// pragmas the store relies on took effect.
func openWriter(ctx context.Context, path string) (*sql.DB, error) {
	pragmas := []string{
		fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis),
		"journal_mode(WAL)",
		"synchronous(FULL)",
		"foreign_keys(1)",
		// The savepoints of group commit journal every page an operation
		// changes; in memory, not in a temporary file.
		"temp_store(MEMORY)",
	}
	db, err := sql.Open(driverName, dsn(path, pragmas, url.Values{"_txlock": {"immediate"}}))
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)

	checks := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL
		{"foreign_keys", "1"},
		{"temp_store", "2"}, // MEMORY
	}
	for _, c := range checks {
		var got string
		if err := db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			db.Close()
			return nil, fmt.Errorf("sqlite: opening %s: reading pragma %s: %w", path, c.pragma, err)
		}
		if got != c.want {
			db.Close()
			return nil, fmt.Errorf("sqlite: opening %s: pragma %s is %q, want %q", path, c.pragma, got, c.want)
		}
	}
	return db, nil
}

// openReaders opens the pool of query-only reader connections.
func openReaders(ctx context.Context, path string) (*sql.DB, error) {
	pragmas := []string{
		fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis),
		"query_only(1)",
	}
	db, err := sql.Open(driverName, dsn(path, pragmas, nil))
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening readers of %s: %w", path, err)
	}
	n := max(minReaders, runtime.GOMAXPROCS(0))
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: opening readers of %s: %w", path, err)
	}
	return db, nil
}

// Compile-time checks of the optional reporting interfaces.
var (
	_ acme.CommitReporter = (*Store)(nil)
	_ acme.StatsReporter  = (*Store)(nil)
)

// ReportCommits implements acme.CommitReporter: the writer sends o every
// transaction it commits from now on.
func (s *Store) ReportCommits(o acme.StoreObserver) {
	if o == nil {
		s.commitObs.Store(nil)
		return
	}
	s.commitObs.Store(&o)
}

// StoreStats implements acme.StatsReporter: the writer's queue and the
// reader pool. The writer's own connection is not counted: it is always
// open and only the writer uses it.
func (s *Store) StoreStats() acme.StoreStats {
	st := s.r.Stats()
	return acme.StoreStats{
		QueuedWrites: len(s.ops),
		Conns:        st.OpenConnections,
		ConnsInUse:   st.InUse,
		MaxConns:     st.MaxOpenConnections,
		ConnWaits:    uint64(st.WaitCount),
		ConnWait:     st.WaitDuration,
	}
}

// Close stops the writer goroutine, once it has run every write already
// queued, and waits for it; then it closes the reader pool and the writer
// connection, which, being the last connection, checkpoints the write-ahead
// log. Calls made after Close fail; later calls of Close return the first
// one's result.
func (s *Store) Close() error { return s.closeOnce() }

// doClose is Close, run once.
func (s *Store) doClose() error {
	s.closeMu.Lock()
	s.closed = true
	close(s.ops)
	s.closeMu.Unlock()
	<-s.writerDone

	errS := s.closeStmts()
	errR := s.r.Close()
	errW := s.w.Close()
	var errL error
	if s.lock != nil {
		errL = s.lock.Close() // releases the flock
	}
	if err := errors.Join(errS, errR, errW, errL); err != nil {
		return fmt.Errorf("sqlite: closing %s: %w", s.path, err)
	}
	return nil
}

// SoleWriter implements renewal.SoleWriter: true while Open's lock on the
// file is held (lockDB), which keeps every other process from writing it;
// false where there is no such lock.
func (s *Store) SoleWriter() bool { return s.lock != nil }

// Ping checks that both the writer connection and the reader pool work.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping writer: %w", err)
	}
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: ping readers: %w", err)
	}
	return nil
}

// DB returns the query-only reader pool, for diagnostics and operations
// tooling. Statements that modify the database fail on it.
func (s *Store) DB() *sql.DB { return s.r }

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }
