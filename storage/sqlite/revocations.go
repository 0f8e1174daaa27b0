package sqlite

import (
	"context"

	"github.com/weir-pki/weir/acme"
)

var _ acme.RevocationCounter = (*Store)(nil)

// revokedCountQuery counts the revoked certificates. SQLite answers it from
// the partial index certificates_revoked (migration 0001), which holds
// exactly the revoked certificates: one step per revoked certificate, not
// per certificate (TestRevokedCountPlan).
const revokedCountQuery = `SELECT COUNT(*) FROM certificates WHERE revoked_at IS NOT NULL`

// RevokedCount implements acme.RevocationCounter; every CRL request asks
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
