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
// CRL; before serving it, a replica compares the count with the one its
// CRL was made at, and makes a new CRL when a revocation (by any replica)
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

// crlCache holds this replica's current CRL.
type crlCache struct {
	mu sync.Mutex // serialises regeneration
	// served is the CRL readers get, swapped whole by a regeneration, so
	// that with the updater running no reader waits for a signature.
	served atomic.Pointer[servedCRL]
	// number is the number of the last CRL made.
	number *big.Int
	// updating is set while the updater (crlupdate.go) runs.
	updating atomic.Bool
	// regenerations counts the CRLs made (weir_crl_regenerations_total).
	regenerations atomic.Int64
}

// servedCRL is one signed CRL.
type servedCRL struct {
	der []byte
	at  time.Time
	// mark is the store's revocation mark (revocationMark) read just
	// before the revocations that der lists.
	mark string
}

// CRLRegenerations is the number of CRLs this Service has made.
func (s *Service) CRLRegenerations() int64 { return s.crl.regenerations.Load() }

// CurrentCRL returns this replica's CRL. While the updater runs (CRLDelay
// > 0, crlupdate.go) it is the last one made, which lists every
// revocation stored more than CRLDelay ago, and no reader waits for a
// signature; before the first one is made, and with CRLDelay 0, it lists
// every certificate whose revocation was stored before the call, by this
// replica or any other, making a new one when the store has seen a
// revocation since this replica's CRL was made, when it is older than
// CRLInterval, or when there is none. It fails when the store cannot be
// asked: a CRL that might miss a revocation is not served.
func (s *Service) CurrentCRL(ctx context.Context) ([]byte, time.Time, error) {
	if c := s.crl.served.Load(); c != nil && s.crl.updating.Load() {
		return c.der, c.at, nil
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
	if c := s.crl.served.Load(); c == nil || c.mark != mark || s.crlStale(c) {
		if err := s.regenerateCRL(ctx); err != nil {
			return nil, time.Time{}, fmt.Errorf("acme: CRL: %w", err)
		}
	}
	c := s.crl.served.Load()
	return c.der, c.at, nil
}

// crlStale reports whether c is older than CRLInterval: only one replica
// at a time regenerates on the schedule (RunLeased), so the others make
// theirs anew when it is read or by their updater.
func (s *Service) crlStale(c *servedCRL) bool {
	return s.cfg.CRLInterval > 0 && !s.now().Before(c.at.Add(s.cfg.CRLInterval))
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

// RegenerateCRL signs a new CRL listing every revoked, unexpired
// certificate. Its number is its thisUpdate in nanoseconds, or one more
// than this replica's previous CRL's if the clock stepped back, so it only
// grows on a replica; replicas number theirs each on its own clock.
func (s *Service) RegenerateCRL(ctx context.Context) error {
	s.crl.mu.Lock()
	defer s.crl.mu.Unlock()
	return s.regenerateCRL(ctx)
}

// regenerateCRL is RegenerateCRL with s.crl.mu held.
func (s *Service) regenerateCRL(ctx context.Context) error {
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
	entries := make([]ca.RevokedEntry, 0, len(revoked))
	for _, r := range revoked {
		n, ok := new(big.Int).SetString(r.Serial, 16)
		if !ok {
			continue
		}
		entries = append(entries, ca.RevokedEntry{Serial: n, RevokedAt: r.RevokedAt, Reason: r.Reason})
	}
	number := big.NewInt(now.UnixNano())
	if s.crl.number != nil && number.Cmp(s.crl.number) <= 0 {
		number.Add(s.crl.number, big.NewInt(1))
	}
	der, err := s.ca.CRL(entries, number, now, now.Add(2*s.cfg.CRLInterval+24*time.Hour))
	if err != nil {
		return err
	}
	s.crl.number = number
	s.crl.served.Store(&servedCRL{der: der, at: now, mark: mark})
	s.crl.regenerations.Add(1)
	return nil
}
