// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"fmt"
	"time"

	"github.com/weir-pki/weir/acme/crl"
)

// The Service's calls into the CRLs (acme/crl), which each replica makes
// and serves per issuer and shard.

// crlIssuers is the issuers whose CRLs are made: every issuer of the
// Service.
func (s *Service) crlIssuers() []crl.Issuer {
	list := s.issuerList()
	out := make([]crl.Issuer, len(list))
	for i, is := range list {
		out[i] = crl.Issuer{ID: is.ID, CA: is.CA}
	}
	return out
}

// CRLRegenerations is the number of times this Service has made new CRLs.
func (s *Service) CRLRegenerations() int64 { return s.crl.Regenerations() }

// CRLsSigned is the number of CRLs this Service has signed, by scope.
func (s *Service) CRLsSigned() map[CRLScope]int64 { return s.crl.Signed() }

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
// in shard (0: those issued without shards), signed by issuer
// (crl.Maker.Get says how fresh it is); an unknown issuer or shard is a
// 404 Problem. It fails when the store cannot be asked: a CRL that might
// miss a revocation is not served.
func (s *Service) ShardCRL(ctx context.Context, issuer string, shard int) ([]byte, time.Time, error) {
	c := s.issuerCA(issuer)
	if c == nil || shard < 0 || shard > c.Config().CRLShards() {
		return nil, time.Time{}, NotFound("there is no CRL %d of issuer %q", shard, issuer)
	}
	der, at, err := s.crl.Get(ctx, CRLScope{Issuer: issuer, Shard: shard})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("acme: CRL: %w", err)
	}
	return der, at, nil
}

// RegenerateCRL signs a new CRL for every scope (each issuer, each of its
// shards), listing every revoked, unexpired certificate of the scope
// (crl.Maker.Regenerate).
func (s *Service) RegenerateCRL(ctx context.Context) error { return s.crl.Regenerate(ctx) }

// runCRLUpdater makes this replica's CRLs off the request path until ctx
// ends, the first ones startDefer after start (crl.Maker.Run).
func (s *Service) runCRLUpdater(ctx context.Context) { s.crl.Run(ctx, s.startDefer) }
