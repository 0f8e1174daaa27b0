package acme

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"sync"
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
	mu  sync.Mutex // serialises regeneration
	der []byte
	at  time.Time
	// mark is the store's revocation mark (revocationMark) read just
	// before the revoked certificates that der lists; "" when unknown.
	mark string
}

// CurrentCRL returns a CRL that lists every certificate whose revocation
// was stored before the call, by this replica or any other, making a new
// one when the store has seen a revocation since this replica's CRL was
// made, when it is older than CRLInterval, or when there is none. It
// fails when the store cannot be asked: a CRL that might miss a revocation
// is not served.
func (s *Service) CurrentCRL(ctx context.Context) ([]byte, time.Time, error) {
	// Read before the lock, so that concurrent readers do not queue on
	// it: a mark read now counts every revocation stored before the call,
	// and a CRL made at that mark or later lists them all.
	mark, err := s.revocationMark(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("acme: CRL: %w", err)
	}
	s.crl.mu.Lock()
	defer s.crl.mu.Unlock()
	if len(s.crl.der) == 0 || s.crl.mark != mark || s.crlStale() {
		if err := s.regenerateCRL(ctx); err != nil {
			return nil, time.Time{}, fmt.Errorf("acme: CRL: %w", err)
		}
	}
	return s.crl.der, s.crl.at, nil
}

// crlStale reports whether this replica's CRL is older than CRLInterval:
// only one replica at a time regenerates on the schedule (RunLeased), so
// the others make theirs anew when it is read. s.crl.mu is held.
func (s *Service) crlStale() bool {
	return s.cfg.CRLInterval > 0 && !s.now().Before(s.crl.at.Add(s.cfg.CRLInterval))
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

// revokedDigest identifies a list of revoked certificates.
func revokedDigest(revoked []*Certificate) string {
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
// certificate. Its number is its thisUpdate in nanoseconds, which only
// grows.
func (s *Service) RegenerateCRL(ctx context.Context) error {
	s.crl.mu.Lock()
	defer s.crl.mu.Unlock()
	return s.regenerateCRL(ctx)
}

// regenerateCRL is RegenerateCRL with s.crl.mu held.
func (s *Service) regenerateCRL(ctx context.Context) error {
	now := s.now().UTC()
	// The mark first, then the list: a revocation stored in between is
	// listed and moves the mark, so the next read makes a CRL again,
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
		entries = append(entries, ca.RevokedEntry{Serial: n, RevokedAt: r.RevokedAt, Reason: r.RevocationReason})
	}
	number := big.NewInt(now.UnixNano())
	der, err := s.ca.CRL(entries, number, now, now.Add(2*s.cfg.CRLInterval+24*time.Hour))
	if err != nil {
		return err
	}
	s.crl.der, s.crl.at, s.crl.mark = der, now, mark
	return nil
}
