package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

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
	// The authorizations the order reuses: those of o.AuthzIDs not created
	// with it.
	var reused []string
	for _, id := range o.AuthzIDs {
		if !slices.ContainsFunc(newAuthzs, func(a *acme.Authorization) bool { return a.ID == id }) {
			reused = append(reused, id)
		}
	}
	for _, id := range reused {
		if !validKey(id) {
			return drv.Errorf("%s: reused authorization %q: %w", what, id, acme.ErrNotFound)
		}
	}

	return s.inTx(ctx, what, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO orders (id, account_id, status, identifiers, authz_ids, not_before, not_after,
			    expires, error, cert_serial, created_at, replaces, profile)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			o.ID, accountID, string(o.Status), idents, authzIDs, sqlrow.ToNanos(o.NotBefore), sqlrow.ToNanos(o.NotAfter),
			sqlrow.ToNanos(o.Expires), problem, o.CertSerial, sqlrow.ToNanos(o.CreatedAt), o.Replaces, o.Profile)
		if err != nil {
			return writeErr(what, err)
		}
		for i, a := range newAuthzs {
			if err := insertAuthz(ctx, tx, a, newArgs[i]); err != nil {
				return err
			}
		}
		for _, id := range reused {
			var owner int64
			err := tx.QueryRow(ctx, `SELECT account_id FROM authzs WHERE id = $1`, id).Scan(&owner)
			switch {
			case errors.Is(err, pgx.ErrNoRows) || err == nil && owner != accountID:
				return drv.Errorf("%s: reused authorization %q: %w", what, id, acme.ErrNotFound)
			case err != nil:
				return drv.Errorf("%s: reused authorization %q: %w", what, id, err)
			}
		}
		return nil
	})
}

// GetOrder returns the order with the given ID.
func (s *Store) GetOrder(ctx context.Context, id string) (*acme.Order, error) {
	what := fmt.Sprintf("order %q", id)
	if !validKey(id) {
		return nil, drv.NotFound(what)
	}
	o, err := sqlrow.ScanOrder(s.pool.QueryRow(ctx, `SELECT `+sqlrow.OrderCols+` FROM orders WHERE id = $1`, id))
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
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
	type row struct {
		seq int64
		id  string
	}
	rows, err := collect(ctx, s.pool, "list orders of account "+accountID,
		`SELECT seq, id FROM orders WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		[]any{acct, after, limit + 1}, func(sc sqlrow.Scanner) (row, error) {
			var r row
			err := sc.Scan(&r.seq, &r.id)
			return r, err
		})
	if err != nil {
		return nil, "", err
	}
	ids := make([]string, 0, min(len(rows), limit))
	for _, r := range rows[:min(len(rows), limit)] {
		ids = append(ids, r.id)
	}
	if len(rows) <= limit {
		return ids, "", nil
	}
	return ids, sqlrow.FormatOrdersCursor(rows[limit-1].seq), nil
}

// orderExists is the query missErr asks after a compare-and-set on an
// order misses.
const orderExists = `SELECT 1 FROM orders WHERE id = $1`

// UpdateOrder writes o.Status, o.Error and o.CertSerial if the stored
// status is still from.
func (s *Store) UpdateOrder(ctx context.Context, o *acme.Order, from acme.Status) error {
	what := fmt.Sprintf("update order %q", o.ID)
	if !validKey(o.ID) {
		return drv.NotFound(what)
	}
	problem, err := sqlrow.NullableJSON(what+": error", o.Error)
	if err != nil {
		return err
	}
	// A unique violation (orders_replaces_valid: another order replacing
	// the same certificate is already valid) is a conflict too.
	return s.cas(ctx, what, "status is not "+string(from),
		`UPDATE orders SET status = $1, error = $2, cert_serial = $3, lease_owner = NULL, lease_until = NULL
		WHERE id = $4 AND status = $5`,
		[]any{string(o.Status), problem, o.CertSerial, o.ID, string(from)}, orderExists, o.ID)
}

// ReplacingOrder implements acme.Store: the valid order whose Replaces is
// certID.
func (s *Store) ReplacingOrder(ctx context.Context, certID string) (*acme.Order, error) {
	what := "order replacing " + certID
	if certID == "" || !validKey(certID) {
		return nil, drv.NotFound(what)
	}
	// The literal predicates let the planner use the partial index
	// orders_replaces_valid, whose predicate they repeat.
	o, err := sqlrow.ScanOrder(s.pool.QueryRow(ctx, `SELECT `+sqlrow.OrderCols+` FROM orders
		WHERE replaces = $1 AND replaces <> '' AND status = 'valid'`, certID))
	if err != nil {
		return nil, drv.RowErr(what, err)
	}
	return o, nil
}
