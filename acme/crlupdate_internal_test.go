// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
	"log/slog"
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
	s := &Service{store: shared, ca: issuer, cfg: Config{CRLInterval: time.Hour, CRLDelay: delay}, now: time.Now,
		log: slog.New(slog.DiscardHandler), crl: &crlCache{}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { s.runCRLUpdater(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	entries := func() int { n, _ := crlEntries(t, s); return n }
	// The first CRL is made at start, in the background.
	for i := 0; s.CRLRegenerations() == 0 || !s.crl.updating.Load(); i++ {
		if i == 500 {
			t.Fatal("no CRL made at start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := s.CRLRegenerations()
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
	regens := s.CRLRegenerations() - before
	t.Logf("1,000 revocations in a burst: %d CRLs made", regens)
	if regens < 1 || regens > 5 {
		t.Errorf("1,000 revocations in a burst made %d CRLs, want 1 to 5", regens)
	}
	// Nothing revoked since: the updater makes no CRL.
	n := s.CRLRegenerations()
	time.Sleep(3 * delay)
	if got := s.CRLRegenerations(); got != n {
		t.Errorf("with nothing revoked the updater made %d CRLs", got-n)
	}
}
