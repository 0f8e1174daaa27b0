// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIssueVerifies(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	h := c.Hierarchy()
	key := newECKey(t, elliptic.P256())
	req := IssueRequest{
		PublicKey:   &key.PublicKey,
		DNSNames:    []string{"svc.example.internal", "*.svc.example.internal"},
		IPAddresses: []net.IP{net.ParseIP("10.1.2.3"), net.ParseIP("fd00::1")},
	}
	iss, err := c.Issue(req)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	cert := iss.Cert
	if !bytes.Equal(cert.Raw, iss.DER) {
		t.Fatal("Issued.Cert.Raw differs from Issued.DER")
	}

	roots := x509.NewCertPool()
	roots.AddCert(h.Root)
	inters := x509.NewCertPool()
	inters.AddCert(h.Intermediate)
	for _, name := range []string{"svc.example.internal", "a.svc.example.internal", "10.1.2.3", "fd00::1"} {
		_, err := cert.Verify(x509.VerifyOptions{
			DNSName:       name,
			Roots:         roots,
			Intermediates: inters,
			CurrentTime:   testNow().Add(time.Hour),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		if err != nil {
			t.Errorf("Verify(%s): %v", name, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: inters, CurrentTime: testNow(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err == nil {
		t.Error("Verify for clientAuth: got nil error, want EKU failure without ClientAuth")
	}

	if got := cert.Subject.String(); got != "" || len(cert.RawSubject) != 2 {
		t.Errorf("Subject: got %q (%d raw bytes), want empty sequence", got, len(cert.RawSubject))
	}
	if !sanCritical(cert) {
		t.Error("subjectAltName: got non-critical, want critical with empty subject")
	}
	if !slices.Equal(cert.DNSNames, req.DNSNames) {
		t.Errorf("DNSNames: got %q, want %q", cert.DNSNames, req.DNSNames)
	}
	if len(cert.IPAddresses) != 2 || !cert.IPAddresses[0].Equal(req.IPAddresses[0]) || !cert.IPAddresses[1].Equal(req.IPAddresses[1]) {
		t.Errorf("IPAddresses: got %v, want %v", cert.IPAddresses, req.IPAddresses)
	}
	if got, want := cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}; !slices.Equal(got, want) {
		t.Errorf("ExtKeyUsage: got %v, want %v", got, want)
	}
	if got, want := cert.KeyUsage, x509.KeyUsageDigitalSignature; got != want {
		t.Errorf("KeyUsage: got %v, want %v", got, want)
	}
	if !cert.BasicConstraintsValid || cert.IsCA {
		t.Errorf("basicConstraints: got valid=%v IsCA=%v, want valid and not CA", cert.BasicConstraintsValid, cert.IsCA)
	}
	if got := cert.SerialNumber.BitLen(); got > 128 || got <= 64 || cert.SerialNumber.Sign() <= 0 {
		t.Errorf("serial: got %d bits (sign %d), want positive with 65..128 bits", got, cert.SerialNumber.Sign())
	}
	if !bytes.Equal(cert.AuthorityKeyId, h.Intermediate.SubjectKeyId) {
		t.Errorf("AuthorityKeyId: got %x, want %x", cert.AuthorityKeyId, h.Intermediate.SubjectKeyId)
	}
	if got, want := cert.IssuingCertificateURL, []string{testConfig().IssuerURL}; !slices.Equal(got, want) {
		t.Errorf("IssuingCertificateURL: got %q, want %q", got, want)
	}
	if got, want := cert.CRLDistributionPoints, []string{testConfig().CRLURL}; !slices.Equal(got, want) {
		t.Errorf("CRLDistributionPoints: got %q, want %q", got, want)
	}
	if got, want := cert.NotBefore, testNow(); !got.Equal(want) {
		t.Errorf("NotBefore: got %v, want %v", got, want)
	}
	if got, want := cert.NotAfter, testNow().Add(testLifetime); !got.Equal(want) {
		t.Errorf("NotAfter: got %v, want %v", got, want)
	}
}

// sanCritical reports whether cert's subjectAltName extension is critical.
func sanCritical(cert *x509.Certificate) bool {
	for _, ext := range cert.Extensions {
		if ext.Id.Equal([]int{2, 5, 29, 17}) {
			return ext.Critical
		}
	}
	return false
}

func TestIssueOptions(t *testing.T) {
	key := newECKey(t, elliptic.P384())
	c := newTestCA(t, Config{Lifetime: testLifetime}, testNow().Add(1500*time.Millisecond))
	inter := c.Hierarchy().Intermediate

	tests := []struct {
		name          string
		req           IssueRequest
		now           time.Time
		wantNotBefore time.Time
		wantNotAfter  time.Time
		wantEKU       []x509.ExtKeyUsage
	}{
		{
			name:          "defaults truncated to second",
			req:           IssueRequest{DNSNames: []string{"a.example"}},
			wantNotBefore: testNow().Add(time.Second),
			wantNotAfter:  testNow().Add(time.Second + testLifetime),
			wantEKU:       []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		},
		{
			name: "client auth",
			req: IssueRequest{IPAddresses: []net.IP{net.IPv4(192, 0, 2, 1)},
				ExtKeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
			wantNotBefore: testNow().Add(time.Second),
			wantNotAfter:  testNow().Add(time.Second + testLifetime),
			wantEKU:       []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		},
		{
			name: "explicit validity",
			req: IssueRequest{DNSNames: []string{"b.example"},
				NotBefore: testNow().Add(time.Hour), NotAfter: testNow().Add(25 * time.Hour)},
			wantNotBefore: testNow().Add(time.Hour),
			wantNotAfter:  testNow().Add(25 * time.Hour),
			wantEKU:       []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		},
		{
			name: "clamped to intermediate NotAfter",
			req: IssueRequest{DNSNames: []string{"c.example"},
				NotBefore: inter.NotAfter.Add(-24 * time.Hour)},
			wantNotBefore: inter.NotAfter.Add(-24 * time.Hour),
			wantNotAfter:  inter.NotAfter,
			wantEKU:       []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		},
		{
			name: "clamped to intermediate NotBefore",
			req: IssueRequest{DNSNames: []string{"d.example"},
				NotBefore: inter.NotBefore.Add(-time.Hour), NotAfter: testNow().Add(time.Hour)},
			wantNotBefore: inter.NotBefore,
			wantNotAfter:  testNow().Add(time.Hour),
			wantEKU:       []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.PublicKey = &key.PublicKey
			iss, err := c.Issue(tt.req)
			if err != nil {
				t.Fatalf("Issue: %v", err)
			}
			if got := iss.Cert.NotBefore; !got.Equal(tt.wantNotBefore) {
				t.Errorf("NotBefore: got %v, want %v", got, tt.wantNotBefore)
			}
			if got := iss.Cert.NotAfter; !got.Equal(tt.wantNotAfter) {
				t.Errorf("NotAfter: got %v, want %v", got, tt.wantNotAfter)
			}
			if got := iss.Cert.ExtKeyUsage; !slices.Equal(got, tt.wantEKU) {
				t.Errorf("ExtKeyUsage: got %v, want %v", got, tt.wantEKU)
			}
			if got := iss.Cert.IssuingCertificateURL; got != nil {
				t.Errorf("IssuingCertificateURL: got %q, want none", got)
			}
			if got := iss.Cert.CRLDistributionPoints; got != nil {
				t.Errorf("CRLDistributionPoints: got %q, want none", got)
			}
		})
	}
}

func TestIssueClampNearIntermediateExpiry(t *testing.T) {
	h := newTestHierarchy(t)
	now := h.Intermediate.NotAfter.Add(-24 * time.Hour)
	c, err := New(Config{Lifetime: testLifetime}, h, func() time.Time { return now })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	key := newECKey(t, elliptic.P256())
	iss, err := c.Issue(IssueRequest{PublicKey: &key.PublicKey, DNSNames: []string{"late.example"}})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	if got, want := iss.Cert.NotAfter, h.Intermediate.NotAfter; !got.Equal(want) {
		t.Errorf("NotAfter: got %v, want intermediate NotAfter %v", got, want)
	}

	expired, err := New(Config{Lifetime: testLifetime}, h, func() time.Time { return h.Intermediate.NotAfter.Add(time.Hour) })
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := expired.Issue(IssueRequest{PublicKey: &key.PublicKey, DNSNames: []string{"late.example"}}); err == nil ||
		!strings.Contains(err.Error(), "outside the intermediate") {
		t.Errorf("Issue after intermediate expiry: got %v, want validity error", err)
	}
}

func TestIssueRejects(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	good := &newECKey(t, elliptic.P256()).PublicKey
	tests := []struct {
		name       string
		req        IssueRequest
		want       string
		wantBadKey bool
	}{
		{"no names", IssueRequest{PublicKey: good}, "no DNS names or IP addresses", false},
		{"bad key", IssueRequest{PublicKey: &newECKey(t, elliptic.P224()).PublicKey, DNSNames: []string{"a.example"}}, "P-224", true},
		{"empty DNS name", IssueRequest{PublicKey: good, DNSNames: []string{""}}, "empty DNS name", false},
		{"space in name", IssueRequest{PublicKey: good, DNSNames: []string{"a b.example"}}, "contains ' '", false},
		{"trailing dot", IssueRequest{PublicKey: good, DNSNames: []string{"a.example."}}, "empty label", false},
		{"inner wildcard", IssueRequest{PublicKey: good, DNSNames: []string{"a.*.example"}}, "contains '*'", false},
		{"bare wildcard", IssueRequest{PublicKey: good, DNSNames: []string{"*"}}, "contains '*'", false},
		{"hyphen edge", IssueRequest{PublicKey: good, DNSNames: []string{"-a.example"}}, "hyphen", false},
		{"long label", IssueRequest{PublicKey: good, DNSNames: []string{strings.Repeat("a", 64) + ".example"}}, "at most 63", false},
		{"bad IP", IssueRequest{PublicKey: good, IPAddresses: []net.IP{{1, 2, 3}}}, "invalid IP address", false},
		{"inverted validity", IssueRequest{PublicKey: good, DNSNames: []string{"a.example"},
			NotBefore: testNow(), NotAfter: testNow().Add(-time.Hour)}, "is not after", false},
		{"negative lifetime", IssueRequest{PublicKey: good, DNSNames: []string{"a.example"}, Lifetime: -time.Hour}, "must not be negative", false},
		{"codeSigning EKU", IssueRequest{PublicKey: good, DNSNames: []string{"a.example"},
			ExtKeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}}, "only serverAuth and clientAuth", false},
		{"EKU twice", IssueRequest{PublicKey: good, DNSNames: []string{"a.example"},
			ExtKeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageClientAuth}}, "listed twice", false},
		{"unknown CN policy", IssueRequest{PublicKey: good, DNSNames: []string{"a.example"}, CommonName: "last-name"}, `"last-name" is not one of`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Issue(tt.req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Issue: got %v, want error containing %q", err, tt.want)
			}
			if got := errors.Is(err, ErrBadKey); got != tt.wantBadKey {
				t.Errorf("errors.Is(err, ErrBadKey): got %v, want %v", got, tt.wantBadKey)
			}
		})
	}
}
