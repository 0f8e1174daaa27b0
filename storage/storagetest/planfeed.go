// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/renewal"
)

// testIssuedWindows: the windows of the certificates issued since a time,
// revoked or moved ones flagged gone, in order of issue time and serial,
// in pages.
func testIssuedWindows(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	a := f.account(t)
	day := 24 * time.Hour
	early := f.issue(t, a.ID, "i0.example.com", at(90*day-time.Hour)) // issued before the others
	live := f.issue(t, a.ID, "i1.example.com", at(90*day))
	revoked := f.issue(t, a.ID, "i2.example.com", at(90*day))
	moved := f.issue(t, a.ID, "i3.example.com", at(90*day+time.Minute))
	if err := f.s.RevokeCertificate(f.ctx, revoked.Serial, 1, at(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	if err := f.s.SetRenewalWindows(f.ctx, []string{moved.Serial}, at(-time.Hour), at(0), at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var none renewal.IssuedWindow
	since := live.IssuedAt
	ws, err := inv.IssuedWindows(f.ctx, since, none, 0)
	if err != nil {
		t.Fatal(err)
	}
	first, second := live, revoked // the same issue time: by serial
	if revoked.Serial < live.Serial {
		first, second = revoked, live
	}
	want := []*acme.Certificate{first, second, moved}
	if len(ws) != len(want) {
		t.Fatalf("IssuedWindows since %s = %+v, want %d windows (not %s, issued before)", since, ws, len(want), early.Serial)
	}
	for i, c := range want {
		w := ws[i]
		gone := c != live
		if w.Serial != c.Serial || w.AccountID != string(a.ID) || !w.IssuedAt.Equal(c.IssuedAt) || w.Gone != gone {
			t.Errorf("window %d = %+v, want %s issued at %s, gone %v", i, w, c.Serial, c.IssuedAt, gone)
		}
	}
	if !ws[0].Start.Equal(first.RenewalStart) || !ws[0].End.Equal(first.RenewalEnd) {
		t.Errorf("window of %s: [%s, %s), want [%s, %s)", first.Serial, ws[0].Start, ws[0].End, first.RenewalStart, first.RenewalEnd)
	}
	if ws[2].End.After(at(0)) {
		t.Errorf("moved window ends %s, want its new end %s", ws[2].End, at(0))
	}
	// Pages of one.
	var got []string
	after := none
	for range len(want) + 2 {
		page, err := inv.IssuedWindows(f.ctx, since, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		got = append(got, page[0].Serial)
		after = page[0]
	}
	if len(got) != len(want) || got[0] != want[0].Serial || got[1] != want[1].Serial || got[2] != want[2].Serial {
		t.Errorf("pages of one: %v, want %s, %s, %s", got, want[0].Serial, want[1].Serial, want[2].Serial)
	}
	if ws, err := inv.IssuedWindows(f.ctx, moved.IssuedAt.Add(time.Nanosecond), none, 0); err != nil || len(ws) != 0 {
		t.Errorf("IssuedWindows after the last issue = %+v, %v; want none", ws, err)
	}
}

// testPlanRemovals: a revocation and a move record the window they take
// out, once, when it ends after the change; removals come in order of
// time and ID, in pages; those older than renewal.RemovalsKept go when a
// new one is recorded.
func testPlanRemovals(t *testing.T, f *fixture) {
	inv := f.inventory(t)
	a := f.account(t)
	day := 24 * time.Hour
	c1 := f.issue(t, a.ID, "r1.example.com", at(90*day))
	c2 := f.issue(t, a.ID, "r2.example.com", at(90*day))
	c3 := f.issue(t, a.ID, "r3.example.com", at(90*day))
	ended := f.issue(t, a.ID, "r4.example.com", at(20*day)) // window ends at(-8d)
	t1, t2 := at(time.Hour), at(2*time.Hour)
	if err := f.s.RevokeCertificate(f.ctx, c1.Serial, 1, t1, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RevokeCertificate(f.ctx, ended.Serial, 1, t1, nil); err != nil {
		t.Fatal(err)
	}
	// c1 is revoked: only c2 and c3 move.
	if err := f.s.SetRenewalWindows(f.ctx, []string{c1.Serial, c2.Serial, c3.Serial}, at(-time.Hour), at(0), t2); err != nil {
		t.Fatal(err)
	}
	// c3's window is in the past now: its revocation takes nothing out.
	if err := f.s.RevokeCertificate(f.ctx, c3.Serial, 1, at(3*time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	var none renewal.Removal
	rs, err := inv.PlanRemovals(f.ctx, at(0), none, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("PlanRemovals = %+v, want 3 (c1 revoked, c2 and c3 moved)", rs)
	}
	r := rs[0]
	if r.Serial != c1.Serial || !r.At.Equal(t1) || !r.IssuedAt.Equal(c1.IssuedAt) || r.AccountID != string(a.ID) ||
		!r.Start.Equal(c1.RenewalStart) || !r.End.Equal(c1.RenewalEnd) || r.ID == 0 {
		t.Errorf("first removal = %+v, want c1's window [%s, %s) at %s", r, c1.RenewalStart, c1.RenewalEnd, t1)
	}
	moved := map[string]bool{rs[1].Serial: true, rs[2].Serial: true}
	if !moved[c2.Serial] || !moved[c3.Serial] || !rs[1].At.Equal(t2) || !rs[1].Start.Equal(c2.RenewalStart) || !rs[0].Before(rs[1]) || !rs[1].Before(rs[2]) {
		t.Errorf("removals of the move = %+v, %+v; want c2's and c3's old windows at %s, in order", rs[1], rs[2], t2)
	}
	if got, err := inv.PlanRemovals(f.ctx, t2, none, 0); err != nil || len(got) != 2 {
		t.Errorf("PlanRemovals since %s = %+v, %v; want the move's 2", t2, got, err)
	}
	if got, err := inv.PlanRemovals(f.ctx, at(0), rs[0], 1); err != nil || len(got) != 1 || got[0].ID != rs[1].ID {
		t.Errorf("page of one after the first = %+v, %v; want %+v", got, err, rs[1])
	}
	if got, err := inv.PlanRemovals(f.ctx, at(0), rs[2], 0); err != nil || len(got) != 0 {
		t.Errorf("page after the last = %+v, %v; want none", got, err)
	}
	// A removal RemovalsKept after the first deletes it, not the
	// move's.
	c5 := f.issue(t, a.ID, "r5.example.com", at(90*day))
	late := t1.Add(renewal.RemovalsKept + time.Nanosecond)
	if err := f.s.RevokeCertificate(f.ctx, c5.Serial, 1, late, nil); err != nil {
		t.Fatal(err)
	}
	got, err := inv.PlanRemovals(f.ctx, time.Time{}, none, 0)
	if err != nil || len(got) != 3 || got[0].ID != rs[1].ID || got[2].Serial != c5.Serial {
		t.Errorf("after a removal at %s: %+v, %v; want the move's 2 and c5's", late, got, err)
	}
}
