// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/elliptic"
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"
	"time"
)

// bothEKUs are the leaf usages of weir's default profiles.
var bothEKUs = []LeafEKU{
	{EKU: x509.ExtKeyUsageServerAuth, By: "ca.profiles.tls-server.key-usages"},
	{EKU: x509.ExtKeyUsageServerAuth, By: "ca.profiles.tls-client-server.key-usages"},
	{EKU: x509.ExtKeyUsageClientAuth, By: "ca.profiles.tls-client-server.key-usages"},
}

// TestCheckIntermediate: the one check of an intermediate accepts
// SignIntermediate's, and refuses each intermediate that serve would
// refuse or misuse: no cRLSign, expired or not yet valid, outliving its
// root, and EKUs that leave out a usage the leaves carry (none and
// anyExtendedKeyUsage allow every one). A retired issuer's (the zero Use)
// is held to its form only.
func TestCheckIntermediate(t *testing.T) {
	h := newTestHierarchy(t)
	now := testNow()
	key := newECKey(t, elliptic.P256())
	// shaped signs an intermediate for key under h's root, shaped as
	// SignIntermediate's and then changed by mutate.
	shaped := func(mutate func(*x509.Certificate)) *x509.Certificate {
		t.Helper()
		tmpl, err := intermediateTemplate(pkix.Name{CommonName: "Weir Test Intermediate CA 2"}, key.Public(), h.Root,
			now.Add(-time.Hour), now.Add(intermediateValidity), "")
		if err != nil {
			t.Fatal(err)
		}
		mutate(tmpl)
		der, err := x509.CreateCertificate(nil, tmpl, h.Root, key.Public(), h.RootKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	issuing := Use{Now: now, LeafEKUs: bothEKUs}
	installing := Use{Now: now, LeafEKUs: bothEKUs, Installing: true}
	for _, tt := range []struct {
		name   string
		mutate func(*x509.Certificate)
		use    Use
		want   string // "" accepts
	}{
		{"as signed", func(*x509.Certificate) {}, issuing, ""},
		{"no EKU", func(c *x509.Certificate) { c.ExtKeyUsage = nil }, issuing, ""},
		{"anyExtendedKeyUsage", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageAny} }, issuing, ""},
		{"serverAuth only, serverAuth leaves", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} },
			Use{Now: now, LeafEKUs: bothEKUs[:1]}, ""},
		{"serverAuth only, installed with serverAuth and clientAuth leaves", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} },
			installing, "clientAuth that ca.profiles.tls-client-server.key-usages puts"},
		// In service, a profile's certificates verify for the usages the
		// intermediate allows (the rest is logged, LeafEKUGaps); one
		// whose certificates would verify for none is refused.
		{"serverAuth only, in service with serverAuth and clientAuth leaves", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} },
			issuing, ""},
		{"serverAuth only, in service with clientAuth leaves", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} },
			Use{Now: now, LeafEKUs: []LeafEKU{{EKU: x509.ExtKeyUsageClientAuth, By: "ca.profiles.client.key-usages"}}}, "clientAuth that ca.profiles.client.key-usages puts"},
		{"codeSigning only", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning} },
			issuing, "does not allow the extended key usage serverAuth"},
		{"no cRLSign", func(c *x509.Certificate) { c.KeyUsage &^= x509.KeyUsageCRLSign }, issuing, "cRLSign"},
		{"no cRLSign, retired", func(c *x509.Certificate) { c.KeyUsage &^= x509.KeyUsageCRLSign }, Use{}, "cRLSign"},
		{"no keyCertSign", func(c *x509.Certificate) { c.KeyUsage &^= x509.KeyUsageCertSign }, issuing, "keyCertSign"},
		{"not a CA", func(c *x509.Certificate) { c.IsCA, c.MaxPathLenZero = false, false }, issuing, "not a CA"},
		{"expired", func(c *x509.Certificate) { c.NotBefore, c.NotAfter = now.Add(-48*time.Hour), now.Add(-time.Hour) }, issuing, "expired at"},
		{"expired, retired", func(c *x509.Certificate) { c.NotBefore, c.NotAfter = now.Add(-48*time.Hour), now.Add(-time.Hour) }, Use{}, ""},
		{"not yet valid", func(c *x509.Certificate) { c.NotBefore = now.Add(time.Hour) }, issuing, "not valid before"},
		{"outlives its root", func(c *x509.Certificate) { c.NotAfter = h.Root.NotAfter.Add(time.Hour) }, issuing, "after its root"},
		{"codeSigning only, retired", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning} }, Use{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckIntermediate(h.Root, shaped(tt.mutate), key, tt.use)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	other := newTestHierarchy(t)
	if err := CheckIntermediate(other.Root, shaped(func(*x509.Certificate) {}), key, issuing); err == nil {
		t.Error("an intermediate of another root (of the same name) was accepted")
	}
}
