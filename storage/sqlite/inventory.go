// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The inventory queries serve administrators, not ACME clients: they are
// built per call (sqlrow.Inventory) rather than prepared.

var _ acme.Inventory = (*Store)(nil)

// ListAccounts implements acme.Inventory: newest (highest ID) first; the
// cursor is the last ID of the page.
func (s *Store) ListAccounts(ctx context.Context, q acme.AccountQuery) ([]*acme.Account, string, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, "", err
	}
	p, ok, err := inventory().Accounts(q)
	if !ok {
		return nil, "", err
	}
	out, err := collect(ctx, s, "list accounts", p.SQL, p.Args, sqlrow.ScanAccount)
	if err != nil {
		return nil, "", err
	}
	out, next := sqlrow.Cut(out, p.Limit, func(a *acme.Account) string { return string(a.ID) })
	return out, next, nil
}

// ListCertificates implements acme.Inventory: newest issued first; the
// cursor is the issue time and serial of the last certificate of the page.
func (s *Store) ListCertificates(ctx context.Context, q acme.CertQuery) ([]*acme.Certificate, string, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, "", err
	}
	dense := false
	if probe, args, ok := inventory().SearchProbe(q.Search); ok {
		var n int
		if err := s.r.QueryRowContext(ctx, probe, args...).Scan(&n); err != nil {
			return nil, "", drv.Errorf("list certificates: search: %w", err)
		}
		dense = n >= sqlrow.SearchDense
	}
	p, ok, err := inventory().Certificates(q, certCols, dense)
	if !ok {
		return nil, "", err
	}
	out, err := collect(ctx, s, "list certificates", p.SQL, p.Args, scanCert)
	if err != nil {
		return nil, "", err
	}
	out, next := sqlrow.Cut(out, p.Limit, sqlrow.CertCursor)
	return out, next, nil
}

// ListAllOrders implements acme.Inventory: newest first; the cursor is the
// creation sequence number of the last order of the page.
func (s *Store) ListAllOrders(ctx context.Context, q acme.OrderQuery) ([]*acme.Order, string, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, "", err
	}
	p, ok, err := inventory().Orders(q)
	if !ok {
		return nil, "", err
	}
	rows, err := collect(ctx, s, "list orders", p.SQL, p.Args, sqlrow.ScanSeqOrder)
	if err != nil {
		return nil, "", err
	}
	rows, next := sqlrow.Cut(rows, p.Limit, func(r sqlrow.Seq[*acme.Order]) string { return sqlrow.FormatOrdersCursor(r.Seq) })
	return sqlrow.Unseq(rows), next, nil
}

// collect runs a reader query and reads every row with scan.
func collect[T any](ctx context.Context, s *Store, what, query string, args []any, scan func(sqlrow.Scanner) (T, error)) ([]T, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, drv.Wrap(what, err)
	}
	defer rows.Close()
	return sqlrow.Collect(drv, what, rows, scan)
}

// Counts implements acme.Inventory from the counts kept (sqlrow.CountsSQL,
// migration 0012), reading a few thousand small rows at most.
func (s *Store) Counts(ctx context.Context, now time.Time) (acme.Counts, error) {
	b := sqlrow.NewCountsBuilder()
	if err := drv.CheckTimes("counts", now); err != nil {
		return b.Counts(), err
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return b.Counts(), err
	}
	_, err = collect(ctx, s, "counts", sqlrow.CountsSQL, sqlrow.CountsArgs(now), b.Scan)
	return b.Counts(), err
}

// Issuance implements acme.Inventory.
func (s *Store) Issuance(ctx context.Context, from time.Time, step time.Duration, n int) ([]int, error) {
	if step <= 0 || n <= 0 || n > 10000 {
		return nil, drv.Errorf("issuance: bad step %s or count %d", step, n)
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, err
	}
	query, args := sqlrow.IssuanceQuery(from, step, n)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, drv.Errorf("issuance: %w", err)
	}
	defer rows.Close()
	out := make([]int, n)
	for rows.Next() {
		var b int64
		var count int
		if err := rows.Scan(&b, &count); err != nil {
			return nil, drv.Errorf("issuance: %w", err)
		}
		if b >= 0 && b < int64(n) {
			out[b] = count
		}
	}
	return out, rows.Err()
}

// RecentNames implements acme.Inventory.
func (s *Store) RecentNames(ctx context.Context, accountID acme.AccountID, since time.Time, limit int) ([]string, [][]string, error) {
	n, ok := sqlrow.ParseAccountID(accountID)
	if !ok {
		return nil, nil, nil
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, nil, err
	}
	limit = acme.PageLimit(limit)
	what := "recent names of account " + string(accountID)
	names, err := collect(ctx, s, what, `SELECT CASE WHEN wildcard = 1 THEN '*.' || ident_value ELSE ident_value END AS name,
		max(created_at) AS t FROM authzs WHERE account_id = ? AND created_at >= ?
		GROUP BY name ORDER BY t DESC, name LIMIT ?`, []any{n, sqlrow.ToNanos(since), limit}, func(row sqlrow.Scanner) (string, error) {
		var name string
		var t int64
		err := row.Scan(&name, &t)
		return name, err
	})
	if err != nil {
		return nil, nil, err
	}
	sets, err := collect(ctx, s, what, `SELECT names, max(issued_at) AS t FROM certificates
		WHERE account_id = ? AND issued_at >= ? GROUP BY name_set ORDER BY t DESC, name_set LIMIT ?`,
		[]any{n, sqlrow.ToNanos(since), limit}, func(row sqlrow.Scanner) ([]string, error) {
			var js string
			var t int64
			if err := row.Scan(&js, &t); err != nil {
				return nil, err
			}
			return sqlrow.StringsFromJSON("certificate names", js)
		})
	if err != nil {
		return nil, nil, err
	}
	return names, sets, nil
}

// inventory is what the inventory lists of sqlrow need of SQLite: LIKE,
// which folds ASCII case.
func inventory() sqlrow.Inventory { return sqlrow.Inventory{Driver: drv, ILike: "LIKE"} }
