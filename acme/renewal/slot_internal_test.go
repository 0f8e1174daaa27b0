// SPDX-License-Identifier: Apache-2.0

package renewal

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestSlotFor: hours for lifetimes whose window span holds slotSpan
// hours, minutes below, with the default and a narrower span.
func TestSlotFor(t *testing.T) {
	def := DefaultConfig()
	def.SetDefaults()
	narrow := Config{WindowStart: 0.7, WindowEnd: 0.75}
	for _, tc := range []struct {
		c    Config
		life time.Duration
		want time.Duration
	}{
		{def, 90 * 24 * time.Hour, time.Hour},
		{def, 24 * time.Hour, time.Hour},
		{def, 20 * time.Hour, time.Hour},
		{def, 19 * time.Hour, time.Minute},
		{def, 10 * time.Minute, time.Minute},
		{def, 0, time.Hour}, // nothing configured
		{narrow, 24 * time.Hour, time.Minute},
		{narrow, 80 * time.Hour, time.Hour},
	} {
		if got := tc.c.SlotFor(tc.life); got != tc.want {
			t.Errorf("SlotFor(%v) with [%v, %v] = %v, want %v", tc.life, tc.c.WindowStart, tc.c.WindowEnd, got, tc.want)
		}
	}
}

// TestPlaceShortLifetimes: in minute slots, 10-minute certificates get
// windows of whole minutes inside [window-start, window-end] of their
// lifetime (the start on the minute at or before window-start), never
// past their expiry; a burst past the ceiling spreads over every start;
// and in hour slots the same certificate gets the default window, which
// the plan does not count.
func TestPlaceShortLifetimes(t *testing.T) {
	now := time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)
	p := NewPlanner(func() time.Time { return now })
	c := DefaultConfig()
	c.MaxRenewalsPerHour = 600 // 300 an hour with the target: 5 a minute
	c.SetDefaults()
	const life = 10 * time.Minute
	c.Slot = c.SlotFor(life)
	if c.Slot != time.Minute {
		t.Fatalf("slot for %v = %v, want a minute", life, c.Slot)
	}
	starts := map[time.Duration]int{}
	for i := range 200 {
		nb := now.Add(time.Duration(i%60) * time.Second)
		na := nb.Add(life)
		s, e := p.Place(c, fmt.Sprint(i), fmt.Sprint(i%7), 1, nb, na, math.Inf(1))
		if s.Truncate(time.Minute) != s || e.Truncate(time.Minute) != e || e.Sub(s) < time.Minute {
			t.Fatalf("cert %d: window [%s, %s] is not of whole minutes", i, s, e)
		}
		lo := nb.Add(time.Duration(float64(life) * c.WindowStart)).Truncate(time.Minute)
		hi := nb.Add(time.Duration(float64(life) * c.WindowEnd))
		if s.Before(lo) || e.After(hi) || !e.Before(na) {
			t.Fatalf("cert %d (%s to %s): window [%s, %s] outside [%s, %s]", i, nb, na, s, e, lo, hi)
		}
		starts[s.Sub(now)]++
	}
	// 200 windows of one minute, 5 a minute under the target: every
	// start of the span is used, none holds more than its fair share.
	if len(starts) < 2 {
		t.Errorf("200 windows on %d starts, want them spread: %v", len(starts), starts)
	}
	for st, n := range starts {
		if n > 200/len(starts)+5 {
			t.Errorf("start %v holds %d of 200 windows (%d starts): %v", st, n, len(starts), starts)
		}
	}
	if p.st.unit != time.Minute || p.st.global.busy() == 0 {
		t.Errorf("plan in %v slots with %d busy, want minutes and a load", p.st.unit, p.st.global.busy())
	}

	// Back to hour slots (the lifetimes configured grew): the plan starts
	// over in hours and asks for a rebuild; a 10-minute certificate gets
	// the default window, inside its lifetime, and is not counted.
	p.lapsed.Store(false)
	c.Slot = time.Hour
	nb := now
	s, e := p.Place(c, "short", "a", 1, nb, nb.Add(life), math.Inf(1))
	ds, de := DefaultWindow(nb, nb.Add(life))
	if !s.Equal(ds) || !e.Equal(de) || !e.Before(nb.Add(life)) {
		t.Errorf("in hour slots: window [%s, %s], want the default [%s, %s] before expiry", s, e, ds, de)
	}
	if p.st.unit != time.Hour || p.st.global.busy() != 0 || !p.lapsed.Load() {
		t.Errorf("after the slot changed: unit %v, %d busy, lapsed %v; want hours, empty, a rebuild asked", p.st.unit, p.st.global.busy(), p.lapsed.Load())
	}
}
