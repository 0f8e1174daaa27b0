// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"time"
)

// runCRLUpdater makes this replica's CRLs off the request path until ctx
// ends. It makes the first ones startDefer after start, in the background,
// unless a CRL read made them first (a CRL read before they are ready makes
// them itself, ShardCRL), and then, with CRLDelay > 0,
// wakes every crlWake(CRLDelay) for a cheap check (updateCRL): whether the
// store has seen a revocation since the CRLs it serves were made
// (RevocationCounter: one count, by any replica), or whether they are
// CRLInterval old. A revocation does not make new CRLs at once: the
// updater waits for more, and makes them when waiting one more wake-up
// could put the first revocation it saw on them later than CRLDelay after
// it was stored, counting the time the last regeneration took (crlDue).
// A burst of revocations therefore costs about one regeneration per
// CRLDelay however many it holds, every revocation is on this replica's
// CRLs within CRLDelay (while a regeneration takes no longer than the last
// one), and a revocation's answer never waits for a signature. With
// CRLDelay 0 the CRLs are made when read after a revocation (IssuerCRL).
//
// A regeneration after a revocation remakes only the CRLs whose scope
// (issuer and shard) saw one (regenerateCRL); every CRL is remade once it
// is CRLInterval old.
func (s *Service) runCRLUpdater(ctx context.Context) {
	if pause(ctx, s.startDefer) != nil {
		return
	}
	if s.crl.served.Load() == nil {
		if err := s.RegenerateCRL(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("initial CRL generation failed", "err", err)
		}
	}
	if s.cfg.CRLDelay <= 0 {
		return
	}
	s.crl.updating.Store(true)
	defer s.crl.updating.Store(false)
	wake := crlWake(s.cfg.CRLDelay)
	tick := time.NewTicker(wake)
	defer tick.Stop()
	var u crlUpdate
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := s.updateCRL(ctx, &u, wake); err != nil && ctx.Err() == nil {
			s.log.Error("CRL update; serving the last CRL", "err", err)
		}
	}
}

// crlWake is how often the updater checks for revocations with delay
// CRLDelay: a tenth of it, from 10 ms to 1 s.
func crlWake(delay time.Duration) time.Duration {
	return min(max(delay/10, 10*time.Millisecond), time.Second)
}

// crlUpdate is the updater's state between wake-ups.
type crlUpdate struct {
	// seen is when the updater first saw the store's mark differ from
	// its CRLs'; zero while they agree.
	seen time.Time
}

// updateCRL is one wake-up of the updater: it makes new CRLs when those
// served are CRLInterval old, or when they miss a revocation and crlDue
// says they are due. The check is one RevokedCount.
func (s *Service) updateCRL(ctx context.Context, u *crlUpdate, wake time.Duration) error {
	g := s.crl.served.Load()
	stale := g == nil || s.crlStale(g)
	if !stale {
		mark, err := s.revocationMark(ctx)
		if err != nil {
			return err
		}
		if mark == g.mark {
			u.seen = time.Time{}
			return nil
		}
		now := s.now()
		if u.seen.IsZero() {
			u.seen = now
		}
		if !crlDue(now.Sub(u.seen), time.Duration(s.crl.lastDuration.Load()), wake, s.cfg.CRLDelay) {
			return nil
		}
	}
	u.seen = time.Time{}
	s.crl.mu.Lock()
	defer s.crl.mu.Unlock()
	return s.regenerateCRL(ctx, stale)
}

// crlDue reports whether new CRLs must be made now for a revocation first
// seen age ago (so stored up to one wake before that) to be on them within
// delay, when making them takes last: waiting for the next wake-up would
// publish it up to age + 2·wake + last after it was stored.
func crlDue(age, last, wake, delay time.Duration) bool {
	return age+2*wake+last >= delay
}

// pause waits for d, or until ctx ends, and returns ctx's error.
func pause(ctx context.Context, d time.Duration) error {
	if d > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	return ctx.Err()
}
