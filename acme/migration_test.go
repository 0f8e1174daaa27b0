// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// issuerCounts is a store that answers IssuerCounts alone, with counts,
// and records the query.
type issuerCounts struct {
	acme.Store
	counts []acme.IssuerCount
	got    acme.IssuerCountQuery
}

func (s *issuerCounts) IssuerCounts(_ context.Context, q acme.IssuerCountQuery) ([]acme.IssuerCount, error) {
	s.got = q
	return s.counts, nil
}

// refusals is an Observer that counts refusals: n, since any time.
type refusals struct {
	acme.NopObserver
	n     acme.RefusedRenewals
	since time.Time
}

func (o *refusals) RenewalRefusals(since time.Time) acme.RefusedRenewals {
	o.since = since
	return o.n
}

// TestMigrationStatus: the issuer-migration view of four issuers, one
// active (r2) and the others left, default with renew-early too, at a
// fake clock's time: the query of the last five minutes with each
// issuer's key identifier, and each line's figures from the store's
// counts.
func TestMigrationStatus(t *testing.T) {
	clock := newFakeClock()
	now := clock.now()
	cas := map[string]*ca.CA{}
	var issuers []acme.Issuer
	for _, id := range []string{acme.DefaultIssuer, "r0", "r1", "r2"} {
		h, err := ca.GenerateHierarchy("migration test "+id, now)
		if err != nil {
			t.Fatal(err)
		}
		if cas[id], err = ca.New(ca.Config{Lifetime: time.Hour}, h, nil); err != nil {
			t.Fatal(err)
		}
		issuers = append(issuers, acme.Issuer{ID: id, CA: cas[id]})
	}
	const day = 24 * time.Hour
	store := &issuerCounts{counts: []acme.IssuerCount{
		// 400 remain, 40 left in five minutes: 50 minutes.
		{Issuer: acme.DefaultIssuer, Live: 1000, Replaced: 600, Overdue: 50, RenewedOff: 40,
			FirstExpiry: now.Add(time.Hour), LastExpiry: now.Add(60 * day)},
		// Nothing left in five minutes: its last expiry.
		{Issuer: "r0", Live: 10, Overdue: 4, FirstExpiry: now.Add(day), LastExpiry: now.Add(3 * day)},
		// 10 remain, 1 left in five minutes: 50 minutes, but the last
		// expires in 10.
		{Issuer: "r1", Live: 10, RenewedOff: 1, FirstExpiry: now.Add(time.Minute), LastExpiry: now.Add(10 * time.Minute)},
		// Active: none of it is being left.
		{Issuer: "r2", Live: 2980, Replaced: 10, Overdue: 7, Issued: 45,
			FirstExpiry: now.Add(80 * day), LastExpiry: now.Add(90 * day)},
	}}
	obs := &refusals{n: acme.RefusedRenewals{Denials: 3, Complete: true}}
	policy, err := acme.NewPolicy(acme.PolicyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := acme.New(acme.Config{}, acme.Live{Policy: policy, RenewEarly: []string{acme.DefaultIssuer}},
		acme.Deps{Store: store, CA: cas["r2"], Issuers: issuers, Validator: &recorder{}, Observer: obs, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	st, err := svc.MigrationStatus(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	if q := store.got; !q.Now.Equal(now) || !q.Since.Equal(now.Add(-5*time.Minute)) || len(q.Issuers) != 4 {
		t.Fatalf("query %+v, want now, five minutes before and the four issuers", q)
	}
	for i, is := range store.got.Issuers {
		if is.ID != issuers[i].ID || !bytes.Equal(is.KeyID, cas[is.ID].Hierarchy().Intermediate.SubjectKeyId) {
			t.Errorf("query's issuer %d = %s %x, want %s and its intermediate's key identifier", i, is.ID, is.KeyID, issuers[i].ID)
		}
	}
	if !obs.since.Equal(now.Add(-5*time.Minute)) || st.Refused == nil || *st.Refused != obs.n {
		t.Errorf("refused %+v since %v, want the observer's %+v since five minutes before", st.Refused, obs.since, obs.n)
	}
	if !st.At.Equal(now) || st.Window != "5m0s" || len(st.Issuers) != 4 {
		t.Fatalf("status at %v, window %s, %d issuers", st.At, st.Window, len(st.Issuers))
	}
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	want := []acme.IssuerMigration{
		{ID: acme.DefaultIssuer, RenewEarly: true, Leaving: true, Live: 1000, Share: 0.25, Replaced: 600, Remaining: 400, Overdue: 50,
			RenewedOff: 40, RatePerHour: 480, FirstExpiry: at(time.Hour), LastExpiry: at(60 * day), ProjectedEmptyAt: at(50 * time.Minute)},
		{ID: "r0", Leaving: true, Live: 10, Share: 0.0025, Remaining: 10, Overdue: 4,
			FirstExpiry: at(day), LastExpiry: at(3 * day), ProjectedEmptyAt: at(3 * day)},
		{ID: "r1", Leaving: true, Live: 10, Share: 0.0025, Remaining: 10, RenewedOff: 1, RatePerHour: 12,
			FirstExpiry: at(time.Minute), LastExpiry: at(10 * time.Minute), ProjectedEmptyAt: at(10 * time.Minute)},
		{ID: "r2", Active: true, Live: 2980, Share: 0.745, Replaced: 10, Remaining: 2970, Issued: 45,
			FirstExpiry: at(80 * day), LastExpiry: at(90 * day)},
	}
	for i, w := range want {
		checkMigration(t, st.Issuers[i], w)
	}

	// Every holder of default's renewed, and r0 has none left.
	store.counts = []acme.IssuerCount{
		{Issuer: acme.DefaultIssuer, Live: 300, Replaced: 300, RenewedOff: 5, FirstExpiry: now.Add(time.Hour), LastExpiry: now.Add(30 * day)},
		{Issuer: "r0"}, {Issuer: "r1"}, {Issuer: "r2", Live: 300, FirstExpiry: now.Add(80 * day), LastExpiry: now.Add(90 * day)},
	}
	if st, err = svc.MigrationStatus(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkMigration(t, st.Issuers[0], acme.IssuerMigration{ID: acme.DefaultIssuer, RenewEarly: true, Leaving: true, Live: 300, Share: 0.5,
		Replaced: 300, RenewedOff: 5, RatePerHour: 60, FirstExpiry: at(time.Hour), LastExpiry: at(30 * day), ProjectedEmptyAt: at(0)})
	checkMigration(t, st.Issuers[1], acme.IssuerMigration{ID: "r0", Leaving: true})
}

// checkMigration compares two lines of the view.
func checkMigration(t *testing.T, got, want acme.IssuerMigration) {
	t.Helper()
	sameTime := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	times := [][2]*time.Time{{got.FirstExpiry, want.FirstExpiry}, {got.LastExpiry, want.LastExpiry}, {got.ProjectedEmptyAt, want.ProjectedEmptyAt}}
	for _, p := range times {
		if !sameTime(p[0], p[1]) {
			t.Errorf("%s: times (first, last, projected) %v %v %v, want %v %v %v", want.ID,
				got.FirstExpiry, got.LastExpiry, got.ProjectedEmptyAt, want.FirstExpiry, want.LastExpiry, want.ProjectedEmptyAt)
			break
		}
	}
	got.FirstExpiry, got.LastExpiry, got.ProjectedEmptyAt = nil, nil, nil
	want.FirstExpiry, want.LastExpiry, want.ProjectedEmptyAt = nil, nil, nil
	if got != want {
		t.Errorf("%s: %+v, want %+v", want.ID, got, want)
	}
}
