// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// refreshed refreshes r's plan and fails t if it cannot.
func refreshed(t *testing.T, r *planReplica) refreshStats {
	t.Helper()
	st, err := r.p.refresh(t.Context(), r.s)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	return st
}

// TestPlannerRefreshReplicas: a refresh counts what other replicas placed
// and takes out what they revoked or moved, each once, and counts
// nothing twice that its own process did.
func TestPlannerRefreshReplicas(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	a, b := newPlanReplica(s), newPlanReplica(s)
	for _, r := range []*planReplica{a, b} {
		if _, err := r.p.rebuild(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	const life = 90 * 24 * time.Hour
	check := func(what string) {
		t.Helper()
		want := s.truth(clk.now())
		wantPlan(t, what+": a", a.p.st, want)
		wantPlan(t, what+": b", b.p.st, want)
	}
	for i := range 3 {
		a.issue(fmt.Sprintf("a%d", i), "x", life, 0)
	}
	b.issue("b0", "x", life, 0)
	clk.add(time.Minute)
	if st := refreshed(t, b); st.counted != 3 {
		t.Errorf("b's refresh counted %d windows, want a's 3", st.counted)
	}
	if st := refreshed(t, a); st.counted != 1 {
		t.Errorf("a's refresh counted %d windows, want b's 1", st.counted)
	}
	check("after both placed")
	a.revoke("a0")
	b.revoke("b0")
	a.renewNow("a1")
	clk.add(time.Minute)
	if st := refreshed(t, b); st.taken != 2 {
		t.Errorf("b's refresh took %d windows out, want a's 2", st.taken)
	}
	if st := refreshed(t, a); st.taken != 1 {
		t.Errorf("a's refresh took %d windows out, want b's 1", st.taken)
	}
	check("after revocations and a move")
	// Refreshes read the same changes again (planMargin): nothing moves.
	clk.add(10 * time.Second)
	for _, r := range []*planReplica{a, b} {
		if st := refreshed(t, r); st.counted != 0 || st.taken != 0 {
			t.Errorf("a refresh with nothing new counted %d and took out %d", st.counted, st.taken)
		}
	}
	check("after refreshing again")
}

// TestPlannerRefreshLate: a certificate whose issuance commits after a
// refresh read past its issue time, and one issued and revoked between a
// refresh's two reads, count as they should once read.
func TestPlannerRefreshLate(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	a, b := newPlanReplica(s), newPlanReplica(s)
	if _, err := b.p.rebuild(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	const life = 90 * 24 * time.Hour
	a.issue("slow", "x", life, 40*time.Second)
	clk.add(10 * time.Second)
	if st := refreshed(t, b); st.issued != 0 {
		t.Fatalf("b read %d windows before the issuance committed", st.issued)
	}
	clk.add(planReload)
	if st := refreshed(t, b); st.counted != 1 {
		t.Errorf("the refresh after the commit counted %d windows, want 1", st.counted)
	}
	// Issued and revoked after b read the windows, before it reads the
	// removals.
	s.onRead = func(n int) {
		if n == s.reads && s.onRead != nil {
			s.onRead = nil
			clk.add(time.Second)
			a.issue("brief", "x", life, 0)
			a.revoke("brief")
			clk.add(time.Second)
		}
	}
	clk.add(time.Minute)
	refreshed(t, b)
	clk.add(time.Minute)
	refreshed(t, b)
	wantPlan(t, "b", b.p.st, s.truth(clk.now()))
}

// TestPlannerRefreshAfterRebuild: another replica's revocation during a
// rebuild is taken out by the refresh after it only if the rebuild
// counted the window, that is if it read its page before the revocation.
func TestPlannerRefreshAfterRebuild(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	a, b := newPlanReplica(s), newPlanReplica(s)
	b.p.page = 2
	for i := range 6 {
		a.issue(fmt.Sprintf("c%d", i), fmt.Sprint(i%2), time.Duration(90+i)*24*time.Hour, 0)
	}
	clk.add(2 * planMargin)
	var order []string
	s.onRead = func(n int) {
		if n != 1 {
			return
		}
		// After the first page: revoke a window it held and one a later
		// page holds.
		ws, _ := s.RenewalWindows(t.Context(), clk.now(), time.Time{}, Window{}, 0)
		for _, w := range ws {
			order = append(order, w.Serial)
		}
		clk.add(time.Second)
		a.revoke(order[0])
		a.revoke(order[len(order)-1])
		clk.add(time.Second)
	}
	if _, err := b.p.rebuild(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	s.onRead = nil
	clk.add(time.Second)
	if st := refreshed(t, b); st.taken != 1 {
		t.Errorf("the refresh after the rebuild took %d windows out, want 1 (%s, read before its revocation)", st.taken, order[0])
	}
	wantPlan(t, "b", b.p.st, s.truth(clk.now()))
}

// TestPlannerRefreshTrims: the hours that have passed go, with the
// windows that ended, the accounts left without any, and what a refresh
// no longer needs to remember.
func TestPlannerRefreshTrims(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	r := newPlanReplica(s)
	if _, err := r.p.rebuild(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	r.cfg.WindowStart, r.cfg.WindowEnd = 0.1, 0.5
	for i := range denseAfter + 10 {
		r.issue(fmt.Sprintf("d%03d", i), "dense", 10*time.Hour, 0) // windows within 5 hours
	}
	r.issue("s", "sparse", 20*time.Hour, 0)
	r.revoke("d000")
	r.issue("long", "long", 90*24*time.Hour, 0)
	if !r.p.st.acct["dense"].dense {
		t.Fatal("account dense is not dense")
	}
	clk.add(6 * time.Hour)
	refreshed(t, r)
	if r.p.st.acct["dense"] != nil || r.p.st.count("sparse") != 1 || r.p.st.count("long") != 1 {
		t.Errorf("6 hours on: dense %+v (want gone), sparse %d, long %d windows (want 1)", r.p.st.acct["dense"], r.p.st.count("sparse"), r.p.st.count("long"))
	}
	if r.p.st.global.base != hourIndex(clk.now()) {
		t.Errorf("the CA's hours start %d hours after now, want now", r.p.st.global.base-hourIndex(clk.now()))
	}
	wantPlan(t, "6 hours on", r.p.st, s.truth(clk.now()))
	clk.add(24 * time.Hour)
	refreshed(t, r)
	if len(r.p.seen) != 0 || len(r.p.mine) != 0 || len(r.p.applied) != 0 {
		t.Errorf("a day on: %d certificates, %d own removals and %d removals remembered, want none", len(r.p.seen), len(r.p.mine), len(r.p.applied))
	}
	if r.p.st.count("sparse") != 0 || r.p.st.count("long") != 1 {
		t.Errorf("a day on: sparse %d, long %d windows; want 0, 1", r.p.st.count("sparse"), r.p.st.count("long"))
	}
}

// TestPlannerRefreshFails: a refresh that cannot read keeps the plan and
// reads the same changes next time; a planner that could not refresh
// for RemovalsKept rebuilds.
func TestPlannerRefreshFails(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	a, b := newPlanReplica(s), newPlanReplica(s)
	if _, err := b.p.rebuild(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	a.issue("c", "x", 90*24*time.Hour, 0)
	clk.add(planReload)
	s.err = errStoreDown
	if _, err := b.p.refresh(t.Context(), s); err == nil {
		t.Fatal("a refresh of a store that is down returned no error")
	}
	if b.p.stale() || b.p.refreshing {
		t.Errorf("after one failed refresh: stale %v, refreshing %v", b.p.stale(), b.p.refreshing)
	}
	s.err = nil
	clk.add(planReload)
	if st := refreshed(t, b); st.counted != 1 {
		t.Errorf("the refresh after the failed one counted %d windows, want 1", st.counted)
	}
	clk.add(RemovalsKept)
	if !b.p.stale() {
		t.Error("not stale after RemovalsKept without a refresh")
	}
}

// TestPlannerReplicasConverge: replicas issuing, revoking, moving
// windows, refreshing and rebuilding at random on one store, some of it
// while another reads its pages, the issuances committing up to 30 s
// after their issue time, each end with the plan the store's windows
// make once they have refreshed. (Run once with 12,000 seeds.)
func TestPlannerReplicasConverge(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { converge(t, seed, 400) })
	}
}

// converge runs steps random steps of three replicas from seed.
func converge(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	rs := []*planReplica{newPlanReplica(s), newPlanReplica(s), newPlanReplica(s)}
	var serials []string
	op := func() {
		r := rs[rng.IntN(len(rs))]
		switch k := rng.IntN(10); {
		case k < 6:
			serial := fmt.Sprintf("%d-%d", seed, len(serials))
			serials = append(serials, serial)
			life := time.Duration(2+rng.IntN(200)) * time.Hour
			r.issue(serial, fmt.Sprint(rng.IntN(4)), life, time.Duration(rng.IntN(30))*time.Second)
		case k < 8 && len(serials) > 0:
			r.revoke(serials[rng.IntN(len(serials))])
		case len(serials) > 0:
			r.renewNow(serials[rng.IntN(len(serials))])
		}
	}
	// Sometimes, while a replica reads a page, another does something.
	during := func(int) {
		if rng.IntN(8) == 0 {
			clk.add(time.Second)
			op()
			clk.add(time.Second)
		}
	}
	for _, r := range rs {
		r.p.page = 1 + rng.IntN(8)
		if _, err := r.p.rebuild(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	for range steps {
		clk.add(time.Duration(rng.IntN(40)) * time.Second)
		r := rs[rng.IntN(len(rs))]
		switch k := rng.IntN(20); {
		case k < 16:
			op()
		case k < 19:
			s.onRead = during
			refreshed(t, r)
		default:
			s.onRead = during
			if _, err := r.p.rebuild(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			refreshed(t, r)
		}
		s.onRead = nil
	}
	clk.add(planMargin) // every issuance has committed
	want := s.truth(clk.now())
	for i, r := range rs {
		refreshed(t, r)
		wantPlan(t, fmt.Sprintf("replica %d", i), r.p.st, want)
	}
}

// TestPlannerUpdateSoleWriter: on a store only this process writes, the
// refresh after a rebuild reads what was issued since the rebuild's cut,
// and later refreshes read nothing: the plan is the process's own.
func TestPlannerUpdateSoleWriter(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	r := newPlanReplica(s)
	log := slog.New(slog.DiscardHandler)
	r.issue("early", "a", 90*24*time.Hour, 0)
	clk.add(2 * planMargin)
	r.issue("recent", "a", 90*24*time.Hour, 0) // after the cut
	r.p.update(t.Context(), s, nil, log)
	if !r.p.loaded || r.p.st.count("a") != 2 {
		t.Fatalf("after the first update: loaded %v, %d windows; want 2", r.p.loaded, r.p.st.count("a"))
	}
	wantPlan(t, "after the first update", r.p.st, s.truth(clk.now()))
	reads := s.reads
	r.issue("later", "a", 90*24*time.Hour, 0)
	r.revoke("early")
	clk.add(planReload)
	r.p.update(t.Context(), s, nil, log)
	if s.reads != reads {
		t.Errorf("a refresh of a store only this process writes read %d pages", s.reads-reads)
	}
	wantPlan(t, "after a refresh", r.p.st, s.truth(clk.now()))
}

// TestPlannerLapsed: a certificate issued while planning was off (its
// default window in no plan) makes the next update a full rebuild, which
// counts it.
func TestPlannerLapsed(t *testing.T) {
	clk := &planClock{t: planT0}
	st := newPlanStore(clk)
	p := NewPlanner(clk.now)
	p.yield = 0
	log := slog.New(slog.DiscardHandler)
	p.update(t.Context(), st, nil, log)
	off := Config{}
	off.SetDefaults()
	nb := clk.now()
	start, end := p.Place(off, "off", "a", 1, nb, nb.Add(90*24*time.Hour), math.Inf(1))
	st.put(Window{Serial: "off", AccountID: "a", Start: start, End: end}, 0)
	if !p.stale() {
		t.Fatal("not stale after an issuance with planning off")
	}
	clk.add(2 * planMargin)
	p.update(t.Context(), st, nil, log)
	if p.stale() || p.st.count("a") != 1 {
		t.Errorf("after the update: stale %v, %d windows of account a; want false, 1", p.stale(), p.st.count("a"))
	}
}
