// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestCRLUpdaterDefersStart: the updater makes no CRL during the wait it
// is given (acme's startDefer); a CRL read meanwhile is made by the
// reader, at once, and the updater then does not make it again; a
// revocation after that reaches the CRL through the updater within
// Delay. Time is the synctest bubble's.
func TestCRLUpdaterDefersStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shared := &revokedList{}
		shared.revoke("0a01", time.Now())
		const startDefer, delay = 400 * time.Millisecond, 50 * time.Millisecond
		s := maker(shared, only(crlTestIssuer(t)), Config{Interval: time.Hour, Delay: delay})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { s.Run(ctx, startDefer); close(done) }()
		defer func() { cancel(); <-done }()

		time.Sleep(startDefer - time.Millisecond)
		synctest.Wait()
		if n := s.Regenerations(); n != 0 {
			t.Fatalf("the updater made %d CRLs before startDefer", n)
		}
		if n, _ := crlEntries(t, s); n != 1 {
			t.Fatalf("the CRL read during startDefer lists %d revocations, want 1", n)
		}
		if n := s.Regenerations(); n != 1 {
			t.Fatalf("the read during startDefer made %d CRLs, want 1", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !s.updating.Load() {
			t.Fatal("the updater had not started at startDefer")
		}
		if n := s.Regenerations(); n != 1 {
			t.Errorf("after startDefer the updater remade the CRL a reader made: %d CRLs, want 1", n)
		}
		shared.revoke("0a02", time.Now())
		time.Sleep(delay)
		synctest.Wait()
		if n, _ := crlEntries(t, s); n != 2 {
			t.Errorf("CRLDelay after a revocation the CRL lists %d revocations, want 2", n)
		}
	})
}

// TestCRLUpdaterStopsDuringDefer: a Maker stopped during its wait
// makes no CRL and its updater returns (in the synctest bubble, an updater
// that never returned would be reported as a deadlock).
func TestCRLUpdaterStopsDuringDefer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := maker(&revokedList{}, only(crlTestIssuer(t)), Config{Interval: time.Hour, Delay: time.Second})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { s.Run(ctx, time.Hour); close(done) }()
		cancel()
		<-done
		if n := s.Regenerations(); n != 0 {
			t.Errorf("stopped during startDefer, the updater made %d CRLs", n)
		}
	})
}
