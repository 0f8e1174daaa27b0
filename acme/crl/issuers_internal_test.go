// SPDX-License-Identifier: Apache-2.0

package crl

import (
	"crypto/x509"
	"testing"
	"time"
)

// TestIssuerCRLs: each issuer's CRL lists the revocations of the
// certificates it signed and no other, is signed by it, and carries a
// number from the store that grows across replicas sharing it; a
// revocation stored without an issuer is the default issuer's (as the
// stores read it); a scope it does not make has no CRL. (That acme serves
// the default issuer's as its CurrentCRL, and a 404 for an unknown
// issuer, is TestServiceCRLs in acme.)
func TestIssuerCRLs(t *testing.T) {
	old, cur := crlTestIssuer(t), crlTestIssuer(t)
	issuers := []Issuer{{ID: defaultIssuer, CA: old}, {ID: "r2", CA: cur}}
	shared := &revokedList{}
	replica := func() *Maker { return maker(shared, issuers, Config{Interval: time.Hour}) }
	a, b := replica(), replica()
	now := time.Now()
	shared.revokeBy("0a", defaultIssuer, now)
	shared.revokeBy("0b", "", now)
	shared.revokeBy("0c", "r2", now)
	shared.revokeBy("0d", "gone", now) // an issuer no longer configured

	var lastNumber int64
	for round, s := range []*Maker{a, b, a, b} {
		if round > 0 {
			shared.revokeBy("1"+string(rune('0'+round)), "r2", now) // a revocation moves every replica
		}
		for _, want := range []struct {
			id      string
			serials int
			signer  *x509.Certificate
		}{{defaultIssuer, 2, old.Hierarchy().Intermediate}, {"r2", 1 + round, cur.Hierarchy().Intermediate}} {
			der, _, err := s.Get(t.Context(), Scope{Issuer: want.id})
			if err != nil {
				t.Fatalf("Get(%s): %v", want.id, err)
			}
			rl, err := x509.ParseRevocationList(der)
			if err != nil {
				t.Fatal(err)
			}
			if err := rl.CheckSignatureFrom(want.signer); err != nil {
				t.Errorf("round %d: CRL of %s does not verify with its issuer: %v", round, want.id, err)
			}
			if n := len(rl.RevokedCertificateEntries); n != want.serials {
				t.Errorf("round %d: CRL of %s lists %d certificates, want %d", round, want.id, n, want.serials)
			}
			if want.id == "r2" {
				if rl.Number.Int64() <= lastNumber {
					t.Errorf("round %d: CRL number of r2 %d after %d: it must grow across replicas", round, rl.Number, lastNumber)
				}
				lastNumber = rl.Number.Int64()
			}
		}
	}
	if der, _, err := a.Get(t.Context(), Scope{Issuer: "nope"}); err != nil || der != nil {
		t.Errorf("Get(unknown issuer) = %d bytes, %v; want no CRL", len(der), err)
	}
}
