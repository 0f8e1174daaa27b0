// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
)

// Backup writes a consistent snapshot of the database to a new file at
// destPath (mode 0600) with VACUUM INTO, while the store stays usable. It
// fails if destPath exists.
func (s *Store) Backup(ctx context.Context, destPath string) error {
	return Backup(ctx, s.path, destPath)
}

// Backup writes a consistent snapshot of the SQLite database at srcPath,
// which a running weir may be using, to a new file at destPath (mode
// 0600), and syncs it to stable storage. VACUUM INTO reads the source in
// one read transaction, so the copy is a consistent snapshot and the
// server's writes proceed meanwhile. It opens the source on a connection
// of its own, without Open's migrations or lock: a backup never writes
// to the database it copies, whichever weir version runs it, and works on
// any SQLite database of weir's (the limiter's too). It fails if srcPath
// does not exist or destPath does.
func Backup(ctx context.Context, srcPath, destPath string) error {
	src, err := filepath.Abs(srcPath)
	if err != nil {
		return fmt.Errorf("sqlite: backup of %s: %w", srcPath, err)
	}
	// Opening a missing file would create an empty database there.
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("sqlite: backup of %s: %w", src, err)
	}
	dest, err := filepath.Abs(destPath)
	if err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", destPath, err)
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	if err := vacuumInto(ctx, src, dest); err != nil {
		os.Remove(dest)
		return fmt.Errorf("sqlite: backup to %s: %w", dest, err)
	}
	return nil
}

// vacuumInto runs VACUUM INTO dest on a connection of its own to src (a
// store's readers are query-only, which forbids it, and its writer would
// block writes for the duration) and syncs the result to stable storage.
func vacuumInto(ctx context.Context, src, dest string) error {
	pragmas := []string{fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis)}
	db, err := sql.Open(driverName, dsn(src, pragmas, nil))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dest); err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	return syncFile(dest)
}

// syncFile flushes the file at path and its directory entry to stable
// storage.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
