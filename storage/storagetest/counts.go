// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// testCountsKept: the overview's counts follow every write that changes
// them (new accounts and orders, an account's or order's status, an
// issuance, a revocation), and a certificate expires at its notAfter to
// the second, also within the current hour.
func testCountsKept(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	counts := func(now time.Time) acme.Counts {
		t.Helper()
		c, err := inv.Counts(f.ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	now := at(0).Truncate(time.Hour).Add(30 * time.Minute)
	if c := counts(now); len(c.Accounts)+len(c.Orders)+len(c.Certificates) != 0 {
		t.Errorf("an empty store: %+v", c)
	}
	a, b := f.account(t), f.account(t)
	soon := f.issue(t, a.ID, "soon.example.com", now.Add(10*time.Second))
	later := f.issue(t, a.ID, "later.example.com", now.Add(2*time.Hour))
	old := f.issue(t, b.ID, "old.example.com", now.Add(-25*time.Hour))
	// The issuance chart by whole hours reads the hours kept.
	from := old.IssuedAt.Truncate(time.Hour).Add(-time.Hour)
	hist, err := inv.Issuance(f.ctx, from, 2*time.Hour, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int, 20)
	for _, c := range []*acme.Certificate{soon, later, old} {
		want[c.IssuedAt.Sub(from)/(2*time.Hour)]++
	}
	if !slices.Equal(hist, want) {
		t.Errorf("Issuance by 2 h from a whole hour = %v, want %v", hist, want)
	}
	f.simpleOrder(t, b.ID, "pending.example.com")
	b.Status = acme.StatusDeactivated
	if err := f.s.UpdateAccount(f.ctx, b, acme.StatusValid); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at    time.Time
		certs map[acme.CertState]int
	}{
		{now, map[acme.CertState]int{acme.CertActive: 2, acme.CertExpired: 1}},
		{now.Add(9 * time.Second), map[acme.CertState]int{acme.CertActive: 2, acme.CertExpired: 1}},
		{now.Add(10 * time.Second), map[acme.CertState]int{acme.CertActive: 1, acme.CertExpired: 2}},
		{now.Add(3 * time.Hour), map[acme.CertState]int{acme.CertExpired: 3}},
	} {
		c := counts(tc.at)
		if !maps.Equal(c.Certificates, tc.certs) {
			t.Errorf("certificates at now%+v: %v, want %v", tc.at.Sub(now), c.Certificates, tc.certs)
		}
		if want := map[acme.Status]int{acme.StatusValid: 1, acme.StatusDeactivated: 1}; !maps.Equal(c.Accounts, want) {
			t.Errorf("accounts: %v, want %v", c.Accounts, want)
		}
		if want := map[acme.Status]int{acme.StatusValid: 3, acme.StatusPending: 1}; !maps.Equal(c.Orders, want) {
			t.Errorf("orders: %v, want %v", c.Orders, want)
		}
	}
	for _, serial := range []string{soon.Serial, old.Serial} {
		if err := f.s.RevokeCertificate(f.ctx, serial, 1, now, nil); err != nil {
			t.Fatal(err)
		}
	}
	if c, want := counts(now), map[acme.CertState]int{acme.CertActive: 1, acme.CertRevoked: 2}; !maps.Equal(c.Certificates, want) {
		t.Errorf("after two revocations: %v, want %v", c.Certificates, want)
	}
}

// testSearch: a search matches the names it begins or ends and the
// serials it begins, in any case, and nothing else.
func testSearch(t *testing.T, f *fixture) {
	a := f.account(t)
	now := at(0)
	www := f.issue(t, a.ID, "www.Shop.example.com", now.Add(time.Hour))
	api := f.issue(t, a.ID, "api.example.org", now.Add(time.Hour))
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"www.shop.example.com", []string{www.Serial}},
		{"WWW.SHOP", []string{www.Serial}},
		{"shop.example.com", []string{www.Serial}},
		{"example.com", []string{www.Serial}},
		{"example", nil},
		{"api.", []string{api.Serial}},
		{"org", []string{api.Serial}},
		{api.Serial[:len(api.Serial)-1], []string{api.Serial}},
		{"nothing.example.net", nil},
		{"%", nil},
	} {
		if got := listSerials(t, f, acme.CertQuery{Search: tc.q, Now: now}); !slices.Equal(got, tc.want) {
			t.Errorf("search %q: %v, want %v", tc.q, got, tc.want)
		}
	}
}

// listSerials returns the serials of the first page of ListCertificates(q).
func listSerials(t *testing.T, f *fixture, q acme.CertQuery) []string {
	t.Helper()
	certs, _, err := f.inventory(t).ListCertificates(f.ctx, q)
	if err != nil {
		t.Fatalf("ListCertificates(%+v): %v", q, err)
	}
	var got []string
	for _, c := range certs {
		got = append(got, c.Serial)
	}
	return got
}
