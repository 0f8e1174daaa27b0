package acme

import (
	"context"
	"errors"
	"testing"
	"time"
)

// windowsOnly is an Inventory whose only method in use is RenewalWindows:
// the windows every replica has stored.
type windowsOnly struct {
	Inventory
	ws    []RenewalWindow
	err   error
	calls int
}

func (w *windowsOnly) RenewalWindows(context.Context, time.Time) ([]RenewalWindow, error) {
	w.calls++
	return w.ws, w.err
}

// TestPlannerReload: the planner reads the promised windows again once
// what it read is planReload old, so the windows other replicas placed
// count; a failed read keeps the plan it has.
func TestPlannerReload(t *testing.T) {
	t0 := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	inv := &windowsOnly{}
	p := &planner{}
	if err := p.load(t.Context(), inv, t0); err != nil || inv.calls != 1 {
		t.Fatalf("first load: %v, %d reads", err, inv.calls)
	}
	// Another replica stores a window of account b.
	start := t0.Add(60 * 24 * time.Hour)
	inv.ws = []RenewalWindow{{Serial: "01", AccountID: "b", Start: start, End: start.Add(2 * time.Hour)}}
	h := hourIndex(start)

	if err := p.load(t.Context(), inv, t0.Add(time.Minute)); err != nil || inv.calls != 1 {
		t.Fatalf("load within planReload: %v, %d reads; want no read", err, inv.calls)
	}
	if p.global[h] != 0 {
		t.Fatalf("the other replica's window counts before a reload")
	}
	if err := p.load(t.Context(), inv, t0.Add(planReload)); err != nil || inv.calls != 2 {
		t.Fatalf("load after planReload: %v, %d reads; want a second read", err, inv.calls)
	}
	if p.global[h] != 0.5 || p.acct["b"][h] != 0.5 {
		t.Errorf("after the reload: hour load %v (account b %v), want 0.5 each", p.global[h], p.acct["b"][h])
	}

	inv.err = errors.New("database is down")
	if err := p.load(t.Context(), inv, t0.Add(2*planReload)); err == nil {
		t.Error("a failed reload returned no error")
	}
	if !p.loaded || p.global[h] != 0.5 {
		t.Errorf("a failed reload lost the plan: loaded %v, hour load %v", p.loaded, p.global[h])
	}
	inv.err = nil
	// A clock that stepped back reloads too, rather than trusting a plan
	// from the future.
	if err := p.load(t.Context(), inv, t0); err != nil || inv.calls != 4 {
		t.Errorf("load with the clock stepped back: %v, %d reads; want a read", err, inv.calls)
	}
}
