// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	for _, id := range row.Reused {
		if !validKey(id) {
			return drv.Errorf("%s: reused authorization %q: %w", row.What, id, acme.ErrNotFound)
		}
	}

	// One round trip for the inserts and the COMMIT when the order reuses
	// no authorization; else one more for the check of those it reuses
	// before the COMMIT (pipeline.go).
	run := s.inOneTrip
	if len(row.Reused) > 0 {
		run = s.inPipelinedTx
	}
	return run(ctx, row.What, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO orders (`+sqlrow.OrderInsertCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, row.Values()...)
		for _, a := range row.Authzs {
			queueAuthz(b, a)
		}
	}, func(q querier, _ []pgconn.CommandTag, failed *stmtError) error {
		if failed != nil {
			return writeErr(createOrderWhat(row, failed.Index), failed.Err)
		}
		return checkReused(ctx, q, row)
	})
}

// checkReused checks that the order's reused authorizations exist and
// are its account's: one query for all of them, and one each to name the
// first that is not only when one is not.
func checkReused(ctx context.Context, q querier, row *sqlrow.OrderRow) error {
	if len(row.Reused) == 0 {
		return nil
	}
	distinct := map[acme.AuthzID]bool{}
	for _, id := range row.Reused {
		distinct[id] = true
	}
	var owned int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM authzs WHERE id = ANY($1) AND account_id = $2`, row.Reused, row.AccountID).Scan(&owned); err != nil {
		return drv.Wrap(row.What, err)
	}
	if owned == len(distinct) {
		return nil
	}
	for _, id := range row.Reused {
		if err := row.CheckReused(drv, id, q.QueryRow(ctx, `SELECT account_id FROM authzs WHERE id = $1`, id)); err != nil {
			return err
		}
	}
	return drv.Errorf("%s: a reused authorization is not the account's: %w", row.What, acme.ErrNotFound)
}

// createOrderWhat names statement i of CreateOrder's batch in errors: the
// order's INSERT, then each new authorization's and its challenges'.
func createOrderWhat(row *sqlrow.OrderRow, i int) string {
	if i == 0 {
		return row.What
	}
	i--
	for _, a := range row.Authzs {
		if i == 0 {
			return a.What
		}
		if i <= len(a.Authz.Challenges) {
			return a.ChallengeWhat(i - 1)
		}
		i -= 1 + len(a.Authz.Challenges)
	}
	return row.What
}

// GetOrder returns the order with the given ID.
func (s *Store) GetOrder(ctx context.Context, id acme.OrderID) (*acme.Order, error) {
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
func (s *Store) ListOrders(ctx context.Context, accountID acme.AccountID, cursor string, limit int) ([]acme.OrderID, string, error) {
	p, ok, err := sqlrow.NewOrdersPage(drv, accountID, cursor, limit)
	if !ok {
		return nil, "", err
	}
	page, err := collect(ctx, s.pool, "list orders of account "+string(accountID),
		`SELECT seq, id FROM orders WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, p.Values(), sqlrow.ScanOrderID)
	if err != nil {
		return nil, "", err
	}
	ids, next := p.Page(page)
	return ids, next, nil
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
