// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/renewal"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// replacingOrderQuery finds the valid order replacing a certificate by
// the partial index orders_replaces_valid. Its predicates are literals:
// SQLite uses a partial index only for a query whose WHERE implies the
// index's, and a bound status (status = ?) does not, which made this a
// scan of every order for each ARI renewal (the fleet drill's 5,000
// clients found it).
const replacingOrderQuery = `SELECT ` + sqlrow.OrderCols + ` FROM orders
	WHERE replaces = ? AND replaces != '' AND status = 'valid'`

// ReplacingOrder implements acme.Store.
func (s *Store) ReplacingOrder(ctx context.Context, certID string) (*acme.Order, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	o, err := sqlrow.ScanOrder(s.r.QueryRowContext(ctx, replacingOrderQuery, certID))
	if err != nil {
		return nil, drv.RowErr("order replacing "+certID, err)
	}
	return o, nil
}

// SetRenewalWindows implements acme.Store, in one transaction; it marks the
// certificates RenewNow and records the unrevoked windows it moves that
// ended after at (renewal.Removal).
func (s *Store) SetRenewalWindows(ctx context.Context, serials []string, start, end, at time.Time) error {
	if err := drv.CheckTimes("set renewal windows", start, end, at); err != nil {
		return err
	}
	return s.write(ctx, func(w *writeTx) error {
		for _, serial := range serials {
			if err := recordRemoval(w, wPlanRemovalMoved, serial, at); err != nil {
				return drv.Errorf("set renewal window of %s: %w", serial, err)
			}
			if _, err := w.tx.ExecContext(writeCtx, `UPDATE certificates SET renewal_start = ?, renewal_end = ?, renew_now = 1 WHERE serial = ?`,
				sqlrow.ToNanos(start), sqlrow.ToNanos(end), serial); err != nil {
				return drv.Errorf("set renewal window of %s: %w", serial, err)
			}
			w.edit(editDropCert(serial))
		}
		return nil
	})
}

// recordRemoval records the window of serial as a removal at at with the
// statement id (wPlanRemovalRevoked or wPlanRemovalMoved), if it ends
// after at, and deletes the removals older than renewal.RemovalsKept.
func recordRemoval(w *writeTx, id writeStmt, serial string, at time.Time) error {
	res, err := w.exec(id, sqlrow.ToNanos(at), serial)
	if err != nil {
		return fmt.Errorf("recording its renewal window's removal: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	if _, err := w.exec(wPrunePlanRemovals, sqlrow.PlanRemovalsPruneArg(at)); err != nil {
		return fmt.Errorf("deleting old removals: %w", err)
	}
	return nil
}

// RenewalWindows implements acme.Inventory.
// A page reads the covering index certificates_renewal from the previous
// page's last window, so reading every page is one pass over that index
// (TestQueryPlans).
func (s *Store) RenewalWindows(ctx context.Context, after, before time.Time, from renewal.Window, limit int) ([]renewal.Window, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "renewal windows", renewalWindowsQuery, sqlrow.RenewalWindowArgs(after, before, from, limit), sqlrow.ScanRenewalWindow)
}

// IssuedWindows implements acme.Inventory: one range of the index
// certificates_issued per page (TestQueryPlans).
func (s *Store) IssuedWindows(ctx context.Context, since time.Time, from renewal.IssuedWindow, limit int) ([]renewal.IssuedWindow, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "issued windows", issuedWindowsQuery, sqlrow.IssuedWindowArgs(since, from, limit), sqlrow.ScanIssuedWindow)
}

// PlanRemovals implements acme.Inventory.
func (s *Store) PlanRemovals(ctx context.Context, since time.Time, from renewal.Removal, limit int) ([]renewal.Removal, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	return collect(ctx, s, "plan removals", planRemovalsQuery, sqlrow.PlanRemovalArgs(since, from, limit), sqlrow.ScanPlanRemoval)
}

// The queries of the renewal planner, in SQLite's numbered parameters.
var (
	renewalWindowsQuery = strings.ReplaceAll(sqlrow.RenewalWindowsSQL, "$", "?")
	issuedWindowsQuery  = strings.ReplaceAll(sqlrow.IssuedWindowsSQL, "$", "?")
	planRemovalsQuery   = strings.ReplaceAll(sqlrow.PlanRemovalsSQL, "$", "?")
)
