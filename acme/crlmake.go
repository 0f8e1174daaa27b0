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
// the CRL of its shard, not the issuer's whole revoked set. A store
// without ScopedRevocations has every scope remade from one list.
func (s *Service) regenerateCRL(ctx context.Context, all bool) error {
	start := time.Now()
	now := s.now().UTC()
	// The mark first, then the counts, then the lists: a revocation
	// stored in between is listed and moves the mark (or the count), so
	// the next check makes a CRL again, which is harmless; the other order
	// could miss one for good.
	mark := ""
	if _, ok := s.store.(RevocationCounter); ok {
		var err error
		if mark, err = s.revocationMark(ctx); err != nil {
			return err
		}
	}
	old := s.crl.served.Load()
	g := &crlGeneration{at: now, mark: mark, der: map[CRLScope][]byte{}, made: map[CRLScope]time.Time{}}
	scopes := s.crlScopes()
	lists := map[CRLScope][]Revocation{}
	sr, scoped := s.store.(ScopedRevocations)
	if scoped {
		counts, err := sr.RevokedCounts(ctx)
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
	} else {
		revoked, err := s.store.ListRevoked(ctx, now)
		if err != nil {
			return err
		}
		if g.mark == "" {
			g.mark = revokedDigest(revoked)
		}
		for _, r := range revoked {
			sc := CRLScope{Issuer: r.Issuer, Shard: r.Shard}
			if sc.Issuer == "" {
				sc.Issuer = DefaultIssuer
			}
			lists[sc] = append(lists[sc], r)
		}
		all = true
	}
	for _, sc := range scopes {
		if !all && old.der[sc.CRLScope] != nil && old.counts[sc.CRLScope] == g.counts[sc.CRLScope] {
			g.der[sc.CRLScope], g.made[sc.CRLScope] = old.der[sc.CRLScope], old.made[sc.CRLScope]
			continue
		}
		revoked := lists[sc.CRLScope]
		if scoped {
			var err error
			if revoked, err = sr.ListRevokedScope(ctx, sc.CRLScope, now); err != nil {
				return err
			}
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

// nextCRLNumber is the number of scope's next CRL, made at now: the
// store's (CRLNumberer), else by this replica's clock. s.crl.mu is held.
func (s *Service) nextCRLNumber(ctx context.Context, scope CRLScope, now time.Time) (*big.Int, error) {
	if cn, ok := s.store.(CRLNumberer); ok {
		n, err := cn.NextCRLNumber(ctx, scope.Issuer, scope.Shard, now.UnixNano())
		if err != nil {
			return nil, err
		}
		return big.NewInt(n), nil
	}
	if s.crl.numbers == nil {
		s.crl.numbers = map[CRLScope]*big.Int{}
	}
	number := big.NewInt(now.UnixNano())
	if last := s.crl.numbers[scope]; last != nil && number.Cmp(last) <= 0 {
		number.Add(last, big.NewInt(1))
	}
	s.crl.numbers[scope] = number
	return number, nil
}
