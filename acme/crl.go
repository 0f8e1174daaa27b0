// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/ca"
)

// RevocationCounter is the role of a Store that says cheaply how many
// certificates it has ever seen revoked. Every replica signs its own
// CRLs; before serving them, a replica compares the count with the one its
// CRLs were made at, and makes new ones when a revocation (by any replica)
// has happened since. It is part of CertificateStore: storage/sqlite and
// storage/postgres implement it, and storage/storagetest checks it.
type RevocationCounter interface {
	// RevokedCount returns the number of revoked certificates, expired
	// or not. Revocation is final and certificates are never deleted, so
	// it only grows, by one per revocation, whichever replica revoked, and
	// it does not depend on any replica's clock.
	RevokedCount(ctx context.Context) (int64, error)
}

// crlCache holds this replica's current CRLs, one per scope (issuer and
// shard).
type crlCache struct {
	mu sync.Mutex // serialises regeneration
	// served is the CRLs readers get, swapped whole by a regeneration, so
	// that with the updater running no reader waits for a signature.
	served atomic.Pointer[crlGeneration]
	// updating is set while the updater (crlupdate.go) runs.
	updating atomic.Bool
	// regenerations counts the regenerations (weir_crl_regenerations_total),
	// each of which signs the CRLs of one or more scopes; signed counts
	// the CRLs signed, by scope (weir_crl_generations_total).
	regenerations atomic.Int64
	signed        sync.Map // CRLScope -> *atomic.Int64
	// lastDuration is how long the last regeneration took, in
	// nanoseconds: the updater starts the next that much early.
	lastDuration atomic.Int64
}

// crlGeneration is the CRLs of every scope as one regeneration left them.
type crlGeneration struct {
	// at is when the oldest of the CRLs was made (every one is remade
	// once it is CRLInterval old).
	at time.Time
	// mark is the store's revocation mark (revocationMark) read just
	// before the revocations that the CRLs list.
	mark string
	der  map[CRLScope][]byte
	made map[CRLScope]time.Time
	// counts are the store's revocation counts of each scope
	// (ScopedRevocations) read before the CRLs listed them.
	counts map[CRLScope]int64
}

// crlScope is one CRL to make: its scope, the CA that signs it, and the
// URLs its issuingDistributionPoint names (none for none).
type crlScope struct {
	CRLScope
	ca  *ca.CA
	idp []string
}

// crlScopes are the CRLs this Service makes: for each issuer, shard 0
// (its CRL URL, where the certificates issued without shards are), and
// with shards (ca.Config.CRLShards: those new certificates name and those
// kept for older ones), shards 1 to M, each a partition of the issuer's
// CRLs named by its issuingDistributionPoint, as is shard 0 then.
func (s *Service) crlScopes() []crlScope {
	var out []crlScope
	for _, is := range s.issuerList() {
		cfg := is.CA.Config()
		base := crlScope{CRLScope: CRLScope{Issuer: is.ID}, ca: is.CA}
		if cfg.CRLShards() > 0 {
			base.idp = cfg.CRLIDP(cfg.CRLURL)
		}
		out = append(out, base)
		for k := 1; k <= cfg.CRLShards(); k++ {
			out = append(out, crlScope{CRLScope: CRLScope{Issuer: is.ID, Shard: k}, ca: is.CA, idp: cfg.CRLIDP(cfg.CRLShardURL(k))})
		}
	}
	return out
}

// CRLRegenerations is the number of times this Service has made new CRLs.
func (s *Service) CRLRegenerations() int64 { return s.crl.regenerations.Load() }

// CRLsSigned is the number of CRLs this Service has signed, by scope.
func (s *Service) CRLsSigned() map[CRLScope]int64 {
	out := map[CRLScope]int64{}
	s.crl.signed.Range(func(k, v any) bool {
		out[k.(CRLScope)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// crlDefaultIssuer is the issuer whose CRL CurrentCRL serves (the URL
// that certificates of a single-issuer weir name): DefaultIssuer when it
// is configured, else the active one.
func (s *Service) crlDefaultIssuer() string {
	if s.issuerCA(DefaultIssuer) != nil {
		return DefaultIssuer
	}
	return s.activeIssuer()
}

// CurrentCRL returns this replica's CRL of the default issuer
// (crlDefaultIssuer); IssuerCRL says which CRL it is.
func (s *Service) CurrentCRL(ctx context.Context) ([]byte, time.Time, error) {
	return s.IssuerCRL(ctx, s.crlDefaultIssuer())
}

// IssuerCRL is ShardCRL of shard 0: the issuer's CRL, at its CRL URL.
func (s *Service) IssuerCRL(ctx context.Context, issuer string) ([]byte, time.Time, error) {
	return s.ShardCRL(ctx, issuer, 0)
}

// ShardCRL returns this replica's CRL of the certificates issuer signed
// in shard (0: those issued without shards), signed by issuer; an
// unknown issuer or shard is a 404 Problem. While the updater runs
// (CRLDelay > 0, crlupdate.go) it is the last one made, which lists every
// revocation stored more than CRLDelay ago, and no reader waits for a
// signature; before the first one is made, and with CRLDelay 0, it lists
// every certificate whose revocation was stored before the call, by this
// replica or any other, making new CRLs when the store has seen a
// revocation since this replica's were made, when they are older than
// CRLInterval, or when there are none. It fails when the store cannot be
// asked: a CRL that might miss a revocation is not served.
func (s *Service) ShardCRL(ctx context.Context, issuer string, shard int) ([]byte, time.Time, error) {
	c := s.issuerCA(issuer)
	if c == nil || shard < 0 || shard > c.Config().CRLShards() {
		return nil, time.Time{}, NotFound("there is no CRL %d of issuer %q", shard, issuer)
	}
	sc := CRLScope{Issuer: issuer, Shard: shard}
	if g := s.crl.served.Load(); g != nil && s.crl.updating.Load() {
		return g.der[sc], g.made[sc], nil
	}
	// Read before the lock, so that concurrent readers do not queue on
	// it: a mark read now counts every revocation stored before the call,
	// and a CRL made at that mark or later lists them all.
	mark, err := s.revocationMark(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("acme: CRL: %w", err)
	}
	s.crl.mu.Lock()
	defer s.crl.mu.Unlock()
	if g := s.crl.served.Load(); g == nil || g.mark != mark || s.crlStale(g) {
		if err := s.regenerateCRL(ctx, g == nil || s.crlStale(g)); err != nil {
			return nil, time.Time{}, fmt.Errorf("acme: CRL: %w", err)
		}
	}
	g := s.crl.served.Load()
	return g.der[sc], g.made[sc], nil
}

// crlStale reports whether g is older than CRLInterval: only one replica
// at a time regenerates on the schedule (RunLeased), so the others make
// theirs anew when it is read or by their updater.
func (s *Service) crlStale(g *crlGeneration) bool {
	return s.cfg.CRLInterval > 0 && !s.now().Before(g.at.Add(s.cfg.CRLInterval))
}

// revocationMark is a value that changes whenever a certificate is
// revoked: the store's RevokedCount.
func (s *Service) revocationMark(ctx context.Context) (string, error) {
	n, err := s.store.RevokedCount(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("count:%d", n), nil
}

// RegenerateCRL signs a new CRL for every scope (each issuer, each of its
// shards), listing every revoked, unexpired certificate of the scope.
// Its number comes from the store (CRLNumberer), so that each scope's
// numbers grow across the replicas.
func (s *Service) RegenerateCRL(ctx context.Context) error {
	s.crl.mu.Lock()
	defer s.crl.mu.Unlock()
	return s.regenerateCRL(ctx, true)
}
