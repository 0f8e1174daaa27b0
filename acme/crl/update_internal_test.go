// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestCRLUpdaterCoalesces: with the updater running, 1,000 revocations
// stored in a burst (by this replica or another) reach the served CRL
// within a few CRLDelay periods and cost at most 5 CRLs, and reading the
// CRL never makes one.
func TestCRLUpdaterCoalesces(t *testing.T) {
	issuer := crlTestIssuer(t)
	shared := &revokedList{}
	const delay = 50 * time.Millisecond
	s := maker(shared, only(issuer), Config{Interval: time.Hour, Delay: delay})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { s.Run(ctx, 0); close(done) }()
	defer func() { cancel(); <-done }()

	entries := func() int { n, _ := crlEntries(t, s); return n }
	// The first CRL is made at start, in the background.
	for i := 0; s.Regenerations() == 0 || !s.updating.Load(); i++ {
		if i == 500 {
			t.Fatal("no CRL made at start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := s.Regenerations()
	// The burst: 10 batches of 100, over about two CRLDelay periods.
	for b := range 10 {
		for i := range 100 {
			shared.revoke(fmt.Sprintf("%x", 0x1000+b*100+i), time.Now())
		}
		_ = entries() // a reader alongside: served, never made
		time.Sleep(delay / 5)
	}
	for i := 0; entries() != 1000; i++ {
		if i == 500 {
			t.Fatalf("after the burst the CRL lists %d revocations, want 1000", entries())
		}
		time.Sleep(10 * time.Millisecond)
	}
	regens := s.Regenerations() - before
	t.Logf("1,000 revocations in a burst: %d CRLs made", regens)
	if regens < 1 || regens > 5 {
		t.Errorf("1,000 revocations in a burst made %d CRLs, want 1 to 5", regens)
	}
	// Nothing revoked since: the updater makes no CRL.
	n := s.Regenerations()
	time.Sleep(3 * delay)
	if got := s.Regenerations(); got != n {
		t.Errorf("with nothing revoked the updater made %d CRLs", got-n)
	}
}

// TestCRLUpdaterTiming runs the updater's wake-ups on a fake clock: a
// revocation is on the CRLs within CRLDelay of being stored, counting the
// time a regeneration takes, and a steady stream of revocations costs
// about one regeneration per CRLDelay.
func TestCRLUpdaterTiming(t *testing.T) {
	const (
		delay = 5 * time.Second
		every = 500 * time.Millisecond
	)
	if got := wake(delay); got != every {
		t.Fatalf("wake(%v) = %v, want %v", delay, got, every)
	}
	for _, last := range []time.Duration{0, 4 * time.Second} {
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		shared := &revokedList{}
		s := maker(shared, only(crlTestIssuer(t)), Config{Interval: time.Hour, Delay: delay, Now: func() time.Time { return clock }})
		if err := s.Regenerate(t.Context()); err != nil {
			t.Fatal(err)
		}
		var u updaterState
		// step runs one wake-up; a regeneration is taken to last last,
		// and the CRLs it makes are published when it ends.
		published := time.Time{}
		step := func() {
			t.Helper()
			clock = clock.Add(every)
			before := s.Regenerations()
			s.lastDuration.Store(int64(last))
			if err := s.update(t.Context(), &u, every); err != nil {
				t.Fatal(err)
			}
			if s.Regenerations() != before {
				// The updater is busy for the regeneration.
				clock = clock.Add(last)
				published = clock
			}
		}
		step()
		// A revocation stored just after a wake-up: the worst case.
		revokedAt := clock.Add(time.Millisecond)
		shared.revoke("0a", revokedAt)
		for i := 0; published.IsZero(); i++ {
			if i == 100 {
				t.Fatalf("last %v: the revocation never reached the CRL", last)
			}
			step()
		}
		if late := published.Sub(revokedAt); late > delay {
			t.Errorf("last %v: the revocation was on the CRL %v after it was stored, more than the delay %v", last, late, delay)
		} else {
			t.Logf("last %v: on the CRL %v after it was stored (delay %v)", last, late, delay)
		}

		// A stream: one revocation per wake-up for a minute of the clock.
		before := s.Regenerations()
		for i, end := 0, clock.Add(time.Minute); clock.Before(end); i++ {
			shared.revoke(string(rune('a'+i%26))+"1", clock)
			step()
		}
		regens := s.Regenerations() - before
		t.Logf("last %v: %d regenerations for a minute of revocations (delay %v)", last, regens, delay)
		// One per delay less two wake-ups, or back to back when a
		// regeneration takes longer than that.
		if limit := int64(time.Minute/max(delay-2*every-last, last)) + 2; regens > limit {
			t.Errorf("last %v: %d regenerations in a minute, want at most %d", last, regens, limit)
		}
		// Quiet: no regeneration.
		n := s.Regenerations()
		for range 20 {
			step()
		}
		if got := s.Regenerations(); got != n+1 && got != n {
			t.Errorf("last %v: with nothing revoked the updater made %d CRLs", last, got-n)
		}
	}
}

// TestCRLDue: the rule that decides when to regenerate.
func TestCRLDue(t *testing.T) {
	const s = time.Second
	for _, c := range []struct {
		age, last, wake, delay time.Duration
		want                   bool
	}{
		{0, 0, s / 2, 5 * s, false},
		{3 * s, 0, s / 2, 5 * s, false},
		{4 * s, 0, s / 2, 5 * s, true},
		{0, 4 * s, s / 2, 5 * s, true}, // a slow regeneration starts at once
		{s, 2 * s, s / 2, 5 * s, false},
		{2 * s, 2 * s, s / 2, 5 * s, true},
	} {
		if got := due(c.age, c.last, c.wake, c.delay); got != c.want {
			t.Errorf("due(age %v, last %v, wake %v, delay %v) = %v, want %v", c.age, c.last, c.wake, c.delay, got, c.want)
		}
	}
}
