// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"
)

// TestSignIntermediate: the root signs a new intermediate from a CSR; it
// is shaped as a generated one, chains to the root and loads with its
// key; a wrong root key, a CSR without a name or with the root's name
// are refused.
func TestSignIntermediate(t *testing.T) {
	h := newTestHierarchy(t)
	key := newECKey(t, elliptic.P256())
	csrFor := func(subject pkix.Name) *x509.CertificateRequest {
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
		if err != nil {
			t.Fatal(err)
		}
		csr, err := x509.ParseCertificateRequest(der)
		if err != nil {
			t.Fatal(err)
		}
		return csr
	}
	csr := csrFor(pkix.Name{CommonName: "Weir Test Intermediate CA 2", Organization: []string{"Weir Test"}})
	inter, err := SignIntermediate(h.Root, h.RootKey, csr, testNow(), "")
	if err != nil {
		t.Fatalf("SignIntermediate: %v", err)
	}
	if !inter.IsCA || inter.MaxPathLen != 0 || !inter.MaxPathLenZero || inter.KeyUsage&x509.KeyUsageCertSign == 0 ||
		!inter.NotAfter.After(testNow()) || inter.NotAfter.After(h.Root.NotAfter) || inter.Subject.CommonName != "Weir Test Intermediate CA 2" {
		t.Errorf("the new intermediate is not shaped as a generated one: %+v", inter)
	}
	if _, err := LoadHierarchy(h.Root, inter, key, Use{Now: testNow(), LeafEKUs: bothEKUs}); err != nil {
		t.Fatalf("LoadHierarchy of the new intermediate: %v", err)
	}
	for _, tt := range []struct {
		name     string
		wrongKey bool
		csr      *x509.CertificateRequest
		want     string
	}{
		{"wrong root key", true, csr, "does not match"},
		{"no name", false, csrFor(pkix.Name{Organization: []string{"x"}}), "no common name"},
		{"root's name", false, csrFor(h.Root.Subject), "the root's"},
	} {
		rk := h.RootKey
		if tt.wrongKey {
			rk = h.IntermediateKey
		}
		if _, err := SignIntermediate(h.Root, rk, tt.csr, testNow(), ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
