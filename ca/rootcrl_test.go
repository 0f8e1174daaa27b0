// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"strings"
	"testing"
	"time"
)

// TestRootCRL: the root's CRL is signed by the root, says it covers CA
// certificates only (a critical issuingDistributionPoint with
// onlyContainsCACerts and no distribution point), is valid a year by
// default, and can list nothing. Each next signing takes the previous
// one's number plus one and keeps its entries; an intermediate listed
// already keeps its first entry. Intermediates name the root CRL's URL.
func TestRootCRL(t *testing.T) {
	const url = "http://ca.example.internal/ca/root-crl.der"
	h, err := GenerateHierarchyWith("Weir Test", testNow(), HierarchyOptions{RootCRLURL: url})
	if err != nil {
		t.Fatal(err)
	}
	if dp := h.Intermediate.CRLDistributionPoints; len(dp) != 1 || dp[0] != url {
		t.Errorf("the generated intermediate's CRL distribution points %v, want [%s]", dp, url)
	}
	second := signedIntermediate(t, h, "Weir Test Intermediate 2", url)
	if dp := second.CRLDistributionPoints; len(dp) != 1 || dp[0] != url {
		t.Errorf("the signed intermediate's CRL distribution points %v, want [%s]", dp, url)
	}

	sign := func(req RootCRLRequest, wantAdded int) *x509.RevocationList {
		t.Helper()
		der, added, err := SignRootCRL(h.Root, h.RootKey, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(added) != wantAdded {
			t.Errorf("added %d intermediates, want %d", len(added), wantAdded)
		}
		rl, err := ParseRootCRL(der, h.Root)
		if err != nil {
			t.Fatal(err)
		}
		return rl
	}
	first := sign(RootCRLRequest{Now: testNow()}, 0)
	if first.Number.Int64() != 1 || len(first.RevokedCertificateEntries) != 0 {
		t.Errorf("the first root CRL: number %v, %d entries; want 1 and none", first.Number, len(first.RevokedCertificateEntries))
	}
	if !first.NextUpdate.Equal(testNow().Add(DefaultRootCRLValidity)) {
		t.Errorf("nextUpdate %v, want a year after %v", first.NextUpdate, testNow())
	}
	var idp *pkix.Extension
	for i, e := range first.Extensions {
		if e.Id.Equal(oidIssuingDistributionPoint) {
			idp = &first.Extensions[i]
		}
	}
	if idp == nil || !idp.Critical || !bytes.Equal(idp.Value, []byte{0x30, 0x03, 0x82, 0x01, 0xff}) {
		t.Errorf("issuingDistributionPoint %+v, want critical onlyContainsCACerts alone", idp)
	}

	later := testNow().Add(24 * time.Hour)
	revoked := sign(RootCRLRequest{Previous: first, Revoke: []*x509.Certificate{second}, Reason: ReasonSuperseded, Now: later, Validity: 90 * 24 * time.Hour}, 1)
	if revoked.Number.Int64() != 2 || len(revoked.RevokedCertificateEntries) != 1 {
		t.Fatalf("after the revocation: number %v, %d entries; want 2 and 1", revoked.Number, len(revoked.RevokedCertificateEntries))
	}
	e := revoked.RevokedCertificateEntries[0]
	if e.SerialNumber.Cmp(second.SerialNumber) != 0 || e.ReasonCode != ReasonSuperseded || !e.RevocationTime.Equal(later) {
		t.Errorf("entry %v %d %v, want %v superseded at %v", e.SerialNumber, e.ReasonCode, e.RevocationTime, second.SerialNumber, later)
	}
	if !revoked.NextUpdate.Equal(later.Add(90 * 24 * time.Hour)) {
		t.Errorf("nextUpdate %v, want 90 days after %v", revoked.NextUpdate, later)
	}
	again := sign(RootCRLRequest{Previous: revoked, Revoke: []*x509.Certificate{second}, Reason: ReasonKeyCompromise, Now: later.Add(time.Hour)}, 0)
	if again.Number.Int64() != 3 || len(again.RevokedCertificateEntries) != 1 || again.RevokedCertificateEntries[0].ReasonCode != ReasonSuperseded ||
		!again.RevokedCertificateEntries[0].RevocationTime.Equal(later) {
		t.Errorf("a third signing: number %v, entries %+v; want 3 and the first entry kept", again.Number, again.RevokedCertificateEntries)
	}
}

// TestRootCRLRefusals: the root CRL lists only intermediates the root
// signed, with an operator's reason, and is signed only with the root's
// key; ParseRootCRL takes only the root's own CRLs.
func TestRootCRLRefusals(t *testing.T) {
	h, other := newTestHierarchy(t), newTestHierarchy(t)
	c, err := New(testConfig(), h, func() time.Time { return testNow() })
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := c.Issue(IssueRequest{PublicKey: publicOf(newECKey(t, elliptic.P256())), DNSNames: []string{"leaf.example"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		key    *Hierarchy
		revoke *x509.Certificate
		reason int
		want   string
	}{
		{"the root itself", h, h.Root, ReasonKeyCompromise, "is the root itself"},
		{"another root's intermediate", h, other.Intermediate, ReasonKeyCompromise, "is not an intermediate signed by root"},
		{"a leaf", h, leaf.Cert, ReasonKeyCompromise, "is not an intermediate signed by root"},
		{"a hold", h, h.Intermediate, ReasonCertificateHold, "is not a reason"},
		{"another root's key", other, nil, 0, "does not match"},
	} {
		req := RootCRLRequest{Now: testNow(), Reason: tc.reason}
		if tc.revoke != nil {
			req.Revoke = []*x509.Certificate{tc.revoke}
		}
		if _, _, err := SignRootCRL(h.Root, tc.key.RootKey, req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	byIntermediate, err := c.CRL(nil, big.NewInt(1), testNow(), testNow().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	byOther, _, err := SignRootCRL(other.Root, other.RootKey, RootCRLRequest{Now: testNow()})
	if err != nil {
		t.Fatal(err)
	}
	for name, der := range map[string][]byte{"the intermediate's CRL": byIntermediate, "another root's CRL": byOther} {
		if _, err := ParseRootCRL(der, h.Root); err == nil {
			t.Errorf("ParseRootCRL took %s", name)
		}
	}
}

// signedIntermediate is a new intermediate named cn under h's root, from
// the root's ceremony, naming rootCRLURL.
func signedIntermediate(t *testing.T, h *Hierarchy, cn, rootCRLURL string) *x509.Certificate {
	t.Helper()
	key := newECKey(t, elliptic.P256())
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := SignIntermediate(h.Root, h.RootKey, csr, testNow(), rootCRLURL)
	if err != nil {
		t.Fatal(err)
	}
	return inter
}
