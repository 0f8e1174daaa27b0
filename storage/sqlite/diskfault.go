// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/weir-pki/weir/ratelimit"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Disk faults.
//
// A write that fails because the file cannot be written (the disk is full,
// the file or its file system is read-only, an I/O error) is not the
// caller's mistake and not a bug: Store wraps its error in
// acme.ErrUnavailable (a 503 with Retry-After for the client) and
// RateLimitSource in ratelimit.ErrUnwritable (the limiter refuses rather
// than admitting the request unlimited), and both remember the last one,
// which the server's readiness reads (LastWriteFault). SQLite rolls such a
// transaction back whole, so nothing of it is written.

// isDiskFault reports whether err says that the database file cannot be
// written: SQLITE_FULL, SQLITE_IOERR or SQLITE_READONLY in any of their
// extended forms, or ENOSPC, EROFS, EIO or EDQUOT from the system.
func isDiskFault(err error) bool {
	if err == nil {
		return false
	}
	var se *msqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY:
			return true
		}
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EROFS, syscall.EIO, syscall.EDQUOT} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// faultLog remembers the last write that failed for a disk fault.
type faultLog struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// note records err when it is a disk fault and returns it wrapped in
// sentinel; any other error, or nil, comes back as it is.
func (f *faultLog) note(err, sentinel error) error {
	if !isDiskFault(err) {
		return err
	}
	f.mu.Lock()
	f.at, f.err = time.Now(), err
	f.mu.Unlock()
	return fmt.Errorf("%w: %w", sentinel, err)
}

// last returns when a write last failed for a disk fault, and why; the
// zero time if none has.
func (f *faultLog) last() (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at, f.err
}

// LastWriteFault returns when a write of the store last failed for a disk
// fault, and why; the zero time if none has.
func (s *Store) LastWriteFault() (time.Time, error) { return s.faults.last() }

// LastWriteFault returns when a batch last failed for a disk fault, and
// why; the zero time if none has.
func (s *RateLimitSource) LastWriteFault() (time.Time, error) { return s.faults.last() }

// probeKey is the bucket key of ProbeWrite's row, which no limit uses.
const probeKey = "weir:write-probe"

// ProbeWrite makes a real write to the file, which leaves nothing behind:
// it inserts a row and deletes it again in one transaction, whose changed
// pages SQLite writes to the write-ahead log at COMMIT all the same. It
// fails, wrapping ratelimit.ErrUnwritable, when the file cannot be
// written (a full disk, a read-only file, an I/O error).
func (s *RateLimitSource) ProbeWrite(ctx context.Context) error {
	err := func() error {
		tx, err := s.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE
		if err != nil {
			return err
		}
		defer tx.Rollback() // a no-op after Commit
		if _, err := tx.ExecContext(ctx, `INSERT INTO buckets (key, member, ts) VALUES (?, '', ?)
			ON CONFLICT (key, member) DO UPDATE SET ts = excluded.ts`, probeKey, s.clock()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM buckets WHERE key = ?`, probeKey); err != nil {
			return err
		}
		return tx.Commit()
	}()
	if err != nil {
		return fmt.Errorf("sqlite: ratelimit: write probe: %w", s.faults.note(err, ratelimit.ErrUnwritable))
	}
	return nil
}
