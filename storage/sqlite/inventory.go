package sqlite

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The inventory queries serve administrators, not ACME clients: they are
// built per call rather than prepared, and page with keyset cursors so a
// deep page costs the same as the first.

var _ acme.Inventory = (*Store)(nil)

// likeEscape makes s a literal LIKE pattern fragment (ESCAPE '\').
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// ListAccounts implements acme.Inventory: newest (highest ID) first; the
// cursor is the last ID of the page.
func (s *Store) ListAccounts(ctx context.Context, q acme.AccountQuery) ([]*acme.Account, string, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, "", err
	}
	limit := acme.PageLimit(q.Limit)
	where, args := []string{"1 = 1"}, []any{}
	if q.Cursor != "" {
		n, ok := sqlrow.ParseAccountID(q.Cursor)
		if !ok {
			return nil, "", drv.Errorf("list accounts: cursor %.40q: %w", q.Cursor, acme.ErrBadCursor)
		}
		where, args = append(where, "id < ?"), append(args, n)
	}
	if q.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(q.Status))
	}
	if q.Search != "" {
		if n, ok := sqlrow.ParseAccountID(q.Search); ok {
			where, args = append(where, "id = ?"), append(args, n)
		} else {
			pat := "%" + likeEscape(q.Search) + "%"
			where = append(where, `(contact LIKE ? ESCAPE '\' OR key_thumbprint LIKE ? ESCAPE '\' OR created_ip LIKE ? ESCAPE '\')`)
			args = append(args, pat, pat, pat)
		}
	}
	out, err := collect(ctx, s, "list accounts", `SELECT `+sqlrow.AccountCols+` FROM accounts WHERE `+strings.Join(where, " AND ")+
		` ORDER BY id DESC LIMIT ?`, append(args, limit+1), sqlrow.ScanAccount)
	if err != nil {
		return nil, "", err
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// certCursor encodes the position after a certificate in issue order.
func certCursor(c *acme.Certificate) string {
	return strconv.FormatInt(sqlrow.ToNanos(c.IssuedAt), 10) + ":" + c.Serial
}

// ListCertificates implements acme.Inventory: newest issued first; the
// cursor is the issue time and serial of the last certificate of the page.
func (s *Store) ListCertificates(ctx context.Context, q acme.CertQuery) ([]*acme.Certificate, string, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, "", err
	}
	limit := acme.PageLimit(q.Limit)
	where, args := []string{"1 = 1"}, []any{}
	if q.Cursor != "" {
		ts, serial, ok := strings.Cut(q.Cursor, ":")
		n, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil {
			return nil, "", drv.Errorf("list certificates: cursor %.40q: %w", q.Cursor, acme.ErrBadCursor)
		}
		where, args = append(where, "(issued_at < ? OR (issued_at = ? AND serial < ?))"), append(args, n, n, serial)
	}
	if q.AccountID != "" {
		n, ok := sqlrow.ParseAccountID(q.AccountID)
		if !ok {
			return nil, "", nil
		}
		where, args = append(where, "account_id = ?"), append(args, n)
	}
	if q.Search != "" {
		pat := likeEscape(strings.ToLower(q.Search))
		where = append(where, `(serial LIKE ? ESCAPE '\' OR name_set LIKE ? ESCAPE '\')`)
		args = append(args, pat+"%", "%"+pat+"%")
	}
	now := sqlrow.ToNanos(q.Now)
	switch q.State {
	case acme.CertAny:
	case acme.CertActive:
		where, args = append(where, "revoked_at IS NULL AND not_after > ?"), append(args, now)
	case acme.CertRevoked:
		where = append(where, "revoked_at IS NOT NULL")
	case acme.CertExpired:
		where, args = append(where, "revoked_at IS NULL AND not_after <= ?"), append(args, now)
	default:
		return nil, "", drv.Errorf("list certificates: unknown state %q", q.State)
	}
	out, err := collect(ctx, s, "list certificates", `SELECT `+certCols+` FROM certificates WHERE `+strings.Join(where, " AND ")+
		` ORDER BY issued_at DESC, serial DESC LIMIT ?`, append(args, limit+1), scanCert)
	if err != nil {
		return nil, "", err
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = certCursor(out[limit-1])
	}
	return out, next, nil
}

// ListAllOrders implements acme.Inventory: newest first; the cursor is the
// creation sequence number of the last order of the page.
func (s *Store) ListAllOrders(ctx context.Context, q acme.OrderQuery) ([]*acme.Order, string, error) {
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, "", err
	}
	limit := acme.PageLimit(q.Limit)
	where, args := []string{"1 = 1"}, []any{}
	if q.Cursor != "" {
		n, ok := sqlrow.ParseOrdersCursor(q.Cursor)
		if !ok {
			return nil, "", drv.Errorf("list orders: cursor %.40q: %w", q.Cursor, acme.ErrBadCursor)
		}
		where, args = append(where, "seq < ?"), append(args, n)
	}
	if q.AccountID != "" {
		n, ok := sqlrow.ParseAccountID(q.AccountID)
		if !ok {
			return nil, "", nil
		}
		where, args = append(where, "account_id = ?"), append(args, n)
	}
	if q.Status != "" {
		where, args = append(where, "status = ?"), append(args, string(q.Status))
	}
	var seqs []int64
	out, err := collect(ctx, s, "list orders", `SELECT seq, `+sqlrow.OrderCols+` FROM orders WHERE `+strings.Join(where, " AND ")+
		` ORDER BY seq DESC LIMIT ?`, append(args, limit+1), func(row sqlrow.Scanner) (*acme.Order, error) {
		var seq int64
		o, err := sqlrow.ScanOrder(sqlrow.WithSeq(row, &seq))
		seqs = append(seqs, seq)
		return o, err
	})
	if err != nil {
		return nil, "", err
	}
	var next string
	if len(out) > limit {
		out = out[:limit]
		next = strconv.FormatInt(seqs[limit-1], 10)
	}
	return out, next, nil
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

// Counts implements acme.Inventory.
func (s *Store) Counts(ctx context.Context, now time.Time) (acme.Counts, error) {
	c := acme.Counts{Accounts: map[acme.Status]int{}, Orders: map[acme.Status]int{}, Certificates: map[acme.CertState]int{}}
	ctx, err := readCtx(ctx)
	if err != nil {
		return c, err
	}
	group := func(what, q string, put func(k string, n int), args ...any) error {
		rows, err := s.r.QueryContext(ctx, q, args...)
		if err != nil {
			return drv.Errorf("count %s: %w", what, err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				k string
				n int
			)
			if err := rows.Scan(&k, &n); err != nil {
				return drv.Errorf("count %s: %w", what, err)
			}
			put(k, n)
		}
		return rows.Err()
	}
	if err := group("accounts", `SELECT status, count(*) FROM accounts GROUP BY status`,
		func(k string, n int) { c.Accounts[acme.Status(k)] = n }); err != nil {
		return c, err
	}
	if err := group("orders", `SELECT status, count(*) FROM orders GROUP BY status`,
		func(k string, n int) { c.Orders[acme.Status(k)] = n }); err != nil {
		return c, err
	}
	err = group("certificates", `SELECT CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
		WHEN not_after <= ? THEN 'expired' ELSE 'active' END AS state, count(*)
		FROM certificates GROUP BY state`,
		func(k string, n int) { c.Certificates[acme.CertState(k)] = n }, sqlrow.ToNanos(now))
	return c, err
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
	start, width := sqlrow.ToNanos(from), int64(step)
	rows, err := s.r.QueryContext(ctx, `SELECT (issued_at - ?) / ? AS b, count(*) FROM certificates
		WHERE issued_at >= ? AND issued_at < ? GROUP BY b`, start, width, start, start+width*int64(n))
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
func (s *Store) RecentNames(ctx context.Context, accountID string, since time.Time, limit int) ([]string, [][]string, error) {
	n, ok := sqlrow.ParseAccountID(accountID)
	if !ok {
		return nil, nil, nil
	}
	ctx, err := readCtx(ctx)
	if err != nil {
		return nil, nil, err
	}
	limit = acme.PageLimit(limit)
	what := "recent names of account " + accountID
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
