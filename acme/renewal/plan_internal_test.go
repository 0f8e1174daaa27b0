// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// acctLoad is account's expected renewals in hour h.
func (p *Planner) acctLoad(account string, h int64) float64 {
	return p.st.acct[account].load(h, h+1, nil)[0]
}

// planT0 is when the planner tests start.
var planT0 = time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)

// TestPlannerRebuild: a rebuild reads the promised windows again, so the
// windows other replicas placed count; a failed rebuild keeps the plan
// it has; nothing waits for a rebuild.
func TestPlannerRebuild(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	p := NewPlanner(clk.now)
	if _, err := p.rebuild(t.Context(), s); err != nil || s.reads != 1 || !p.loaded {
		t.Fatalf("first rebuild: %v, %d reads, loaded %v", err, s.reads, p.loaded)
	}
	// Another replica stores a window of account b.
	start := planT0.Add(60 * 24 * time.Hour)
	s.put(Window{Serial: "01", AccountID: "b", Start: start, End: start.Add(2 * time.Hour)}, 0)
	h := hourIndex(start)
	if p.st.global.at(h) != 0 {
		t.Fatalf("the other replica's window counts before a rebuild")
	}
	clk.add(planReload)
	if _, err := p.rebuild(t.Context(), s); err != nil {
		t.Fatalf("second rebuild: %v", err)
	}
	if p.st.global.at(h) != 0.5 || p.acctLoad("b", h) != 0.5 {
		t.Errorf("after the rebuild: hour load %v (account b %v), want 0.5 each", p.st.global.at(h), p.acctLoad("b", h))
	}
	s.err = errStoreDown
	clk.add(planReload)
	if _, err := p.rebuild(t.Context(), s); err == nil {
		t.Error("a failed rebuild returned no error")
	}
	if !p.loaded || p.st.global.at(h) != 0.5 || p.rebuilding {
		t.Errorf("a failed rebuild lost the plan: loaded %v, hour load %v, rebuild left running %v", p.loaded, p.st.global.at(h), p.rebuilding)
	}
}

// TestPlannerRebuildCut: a rebuild reads only the certificates issued
// before its cut, planMargin before it starts; the refresh after it
// counts the rest, and what this process placed since the cut once.
func TestPlannerRebuildCut(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	other, r := newPlanReplica(s), newPlanReplica(s)
	other.issue("old", "a", 90*24*time.Hour, 0)
	clk.add(2 * planMargin)
	other.issue("recent", "a", 90*24*time.Hour, 0)
	r.issue("mine", "b", 90*24*time.Hour, 0)
	clk.add(planMargin / 2)
	if n, err := r.p.rebuild(t.Context(), s); err != nil || n != 1 {
		t.Fatalf("rebuild: %d windows, %v; want 1 (old; the others since the cut)", n, err)
	}
	if got := r.p.st.count("a") + r.p.st.count("b"); got != 1 {
		t.Fatalf("after the rebuild: %d windows, want 1", got)
	}
	if _, err := r.p.refresh(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	wantPlan(t, "after the refresh", r.p.st, s.truth(clk.now()))
}

// TestPlannerRebuildConcurrent: what is placed and revoked while a
// rebuild reads its pages counts once in the rebuilt plan, whether or
// not the pages held it.
func TestPlannerRebuildConcurrent(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	r := newPlanReplica(s)
	r.p.page = 4
	win := func(serial string, h int) Window {
		st := planT0.Add(time.Duration(h) * time.Hour)
		return Window{Serial: serial, AccountID: "a", Start: st, End: st.Add(time.Hour)}
	}
	// Pages of 4 windows: serials "p…" in the first page, "q…" after it.
	for i := range 4 {
		s.put(win(fmt.Sprintf("p%05d", i), 100), 0)
	}
	early, late := win("p00001", 100), win("q00001", 200)
	s.put(late, 0)
	clk.add(2 * planMargin)
	s.onRead = func(n int) {
		if n != 1 {
			return
		}
		// Between reading the first page and sorting it out: a new
		// certificate is placed and stored, and two are revoked, one in
		// each page.
		clk.add(time.Second)
		r.issue("q00002", "a", 100*time.Hour, 0)
		r.revoke(late.Serial)
		clk.add(time.Second)
	}
	if _, err := r.p.rebuild(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	// The first page's revocation, after its page was sorted out.
	r.revoke(early.Serial)
	h100, h200 := hourIndex(early.Start), hourIndex(late.Start)
	if r.p.st.global.at(h200) != 0 || r.p.st.global.at(h100) != 3 {
		t.Errorf("after the rebuild: revoked late hour %v (want 0), first page's hour %v (want 3)", r.p.st.global.at(h200), r.p.st.global.at(h100))
	}
	if n := r.p.st.count("a"); n != 4 {
		t.Errorf("account a counts %d windows, want 4", n)
	}
	s.onRead = nil
	if _, err := r.p.refresh(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	wantPlan(t, "after the refresh", r.p.st, s.truth(clk.now()))
}

// TestPlanStateDense: an account's load is the same whether its windows
// are kept as a list or, past denseAfter, per hour, and removing windows
// takes back what adding them counted.
func TestPlanStateDense(t *testing.T) {
	st := newPlanState(planT0, time.Hour)
	type w struct{ s, e time.Time }
	var ws []w
	for i := range denseAfter + 50 {
		s := planT0.Add(time.Duration(i%37) * time.Hour)
		ws = append(ws, w{s, s.Add(time.Duration(1+i%5) * time.Hour)})
	}
	from, to := hourIndex(planT0), hourIndex(planT0)+48
	want := make([]float64, to-from)
	for i, x := range ws {
		st.add("a", x.s, x.e)
		h0, n := st.windowHours(x.s, x.e)
		for h := h0; h < h0+n; h++ {
			want[h-from] += 1 / float64(n)
		}
		if i == denseAfter-1 && st.acct["a"].dense {
			t.Fatalf("dense after %d windows, want a list up to %d", i+1, denseAfter)
		}
	}
	if !st.acct["a"].dense {
		t.Fatalf("still a list after %d windows", len(ws))
	}
	got := st.acct["a"].load(from, to, nil)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 || math.Abs(st.global.at(from+int64(i))-want[i]) > 1e-9 {
			t.Fatalf("hour %d: account %v, CA %v; want %v", i, got[i], st.global.at(from+int64(i)), want[i])
		}
	}
	for _, x := range ws {
		st.remove("a", x.s, x.e)
	}
	if st.global.busy() != 0 || st.acct["a"] != nil {
		t.Errorf("after removing every window: %d hours and account %+v left", st.global.busy(), st.acct["a"])
	}
}

// TestPlannerRebuildCanceledInPause: a rebuild waits between pages
// (planYield), and a context ended during that wait ends the rebuild at
// once with its error, the plan in use kept and the planner free for the
// next rebuild.
func TestPlannerRebuildCanceledInPause(t *testing.T) {
	clk := &planClock{t: planT0}
	s := newPlanStore(clk)
	r := newPlanReplica(s)
	r.p.page = 4
	for i := range 5 {
		st := planT0.Add(100 * time.Hour)
		s.put(Window{Serial: fmt.Sprintf("p%05d", i), AccountID: "a", Start: st, End: st.Add(time.Hour)}, 0)
	}
	clk.add(2 * planMargin)
	r.issue("kept", "b", 100*time.Hour, 0)
	ctx, cancel := context.WithCancel(t.Context())
	s.onRead = func(n int) {
		if n == 1 {
			cancel() // the first page is full: the rebuild pauses next
		}
	}
	n, err := r.p.rebuild(ctx, s)
	if !errors.Is(err, context.Canceled) || n != 4 {
		t.Fatalf("rebuild canceled in its pause: %d windows, %v; want 4, context.Canceled", n, err)
	}
	if s.reads != 1 {
		t.Errorf("%d pages read, want 1", s.reads)
	}
	if r.p.rebuilding || r.p.st.count("b") != 1 || r.p.st.count("a") != 0 || r.p.loaded {
		t.Errorf("after the canceled rebuild: rebuilding %v, account b %d windows (want 1), a %d (want 0), loaded %v",
			r.p.rebuilding, r.p.st.count("b"), r.p.st.count("a"), r.p.loaded)
	}
	s.onRead = nil
	if _, err := r.p.rebuild(t.Context(), s); err != nil || r.p.st.count("a") != 5 {
		t.Errorf("the next rebuild: %v, account a %d windows, want 5", err, r.p.st.count("a"))
	}
}

// wantPlan fails t unless got counts what want does: the CA's load in
// every hour from want's floor, and each account's windows and load.
func wantPlan(t *testing.T, what string, got, want *planState) {
	t.Helper()
	last := want.global.base + int64(len(want.global.v))
	if l := got.global.base + int64(len(got.global.v)); l > last {
		last = l
	}
	for h := want.floor; h < last; h++ {
		if g, w := got.global.at(h), want.global.at(h); math.Abs(g-w) > 1e-6 {
			t.Errorf("%s: hour %d: load %v, want %v", what, h-want.floor, g, w)
			break
		}
	}
	for id := range mergeKeys(got.acct, want.acct) {
		if g, w := got.count(id), want.count(id); g != w {
			t.Errorf("%s: account %s counts %d windows, want %d", what, id, g, w)
			continue
		}
		gl, wl := got.acct[id].load(want.floor, last, nil), want.acct[id].load(want.floor, last, nil)
		for i := range wl {
			if math.Abs(gl[i]-wl[i]) > 1e-6 {
				t.Errorf("%s: account %s, hour %d: load %v, want %v", what, id, i, gl[i], wl[i])
				break
			}
		}
	}
}

// mergeKeys is the set of the keys of a and b.
func mergeKeys[K comparable, V any](a, b map[K]V) map[K]bool {
	out := map[K]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// placeBrute is place's choice computed the plain way, every start's
// every hour, the account's hours read whenever it has a headroom: the
// reference for the sliding maximum and for place's skipping of an
// account that cannot limit the placement.
func placeBrute(p *Planner, c Config, account string, nb, na time.Time, perHour float64) time.Time {
	unit := p.st.unit
	lo, hi, hours, ok := placeSpan(c, unit, nb, na)
	if !ok {
		start, _ := DefaultWindow(nb, na)
		return start
	}
	perSlot := unit.Hours()
	ceiling, acctCap := float64(c.MaxRenewalsPerHour)*c.Target*perSlot, perHour*c.Target*perSlot
	share := 1 / float64(hours)
	useAcct := acctCap > 0 && !math.IsInf(acctCap, 1)
	best, bestU := lo, math.Inf(1)
	for start := lo; !start.After(hi); start = start.Add(unit) {
		u := 0.0
		for h := p.st.index(start); h < p.st.index(start)+hours; h++ {
			u = max(u, (p.st.global.at(h)+share)/ceiling)
			if useAcct {
				u = max(u, (p.acctLoad(account, h)+share)/acctCap)
			}
		}
		if u <= 1 {
			return start
		}
		if u < bestU {
			best, bestU = start, u
		}
	}
	return best
}

// TestPlannerPlaceSlidingMax: place chooses what the plain computation
// does, on plans full and empty, with and without the account's
// headroom, for windows of one hour to several days, and in minute
// slots for lifetimes of minutes to hours (some too short for a slot).
func TestPlannerPlaceSlidingMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 40 {
		p := NewPlanner(func() time.Time { return planT0 })
		cfg := Config{MaxRenewalsPerHour: 1 + rng.IntN(50)}
		minutes := trial%4 == 1
		if minutes {
			cfg.Slot = time.Minute
			p.setUnit(cfg.slot())
		} else if trial%3 == 0 {
			cfg.WindowWidth = time.Duration(1+rng.IntN(60)) * time.Hour
		}
		cfg.SetDefaults()
		for i := range 3000 {
			nb := planT0.Add(time.Duration(rng.IntN(72)) * time.Hour)
			na := nb.Add(time.Duration(24+rng.IntN(24*90)) * time.Hour)
			if minutes {
				nb = planT0.Add(time.Duration(rng.IntN(600)) * time.Second)
				na = nb.Add(time.Duration(60+rng.IntN(600*60)) * time.Second)
			}
			acct := fmt.Sprint(rng.IntN(3))
			perHour := []float64{math.Inf(1), 2, 10}[rng.IntN(3)]
			want := placeBrute(p, cfg, acct, nb, na, perHour)
			got, _ := p.place(cfg, fmt.Sprint(i), acct, 1, nb, na, perHour)
			if !got.Equal(want) {
				t.Fatalf("trial %d, placement %d: start %s, want %s", trial, i, got, want)
			}
		}
	}
}
