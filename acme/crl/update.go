// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"context"
	"time"
)

// Run makes this replica's CRLs off the request path until ctx ends. It
// makes the first ones wait after start, in the background, unless a CRL
// read made them first (a CRL read before they are ready makes them
// itself, Get), and then, with Delay > 0, wakes every wake(Delay) for a
// cheap check (update): whether the store has seen a revocation since the
// CRLs it serves were made (RevocationCounter: one count, by any
// replica), or whether they are Interval old. A revocation does not make
// new CRLs at once: the updater waits for more, and makes them when
// waiting one more wake-up could put the first revocation it saw on them
// later than Delay after it was stored, counting the time the last
// regeneration took (due). A burst of revocations therefore costs about
// one regeneration per Delay however many it holds, every revocation is
// on this replica's CRLs within Delay (while a regeneration takes no
// longer than the last one), and a revocation's answer never waits for a
// signature. With Delay 0 the CRLs are made when read after a revocation
// (Get).
//
// A regeneration after a revocation remakes only the CRLs whose scope
// (issuer and shard) saw one (regenerate); every CRL is remade once it is
// Interval old.
func (m *Maker) Run(ctx context.Context, wait time.Duration) {
	if pause(ctx, wait) != nil {
		return
	}
	if m.served.Load() == nil {
		if err := m.Regenerate(ctx); err != nil && ctx.Err() == nil {
			m.cfg.Log.Error("initial CRL generation failed", "err", err)
		}
	}
	if m.cfg.Delay <= 0 {
		return
	}
	m.updating.Store(true)
	defer m.updating.Store(false)
	every := wake(m.cfg.Delay)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var u updaterState
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := m.update(ctx, &u, every); err != nil && ctx.Err() == nil {
			m.cfg.Log.Error("CRL update; serving the last CRL", "err", err)
		}
	}
}

// wake is how often the updater checks for revocations with delay
// Delay: a tenth of it, from 10 ms to 1 s.
func wake(delay time.Duration) time.Duration {
	return min(max(delay/10, 10*time.Millisecond), time.Second)
}

// updaterState is the updater's state between wake-ups.
type updaterState struct {
	// seen is when the updater first saw the store's mark differ from
	// its CRLs'; zero while they agree.
	seen time.Time
}

// update is one wake-up of the updater: it makes new CRLs when those
// served are Interval old, or when they miss a revocation and due says
// they are due. The check is one RevokedCount.
func (m *Maker) update(ctx context.Context, u *updaterState, every time.Duration) error {
	g := m.served.Load()
	stale := g == nil || m.stale(g)
	if !stale {
		mark, err := m.revocationMark(ctx)
		if err != nil {
			return err
		}
		if mark == g.mark {
			u.seen = time.Time{}
			return nil
		}
		now := m.cfg.Now()
		if u.seen.IsZero() {
			u.seen = now
		}
		if !due(now.Sub(u.seen), time.Duration(m.lastDuration.Load()), every, m.cfg.Delay) {
			return nil
		}
	}
	u.seen = time.Time{}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.regenerate(ctx, stale)
}

// due reports whether new CRLs must be made now for a revocation first
// seen age ago (so stored up to one wake before that) to be on them within
// delay, when making them takes last: waiting for the next wake-up would
// publish it up to age + 2·wake + last after it was stored.
func due(age, last, wake, delay time.Duration) bool {
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
