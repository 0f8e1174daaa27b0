// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"fmt"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// CreateOrder stores o and newAuthzs, with their challenges, in one
// transaction. Every ID in o.AuthzIDs must name either one of newAuthzs or
// an existing authorization of the same account; otherwise the error wraps
// acme.ErrNotFound. A duplicate ID gives an error wrapping acme.ErrConflict.
func (s *Store) CreateOrder(ctx context.Context, o *acme.Order, newAuthzs []*acme.Authorization) error {
	row, err := sqlrow.NewOrderRow(drv, o, newAuthzs)
	if err != nil {
		return err
	}
	// What reads will return, for the cache; if it cannot be built, it is
	// not cached, and the reads after the commit go to the database.
	cached, cachedAuthzs := storedOrderAuthzs(row)

	return s.write(ctx, func(w *writeTx) error {
		if _, err := w.exec(wInsertOrder, row.Values()...); err != nil {
			return writeErr(row.What, err)
		}
		for _, a := range row.Authzs {
			if err := insertAuthz(w, a); err != nil {
				return err
			}
		}
		for _, id := range row.Reused {
			if err := row.CheckReused(drv, id, w.queryRow(wAuthzOwner, id)); err != nil {
				return err
			}
		}
		if cached != nil {
			w.edit(editPutOrder(cached, cachedAuthzs))
		}
		return nil
	})
}

// storedOrderAuthzs builds the order and authorizations CreateOrder
// inserts as reads will return them (stored.go); nil if it cannot.
func storedOrderAuthzs(row *sqlrow.OrderRow) (*acme.Order, []*acme.Authorization) {
	so, err := storedOrder(row)
	if err != nil {
		return nil, nil
	}
	as := make([]*acme.Authorization, len(row.Authzs))
	for i, a := range row.Authzs {
		if as[i], err = storedAuthz(a); err != nil {
			return nil, nil
		}
	}
	return so, as
}

// GetOrder returns the order with the given ID, from the cache (cache.go)
// or else read.
func (s *Store) GetOrder(ctx context.Context, id acme.OrderID) (*acme.Order, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	if o := s.cache.order(id); o != nil {
		return o, nil
	}
	gen := s.cache.generation()
	o, err := sqlrow.ScanOrder(s.queryRow(ctx, rGetOrder, id))
	if err != nil {
		return nil, drv.RowErr(fmt.Sprintf("order %q", id), err)
	}
	s.cache.fillOrder(o, gen)
	return o, nil
}

// ListOrders returns up to limit IDs of the account's orders, oldest first,
// starting after cursor ("" for the first page), and the cursor of the next
// page, "" when there is none. A cursor is the decimal sequence number of
// the last order of the previous page.
func (s *Store) ListOrders(ctx context.Context, accountID acme.AccountID, cursor string, limit int) ([]acme.OrderID, string, error) {
	p, ok, err := sqlrow.NewOrdersPage(drv, accountID, cursor, limit)
	if !ok {
		return nil, "", err
	}
	rows, err := s.query(ctx, rListOrders, p.Values()...)
	if err != nil {
		return nil, "", drv.Errorf("list orders of account %s: %w", accountID, err)
	}
	defer rows.Close()
	page, err := sqlrow.Collect(drv, "list orders of account "+string(accountID), rows, sqlrow.ScanOrderID)
	if err != nil {
		return nil, "", err
	}
	ids, next := p.Page(page)
	return ids, next, nil
}

// UpdateOrder writes o.Status, o.Error and o.CertSerial if the stored
// status is still from.
func (s *Store) UpdateOrder(ctx context.Context, o *acme.Order, from acme.Status) error {
	what := fmt.Sprintf("update order %q", o.ID)
	problem, err := sqlrow.NullableJSON(what+": error", o.Error)
	if err != nil {
		return err
	}
	id, status, serial := o.ID, string(o.Status), o.CertSerial
	return s.write(ctx, func(w *writeTx) error {
		res, err := w.exec(wUpdateOrder, status, problem, serial, id, string(from))
		if err != nil {
			return drv.Wrap(what, err)
		}
		if err := checkAffected(w, res, what, "status is not "+string(from), wOrderExists, id); err != nil {
			return err
		}
		w.edit(editOrder(id, acme.Status(status), problem, serial))
		return nil
	})
}
