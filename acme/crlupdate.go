package acme

import (
	"context"
	"time"
)

// runCRLUpdater makes this replica's CRLs off the request path until ctx
// ends. It makes the first one at start, in the background (a CRL read
// before it is ready makes one itself), and then, with CRLDelay > 0,
// checks every CRLDelay whether the store has seen a revocation since the
// CRL it serves was made (RevocationCounter: one count, by any replica)
// or whether that CRL is CRLInterval old, and makes a new one if so. A
// burst of revocations therefore costs one CRL per CRLDelay however many
// it holds, every revocation is on this replica's CRL within CRLDelay
// plus one regeneration, and a revocation's answer never waits for a
// signature. With CRLDelay 0 the CRL is made when it is read after a
// revocation (CurrentCRL).
//
// The pipeline has one scope today, the issuing intermediate; several
// issuers (each with its own CRL, or CRL shards) would each get a
// servedCRL and a mark of their own in the same loop.
func (s *Service) runCRLUpdater(ctx context.Context) {
	if err := s.RegenerateCRL(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("initial CRL generation failed", "err", err)
	}
	if s.cfg.CRLDelay <= 0 {
		return
	}
	s.crl.updating.Store(true)
	defer s.crl.updating.Store(false)
	tick := time.NewTicker(s.cfg.CRLDelay)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := s.updateCRL(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("CRL update; serving the last CRL", "err", err)
		}
	}
}

// updateCRL makes a new CRL when the one served misses a revocation or is
// CRLInterval old.
func (s *Service) updateCRL(ctx context.Context) error {
	mark, err := s.revocationMark(ctx)
	if err != nil {
		return err
	}
	if c := s.crl.served.Load(); c != nil && c.mark == mark && !s.crlStale(c) {
		return nil
	}
	return s.RegenerateCRL(ctx)
}
