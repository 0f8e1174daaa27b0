// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The inventory queries serve administrators, not ACME clients: they are
// built per call (sqlrow.Inventory).

// ListAccounts implements acme.Inventory: newest (highest ID) first; the
// cursor is the last ID of the page.
func (s *Store) ListAccounts(ctx context.Context, q acme.AccountQuery) ([]*acme.Account, string, error) {
	p, ok, err := inventory().Accounts(q)
	if !ok {
		return nil, "", err
	}
	out, err := collect(ctx, s.pool, "list accounts", p.SQL, p.Args, sqlrow.ScanAccount)
	if err != nil {
		return nil, "", err
	}
	out, next := sqlrow.Cut(out, p.Limit, func(a *acme.Account) string { return string(a.ID) })
	return out, next, nil
}

// ListCertificates implements acme.Inventory: newest issued first; the
// cursor is the issue time and serial of the last certificate of the page.
func (s *Store) ListCertificates(ctx context.Context, q acme.CertQuery) ([]*acme.Certificate, string, error) {
	dense := false
	if probe, args, ok := inventory().SearchProbe(q.Search); ok {
		var n int
		if err := s.pool.QueryRow(ctx, probe, args...).Scan(&n); err != nil {
			return nil, "", drv.Errorf("list certificates: search: %w", err)
		}
		dense = n >= sqlrow.SearchDense
	}
	p, ok, err := inventory().Certificates(q, sqlrow.CertCols, dense)
	if !ok {
		return nil, "", err
	}
	out, err := collect(ctx, s.pool, "list certificates", p.SQL, p.Args, sqlrow.ScanCert)
	if err != nil {
		return nil, "", err
	}
	out, next := sqlrow.Cut(out, p.Limit, sqlrow.CertCursor)
	return out, next, nil
}

// ListAllOrders implements acme.Inventory: newest first; the cursor is the
// creation sequence number of the last order of the page.
func (s *Store) ListAllOrders(ctx context.Context, q acme.OrderQuery) ([]*acme.Order, string, error) {
	p, ok, err := inventory().Orders(q)
	if !ok {
		return nil, "", err
	}
	rows, err := collect(ctx, s.pool, "list orders", p.SQL, p.Args, sqlrow.ScanSeqOrder)
	if err != nil {
		return nil, "", err
	}
	rows, next := sqlrow.Cut(rows, p.Limit, func(r sqlrow.Seq[*acme.Order]) string { return sqlrow.FormatOrdersCursor(r.Seq) })
	return sqlrow.Unseq(rows), next, nil
}

// Counts implements acme.Inventory.
func (s *Store) Counts(ctx context.Context, now time.Time) (acme.Counts, error) {
	b := sqlrow.NewCountsBuilder()
	if err := drv.CheckTimes("counts", now); err != nil {
		return b.Counts(), err
	}
	_, err := collect(ctx, s.pool, "counts", sqlrow.CountsSQL, sqlrow.CountsArgs(now), b.Scan)
	return b.Counts(), err
}

// Issuance implements acme.Inventory.
func (s *Store) Issuance(ctx context.Context, from time.Time, step time.Duration, n int) ([]int, error) {
	if step <= 0 || n <= 0 || n > 10000 {
		return nil, drv.Errorf("issuance: bad step %s or count %d", step, n)
	}
	if err := drv.CheckTimes("issuance", from); err != nil {
		return nil, err
	}
	type bucket struct {
		b int64
		n int
	}
	query, args := sqlrow.IssuanceQuery(from, step, n)
	buckets, err := collect(ctx, s.pool, "issuance", query, args,
		func(row sqlrow.Scanner) (bucket, error) {
			var b bucket
			err := row.Scan(&b.b, &b.n)
			return b, err
		})
	if err != nil {
		return nil, err
	}
	out := make([]int, n)
	for _, b := range buckets {
		if b.b >= 0 && b.b < int64(n) {
			out[b.b] = b.n
		}
	}
	return out, nil
}

// RecentNames implements acme.Inventory.
func (s *Store) RecentNames(ctx context.Context, accountID acme.AccountID, since time.Time, limit int) ([]string, [][]string, error) {
	n, ok := sqlrow.ParseAccountID(accountID)
	if !ok {
		return nil, nil, nil
	}
	if err := drv.CheckTimes("recent names", since); err != nil {
		return nil, nil, err
	}
	limit = acme.PageLimit(limit)
	what := "recent names of account " + string(accountID)
	names, err := collect(ctx, s.pool, what, `SELECT name FROM (
		    SELECT CASE WHEN wildcard THEN '*.' || ident_value ELSE ident_value END AS name, max(created_at) AS t
		    FROM authzs WHERE account_id = $1 AND created_at >= $2 GROUP BY 1) AS x
		ORDER BY t DESC, name LIMIT $3`, []any{n, sqlrow.ToNanos(since), limit}, func(row sqlrow.Scanner) (string, error) {
		var name string
		err := row.Scan(&name)
		return name, err
	})
	if err != nil {
		return nil, nil, err
	}
	sets, err := collect(ctx, s.pool, what, `SELECT names FROM (
		    SELECT DISTINCT ON (name_set) name_set, names, issued_at AS t FROM certificates
		    WHERE account_id = $1 AND issued_at >= $2 ORDER BY name_set, issued_at DESC) AS x
		ORDER BY t DESC, name_set LIMIT $3`, []any{n, sqlrow.ToNanos(since), limit}, func(row sqlrow.Scanner) ([]string, error) {
		var js string
		if err := row.Scan(&js); err != nil {
			return nil, err
		}
		return sqlrow.StringsFromJSON("certificate names", js)
	})
	if err != nil {
		return nil, nil, err
	}
	return names, sets, nil
}

// inventory is what the inventory lists of sqlrow need of PostgreSQL:
// ILIKE, which under the schema's "C" collation folds ASCII case only, as
// SQLite's LIKE does, and no comparison with text it would refuse.
func inventory() sqlrow.Inventory {
	return sqlrow.Inventory{Driver: drv, ILike: "ILIKE", Storable: validKey[string]}
}
