// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
)

// TestPlanSeen: the minutes' reads of weir's renewal plan keep the first
// minute over each capacity and the maxima, which a restart (counters
// from zero) does not lower.
func TestPlanSeen(t *testing.T) {
	var s planSeen
	s.add(&weirPlanView{CeilingPerHour: 600, PeakPerHour: 300}, 0)
	if got := s.summary(); !strings.Contains(got, "within its ceiling of 600/h (a peak of 300/h)") || !strings.Contains(got, "no account over") {
		t.Errorf("within: %s", got)
	}
	s.add(&weirPlanView{CeilingPerHour: 600, PeakPerHour: 1700, SlotsOver: 7, PlacedOverCeiling: 90}, 1)
	s.add(&weirPlanView{CeilingPerHour: 600, PeakPerHour: 1200, SlotsOver: 3, AccountsOver: 2, PlacedOverCeiling: 4, PlacedOverAccount: 5}, 2)
	if s.FirstOverCeiling != 1 || s.FirstAccountOver != 2 || s.MaxSlotsOver != 7 || s.MaxPeakPerHour != 1700 || s.PlacedOverCeiling != 90 || s.Samples != 3 {
		t.Errorf("seen %+v", s)
	}
	want := "over its ceiling of 600/h from minute 1 (up to 7 slots over, a peak of 1700/h; 90 windows placed over it); up to 2 accounts over their san-budget from minute 2 (5 windows placed over one)"
	if got := s.summary(); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
