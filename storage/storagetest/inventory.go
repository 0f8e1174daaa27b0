// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// inventory returns the store's acme.Inventory; every Store must have one.
func (f *fixture) inventory(t *testing.T) acme.Inventory {
	t.Helper()
	inv, ok := f.s.(acme.Inventory)
	if !ok {
		t.Fatalf("%T does not implement acme.Inventory", f.s)
	}
	return inv
}

// pages follows a listing's cursors to the end and returns every page's
// keys; it fails after 50 pages.
func pages[T, K any](t *testing.T, list func(cursor string) ([]T, string, error), key func(T) K) [][]K {
	t.Helper()
	var out [][]K
	cursor := ""
	for range 50 {
		items, next, err := list(cursor)
		if err != nil {
			t.Fatalf("list(cursor %q): %v", cursor, err)
		}
		var keys []K
		for _, it := range items {
			keys = append(keys, key(it))
		}
		out = append(out, keys)
		if next == "" {
			return out
		}
		cursor = next
	}
	t.Fatal("more than 50 pages")
	return nil
}

func testListAccounts(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	var ids []acme.AccountID
	for range 5 {
		ids = append(ids, f.account(t).ID)
	}
	odd := f.account(t)
	odd.Contact = []string{"mailto:pki-team@corp.example"}
	odd.Status = acme.StatusDeactivated
	if err := f.s.UpdateAccount(f.ctx, odd, acme.StatusValid); err != nil {
		t.Fatal(err)
	}
	all := slices.Clone(append(ids, odd.ID))
	slices.Reverse(all)
	got := pages(t, func(c string) ([]*acme.Account, string, error) {
		return inv.ListAccounts(f.ctx, acme.AccountQuery{Cursor: c, Limit: 4})
	}, func(a *acme.Account) acme.AccountID { return a.ID })
	if len(got) != 2 || !slices.Equal(slices.Concat(got...), all) {
		t.Errorf("pages of 4: got %v, want %v newest first in 2 pages", got, all)
	}
	for _, tc := range []struct {
		q    acme.AccountQuery
		want []acme.AccountID
	}{
		{acme.AccountQuery{Search: "pki-team"}, []acme.AccountID{odd.ID}},
		{acme.AccountQuery{Search: string(odd.ID)}, []acme.AccountID{odd.ID}},
		{acme.AccountQuery{Status: acme.StatusDeactivated}, []acme.AccountID{odd.ID}},
		{acme.AccountQuery{Search: "100%_"}, nil},
		{acme.AccountQuery{Search: "192.0.2.1", Status: acme.StatusValid, Limit: 2}, all[1:3]},
	} {
		accts, _, err := inv.ListAccounts(f.ctx, tc.q)
		if err != nil {
			t.Fatalf("ListAccounts(%+v): %v", tc.q, err)
		}
		var got []acme.AccountID
		for _, a := range accts {
			got = append(got, a.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListAccounts(%+v) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func testListCertificates(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	a, b := f.account(t), f.account(t)
	now := at(0)
	active1 := f.issue(t, a.ID, "one.example.com", now.Add(24*time.Hour))
	expired := f.issue(t, a.ID, "two.example.com", now.Add(-time.Hour))
	revoked := f.issue(t, b.ID, "three.example.com", now.Add(48*time.Hour))
	active2 := f.issue(t, b.ID, "four.example.com", now.Add(72*time.Hour))
	if err := f.s.RevokeCertificate(f.ctx, revoked.Serial, 1, now, nil); err != nil {
		t.Fatal(err)
	}
	// Issue times follow notAfter in the fixture, so newest first is:
	byIssue := []string{active2.Serial, revoked.Serial, active1.Serial, expired.Serial}
	got := pages(t, func(c string) ([]*acme.Certificate, string, error) {
		return inv.ListCertificates(f.ctx, acme.CertQuery{Cursor: c, Limit: 3, Now: now})
	}, func(c *acme.Certificate) string { return c.Serial })
	if len(got) != 2 || !slices.Equal(slices.Concat(got...), byIssue) {
		t.Errorf("pages of 3: got %v, want %v in 2 pages", got, byIssue)
	}
	for _, tc := range []struct {
		name string
		q    acme.CertQuery
		want []string
	}{
		{"active", acme.CertQuery{State: acme.CertActive}, []string{active2.Serial, active1.Serial}},
		{"revoked", acme.CertQuery{State: acme.CertRevoked}, []string{revoked.Serial}},
		{"expired", acme.CertQuery{State: acme.CertExpired}, []string{expired.Serial}},
		{"account", acme.CertQuery{AccountID: a.ID}, []string{active1.Serial, expired.Serial}},
		{"name substring", acme.CertQuery{Search: "THREE.example"}, []string{revoked.Serial}},
		{"serial", acme.CertQuery{Search: active1.Serial}, []string{active1.Serial}},
		{"no match", acme.CertQuery{Search: "%"}, nil},
		{"unknown account", acme.CertQuery{AccountID: "not-an-id"}, nil},
	} {
		tc.q.Now = now
		if got := listSerials(t, f, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	counts, err := inv.Counts(f.ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	wantCerts := map[acme.CertState]int{acme.CertActive: 2, acme.CertRevoked: 1, acme.CertExpired: 1}
	if !mapsEqual(counts.Certificates, wantCerts) {
		t.Errorf("Counts.Certificates = %v, want %v", counts.Certificates, wantCerts)
	}
	if counts.Accounts[acme.StatusValid] != 2 || counts.Orders[acme.StatusValid] != 4 {
		t.Errorf("Counts = %+v, want 2 valid accounts and 4 valid orders", counts)
	}

	// Issuance: each fixture certificate's issue time is notAfter - 90 days + 1 min.
	from := expired.IssuedAt.Add(-time.Minute)
	hist, err := inv.Issuance(f.ctx, from, time.Hour, 75)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, 75)
	want[0], want[25], want[49], want[73] = 1, 1, 1, 1
	if !slices.Equal(hist, want) {
		t.Errorf("Issuance by hour = %v, want ones at 0, 25, 49 and 73", hist)
	}
}

func testListAllOrders(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	a, b := f.account(t), f.account(t)
	o1 := f.simpleOrder(t, a.ID, "a.example.com")
	o2 := f.processingOrder(t, b.ID, "b.example.com")
	o3 := f.simpleOrder(t, a.ID, "c.example.com")
	got := pages(t, func(c string) ([]*acme.Order, string, error) {
		return inv.ListAllOrders(f.ctx, acme.OrderQuery{Cursor: c, Limit: 2})
	}, func(o *acme.Order) acme.OrderID { return o.ID })
	want := []acme.OrderID{o3.ID, o2.ID, o1.ID}
	if len(got) != 2 || !slices.Equal(slices.Concat(got...), want) {
		t.Errorf("pages of 2: got %v, want %v", got, want)
	}
	orders, _, err := inv.ListAllOrders(f.ctx, acme.OrderQuery{AccountID: a.ID, Status: acme.StatusPending})
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != 2 || orders[0].ID != o3.ID || orders[1].ID != o1.ID || len(orders[0].Identifiers) != 1 {
		t.Errorf("account %s pending orders = %+v, want %s, %s", a.ID, orders, o3.ID, o1.ID)
	}
}

// testInventoryBadCursor: a cursor a listing did not give out is
// ErrBadCursor, never read as some position nor a failure of the store.
func testInventoryBadCursor(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	now := time.Now()
	for _, bad := range []string{"x", "-1", "01", " 1", "1.5", "99999999999999999999", "\x00", "1:"} {
		if _, _, err := inv.ListAccounts(f.ctx, acme.AccountQuery{Cursor: bad}); !errors.Is(err, acme.ErrBadCursor) {
			t.Errorf("ListAccounts(cursor %q): %v, want ErrBadCursor", bad, err)
		}
		if _, _, err := inv.ListAllOrders(f.ctx, acme.OrderQuery{Cursor: bad}); !errors.Is(err, acme.ErrBadCursor) {
			t.Errorf("ListAllOrders(cursor %q): %v, want ErrBadCursor", bad, err)
		}
		if strings.Contains(bad, ":") {
			continue // a certificates cursor is time:serial
		}
		if _, _, err := inv.ListCertificates(f.ctx, acme.CertQuery{Cursor: bad, Now: now}); !errors.Is(err, acme.ErrBadCursor) {
			t.Errorf("ListCertificates(cursor %q): %v, want ErrBadCursor", bad, err)
		}
	}
}

func testRecentNames(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	a, other := f.account(t), f.account(t)
	f.order(t, a.ID, []*acme.Authorization{
		f.authz(a.ID, "x.example.com", false, acme.StatusPending, at(time.Hour)),
		f.authz(a.ID, "x.example.com", true, acme.StatusPending, at(time.Hour)),
	})
	f.simpleOrder(t, other.ID, "other.example.com")
	c := f.issue(t, a.ID, "y.example.com", at(90*24*time.Hour))
	names, sets, err := inv.RecentNames(f.ctx, a.ID, at(-time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if want := []string{"*.x.example.com", "x.example.com", "y.example.com"}; !slices.Equal(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if len(sets) != 1 || !slices.Equal(sets[0], c.Names) {
		t.Errorf("sets = %v, want [%v]", sets, c.Names)
	}
	names, sets, err = inv.RecentNames(f.ctx, a.ID, at(time.Hour), 10)
	if err != nil || len(names) != 0 || len(sets) != 0 {
		t.Errorf("since a later time: names %v, sets %v, err %v; want none", names, sets, err)
	}
}

func mapsEqual[K comparable](a, b map[K]int) bool {
	for k, v := range a {
		if v != 0 && b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}
