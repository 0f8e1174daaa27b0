// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

var _ acme.CertificateStore = (*Store)(nil) // with the CRL roles of acme/crl

// RevokedCount implements crl.RevocationCounter (acme/crl); every CRL request of
// every replica asks it (acme.Service.CurrentCRL), so that each replica's
// CRL lists the others' revocations. It reads the count kept
// (sqlrow.RevokedCountSQL, migration 0008): up to 16 rows, whatever the
// number revoked.
func (s *Store) RevokedCount(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, sqlrow.RevokedCountSQL).Scan(&n); err != nil {
		return 0, drv.Errorf("count revoked certificates: %w", err)
	}
	return n, nil
}

// NextCRLNumber implements crl.Numberer in one statement (an upsert
// of the issuer's row, which the row lock serialises across replicas).
func (s *Store) NextCRLNumber(ctx context.Context, issuer string, shard int, floor int64) (int64, error) {
	var n int64
	floor = max(floor, 1)
	if err := s.pool.QueryRow(ctx, sqlrow.NextCRLNumberSQL, issuer, shard, floor).Scan(&n); err != nil {
		return 0, drv.Errorf("next CRL number of issuer %q shard %d: %w", issuer, shard, err)
	}
	return n, nil
}

// RevokedCounts implements crl.ScopedRevocations.
func (s *Store) RevokedCounts(ctx context.Context) (map[acme.CRLScope]int64, error) {
	rows, err := collect(ctx, s.pool, "count revoked certificates by CRL", sqlrow.RevokedCountsSQL, nil, sqlrow.ScanScopeCount)
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
	return collect(ctx, s.pool, what, sqlrow.ListRevokedScopeSQL, []any{scope.Issuer, scope.Shard, sqlrow.ToNanos(now)}, sqlrow.ScanRevocation)
}

var _ acme.CRLShardLister = (*Store)(nil)

// CRLShardsInUse implements acme.CRLShardLister.
func (s *Store) CRLShardsInUse(ctx context.Context, issuer string, now time.Time) ([]int, error) {
	const what = "list the CRL shards in use"
	if err := drv.CheckTimes(what, now); err != nil {
		return nil, err
	}
	return collect(ctx, s.pool, what, sqlrow.CRLShardsInUseSQL, []any{issuer, sqlrow.ToNanos(now)}, sqlrow.ScanShard)
}
