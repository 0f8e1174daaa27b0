// SPDX-License-Identifier: Apache-2.0

package sqlrow

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestInventoryAccounts: each filter adds its condition with the next
// numbered placeholder, a search is a literal LIKE pattern in the
// driver's operator, a bad cursor is the client's mistake, and a filter
// the driver cannot compare matches nothing without a query.
func TestInventoryAccounts(t *testing.T) {
	pg := Inventory{Driver: "postgres", ILike: "ILIKE", Storable: func(s string) bool { return !strings.ContainsRune(s, 0) }}
	p, ok, err := pg.Accounts(acme.AccountQuery{Cursor: "9", Status: acme.StatusValid, Search: "a_b%", Limit: 2})
	if !ok || err != nil {
		t.Fatalf("Accounts = %v, %v", ok, err)
	}
	wantSQL := `SELECT ` + AccountCols + ` FROM accounts WHERE id < $1 AND status = $2 AND ` +
		`(contact ILIKE $3 ESCAPE '\' OR key_thumbprint ILIKE $4 ESCAPE '\' OR created_ip ILIKE $5 ESCAPE '\') ORDER BY id DESC LIMIT $6`
	wantArgs := []any{int64(9), "valid", `%a\_b\%%`, `%a\_b\%%`, `%a\_b\%%`, 3}
	if p.SQL != wantSQL || !reflect.DeepEqual(p.Args, wantArgs) || p.Limit != 2 {
		t.Errorf("Accounts =\n%s %v %d\nwant\n%s %v 2", p.SQL, p.Args, p.Limit, wantSQL, wantArgs)
	}
	if p, _, _ := pg.Accounts(acme.AccountQuery{Search: "12"}); !strings.Contains(p.SQL, "WHERE id = $1 ORDER") {
		t.Errorf("a search by account ID: %s", p.SQL)
	}
	if _, _, err := pg.Accounts(acme.AccountQuery{Cursor: "x"}); !errors.Is(err, acme.ErrBadCursor) {
		t.Errorf("cursor x: %v; want ErrBadCursor", err)
	}
	if _, ok, err := pg.Accounts(acme.AccountQuery{Search: "a\x00"}); ok || err != nil {
		t.Errorf("a search PostgreSQL cannot compare: %v, %v; want nothing", ok, err)
	}
	lite := Inventory{Driver: "sqlite", ILike: "LIKE"}
	if p, ok, _ := lite.Accounts(acme.AccountQuery{Search: "a\x00"}); !ok || !strings.Contains(p.SQL, "contact LIKE $1") {
		t.Errorf("a search on SQLite: %v %s", ok, p.SQL)
	}
	if p, _, _ := lite.Accounts(acme.AccountQuery{}); p.SQL != `SELECT `+AccountCols+` FROM accounts ORDER BY id DESC LIMIT $1` {
		t.Errorf("no filter: %s", p.SQL)
	}
}

// TestInventoryCertificates: the cursor is the issue time and serial of
// the last certificate, and a state filters on the time of the query.
func TestInventoryCertificates(t *testing.T) {
	in := Inventory{Driver: "sqlite", ILike: "LIKE"}
	now := time.Unix(0, 5000)
	c := &acme.Certificate{Serial: "0a", IssuedAt: time.Unix(0, 4000)}
	p, ok, err := in.Certificates(acme.CertQuery{Cursor: CertCursor(c), AccountID: "3", State: acme.CertExpired, Now: now}, "serial", false)
	if !ok || err != nil {
		t.Fatalf("Certificates = %v, %v", ok, err)
	}
	want := `SELECT serial FROM certificates WHERE (issued_at < $1 OR (issued_at = $2 AND serial < $3)) AND account_id = $4 AND ` +
		`revoked_at IS NULL AND not_after <= $5 ORDER BY issued_at DESC, serial DESC LIMIT $6`
	if p.SQL != want || !reflect.DeepEqual(p.Args, []any{int64(4000), int64(4000), "0a", int64(3), int64(5000), acme.PageLimit(0) + 1}) {
		t.Errorf("Certificates = %s %v", p.SQL, p.Args)
	}
	for _, q := range []acme.CertQuery{{Cursor: "4000"}, {Cursor: "x:0a"}, {State: "sideways"}, {Now: MaxTime.AddDate(1, 0, 0)}} {
		if _, ok, err := in.Certificates(q, "serial", false); ok || err == nil {
			t.Errorf("Certificates(%+v) = %v, %v; want an error", q, ok, err)
		}
	}
	if _, ok, err := in.Certificates(acme.CertQuery{AccountID: "x"}, "serial", false); ok || err != nil {
		t.Errorf("an account no store gives out: %v, %v; want nothing", ok, err)
	}
}

// TestCut: a page holds at most limit rows, and the next cursor is that
// of its last row, only when a row more was read.
func TestCut(t *testing.T) {
	cur := func(n int) string { return string(rune('a' + n)) }
	for _, tc := range []struct {
		rows     []int
		want     []int
		wantNext string
	}{
		{nil, nil, ""},
		{[]int{0, 1}, []int{0, 1}, ""},
		{[]int{0, 1, 2}, []int{0, 1}, "b"},
	} {
		got, next := Cut(tc.rows, 2, cur)
		if !reflect.DeepEqual(got, tc.want) || next != tc.wantNext {
			t.Errorf("Cut(%v) = %v, %q; want %v, %q", tc.rows, got, next, tc.want, tc.wantNext)
		}
	}
}
