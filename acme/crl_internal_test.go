// SPDX-License-Identifier: Apache-2.0

package acme

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
)

// revokedList is the revocations a shared store holds, as every replica
// sees them.
type revokedList struct {
	Store
	mu      sync.Mutex
	revoked []Revocation
	total   int64 // revoked ever, expired or not
	lists   int   // ListRevoked calls
	err     error
}

func (r *revokedList) revoke(serial string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked = append(r.revoked, Revocation{Serial: serial, RevokedAt: at, Reason: 1})
	r.total++
}

func (r *revokedList) ListRevoked(context.Context, time.Time) ([]Revocation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists++
	if r.err != nil {
		return nil, r.err
	}
	return slices.Clone(r.revoked), nil
}

// countingList is revokedList with a RevocationCounter.
type countingList struct{ *revokedList }

func (c countingList) RevokedCount(context.Context) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total, c.err
}

// crlTestIssuer is a CA of a new hierarchy.
func crlTestIssuer(t testing.TB) *ca.CA {
	t.Helper()
	h, err := ca.GenerateHierarchy("crl test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := ca.New(ca.Config{Lifetime: time.Hour}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	return issuer
}

// crlEntries reads the CRL s serves and returns its number of entries
// and when it was made.
func crlEntries(t *testing.T, s *Service) (int, time.Time) {
	t.Helper()
	der, at, err := s.CurrentCRL(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rl, err := x509.ParseRevocationList(der)
	if err != nil {
		t.Fatal(err)
	}
	return len(rl.RevokedCertificateEntries), at
}

// TestCurrentCRLSeesOtherReplicas: a replica's served CRL lists the
// revocations another replica stored, made anew only when there is one;
// with a RevocationCounter the check reads a count, not the list; a store
// that cannot be asked yields an error, not a CRL that may miss one.
func TestCurrentCRLSeesOtherReplicas(t *testing.T) {
	issuer := crlTestIssuer(t)
	for _, counted := range []bool{false, true} {
		name := "list"
		if counted {
			name = "counter"
		}
		t.Run(name, func(t *testing.T) {
			shared := &revokedList{}
			var store Store = shared
			if counted {
				store = countingList{shared}
			}
			replica := &Service{store: store, ca: issuer, cfg: Config{CRLInterval: time.Hour}, now: time.Now,
				log: slog.New(slog.DiscardHandler), crl: &crlCache{}}
			entries := func() (int, time.Time) { return crlEntries(t, replica) }
			if n, _ := entries(); n != 0 {
				t.Fatalf("empty store: %d entries", n)
			}
			shared.revoke("0a", time.Now()) // by another replica
			n, at := entries()
			if n != 1 {
				t.Fatalf("after another replica revoked: %d entries, want 1", n)
			}
			lists := shared.lists
			if n2, at2 := entries(); n2 != 1 || !at2.Equal(at) {
				t.Errorf("nothing revoked since: %d entries made at %v, want the same CRL (1, %v)", n2, at2, at)
			}
			if counted && shared.lists != lists {
				t.Errorf("with a RevocationCounter, an unchanged CRL listed the revoked certificates (%d lists)", shared.lists-lists)
			}
			shared.revoke("0b", time.Now())
			if n, _ := entries(); n != 2 {
				t.Errorf("after a second revocation: %d entries, want 2", n)
			}
			shared.err = errors.New("database is down")
			if _, _, err := replica.CurrentCRL(t.Context()); err == nil {
				t.Error("CurrentCRL with the store down = nil error, want one")
			}
		})
	}
}
