// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-pki/weir/storage/sqlrow"
)

// Unexpired counts the certificates of issuer in the database of cfg,
// revoked or not, that are unexpired at now, and gives the last of them
// to expire (sqlrow.UnexpiredSQL). It reads on one read-only connection
// of its own, without Open's migrations, while weir's replicas run. The
// schema of the DSN's search_path must exist (Open refuses it otherwise);
// one without weir's tables (no weir has started on it yet) holds no
// certificates.
func Unexpired(ctx context.Context, cfg Config, issuer string, now time.Time) (sqlrow.Unexpired, error) {
	if err := cfg.Validate(); err != nil {
		return sqlrow.Unexpired{}, err
	}
	if err := drv.CheckTimes("unexpired certificates", now); err != nil {
		return sqlrow.Unexpired{}, err
	}
	pc, err := cfg.poolConfig()
	if err != nil {
		return sqlrow.Unexpired{}, err
	}
	cc := pc.ConnConfig
	cc.RuntimeParams["default_transaction_read_only"] = "on"
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return sqlrow.Unexpired{}, fmt.Errorf("postgres: connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := currentSchema(ctx, conn); err != nil {
		return sqlrow.Unexpired{}, fmt.Errorf("postgres: %w", err)
	}
	u, err := sqlrow.ScanUnexpired(conn.QueryRow(ctx, sqlrow.UnexpiredSQL, sqlrow.UnexpiredArgs(issuer, now)...))
	if pgCode(err) == codeUndefinedTable {
		return sqlrow.Unexpired{}, nil
	}
	if err != nil {
		return sqlrow.Unexpired{}, fmt.Errorf("postgres: counting the unexpired certificates of issuer %s: %w", issuer, err)
	}
	return u, nil
}
