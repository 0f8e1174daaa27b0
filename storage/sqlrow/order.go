// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/weir-pki/weir/acme"
)

// OrderCols are the columns of orders that ScanOrder reads, in order.
const OrderCols = `id, account_id, status, identifiers, authz_ids, not_before, not_after,
	expires, error, cert_serial, created_at, replaces, profile, csr`

// ScanOrder reads one row of OrderCols.
func ScanOrder(row Scanner) (*acme.Order, error) {
	var (
		o                acme.Order
		accountID        int64
		idents, authzIDs string
		problem          *string
	)
	if err := row.Scan(&o.ID, &accountID, &o.Status, &idents, &authzIDs, nanos(&o.NotBefore), nanos(&o.NotAfter),
		nanos(&o.Expires), &problem, &o.CertSerial, nanos(&o.CreatedAt), &o.Replaces, &o.Profile, &o.CSR); err != nil {
		return nil, err
	}
	o.AccountID = FormatAccountID(accountID)
	if err := DecodeOrderJSON(&o, idents, authzIDs, problem); err != nil {
		return nil, err
	}
	return &o, nil
}

// ScanSeqOrder reads one row of seq and OrderCols: an order with its
// sequence number, for a statement whose rows come in no particular order
// (BySeq).
func ScanSeqOrder(row Scanner) (Seq[*acme.Order], error) {
	var r Seq[*acme.Order]
	var err error
	r.Row, err = ScanOrder(WithSeq(row, &r.Seq))
	return r, err
}

// DecodeOrderJSON sets the fields of o stored as JSON, from their
// columns: empty lists as nil, a NULL error as none.
func DecodeOrderJSON(o *acme.Order, idents, authzIDs string, problem *string) error {
	what := "order " + string(o.ID)
	if err := FromJSON(what+" identifiers", idents, &o.Identifiers); err != nil {
		return err
	}
	if len(o.Identifiers) == 0 {
		o.Identifiers = nil
	}
	if err := FromJSON(what+" authorization ids", authzIDs, &o.AuthzIDs); err != nil {
		return err
	}
	if len(o.AuthzIDs) == 0 {
		o.AuthzIDs = nil
	}
	var err error
	o.Error, err = FromNullableJSON[acme.Problem](what+" error", problem)
	return err
}

// OrderInsertCols are the columns of a new order's row, whose values
// OrderRow.Values returns in order; the rest keep their defaults.
const OrderInsertCols = `id, account_id, status, identifiers, authz_ids, not_before, not_after,
	expires, error, cert_serial, created_at, replaces, profile`

// OrderRow is a new order, checked and encoded for its row, with the
// rows of the authorizations created with it.
type OrderRow struct {
	What        string // names the write in errors
	Order       *acme.Order
	AccountID   int64
	Identifiers string  // JSON
	AuthzIDs    string  // JSON
	Error       *string // JSON; nil for none
	// Authzs are the authorizations created with the order.
	Authzs []*AuthzRow
	// Reused are the IDs of o.AuthzIDs that no authorization created with
	// the order has: existing ones the order reuses, which must be the
	// same account's.
	Reused []acme.AuthzID
}

// NewOrderRow checks o, created with the authorizations newAuthzs, and
// encodes its row and theirs, so that the transaction that inserts them
// only runs statements.
func NewOrderRow(d Driver, o *acme.Order, newAuthzs []*acme.Authorization) (*OrderRow, error) {
	r := &OrderRow{What: fmt.Sprintf("create order %q", o.ID), Order: o, Identifiers: "[]"}
	if o.ID == "" {
		return nil, d.Errorf("%s: empty id", r.What)
	}
	var err error
	if r.AccountID, err = d.AccountOf(r.What, o.AccountID); err != nil {
		return nil, err
	}
	if err := d.CheckTimes(r.What, o.NotBefore, o.NotAfter, o.Expires, o.CreatedAt); err != nil {
		return nil, err
	}
	if len(o.Identifiers) > 0 {
		if r.Identifiers, err = ToJSON(r.What+": identifiers", o.Identifiers); err != nil {
			return nil, err
		}
	}
	if r.AuthzIDs, err = StringsJSON(r.What+": authorization ids", o.AuthzIDs); err != nil {
		return nil, err
	}
	if r.Error, err = NullableJSON(r.What+": error", o.Error); err != nil {
		return nil, err
	}
	r.Authzs = make([]*AuthzRow, len(newAuthzs))
	for i, a := range newAuthzs {
		if r.Authzs[i], err = NewAuthzRow(d, a); err != nil {
			return nil, err
		}
	}
	for _, id := range o.AuthzIDs {
		if !slices.ContainsFunc(newAuthzs, func(a *acme.Authorization) bool { return a.ID == id }) {
			r.Reused = append(r.Reused, id)
		}
	}
	return r, nil
}

// Values are the values of OrderInsertCols.
func (r *OrderRow) Values() []any {
	o := r.Order
	return []any{string(o.ID), r.AccountID, string(o.Status), r.Identifiers, r.AuthzIDs, ToNanos(o.NotBefore), ToNanos(o.NotAfter),
		ToNanos(o.Expires), r.Error, o.CertSerial, ToNanos(o.CreatedAt), o.Replaces, o.Profile}
}

// CheckReused checks the reused authorization id from row, a query of
// its account_id: it must exist and be the order's account's.
func (r *OrderRow) CheckReused(d Driver, id acme.AuthzID, row Scanner) error {
	var owner int64
	switch err := row.Scan(&owner); {
	case errors.Is(err, sql.ErrNoRows) || err == nil && owner != r.AccountID:
		return d.Errorf("%s: reused authorization %q: %w", r.What, id, acme.ErrNotFound)
	case err != nil:
		return d.Errorf("%s: reused authorization %q: %w", r.What, id, err)
	}
	return nil
}

// OrdersPage is the page of an account's orders that ListOrders reads.
type OrdersPage struct {
	AccountID int64
	After     int64 // the sequence number the page starts after
	Limit     int
}

// NewOrdersPage checks the arguments of ListOrders; ok is false when the
// account cannot exist, so the page is empty.
func NewOrdersPage(d Driver, accountID acme.AccountID, cursor string, limit int) (p OrdersPage, ok bool, err error) {
	if limit <= 0 {
		return p, false, d.Errorf("list orders: limit %d is not positive", limit)
	}
	if cursor != "" {
		if p.After, ok = ParseOrdersCursor(cursor); !ok {
			return p, false, d.Errorf("list orders: cursor %.40q: %w", cursor, acme.ErrBadCursor)
		}
	}
	p.AccountID, ok = ParseAccountID(accountID)
	p.Limit = limit
	return p, ok, nil
}

// Values are the arguments of the page's query: the account, the
// sequence number to start after, and one more row than the limit, which
// tells whether there is a next page.
func (p OrdersPage) Values() []any { return []any{p.AccountID, p.After, p.Limit + 1} }

// Page cuts the rows read with Values to the page: the IDs of the orders
// and the cursor of the next page, "" when there is none.
func (p OrdersPage) Page(rows []Seq[acme.OrderID]) ([]acme.OrderID, string) {
	var ids []acme.OrderID
	for _, r := range rows[:min(len(rows), p.Limit)] {
		ids = append(ids, r.Row)
	}
	if len(rows) <= p.Limit {
		return ids, ""
	}
	return ids, FormatOrdersCursor(rows[p.Limit-1].Seq)
}

// ScanOrderID reads a row of an order's seq and id.
func ScanOrderID(row Scanner) (Seq[acme.OrderID], error) {
	var r Seq[acme.OrderID]
	err := row.Scan(&r.Seq, &r.Row)
	return r, err
}
