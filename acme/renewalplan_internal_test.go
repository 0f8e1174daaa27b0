package acme

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// windowsOnly is an Inventory whose only method in use is RenewalWindows:
// the windows every replica has stored, served in pages.
// onPage, when set, runs after each page is read, as a request running
// alongside the rebuild would.
type windowsOnly struct {
	Inventory
	ws     []RenewalWindow
	err    error
	calls  int
	onPage func(page int)
}

func (w *windowsOnly) RenewalWindows(_ context.Context, _ time.Time, from RenewalWindow, limit int) ([]RenewalWindow, error) {
	w.calls++
	if w.err != nil {
		return nil, w.err
	}
	ws := slices.Clone(w.ws)
	slices.SortFunc(ws, func(a, b RenewalWindow) int {
		switch {
		case a.Before(b):
			return -1
		case b.Before(a):
			return 1
		}
		return 0
	})
	var page []RenewalWindow
	for _, x := range ws {
		if from.Before(x) && (limit <= 0 || len(page) < limit) {
			page = append(page, x)
		}
	}
	if w.onPage != nil {
		w.onPage(w.calls)
	}
	return page, nil
}

// acctLoad is account's expected renewals in hour h.
func (p *planner) acctLoad(account AccountID, h int64) float64 {
	return p.st.acct[account].load(h, h+1, nil)[0]
}

// TestPlannerRebuild: a rebuild reads the promised windows again, so the
// windows other replicas placed count; a failed rebuild keeps the plan
// it has; nothing waits for a rebuild.
func TestPlannerRebuild(t *testing.T) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	inv := &windowsOnly{}
	p := newPlanner()
	if err := p.rebuild(t.Context(), inv, t0); err != nil || inv.calls != 1 || !p.loaded {
		t.Fatalf("first rebuild: %v, %d reads, loaded %v", err, inv.calls, p.loaded)
	}
	// Another replica stores a window of account b.
	start := t0.Add(60 * 24 * time.Hour)
	inv.ws = []RenewalWindow{{Serial: "01", AccountID: "b", Start: start, End: start.Add(2 * time.Hour)}}
	h := hourIndex(start)
	if p.st.global.at(h) != 0 {
		t.Fatalf("the other replica's window counts before a rebuild")
	}
	if err := p.rebuild(t.Context(), inv, t0.Add(planReload)); err != nil {
		t.Fatalf("second rebuild: %v", err)
	}
	if p.st.global.at(h) != 0.5 || p.acctLoad("b", h) != 0.5 {
		t.Errorf("after the rebuild: hour load %v (account b %v), want 0.5 each", p.st.global.at(h), p.acctLoad("b", h))
	}
	inv.err = errors.New("database is down")
	if err := p.rebuild(t.Context(), inv, t0.Add(2*planReload)); err == nil {
		t.Error("a failed rebuild returned no error")
	}
	if !p.loaded || p.st.global.at(h) != 0.5 || p.rebuilding {
		t.Errorf("a failed rebuild lost the plan: loaded %v, hour load %v, rebuild left running %v", p.loaded, p.st.global.at(h), p.rebuilding)
	}
}

// TestPlannerRebuildConcurrent: what is placed and revoked while a
// rebuild reads its pages counts once in the rebuilt plan, whether or
// not the pages held it.
func TestPlannerRebuildConcurrent(t *testing.T) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := ARIConfig{MaxRenewalsPerHour: 1000, WindowWidth: time.Hour}
	cfg.setDefaults()
	win := func(serial string, h int) RenewalWindow {
		s := t0.Add(time.Duration(h) * time.Hour)
		return RenewalWindow{Serial: serial, AccountID: "a", Start: s, End: s.Add(time.Hour)}
	}
	// Pages of planPage windows: serials "p…" in the first page,
	// "q…" after it.
	inv := &windowsOnly{}
	for i := range planPage {
		inv.ws = append(inv.ws, win(fmt.Sprintf("p%05d", i), 100))
	}
	early, late := win("p00001", 100), win("q00001", 200)
	inv.ws = append(inv.ws, late)
	p := newPlanner()
	var placed time.Time
	inv.onPage = func(page int) {
		if page != 1 {
			return
		}
		// Between reading the first page and merging it: a new
		// certificate is placed and stored (the second page holds it),
		// and two are revoked, one in each page.
		p.mu.Lock()
		placed, _ = p.place(cfg, "q00002", "a", t0, t0.Add(100*time.Hour), math.Inf(1))
		p.mu.Unlock()
		inv.ws = append(inv.ws, RenewalWindow{Serial: "q00002", AccountID: "a", Start: placed, End: placed.Add(time.Hour)})
		inv.ws = slices.DeleteFunc(inv.ws, func(w RenewalWindow) bool { return w.Serial == late.Serial })
		p.mu.Lock()
		p.removed(late.Serial, "a", late.Start, late.End)
		p.mu.Unlock()
	}
	if err := p.rebuild(t.Context(), inv, t0); err != nil {
		t.Fatal(err)
	}
	// The first page's revocation, after its page was merged.
	p.mu.Lock()
	p.removed(early.Serial, "a", early.Start, early.End)
	p.mu.Unlock()
	hp, h100, h200 := hourIndex(placed), hourIndex(early.Start), hourIndex(late.Start)
	if p.st.global.at(hp) != 1 || p.st.global.at(h200) != 0 || p.st.global.at(h100) != planPage-1 {
		t.Errorf("after the rebuild: placed hour %v (want 1), revoked late hour %v (want 0), first page's hour %v (want %d)",
			p.st.global.at(hp), p.st.global.at(h200), p.st.global.at(h100), planPage-1)
	}
	if n := p.st.count("a"); n != planPage {
		t.Errorf("account a counts %d windows, want %d", n, planPage)
	}
}

// TestPlanStateDense: an account's load is the same whether its windows
// are kept as a list or, past denseAfter, per hour, and removing windows
// takes back what adding them counted.
func TestPlanStateDense(t *testing.T) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	st := newPlanState()
	type w struct{ s, e time.Time }
	var ws []w
	for i := range denseAfter + 50 {
		s := t0.Add(time.Duration(i%37) * time.Hour)
		ws = append(ws, w{s, s.Add(time.Duration(1+i%5) * time.Hour)})
	}
	from, to := hourIndex(t0), hourIndex(t0)+48
	want := make([]float64, to-from)
	for i, x := range ws {
		st.add("a", x.s, x.e)
		h0, n := windowHours(x.s, x.e)
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
	cfg := ARIConfig{MaxRenewalsPerHour: 5000}
	cfg.setDefaults()
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	inv := &windowsOnly{}
	for i := range planPage + 1 {
		s := t0.Add(100 * time.Hour)
		inv.ws = append(inv.ws, RenewalWindow{Serial: fmt.Sprintf("p%05d", i), AccountID: "a", Start: s, End: s.Add(time.Hour)})
	}
	p := newPlanner()
	p.mu.Lock()
	p.place(cfg, "kept", "b", t0, t0.Add(100*time.Hour), math.Inf(1))
	p.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	inv.onPage = func(page int) {
		if page == 1 {
			cancel() // the first page is full: the rebuild pauses next
		}
	}
	n, err := p.rebuildCount(ctx, inv, t0, 0)
	if !errors.Is(err, context.Canceled) || n != planPage {
		t.Fatalf("rebuild canceled in its pause: %d windows, %v; want %d, context.Canceled", n, err, planPage)
	}
	if inv.calls != 1 {
		t.Errorf("%d pages read, want 1", inv.calls)
	}
	if p.rebuilding || p.st.count("b") != 1 || p.st.count("a") != 0 {
		t.Errorf("after the canceled rebuild: rebuilding %v, account b %d windows (want 1), a %d (want 0)", p.rebuilding, p.st.count("b"), p.st.count("a"))
	}
	if err := p.rebuild(t.Context(), inv, t0); err != nil || p.st.count("a") != planPage+1 {
		t.Errorf("the next rebuild: %v, account a %d windows, want %d", err, p.st.count("a"), planPage+1)
	}
}

// TestPacerWait: a rebuild waits planYield times each page, and a
// periodic one longer while it is ahead of an even spread of the previous
// rebuild's windows; a store that grew is paced at its old size.
func TestPacerWait(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name          string
		c             pacer
		took, elapsed time.Duration
		read          int
		want          time.Duration
	}{
		{"at start: planYield", pacer{}, 5 * ms, 5 * ms, planPage, planYield * 5 * ms},
		{"size unknown", pacer{spread: time.Second}, 5 * ms, 5 * ms, planPage, planYield * 5 * ms},
		{"ahead of the spread", pacer{spread: 10 * time.Second, expect: 10 * planPage}, 5 * ms, 5 * ms, planPage, time.Second - 5*ms},
		{"on time: planYield", pacer{spread: 10 * time.Second, expect: 10 * planPage}, 5 * ms, 3 * time.Second, 2 * planPage, planYield * 5 * ms},
		{"grew: no later than the spread", pacer{spread: 10 * time.Second, expect: planPage}, 5 * ms, 2 * time.Second, 5 * planPage, 8 * time.Second},
		{"grew, spread over: planYield", pacer{spread: 10 * time.Second, expect: planPage}, 5 * ms, 11 * time.Second, 6 * planPage, planYield * 5 * ms},
	} {
		if got := tc.c.wait(tc.took, tc.read, tc.elapsed); got != tc.want {
			t.Errorf("%s: wait = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestPlannerRebuildRemembersSize: a completed rebuild keeps the number
// of windows it read, which paces the next one; a failed one does not.
func TestPlannerRebuildRemembersSize(t *testing.T) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	inv := &windowsOnly{}
	for i := range 3 {
		s := t0.Add(100 * time.Hour)
		inv.ws = append(inv.ws, RenewalWindow{Serial: fmt.Sprintf("p%05d", i), AccountID: "a", Start: s, End: s.Add(time.Hour)})
	}
	p := newPlanner()
	if n, err := p.rebuildCount(t.Context(), inv, t0, time.Hour); err != nil || n != 3 || p.lastRead != 3 {
		t.Fatalf("rebuild: %d windows, %v, lastRead %d; want 3, nil, 3", n, err, p.lastRead)
	}
	inv.err = errors.New("store down")
	if _, err := p.rebuildCount(t.Context(), inv, t0, time.Hour); err == nil || p.lastRead != 3 {
		t.Errorf("failed rebuild: %v, lastRead %d; want an error, 3", err, p.lastRead)
	}
}
