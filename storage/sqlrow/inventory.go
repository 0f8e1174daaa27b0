// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"strconv"
	"strings"

	"github.com/weir-pki/weir/acme"
)

// The lists of acme.Inventory serve administrators, not ACME clients:
// their queries are built per call, from the filters given, and page with
// keyset cursors, so that a deep page costs the same as the first. The
// placeholders are numbered ($1, $2, …): PostgreSQL's, which SQLite also
// reads, as parameters named by their numbers.

// Inventory is what the inventory lists need to know of a driver.
type Inventory struct {
	// Driver begins the errors.
	Driver Driver
	// ILike is the operator of a LIKE that folds ASCII case: LIKE on
	// SQLite, ILIKE on PostgreSQL (under the schema's "C" collation).
	ILike string
	// Storable reports whether a text can be compared with a stored
	// column; a filter by one that cannot matches nothing. PostgreSQL
	// refuses text that is not UTF-8 or holds NUL with an error. nil means
	// every text can.
	Storable func(string) bool
}

// storable reports whether every s can be compared with a stored column.
func (in Inventory) storable(ss ...string) bool {
	for _, s := range ss {
		if in.Storable != nil && !in.Storable(s) {
			return false
		}
	}
	return true
}

// badCursor is the error of a list given a cursor it did not give out:
// the client's mistake.
func (in Inventory) badCursor(list, cursor string) error {
	return in.Driver.Errorf("%s: cursor %.40q: %w", list, cursor, acme.ErrBadCursor)
}

// Page is the query of one page of an inventory list: it asks for one row
// more than Limit, which tells whether there is a next page.
type Page struct {
	SQL   string // the query
	Args  []any  // its arguments
	Limit int    // the rows of the page
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

// page is the query of columns from table with w's conditions, in the
// order orderBy, limited to one row more than limit.
func (w *where) page(columns, table, orderBy string, limit int) Page {
	q := "SELECT " + columns + " FROM " + table
	if len(w.conds) > 0 {
		q += " WHERE " + strings.Join(w.conds, " AND ")
	}
	args := append(w.args, limit+1)
	return Page{SQL: q + " ORDER BY " + orderBy + " LIMIT $" + strconv.Itoa(len(args)), Args: args, Limit: limit}
}

// addAccount filters by the account id: false when no account can have
// it.
func (w *where) addAccount(id acme.AccountID) bool {
	n, ok := ParseAccountID(id)
	if ok {
		w.add("account_id = ?", n)
	}
	return ok
}

// addStatus filters by status: false when in cannot compare it.
func (in Inventory) addStatus(w *where, status acme.Status) bool {
	if !in.storable(string(status)) {
		return false
	}
	w.add("status = ?", string(status))
	return true
}

// likeEscape makes s a literal LIKE pattern fragment (ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Accounts is the query of a page of ListAccounts, of AccountCols: newest
// (highest ID) first; the cursor is the last ID of the page. ok is false
// when the filters match nothing.
func (in Inventory) Accounts(q acme.AccountQuery) (p Page, ok bool, err error) {
	var w where
	if q.Cursor != "" {
		n, ok := ParseAccountID(acme.AccountID(q.Cursor))
		if !ok {
			return p, false, in.badCursor("list accounts", q.Cursor)
		}
		w.add("id < ?", n)
	}
	if q.Status != "" && !in.addStatus(&w, q.Status) {
		return p, false, nil
	}
	if q.Search != "" {
		if n, ok := ParseAccountID(acme.AccountID(q.Search)); ok {
			w.add("id = ?", n)
		} else {
			if !in.storable(q.Search) {
				return p, false, nil
			}
			pat := "%" + likeEscape(q.Search) + "%"
			w.add(`(contact `+in.ILike+` ? ESCAPE '\' OR key_thumbprint `+in.ILike+` ? ESCAPE '\' OR created_ip `+in.ILike+` ? ESCAPE '\')`,
				pat, pat, pat)
		}
	}
	return w.page(AccountCols, "accounts", "id DESC", acme.PageLimit(q.Limit)), true, nil
}

// CertCursor is the cursor of the page after certificate c in issue order
// (ListCertificates): its issue time and serial.
func CertCursor(c *acme.Certificate) string {
	return strconv.FormatInt(ToNanos(c.IssuedAt), 10) + ":" + c.Serial
}

// Certificates is the query of a page of ListCertificates, of cols (a
// driver's CertCols): newest issued first; the cursor is CertCursor of
// the last certificate of the page. ok is false when the filters match
// nothing. A search (search.go) is dense when its SearchProbe counted
// SearchDense candidates.
func (in Inventory) Certificates(q acme.CertQuery, cols string, dense bool) (p Page, ok bool, err error) {
	if err := in.Driver.CheckTimes("list certificates", q.Now); err != nil {
		return p, false, err
	}
	var w where
	if q.Cursor != "" {
		ts, serial, ok := strings.Cut(q.Cursor, ":")
		n, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil || !in.storable(serial) {
			return p, false, in.badCursor("list certificates", q.Cursor)
		}
		w.add("(issued_at < ? OR (issued_at = ? AND serial < ?))", n, n, serial)
	}
	if q.AccountID != "" && !w.addAccount(q.AccountID) {
		return p, false, nil
	}
	if q.Search != "" {
		if !in.storable(q.Search) {
			return p, false, nil
		}
		in.searchCond(&w, q.Search, dense)
	}
	now := ToNanos(q.Now)
	switch q.State {
	case acme.CertAny:
	case acme.CertActive:
		w.add("revoked_at IS NULL AND not_after > ?", now)
	case acme.CertRevoked:
		w.add("revoked_at IS NOT NULL")
	case acme.CertExpired:
		w.add("revoked_at IS NULL AND not_after <= ?", now)
	default:
		return p, false, in.Driver.Errorf("list certificates: unknown state %q", q.State)
	}
	return w.page(cols, "certificates", "issued_at DESC, serial DESC", acme.PageLimit(q.Limit)), true, nil
}

// Orders is the query of a page of ListAllOrders, of seq and OrderCols
// (ScanSeqOrder): newest first; the cursor is the sequence number of the
// last order of the page. ok is false when the filters match nothing.
func (in Inventory) Orders(q acme.OrderQuery) (p Page, ok bool, err error) {
	var w where
	if q.Cursor != "" {
		n, ok := ParseOrdersCursor(q.Cursor)
		if !ok {
			return p, false, in.badCursor("list orders", q.Cursor)
		}
		w.add("seq < ?", n)
	}
	if q.AccountID != "" && !w.addAccount(q.AccountID) {
		return p, false, nil
	}
	if q.Status != "" && !in.addStatus(&w, q.Status) {
		return p, false, nil
	}
	return w.page("seq, "+OrderCols, "orders", "seq DESC", acme.PageLimit(q.Limit)), true, nil
}

// Cut cuts rows, read with a Page of limit, to the page, and returns the
// cursor of the next page, cursor of the page's last row, or "" when
// there is none.
func Cut[T any](rows []T, limit int, cursor func(T) string) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	return rows[:limit], cursor(rows[limit-1])
}
