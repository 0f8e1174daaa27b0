// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
	"math/big"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/ca"
)

// regenerateCRL makes new CRLs, with s.crl.mu held: every scope's when
// all is set, else (after a revocation) only those of the scopes whose
// revocation count moved (ScopedRevocations), so that a revocation costs
// the CRL of its shard, not the issuer's whole revoked set.
func (s *Service) regenerateCRL(ctx context.Context, all bool) error {
	start := time.Now()
	now := s.now().UTC()
	// The mark first, then the counts, then the lists: a revocation
	// stored in between is listed and moves the mark (or the count), so
	// the next check makes a CRL again, which is harmless; the other order
	// could miss one for good.
	mark, err := s.revocationMark(ctx)
	if err != nil {
		return err
	}
	old := s.crl.served.Load()
	g := &crlGeneration{at: now, mark: mark, der: map[CRLScope][]byte{}, made: map[CRLScope]time.Time{}}
	scopes := s.crlScopes()
	counts, err := s.store.RevokedCounts(ctx)
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
	for _, sc := range scopes {
		if !all && old.der[sc.CRLScope] != nil && old.counts[sc.CRLScope] == g.counts[sc.CRLScope] {
			g.der[sc.CRLScope], g.made[sc.CRLScope] = old.der[sc.CRLScope], old.made[sc.CRLScope]
			continue
		}
		revoked, err := s.store.ListRevokedScope(ctx, sc.CRLScope, now)
		if err != nil {
			return err
		}
		der, err := s.signCRL(ctx, sc, revoked, now)
		if err != nil {
			return err
		}
		g.der[sc.CRLScope], g.made[sc.CRLScope] = der, now
	}
	s.crl.served.Store(g)
	s.crl.regenerations.Add(1)
	s.crl.lastDuration.Store(int64(time.Since(start)))
	return nil
}

// signCRL signs the CRL of scope sc listing revoked, made at now.
func (s *Service) signCRL(ctx context.Context, sc crlScope, revoked []Revocation, now time.Time) ([]byte, error) {
	entries := make([]ca.RevokedEntry, 0, len(revoked))
	for _, r := range revoked {
		n, ok := new(big.Int).SetString(r.Serial, 16)
		if !ok {
			continue
		}
		entries = append(entries, ca.RevokedEntry{Serial: n, RevokedAt: r.RevokedAt, Reason: r.Reason})
	}
	number, err := s.nextCRLNumber(ctx, sc.CRLScope, now)
	if err != nil {
		return nil, err
	}
	der, err := sc.ca.ShardCRL(entries, number, now, now.Add(2*s.cfg.CRLInterval+24*time.Hour), sc.idp...)
	if err != nil {
		return nil, fmt.Errorf("CRL %d of issuer %s: %w", sc.Shard, sc.Issuer, err)
	}
	n, _ := s.crl.signed.LoadOrStore(sc.CRLScope, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return der, nil
}

// nextCRLNumber is the number of scope's next CRL, made at now, from the
// store (CRLNumberer), so that each scope's numbers grow across the
// replicas; the clock in nanoseconds is its floor. s.crl.mu is held.
func (s *Service) nextCRLNumber(ctx context.Context, scope CRLScope, now time.Time) (*big.Int, error) {
	n, err := s.store.NextCRLNumber(ctx, scope.Issuer, scope.Shard, now.UnixNano())
	if err != nil {
		return nil, err
	}
	return big.NewInt(n), nil
}
