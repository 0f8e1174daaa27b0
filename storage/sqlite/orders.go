package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// CreateOrder stores o and newAuthzs, with their challenges, in one
// transaction. Every ID in o.AuthzIDs must name either one of newAuthzs or
// an existing authorization of the same account; otherwise the error wraps
// acme.ErrNotFound. A duplicate ID gives an error wrapping acme.ErrConflict.
func (s *Store) CreateOrder(ctx context.Context, o *acme.Order, newAuthzs []*acme.Authorization) error {
	what := fmt.Sprintf("create order %q", o.ID)
	if o.ID == "" {
		return drv.Errorf("%s: empty id", what)
	}
	accountID, ok := sqlrow.ParseAccountID(o.AccountID)
	if !ok {
		return drv.Errorf("%s: account %q: %w", what, o.AccountID, acme.ErrNotFound)
	}
	if err := drv.CheckTimes(what, o.NotBefore, o.NotAfter, o.Expires, o.CreatedAt); err != nil {
		return err
	}
	idents := "[]"
	if len(o.Identifiers) > 0 {
		var err error
		if idents, err = sqlrow.ToJSON(what+": identifiers", o.Identifiers); err != nil {
			return err
		}
	}
	authzIDs, err := sqlrow.StringsJSON(what+": authorization ids", o.AuthzIDs)
	if err != nil {
		return err
	}
	problem, err := sqlrow.NullableJSON(what+": error", o.Error)
	if err != nil {
		return err
	}
	newArgs := make([]*authzInsert, len(newAuthzs))
	for i, a := range newAuthzs {
		if newArgs[i], err = authzArgs(a); err != nil {
			return err
		}
	}
	// What reads will return, for the cache; if it cannot be built, it is
	// not cached, and the reads after the commit go to the database.
	cached, cachedAuthzs := storedOrderAuthzs(o, accountID, idents, authzIDs, problem, newAuthzs, newArgs)
	// The authorizations the order reuses: those of o.AuthzIDs not created
	// with it.
	var reused []string
	for _, id := range o.AuthzIDs {
		if !slices.ContainsFunc(newAuthzs, func(a *acme.Authorization) bool { return a.ID == id }) {
			reused = append(reused, id)
		}
	}

	return s.write(ctx, func(w *writeTx) error {
		_, err := w.exec(wInsertOrder,
			o.ID, accountID, string(o.Status), idents, authzIDs, sqlrow.ToNanos(o.NotBefore), sqlrow.ToNanos(o.NotAfter),
			sqlrow.ToNanos(o.Expires), problem, o.CertSerial, sqlrow.ToNanos(o.CreatedAt), o.Replaces, o.Profile)
		if err != nil {
			return writeErr(what, err)
		}
		for i, a := range newAuthzs {
			if err := insertAuthz(w, a, newArgs[i]); err != nil {
				return err
			}
		}
		for _, id := range reused {
			var owner int64
			err := w.queryRow(wAuthzOwner, id).Scan(&owner)
			switch {
			case errors.Is(err, sql.ErrNoRows) || err == nil && owner != accountID:
				return drv.Errorf("%s: reused authorization %q: %w", what, id, acme.ErrNotFound)
			case err != nil:
				return drv.Errorf("%s: reused authorization %q: %w", what, id, err)
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
func storedOrderAuthzs(o *acme.Order, accountID int64, idents, authzIDs string, problem *string,
	newAuthzs []*acme.Authorization, newArgs []*authzInsert) (*acme.Order, []*acme.Authorization) {
	so, err := storedOrder(o, accountID, idents, authzIDs, problem)
	if err != nil {
		return nil, nil
	}
	as := make([]*acme.Authorization, len(newAuthzs))
	for i, a := range newAuthzs {
		if as[i], err = storedAuthz(a, newArgs[i]); err != nil {
			return nil, nil
		}
	}
	return so, as
}

// GetOrder returns the order with the given ID, from the cache (cache.go)
// or else read.
func (s *Store) GetOrder(ctx context.Context, id string) (*acme.Order, error) {
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
func (s *Store) ListOrders(ctx context.Context, accountID, cursor string, limit int) ([]string, string, error) {
	if limit <= 0 {
		return nil, "", drv.Errorf("list orders: limit %d is not positive", limit)
	}
	var after int64
	if cursor != "" {
		var ok bool
		if after, ok = sqlrow.ParseOrdersCursor(cursor); !ok {
			return nil, "", drv.Errorf("list orders: cursor %.40q: %w", cursor, acme.ErrBadCursor)
		}
	}
	acct, ok := sqlrow.ParseAccountID(accountID)
	if !ok {
		return nil, "", nil
	}
	rows, err := s.query(ctx, rListOrders, acct, after, limit+1)
	if err != nil {
		return nil, "", drv.Errorf("list orders of account %s: %w", accountID, err)
	}
	defer rows.Close()
	var (
		ids  []string
		seqs []int64
	)
	for rows.Next() {
		var (
			seq int64
			id  string
		)
		if err := rows.Scan(&seq, &id); err != nil {
			return nil, "", drv.Errorf("list orders of account %s: %w", accountID, err)
		}
		ids, seqs = append(ids, id), append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, "", drv.Errorf("list orders of account %s: %w", accountID, err)
	}
	if len(ids) <= limit {
		return ids, "", nil
	}
	return ids[:limit], sqlrow.FormatOrdersCursor(seqs[limit-1]), nil
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
