// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
	"time"
)

// testNow returns the fixed instant used as "now" throughout the tests.
func testNow() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }

const testLifetime = 2160 * time.Hour

// newTestHierarchy generates a hierarchy at testNow().
func newTestHierarchy(t *testing.T) *Hierarchy {
	t.Helper()
	h, err := GenerateHierarchy("Weir Test", testNow())
	if err != nil {
		t.Fatalf("GenerateHierarchy: %v", err)
	}
	return h
}

// newTestCA returns a CA over a fresh hierarchy whose clock reads now.
func newTestCA(t *testing.T, cfg Config, now time.Time) *CA {
	t.Helper()
	c, err := New(cfg, newTestHierarchy(t), func() time.Time { return now })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// testConfig is a valid configuration with both URLs set.
func testConfig() Config {
	return Config{
		Lifetime:  testLifetime,
		IssuerURL: "http://ca.example.internal/intermediate.der",
		CRLURL:    "http://ca.example.internal/crl.der",
	}
}

// newECKey generates an ECDSA key on curve.
func newECKey(t *testing.T, curve elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatalf("ecdsa.GenerateKey: %v", err)
	}
	return k
}

// publicOf returns the public half of a signer.
func publicOf(s crypto.Signer) crypto.PublicKey { return s.Public() }
