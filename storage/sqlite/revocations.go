// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

var _ acme.CertificateStore = (*Store)(nil) // with the CRL roles of acme/crl

// revokedCountQuery is the number of revoked certificates, read from the
// count kept (sqlrow.RevokedCountSQL, migration 0012): one row, whatever
// the number revoked (TestQueryPlans).
const revokedCountQuery = sqlrow.RevokedCountSQL

// RevokedCount implements crl.RevocationCounter (acme/crl); every CRL request asks
// it (acme.Service.CurrentCRL).
func (s *Store) RevokedCount(ctx context.Context) (int64, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.r.QueryRowContext(ctx, revokedCountQuery).Scan(&n); err != nil {
		return 0, drv.Errorf("count revoked certificates: %w", err)
	}
	return n, nil
}

// NextCRLNumber implements crl.Numberer: one upsert by the writer.
func (s *Store) NextCRLNumber(ctx context.Context, issuer string, shard int, floor int64) (int64, error) {
	var n int64
	floor = max(floor, 1)
	err := s.write(ctx, func(w *writeTx) error {
		return w.queryRow(wNextCRLNumber, issuer, shard, floor).Scan(&n)
	})
	if err != nil {
		return 0, drv.Errorf("next CRL number of issuer %q shard %d: %w", issuer, shard, err)
	}
	return n, nil
}

// RevokedCounts implements crl.ScopedRevocations.
func (s *Store) RevokedCounts(ctx context.Context) (map[acme.CRLScope]int64, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := collect(ctx, s, "count revoked certificates by CRL", sqlrow.RevokedCountsSQL, nil, sqlrow.ScanScopeCount)
	if err != nil {
		return nil, err
	}
	return sqlrow.ScopeCounts(rows), nil
}

// ListRevokedScope implements crl.ScopedRevocations.
func (s *Store) ListRevokedScope(ctx context.Context, scope acme.CRLScope, now time.Time) ([]acme.Revocation, error) {
	const what = "list revoked certificates of a CRL"
	if err := drv.CheckTimes(what, now); err != nil {
		return nil, err
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, strings.ReplaceAll(sqlrow.ListRevokedScopeSQL, "$", "?"), scope.Issuer, scope.Shard, sqlrow.ToNanos(now))
	if err != nil {
		return nil, drv.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	return sqlrow.Collect(drv, what, rows, sqlrow.ScanRevocation)
}

var _ acme.CRLShardLister = (*Store)(nil)

// crlShardsInUseQuery is sqlrow.CRLShardsInUseSQL in SQLite's numbered
// parameters; it reads the index certificates_crl_shard alone
// (TestQueryPlans).
var crlShardsInUseQuery = strings.ReplaceAll(sqlrow.CRLShardsInUseSQL, "$", "?")

// CRLShardsInUse implements acme.CRLShardLister.
func (s *Store) CRLShardsInUse(ctx context.Context, issuer string, now time.Time) ([]int, error) {
	const what = "list the CRL shards in use"
	if err := drv.CheckTimes(what, now); err != nil {
		return nil, err
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, what, crlShardsInUseQuery, []any{issuer, sqlrow.ToNanos(now)}, sqlrow.ScanShard)
}
