package postgres

import (
	"context"

	"github.com/weir-pki/weir/acme"
)

var _ acme.RevocationCounter = (*Store)(nil)

// RevokedCount implements acme.RevocationCounter; every CRL request of
// every replica asks it (acme.Service.CurrentCRL), so that each replica's
// CRL lists the others' revocations. PostgreSQL answers it from the
// partial index certificates_revoked, which holds exactly the revoked
// certificates.
func (s *Store) RevokedCount(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM certificates WHERE revoked_at IS NOT NULL`).Scan(&n); err != nil {
		return 0, drv.Errorf("count revoked certificates: %w", err)
	}
	return n, nil
}
