// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"context"
	"fmt"
	"math/big"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/ca"
)

// regenerate makes new CRLs, with m.mu held: every scope's when
// all is set, else (after a revocation) only those of the scopes whose
// revocation count moved (ScopedRevocations), so that a revocation costs
// the CRL of its shard, not the issuer's whole revoked set.
func (m *Maker) regenerate(ctx context.Context, all bool) error {
	start := time.Now()
	now := m.cfg.Now().UTC()
	// The mark first, then the counts, then the lists: a revocation
	// stored in between is listed and moves the mark (or the count), so
	// the next check makes a CRL again, which is harmless; the other order
	// could miss one for good.
	mark, err := m.revocationMark(ctx)
	if err != nil {
		return err
	}
	old := m.served.Load()
	g := &generation{at: now, mark: mark, der: map[Scope][]byte{}, made: map[Scope]time.Time{}}
	targets := m.targets()
	counts, err := m.cfg.Store.RevokedCounts(ctx)
	if err != nil {
		return err
	}
	g.counts = counts
	if old == nil || old.counts == nil {
		all = true
	}
	if !all {
		g.at = old.at
	}
	for _, sc := range targets {
		if !all && old.der[sc.Scope] != nil && old.counts[sc.Scope] == g.counts[sc.Scope] {
			g.der[sc.Scope], g.made[sc.Scope] = old.der[sc.Scope], old.made[sc.Scope]
			continue
		}
		revoked, err := m.cfg.Store.ListRevokedScope(ctx, sc.Scope, now)
		if err != nil {
			return err
		}
		der, err := m.sign(ctx, sc, revoked, now)
		if err != nil {
			return err
		}
		g.der[sc.Scope], g.made[sc.Scope] = der, now
	}
	m.served.Store(g)
	m.regenerations.Add(1)
	m.lastDuration.Store(int64(time.Since(start)))
	return nil
}

// sign signs the CRL of target sc listing revoked, made at now.
func (m *Maker) sign(ctx context.Context, sc target, revoked []Revocation, now time.Time) ([]byte, error) {
	entries := make([]ca.RevokedEntry, 0, len(revoked))
	for _, r := range revoked {
		n, ok := new(big.Int).SetString(r.Serial, 16)
		if !ok {
			continue
		}
		entries = append(entries, ca.RevokedEntry{Serial: n, RevokedAt: r.RevokedAt, Reason: r.Reason})
	}
	number, err := m.nextNumber(ctx, sc.Scope, now)
	if err != nil {
		return nil, err
	}
	der, err := sc.ca.ShardCRL(entries, number, now, now.Add(2*m.cfg.Interval+24*time.Hour), sc.idp...)
	if err != nil {
		return nil, fmt.Errorf("CRL %d of issuer %s: %w", sc.Shard, sc.Issuer, err)
	}
	n, _ := m.signed.LoadOrStore(sc.Scope, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return der, nil
}

// nextNumber is the number of scope's next CRL, made at now, from the
// store (Numberer), so that each scope's numbers grow across the
// replicas; the clock in nanoseconds is its floor. m.mu is held.
func (m *Maker) nextNumber(ctx context.Context, scope Scope, now time.Time) (*big.Int, error) {
	n, err := m.cfg.Store.NextCRLNumber(ctx, scope.Issuer, scope.Shard, now.UnixNano())
	if err != nil {
		return nil, err
	}
	return big.NewInt(n), nil
}
