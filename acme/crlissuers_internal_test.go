// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"crypto/x509"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// TestIssuerCRLs: each issuer's CRL lists the revocations of the
// certificates it signed and no other, is signed by it, and carries a
// number from the store that grows across replicas sharing it; a
// revocation stored without an issuer is the default issuer's; an
// unknown issuer is a 404.
func TestIssuerCRLs(t *testing.T) {
	old, cur := crlTestIssuer(t), crlTestIssuer(t)
	issuers := []Issuer{{ID: DefaultIssuer, CA: old}, {ID: "r2", CA: cur}}
	shared := &revokedList{}
	replica := func() *Service {
		return &Service{store: shared, ca: cur, issuers: issuers, cfg: Config{CRLInterval: time.Hour}, now: time.Now,
			log: slog.New(slog.DiscardHandler), crl: &crlCache{}}
	}
	a, b := replica(), replica()
	if got := a.activeIssuer(); got != "r2" {
		t.Errorf("active issuer %q, want r2", got)
	}
	now := time.Now()
	shared.revokeBy("0a", DefaultIssuer, now)
	shared.revokeBy("0b", "", now)
	shared.revokeBy("0c", "r2", now)
	shared.revokeBy("0d", "gone", now) // an issuer no longer configured

	var lastNumber int64
	for round, s := range []*Service{a, b, a, b} {
		if round > 0 {
			shared.revokeBy("1"+string(rune('0'+round)), "r2", now) // a revocation moves every replica
		}
		for _, want := range []struct {
			id      string
			serials int
			signer  *x509.Certificate
		}{{DefaultIssuer, 2, old.Hierarchy().Intermediate}, {"r2", 1 + round, cur.Hierarchy().Intermediate}} {
			der, _, err := s.IssuerCRL(t.Context(), want.id)
			if err != nil {
				t.Fatalf("IssuerCRL(%s): %v", want.id, err)
			}
			rl, err := x509.ParseRevocationList(der)
			if err != nil {
				t.Fatal(err)
			}
			if err := rl.CheckSignatureFrom(want.signer); err != nil {
				t.Errorf("round %d: CRL of %s does not verify with its issuer: %v", round, want.id, err)
			}
			if n := len(rl.RevokedCertificateEntries); n != want.serials {
				t.Errorf("round %d: CRL of %s lists %d certificates, want %d", round, want.id, n, want.serials)
			}
			if want.id == "r2" {
				if rl.Number.Int64() <= lastNumber {
					t.Errorf("round %d: CRL number of r2 %d after %d: it must grow across replicas", round, rl.Number, lastNumber)
				}
				lastNumber = rl.Number.Int64()
			}
		}
	}
	if der, _, err := a.CurrentCRL(t.Context()); err != nil {
		t.Fatal(err)
	} else if rl, _ := x509.ParseRevocationList(der); rl == nil || rl.CheckSignatureFrom(old.Hierarchy().Intermediate) != nil {
		t.Error("CurrentCRL is not the default issuer's CRL")
	}
	_, _, err := a.IssuerCRL(t.Context(), "nope")
	if p, ok := err.(*Problem); !ok || p.Status != http.StatusNotFound {
		t.Errorf("IssuerCRL(unknown) = %v, want a 404 problem", err)
	}
}

// TestCRLUpdaterTiming runs the updater's wake-ups on a fake clock: a
// revocation is on the CRLs within CRLDelay of being stored, counting the
// time a regeneration takes, and a steady stream of revocations costs
// about one regeneration per CRLDelay.
func TestCRLUpdaterTiming(t *testing.T) {
	const (
		delay = 5 * time.Second
		wake  = 500 * time.Millisecond
	)
	if got := crlWake(delay); got != wake {
		t.Fatalf("crlWake(%v) = %v, want %v", delay, got, wake)
	}
	for _, last := range []time.Duration{0, 4 * time.Second} {
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		shared := &revokedList{}
		s := &Service{store: shared, ca: crlTestIssuer(t), cfg: Config{CRLInterval: time.Hour, CRLDelay: delay},
			now: func() time.Time { return clock }, log: slog.New(slog.DiscardHandler), crl: &crlCache{}}
		if err := s.RegenerateCRL(t.Context()); err != nil {
			t.Fatal(err)
		}
		var u crlUpdate
		// step runs one wake-up; a regeneration is taken to last last,
		// and the CRLs it makes are published when it ends.
		published := time.Time{}
		step := func() {
			t.Helper()
			clock = clock.Add(wake)
			before := s.CRLRegenerations()
			s.crl.lastDuration.Store(int64(last))
			if err := s.updateCRL(t.Context(), &u, wake); err != nil {
				t.Fatal(err)
			}
			if s.CRLRegenerations() != before {
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
		before := s.CRLRegenerations()
		for i, end := 0, clock.Add(time.Minute); clock.Before(end); i++ {
			shared.revoke(string(rune('a'+i%26))+"1", clock)
			step()
		}
		regens := s.CRLRegenerations() - before
		t.Logf("last %v: %d regenerations for a minute of revocations (delay %v)", last, regens, delay)
		// One per delay less two wake-ups, or back to back when a
		// regeneration takes longer than that.
		if limit := int64(time.Minute/max(delay-2*wake-last, last)) + 2; regens > limit {
			t.Errorf("last %v: %d regenerations in a minute, want at most %d", last, regens, limit)
		}
		// Quiet: no regeneration.
		n := s.CRLRegenerations()
		for range 20 {
			step()
		}
		if got := s.CRLRegenerations(); got != n+1 && got != n {
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
		if got := crlDue(c.age, c.last, c.wake, c.delay); got != c.want {
			t.Errorf("crlDue(age %v, last %v, wake %v, delay %v) = %v, want %v", c.age, c.last, c.wake, c.delay, got, c.want)
		}
	}
}
