package acme

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weir-pki/weir/ca"
)

// RevocationCounter is implemented by a Store that can say cheaply how
// many certificates it has ever seen revoked. Every replica signs its own
// CRLs; before serving them, a replica compares the count with the one its
// CRLs were made at, and makes new ones when a revocation (by any replica)
// has happened since. storage/sqlite implements it, and so must every
// store shared by several replicas (storage/storagetest checks it).
// Without it the Service lists the revoked certificates on every read.
type RevocationCounter interface {
	// RevokedCount returns the number of revoked certificates, expired
	// or not. Revocation is final and certificates are never deleted, so
	// it only grows, by one per revocation, whichever replica revoked, and
	// it does not depend on any replica's clock.
	RevokedCount(ctx context.Context) (int64, error)
}

// crlCache holds this replica's current CRLs, one per issuer.
type crlCache struct {
	mu sync.Mutex // serialises regeneration
	// served is the CRLs readers get, swapped whole by a regeneration, so
	// that with the updater running no reader waits for a signature.
	served atomic.Pointer[crlGeneration]
	// numbers are the numbers of the last CRLs made, by issuer, when the
	// store keeps none (CRLNumberer); under mu.
	numbers map[string]*big.Int
	// updating is set while the updater (crlupdate.go) runs.
	updating atomic.Bool
	// regenerations counts the regenerations (weir_crl_regenerations_total);
	// each signs one CRL per issuer.
	regenerations atomic.Int64
	// lastDuration is how long the last regeneration took, in
	// nanoseconds: the updater starts the next that much early.
	lastDuration atomic.Int64
}

// crlGeneration is the CRLs of every issuer made from one list of the
// revoked certificates.
type crlGeneration struct {
	at time.Time
	// mark is the store's revocation mark (revocationMark) read just
	// before the revocations that the CRLs list.
	mark string
	der  map[string][]byte // by issuer ID
}

// CRLRegenerations is the number of times this Service has made its
// CRLs (each time one per issuer).
func (s *Service) CRLRegenerations() int64 { return s.crl.regenerations.Load() }

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

// IssuerCRL returns this replica's CRL of the certificates issuer signed,
// signed by issuer; an unknown issuer is a 404 Problem. While the updater
// runs (CRLDelay > 0, crlupdate.go) it is the last one made, which lists
// every revocation stored more than CRLDelay ago, and no reader waits for
// a signature; before the first one is made, and with CRLDelay 0, it lists
// every certificate whose revocation was stored before the call, by this
// replica or any other, making new CRLs when the store has seen a
// revocation since this replica's were made, when they are older than
// CRLInterval, or when there are none. It fails when the store cannot be
// asked: a CRL that might miss a revocation is not served.
func (s *Service) IssuerCRL(ctx context.Context, issuer string) ([]byte, time.Time, error) {
	if s.issuerCA(issuer) == nil {
		return nil, time.Time{}, NotFound("there is no issuer %q", issuer)
	}
	if g := s.crl.served.Load(); g != nil && s.crl.updating.Load() {
		return g.der[issuer], g.at, nil
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
		if err := s.regenerateCRL(ctx); err != nil {
			return nil, time.Time{}, fmt.Errorf("acme: CRL: %w", err)
		}
	}
	g := s.crl.served.Load()
	return g.der[issuer], g.at, nil
}

// crlStale reports whether g is older than CRLInterval: only one replica
// at a time regenerates on the schedule (RunLeased), so the others make
// theirs anew when it is read or by their updater.
func (s *Service) crlStale(g *crlGeneration) bool {
	return s.cfg.CRLInterval > 0 && !s.now().Before(g.at.Add(s.cfg.CRLInterval))
}

// revocationMark is a value that changes whenever a certificate is
// revoked: the store's RevokedCount, or, for a store without one, a digest
// of the revoked certificates that a CRL made now would list.
func (s *Service) revocationMark(ctx context.Context) (string, error) {
	if rc, ok := s.store.(RevocationCounter); ok {
		n, err := rc.RevokedCount(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("count:%d", n), nil
	}
	revoked, err := s.store.ListRevoked(ctx, s.now().UTC())
	if err != nil {
		return "", err
	}
	return revokedDigest(revoked), nil
}

// revokedDigest identifies a list of revocations.
func revokedDigest(revoked []Revocation) string {
	h := sha256.New()
	var b [8]byte
	for _, r := range revoked {
		h.Write([]byte(r.Serial))
		binary.BigEndian.PutUint64(b[:], uint64(r.RevokedAt.UnixNano()))
		h.Write(b[:])
	}
	return fmt.Sprintf("list:%d:%x", len(revoked), h.Sum(nil))
}

// RegenerateCRL signs a new CRL for each issuer, listing every revoked,
// unexpired certificate that issuer signed. Its number comes from the
// store (CRLNumberer), so that each issuer's numbers grow across the
// replicas; with a store that keeps none, it is its thisUpdate in
// nanoseconds, or one more than this replica's previous CRL's of the
// issuer if the clock stepped back.
func (s *Service) RegenerateCRL(ctx context.Context) error {
	s.crl.mu.Lock()
	defer s.crl.mu.Unlock()
	return s.regenerateCRL(ctx)
}

// regenerateCRL is RegenerateCRL with s.crl.mu held.
func (s *Service) regenerateCRL(ctx context.Context) error {
	start := time.Now()
	now := s.now().UTC()
	// The mark first, then the list: a revocation stored in between is
	// listed and moves the mark, so the next check makes a CRL again,
	// which is harmless; the other order could miss one for good.
	mark := ""
	if _, ok := s.store.(RevocationCounter); ok {
		var err error
		if mark, err = s.revocationMark(ctx); err != nil {
			return err
		}
	}
	revoked, err := s.store.ListRevoked(ctx, now)
	if err != nil {
		return err
	}
	if mark == "" {
		mark = revokedDigest(revoked)
	}
	issuers := s.issuerList()
	byIssuer := map[string][]ca.RevokedEntry{}
	if len(issuers) == 1 {
		byIssuer[issuers[0].ID] = make([]ca.RevokedEntry, 0, len(revoked))
	}
	for _, r := range revoked {
		n, ok := new(big.Int).SetString(r.Serial, 16)
		if !ok {
			continue
		}
		id := r.Issuer
		if id == "" {
			id = DefaultIssuer
		}
		byIssuer[id] = append(byIssuer[id], ca.RevokedEntry{Serial: n, RevokedAt: r.RevokedAt, Reason: r.Reason})
	}
	g := &crlGeneration{at: now, mark: mark, der: map[string][]byte{}}
	for _, is := range issuers {
		number, err := s.nextCRLNumber(ctx, is.ID, now)
		if err != nil {
			return err
		}
		der, err := is.CA.CRL(byIssuer[is.ID], number, now, now.Add(2*s.cfg.CRLInterval+24*time.Hour))
		if err != nil {
			return fmt.Errorf("issuer %s: %w", is.ID, err)
		}
		g.der[is.ID] = der
	}
	s.crl.served.Store(g)
	s.crl.regenerations.Add(1)
	s.crl.lastDuration.Store(int64(time.Since(start)))
	return nil
}

// nextCRLNumber is the number of issuer's next CRL, made at now: the
// store's (CRLNumberer), else by this replica's clock. s.crl.mu is held.
func (s *Service) nextCRLNumber(ctx context.Context, issuer string, now time.Time) (*big.Int, error) {
	if cn, ok := s.store.(CRLNumberer); ok {
		n, err := cn.NextCRLNumber(ctx, issuer, 0, now.UnixNano())
		if err != nil {
			return nil, err
		}
		return big.NewInt(n), nil
	}
	if s.crl.numbers == nil {
		s.crl.numbers = map[string]*big.Int{}
	}
	number := big.NewInt(now.UnixNano())
	if last := s.crl.numbers[issuer]; last != nil && number.Cmp(last) <= 0 {
		number.Add(last, big.NewInt(1))
	}
	s.crl.numbers[issuer] = number
	return number, nil
}
