// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-pki/weir/storage/sqlrow"
)

// Unexpired counts the certificates of issuer in the database file at
// path, revoked or not, that are unexpired at now, and gives the last of
// them to expire (sqlrow.UnexpiredSQL). A running weir may hold the file
// (its lock, lockDB, keeps out another Open): it reads on a query-only
// connection of its own, without Open's lock or migrations, as Backup
// does, so it never writes to the database. A missing file holds no
// certificates, and is not created.
func Unexpired(ctx context.Context, path, issuer string, now time.Time) (sqlrow.Unexpired, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return sqlrow.Unexpired{}, fmt.Errorf("sqlite: resolving %s: %w", path, err)
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return sqlrow.Unexpired{}, nil
	} else if err != nil {
		return sqlrow.Unexpired{}, fmt.Errorf("sqlite: %w", err)
	}
	if err := drv.CheckTimes("unexpired certificates", now); err != nil {
		return sqlrow.Unexpired{}, err
	}
	pragmas := []string{fmt.Sprintf("busy_timeout(%d)", busyTimeoutMillis), "query_only(1)"}
	db, err := sql.Open(driverName, dsn(abs, pragmas, nil))
	if err != nil {
		return sqlrow.Unexpired{}, fmt.Errorf("sqlite: opening %s: %w", abs, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	u, err := sqlrow.ScanUnexpired(db.QueryRowContext(ctx, sqlrow.UnexpiredSQL, sqlrow.UnexpiredArgs(issuer, now)...))
	if err != nil {
		return sqlrow.Unexpired{}, fmt.Errorf("sqlite: %s: counting the unexpired certificates of issuer %s: %w", abs, issuer, err)
	}
	return u, db.Close()
}
