// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// PendingAuthzs implements acme.LimitRecords, for the limiter to rebuild
// the pending-authorizations counts it lost.
func (s *Store) PendingAuthzs(ctx context.Context, now time.Time) ([]acme.PendingRecord, error) {
	if err := drv.CheckTimes("pending authorizations", now); err != nil {
		return nil, err
	}
	return collect(ctx, s.pool, "pending authorizations",
		`SELECT account_id, id, expires FROM authzs WHERE status = $1 AND expires > $2`,
		[]any{string(acme.StatusPending), sqlrow.ToNanos(now)}, sqlrow.ScanPendingRecord)
}

// IssuedSince implements acme.LimitRecords by the certificates_issued
// index, for the limiter to rebuild the duplicate-certificate counts.
func (s *Store) IssuedSince(ctx context.Context, since time.Time) ([]acme.IssuedRecord, error) {
	if err := drv.CheckTimes("certificates issued since", since); err != nil {
		return nil, err
	}
	return collect(ctx, s.pool, "certificates issued since "+since.UTC().Format(time.RFC3339),
		`SELECT account_id, order_id, names, issued_at FROM certificates WHERE issued_at >= $1 AND revoked_at IS NULL`,
		[]any{sqlrow.ToNanos(since)}, sqlrow.ScanIssuedRecord)
}

var _ acme.LimitRecords = (*Store)(nil)
