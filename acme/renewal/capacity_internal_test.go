// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestCapacityCeiling: windows placed past the ceiling are counted, the
// plan's peak and its slots over the ceiling are shown, and a ceiling
// raised in the configuration clears the warning at once.
func TestCapacityCeiling(t *testing.T) {
	now := planT0
	p := NewPlanner(func() time.Time { return now })
	c := Config{MaxRenewalsPerHour: 10, WindowWidth: time.Hour}
	c.SetDefaults()
	// A 10-hour lifetime leaves two starts (hours 6 and 7), 10 renewals
	// each before the ceiling, 5 before the target.
	nb, na := now, now.Add(10*time.Hour)
	for i := range 30 {
		p.Place(c, fmt.Sprint(i), fmt.Sprint(i), 1, nb, na, math.Inf(1))
	}
	got := p.Capacity(c, func(string, int) float64 { return math.Inf(1) })
	if got.PlacedOverCeiling != 10 || got.PlacedOverAccount != 0 {
		t.Errorf("placed over the ceiling %d, over an account %d; want 10 and 0", got.PlacedOverCeiling, got.PlacedOverAccount)
	}
	from := now.Add(6 * time.Hour)
	if got.PeakPerHour != 15 || got.PeakAt == nil || !got.PeakAt.Equal(from) || got.CeilingPerHour != 10 {
		t.Errorf("peak %v an hour at %v against %v; want 15 at %s against 10", got.PeakPerHour, got.PeakAt, got.CeilingPerHour, from)
	}
	if got.SlotsOver != 2 || got.OverFrom == nil || !got.OverFrom.Equal(from) || !got.Over() || got.Slot != "1h0m0s" {
		t.Errorf("%d slots over from %v (slot %s, over %v); want 2 from %s in hours", got.SlotsOver, got.OverFrom, got.Slot, got.Over(), from)
	}
	c.MaxRenewalsPerHour = 15
	if got := p.Capacity(c, nil); got.SlotsOver != 0 || got.OverFrom != nil || got.Over() || got.PlacedOverCeiling != 10 {
		t.Errorf("ceiling raised to the peak: %d slots over from %v, over %v, placed over %d; want none over and the count kept",
			got.SlotsOver, got.OverFrom, got.Over(), got.PlacedOverCeiling)
	}
	// The hours pass: what is behind is not ahead.
	now = now.Add(8 * time.Hour)
	p.mu.Lock()
	p.st.trim(p.st.index(now))
	p.mu.Unlock()
	if got := p.Capacity(c, nil); got.PeakPerHour != 0 || got.PeakAt != nil || got.SlotsOver != 0 {
		t.Errorf("after the windows: peak %v at %v, %d slots over; want nothing planned", got.PeakPerHour, got.PeakAt, got.SlotsOver)
	}
}

// TestCapacityAccount: an account whose certificates the planner had to
// place past its headroom is shown with its peak against the headroom
// the limiter gives now, for the names of its certificates; it is
// forgotten once the headroom covers it, and when it has no window
// left.
func TestCapacityAccount(t *testing.T) {
	now := planT0
	p := NewPlanner(func() time.Time { return now })
	c := Config{MaxRenewalsPerHour: 1000, WindowWidth: time.Hour}
	c.SetDefaults()
	nb, na := now, now.Add(10*time.Hour)
	var placed []Window
	for i := range 10 {
		s, e := p.Place(c, fmt.Sprint(i), "a", 3, nb, na, 2) // 2 an hour: 1 before the target
		placed = append(placed, Window{Serial: fmt.Sprint(i), AccountID: "a", Start: s, End: e})
		p.Place(c, fmt.Sprint(100+i), "b", 1, nb, na, 100)
	}
	var asked []int
	room := 2.0
	headroom := func(id string, names int) float64 { asked = append(asked, names); return room }
	got := p.Capacity(c, headroom)
	if got.PlacedOverAccount != 6 || got.PlacedOverCeiling != 0 {
		t.Errorf("placed over an account %d, over the ceiling %d; want 6 and 0", got.PlacedOverAccount, got.PlacedOverCeiling)
	}
	if got.AccountsOver != 1 || len(got.Accounts) != 1 || !got.Over() || got.SlotsOver != 0 {
		t.Fatalf("accounts over: %d %+v (slots over %d); want a alone", got.AccountsOver, got.Accounts, got.SlotsOver)
	}
	a := got.Accounts[0]
	if a.Account != "a" || a.PeakPerHour != 5 || a.HeadroomPerHour != 2 || !a.PeakAt.Equal(now.Add(6*time.Hour)) || len(asked) != 1 || asked[0] != 3 {
		t.Errorf("account line %+v, headroom asked for %v names; want a at 5 an hour from hour 6 against 2, asked for 3", a, asked)
	}
	room = 5 // the operator raised the san-budget
	if got := p.Capacity(c, headroom); got.AccountsOver != 0 || got.Over() {
		t.Errorf("headroom raised to the peak: %+v still over", got.Accounts)
	}
	room = 2 // forgotten: only a new placement over it brings it back
	if got := p.Capacity(c, headroom); got.AccountsOver != 0 {
		t.Errorf("an account forgotten came back without a placement: %+v", got.Accounts)
	}
	s, e := p.Place(c, "10", "a", 3, nb, na, 2)
	placed = append(placed, Window{Serial: "10", AccountID: "a", Start: s, End: e})
	if got := p.Capacity(c, headroom); got.AccountsOver != 1 {
		t.Errorf("placed over again: %d accounts over, want 1", got.AccountsOver)
	}
	// Its certificates revoked, the account has nothing ahead.
	for _, w := range placed {
		p.Remove(c, w, nb)
	}
	p.mu.Lock()
	left := p.st.count("a")
	p.mu.Unlock()
	if got := p.Capacity(c, headroom); got.AccountsOver != 0 || left != 0 {
		t.Errorf("after revoking its certificates (%d windows left): %+v", left, got.Accounts)
	}
	if _, ok := p.over.accts["a"]; ok {
		t.Error("an account without windows stays watched")
	}
}

// TestCapacityMinutes: in minute slots the peak is still per hour.
func TestCapacityMinutes(t *testing.T) {
	now := planT0
	p := NewPlanner(func() time.Time { return now })
	c := DefaultConfig()
	c.MaxRenewalsPerHour = 60 // one a minute, half of one before the target
	c.SetDefaults()
	c.Slot = c.SlotFor(10 * time.Minute)
	for i := range 20 {
		p.Place(c, fmt.Sprint(i), fmt.Sprint(i), 1, now, now.Add(10*time.Minute), math.Inf(1))
	}
	got := p.Capacity(c, nil)
	// 20 one-minute windows on two starts (minutes 6 and 7): 10 a minute.
	if got.Slot != "1m0s" || got.PeakPerHour != 600 || got.SlotsOver != 2 || got.PlacedOverCeiling != 18 {
		t.Errorf("slot %s, peak %v an hour, %d slots over, %d placed over; want minutes, 600, 2, 18", got.Slot, got.PeakPerHour, got.SlotsOver, got.PlacedOverCeiling)
	}
}
