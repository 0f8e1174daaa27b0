// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"context"
	"crypto/x509"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/ca"
)

// defaultIssuer is acme.defaultIssuer, the issuer of the certificates
// stored without one.
const defaultIssuer = "default"

// revokedList is the revocations a shared store holds, as every replica
// sees them, with the roles of Store as a shared store plays them: the
// count of revocations, the counts and lists of each scope (lists
// counted), and each scope's CRL numbers.
type revokedList struct {
	mu      sync.Mutex
	revoked []Revocation
	total   int64         // revoked ever, expired or not
	lists   int           // ListRevokedScope calls
	listed  map[Scope]int // ListRevokedScope calls by scope
	numbers map[Scope]int64
	err     error
}

func (r *revokedList) revoke(serial string, at time.Time) {
	r.revokeBy(serial, defaultIssuer, at)
}

// revokeBy stores a revocation of a certificate of issuer; one stored
// without an issuer is the default issuer's, as the stores read it.
func (r *revokedList) revokeBy(serial, issuer string, at time.Time) {
	if issuer == "" {
		issuer = defaultIssuer
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked = append(r.revoked, Revocation{Serial: serial, RevokedAt: at, Reason: 1, Issuer: issuer})
	r.total++
}

func (r *revokedList) RevokedCount(context.Context) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total, r.err
}

func (r *revokedList) RevokedCounts(context.Context) (map[Scope]int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	out := map[Scope]int64{}
	for _, rv := range r.revoked {
		out[Scope{Issuer: rv.Issuer, Shard: rv.Shard}]++
	}
	return out, nil
}

func (r *revokedList) ListRevokedScope(_ context.Context, sc Scope, _ time.Time) ([]Revocation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lists++
	if r.listed == nil {
		r.listed = map[Scope]int{}
	}
	r.listed[sc]++
	if r.err != nil {
		return nil, r.err
	}
	var out []Revocation
	for _, rv := range r.revoked {
		if rv.Issuer == sc.Issuer && rv.Shard == sc.Shard {
			out = append(out, rv)
		}
	}
	return out, nil
}

func (r *revokedList) NextCRLNumber(_ context.Context, issuer string, shard int, floor int64) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	if r.numbers == nil {
		r.numbers = map[Scope]int64{}
	}
	sc := Scope{Issuer: issuer, Shard: shard}
	r.numbers[sc] = max(r.numbers[sc]+1, floor, 1)
	return r.numbers[sc], nil
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

// maker is a Maker of store making the CRLs of issuers, with cfg's
// Interval, Delay and Now (time.Now when nil).
func maker(store Store, issuers []Issuer, cfg Config) *Maker {
	cfg.Store = store
	cfg.Issuers = func() []Issuer { return issuers }
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Log = slog.New(slog.DiscardHandler)
	return New(cfg)
}

// only is issuer as the one issuer, the default one.
func only(issuer *ca.CA) []Issuer { return []Issuer{{ID: defaultIssuer, CA: issuer}} }

// crlEntries reads the CRL of the default issuer that m serves and
// returns its number of entries and when it was made.
func crlEntries(t *testing.T, m *Maker) (int, time.Time) {
	t.Helper()
	der, at, err := m.Get(t.Context(), Scope{Issuer: defaultIssuer})
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
// the check reads a count, not the list; a store that cannot be asked
// yields an error, not a CRL that may miss one.
func TestCurrentCRLSeesOtherReplicas(t *testing.T) {
	issuer := crlTestIssuer(t)
	shared := &revokedList{}
	replica := maker(shared, only(issuer), Config{Interval: time.Hour})
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
	if shared.lists != lists {
		t.Errorf("an unchanged CRL listed the revoked certificates (%d lists)", shared.lists-lists)
	}
	shared.revoke("0b", time.Now())
	if n, _ := entries(); n != 2 {
		t.Errorf("after a second revocation: %d entries, want 2", n)
	}
	shared.err = errors.New("database is down")
	if _, _, err := replica.Get(t.Context(), Scope{Issuer: defaultIssuer}); err == nil {
		t.Error("Get with the store down = nil error, want one")
	}
}
