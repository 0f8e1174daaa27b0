// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

var _ acme.LimitRecords = (*Store)(nil)

// IssuedSince implements acme.LimitRecords, by the certificates_issued
// index: it runs only when the limiter backend has lost its state.
func (s *Store) IssuedSince(ctx context.Context, since time.Time) ([]acme.IssuedRecord, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "certificates issued since "+since.UTC().Format(time.RFC3339),
		`SELECT account_id, order_id, names, issued_at FROM certificates WHERE issued_at >= ? AND revoked_at IS NULL`,
		[]any{sqlrow.ToNanos(since)}, sqlrow.ScanIssuedRecord)
}

// PendingAuthzs implements acme.LimitRecords, by a scan of the
// authorizations (no index serves pending ones).
func (s *Store) PendingAuthzs(ctx context.Context, now time.Time) ([]acme.PendingRecord, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "pending authorizations",
		`SELECT account_id, id, expires FROM authzs WHERE status = ? AND expires > ?`,
		[]any{string(acme.StatusPending), sqlrow.ToNanos(now)}, sqlrow.ScanPendingRecord)
}
