package sqlite

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// ReplacingOrder implements acme.Store.
func (s *Store) ReplacingOrder(ctx context.Context, certID string) (*acme.Order, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	o, err := sqlrow.ScanOrder(s.r.QueryRowContext(ctx, `SELECT `+sqlrow.OrderCols+` FROM orders
		WHERE replaces = ? AND status = ?`, certID, string(acme.StatusValid)))
	if err != nil {
		return nil, drv.RowErr("order replacing "+certID, err)
	}
	return o, nil
}

// SetRenewalWindows implements acme.Store, in one transaction; it marks the
// certificates RenewNow.
func (s *Store) SetRenewalWindows(ctx context.Context, serials []string, start, end time.Time) error {
	if err := drv.CheckTimes("set renewal windows", start, end); err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		for _, serial := range serials {
			if _, err := w.tx.ExecContext(writeCtx, `UPDATE certificates SET renewal_start = ?, renewal_end = ?, renew_now = 1 WHERE serial = ?`,
				sqlrow.ToNanos(start), sqlrow.ToNanos(end), serial); err != nil {
				return drv.Errorf("set renewal window of %s: %w", serial, err)
			}
			w.edit(editDropCert(serial))
		}
		return nil
	})
}

// RenewalWindows implements acme.Inventory.
// A page reads the covering index certificates_renewal from the previous
// page's last window, so reading every page is one pass over that index
// (TestQueryPlans).
func (s *Store) RenewalWindows(ctx context.Context, after time.Time, from acme.RenewalWindow, limit int) ([]acme.RenewalWindow, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "renewal windows", renewalWindowsQuery, sqlrow.RenewalWindowArgs(after, from, limit), sqlrow.ScanRenewalWindow)
}

// renewalWindowsQuery is the query of a page of RenewalWindows.
const renewalWindowsQuery = `SELECT ` + sqlrow.RenewalWindowCols + ` FROM certificates
	WHERE revoked_at IS NULL AND (renewal_end, serial) > (?, ?)
	ORDER BY renewal_end, serial LIMIT ?`
