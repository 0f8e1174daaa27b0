package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlrow"
)

// The inventory queries serve administrators, not ACME clients: they are
// built per call and page with keyset cursors, so a deep page costs the
// same as the first. Searches use ILIKE, which under the schema's "C"
// collation folds ASCII case only, as SQLite's LIKE does.

// likeEscape makes s a literal LIKE pattern fragment (ESCAPE '\').
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// where accumulates the conditions and arguments of a query, numbering
// the placeholders.
type where struct {
	conds []string
	args  []any
}

// add appends a condition in which each "?" is the next argument.
func (w *where) add(cond string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// sql returns the WHERE clause's body ("true" when empty) and the next
// placeholder for the LIMIT.
func (w *where) sql() (string, string) {
	body := "true"
	if len(w.conds) > 0 {
		body = strings.Join(w.conds, " AND ")
	}
	return body, "$" + strconv.Itoa(len(w.args)+1)
}

// ListAccounts implements acme.Inventory: newest (highest ID) first; the
// cursor is the last ID of the page.
func (s *Store) ListAccounts(ctx context.Context, q acme.AccountQuery) ([]*acme.Account, string, error) {
	limit := acme.PageLimit(q.Limit)
	var w where
	if q.Cursor != "" {
		n, ok := sqlrow.ParseAccountID(q.Cursor)
		if !ok {
			return nil, "", drv.Errorf("list accounts: cursor %.40q: %w", q.Cursor, acme.ErrBadCursor)
		}
		w.add("id < ?", n)
	}
	if q.Status != "" {
		if !validKey(string(q.Status)) {
			return nil, "", nil
		}
		w.add("status = ?", string(q.Status))
	}
	if q.Search != "" {
		if n, ok := sqlrow.ParseAccountID(q.Search); ok {
			w.add("id = ?", n)
		} else {
			if !validKey(q.Search) {
				return nil, "", nil
			}
			pat := "%" + likeEscape(q.Search) + "%"
			w.add(`(contact ILIKE ? ESCAPE '\' OR key_thumbprint ILIKE ? ESCAPE '\' OR created_ip ILIKE ? ESCAPE '\')`, pat, pat, pat)
		}
	}
	body, lim := w.sql()
	out, err := collect(ctx, s.pool, "list accounts", `SELECT `+sqlrow.AccountCols+` FROM accounts WHERE `+body+
		` ORDER BY id DESC LIMIT `+lim, append(w.args, limit+1), sqlrow.ScanAccount)
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
	limit := acme.PageLimit(q.Limit)
	if !sqlrow.TimesInRange(q.Now) {
		return nil, "", drv.CheckTimes("list certificates", q.Now)
	}
	var w where
	if q.Cursor != "" {
		ts, serial, ok := strings.Cut(q.Cursor, ":")
		n, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil || !validKey(serial) {
			return nil, "", drv.Errorf("list certificates: cursor %.40q: %w", q.Cursor, acme.ErrBadCursor)
		}
		w.add("(issued_at < ? OR (issued_at = ? AND serial < ?))", n, n, serial)
	}
	if q.AccountID != "" {
		n, ok := sqlrow.ParseAccountID(q.AccountID)
		if !ok {
			return nil, "", nil
		}
		w.add("account_id = ?", n)
	}
	if q.Search != "" {
		if !validKey(q.Search) {
			return nil, "", nil
		}
		pat := likeEscape(strings.ToLower(q.Search))
		w.add(`(serial ILIKE ? ESCAPE '\' OR name_set ILIKE ? ESCAPE '\')`, pat+"%", "%"+pat+"%")
	}
	now := sqlrow.ToNanos(q.Now)
	switch q.State {
	case acme.CertAny:
	case acme.CertActive:
		w.add("revoked_at IS NULL AND not_after > ?", now)
	case acme.CertRevoked:
		w.add("revoked_at IS NOT NULL")
	case acme.CertExpired:
		w.add("revoked_at IS NULL AND not_after <= ?", now)
	default:
		return nil, "", drv.Errorf("list certificates: unknown state %q", q.State)
	}
	body, lim := w.sql()
	out, err := collect(ctx, s.pool, "list certificates", `SELECT `+sqlrow.CertCols+` FROM certificates WHERE `+body+
		` ORDER BY issued_at DESC, serial DESC LIMIT `+lim, append(w.args, limit+1), sqlrow.ScanCert)
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
	limit := acme.PageLimit(q.Limit)
	var w where
	if q.Cursor != "" {
		n, ok := sqlrow.ParseOrdersCursor(q.Cursor)
		if !ok {
			return nil, "", drv.Errorf("list orders: cursor %.40q: %w", q.Cursor, acme.ErrBadCursor)
		}
		w.add("seq < ?", n)
	}
	if q.AccountID != "" {
		n, ok := sqlrow.ParseAccountID(q.AccountID)
		if !ok {
			return nil, "", nil
		}
		w.add("account_id = ?", n)
	}
	if q.Status != "" {
		if !validKey(string(q.Status)) {
			return nil, "", nil
		}
		w.add("status = ?", string(q.Status))
	}
	body, lim := w.sql()
	var seqs []int64
	out, err := collect(ctx, s.pool, "list orders", `SELECT seq, `+sqlrow.OrderCols+` FROM orders WHERE `+body+
		` ORDER BY seq DESC LIMIT `+lim, append(w.args, limit+1), func(row sqlrow.Scanner) (*acme.Order, error) {
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

// Counts implements acme.Inventory.
func (s *Store) Counts(ctx context.Context, now time.Time) (acme.Counts, error) {
	c := acme.Counts{Accounts: map[acme.Status]int{}, Orders: map[acme.Status]int{}, Certificates: map[acme.CertState]int{}}
	if err := drv.CheckTimes("counts", now); err != nil {
		return c, err
	}
	type group struct {
		k string
		n int
	}
	scanGroup := func(row sqlrow.Scanner) (group, error) {
		var g group
		err := row.Scan(&g.k, &g.n)
		return g, err
	}
	accts, err := collect(ctx, s.pool, "count accounts", `SELECT status, count(*) FROM accounts GROUP BY status`, nil, scanGroup)
	if err != nil {
		return c, err
	}
	for _, g := range accts {
		c.Accounts[acme.Status(g.k)] = g.n
	}
	orders, err := collect(ctx, s.pool, "count orders", `SELECT status, count(*) FROM orders GROUP BY status`, nil, scanGroup)
	if err != nil {
		return c, err
	}
	for _, g := range orders {
		c.Orders[acme.Status(g.k)] = g.n
	}
	certs, err := collect(ctx, s.pool, "count certificates", `SELECT CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
		WHEN not_after <= $1 THEN 'expired' ELSE 'active' END AS state, count(*)
		FROM certificates GROUP BY 1`, []any{sqlrow.ToNanos(now)}, scanGroup)
	if err != nil {
		return c, err
	}
	for _, g := range certs {
		c.Certificates[acme.CertState(g.k)] = g.n
	}
	return c, nil
}

// Issuance implements acme.Inventory.
func (s *Store) Issuance(ctx context.Context, from time.Time, step time.Duration, n int) ([]int, error) {
	if step <= 0 || n <= 0 || n > 10000 {
		return nil, drv.Errorf("issuance: bad step %s or count %d", step, n)
	}
	if err := drv.CheckTimes("issuance", from); err != nil {
		return nil, err
	}
	start, width := sqlrow.ToNanos(from), int64(step)
	type bucket struct {
		b int64
		n int
	}
	buckets, err := collect(ctx, s.pool, "issuance", `SELECT (issued_at - $1) / $2 AS b, count(*) FROM certificates
		WHERE issued_at >= $1 AND issued_at < $3 GROUP BY 1`, []any{start, width, start + width*int64(n)},
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
func (s *Store) RecentNames(ctx context.Context, accountID string, since time.Time, limit int) ([]string, [][]string, error) {
	n, ok := sqlrow.ParseAccountID(accountID)
	if !ok {
		return nil, nil, nil
	}
	if err := drv.CheckTimes("recent names", since); err != nil {
		return nil, nil, err
	}
	limit = acme.PageLimit(limit)
	what := "recent names of account " + accountID
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
