// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/renewal"
)

// testReplacement: at most one order replacing a certificate becomes
// valid, and ReplacingOrder finds it.
func testReplacement(t *testing.T, f *fixture) {
	a := f.account(t)
	const certID = "AKI.AQ"
	if _, err := f.s.ReplacingOrder(f.ctx, certID); err == nil {
		t.Fatal("ReplacingOrder before any renewal: no error")
	} else {
		wantErr(t, "ReplacingOrder before any renewal", err, acme.ErrNotFound)
	}
	renew := func() (*acme.Order, error) {
		o := f.simpleOrder(t, a.ID, "r.example.com")
		o.Replaces = certID
		// simpleOrder stored it without Replaces; store a fresh one with it.
		o2 := &acme.Order{ID: acme.OrderID(f.id("order")), AccountID: a.ID, Status: acme.StatusPending, Identifiers: o.Identifiers,
			AuthzIDs: o.AuthzIDs, Expires: o.Expires, CreatedAt: o.CreatedAt, Replaces: certID}
		if err := f.s.CreateOrder(f.ctx, o2, nil); err != nil {
			t.Fatalf("CreateOrder: %v", err)
		}
		o2.Status = acme.StatusProcessing
		if err := f.s.UpdateOrder(f.ctx, o2, acme.StatusPending); err != nil {
			t.Fatal(err)
		}
		return o2, f.s.FinalizeOrder(f.ctx, f.cert(o2, fmt.Sprintf("%040x", f.n+1000), at(90*24*time.Hour)))
	}
	first, err := renew()
	if err != nil {
		t.Fatalf("first renewal: %v", err)
	}
	got, err := f.s.ReplacingOrder(f.ctx, certID)
	if err != nil || got.ID != first.ID {
		t.Fatalf("ReplacingOrder = %v, %v; want %s", got, err, first.ID)
	}
	_, err = renew()
	wantErr(t, "second renewal of the same certificate", err, acme.ErrConflict)
}

// testRenewalWindows: windows set at issuance and moved together.
func testRenewalWindows(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	a := f.account(t)
	c1 := f.issue(t, a.ID, "w1.example.com", at(90*24*time.Hour))
	c2 := f.issue(t, a.ID, "w2.example.com", at(90*24*time.Hour+time.Minute)) // issued a minute later
	revoked := f.issue(t, a.ID, "w3.example.com", at(90*24*time.Hour))
	if err := f.s.RevokeCertificate(f.ctx, revoked.Serial, 1, at(0), nil); err != nil {
		t.Fatal(err)
	}
	var none renewal.Window
	ws, err := inv.RenewalWindows(f.ctx, at(0), time.Time{}, none, 0)
	if err != nil {
		t.Fatal(err)
	}
	first, second := c1, c2
	if (renewal.Window{Serial: c2.Serial, End: c2.RenewalEnd}).Before(renewal.Window{Serial: c1.Serial, End: c1.RenewalEnd}) {
		first, second = c2, c1
	}
	if len(ws) != 2 || ws[0].Serial != first.Serial || ws[0].AccountID != string(a.ID) || !ws[0].Start.Equal(first.RenewalStart) || !ws[0].End.Equal(first.RenewalEnd) {
		t.Fatalf("RenewalWindows = %+v, want the two unrevoked windows in order of end and serial", ws)
	}
	// Only the certificates issued before a time.
	if got, err := inv.RenewalWindows(f.ctx, at(0), c1.IssuedAt.Add(time.Nanosecond), none, 0); err != nil || len(got) != 1 || got[0].Serial != c1.Serial {
		t.Fatalf("windows of the certificates issued before %s = %+v, %v; want %s's alone", c1.IssuedAt, got, err, c1.Serial)
	}
	if got, err := inv.RenewalWindows(f.ctx, at(0), c1.IssuedAt, none, 0); err != nil || len(got) != 0 {
		t.Fatalf("windows of the certificates issued before the first = %+v, %v; want none", got, err)
	}
	// Pages: one window, then the next after the first.
	if p1, err := inv.RenewalWindows(f.ctx, at(0), time.Time{}, none, 1); err != nil || len(p1) != 1 || p1[0].Serial != first.Serial {
		t.Fatalf("first page of 1 = %+v, %v; want %s", p1, err, first.Serial)
	}
	if p2, err := inv.RenewalWindows(f.ctx, at(0), time.Time{}, ws[0], 1); err != nil || len(p2) != 1 || p2[0].Serial != second.Serial {
		t.Fatalf("page after %s = %+v, %v; want %s", first.Serial, p2, err, second.Serial)
	}
	if p3, err := inv.RenewalWindows(f.ctx, at(0), time.Time{}, ws[1], 1); err != nil || len(p3) != 0 {
		t.Fatalf("page after the last = %+v, %v; want none", p3, err)
	}
	past := at(-time.Hour)
	if err := f.s.SetRenewalWindows(f.ctx, []string{c1.Serial, c2.Serial}, past.Add(-time.Hour), past, at(0)); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.GetCertificate(f.ctx, c2.Serial)
	if err != nil || !got.RenewalEnd.Equal(past) || !got.RenewNow {
		t.Fatalf("after SetRenewalWindows: %v, %v; want the window to end at %s", got.RenewalEnd, err, past)
	}
	if ws, _ := inv.RenewalWindows(f.ctx, at(0), time.Time{}, none, 0); len(ws) != 0 {
		t.Errorf("windows ending after now: %+v, want none", ws)
	}
}
