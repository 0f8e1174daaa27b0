// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/elliptic"
	"crypto/x509"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestIssueProfile: what a certificate profile sets through IssueRequest:
// the lifetime (default and maximum), the extended key usages and the
// common-name policy.
func TestIssueProfile(t *testing.T) {
	key := newECKey(t, elliptic.P256())
	c := newTestCA(t, testConfig(), testNow())
	week := 7 * 24 * time.Hour
	long := strings.Repeat("a", 60) + ".example" // 68 characters
	server := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	client := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}

	tests := []struct {
		name         string
		req          IssueRequest
		wantNotAfter time.Time
		wantEKU      []x509.ExtKeyUsage
		wantCN       string
	}{
		{
			name:         "zero value keeps today's certificate",
			req:          IssueRequest{DNSNames: []string{"a.example"}},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: server,
		},
		{
			name:         "profile lifetime is the default",
			req:          IssueRequest{DNSNames: []string{"a.example"}, Lifetime: week},
			wantNotAfter: testNow().Add(week), wantEKU: server,
		},
		{
			name:         "profile lifetime caps an explicit notAfter",
			req:          IssueRequest{DNSNames: []string{"a.example"}, Lifetime: week, NotAfter: testNow().Add(30 * 24 * time.Hour)},
			wantNotAfter: testNow().Add(week), wantEKU: server,
		},
		{
			name: "shorter explicit window within the profile lifetime",
			req: IssueRequest{DNSNames: []string{"a.example"}, Lifetime: week,
				NotBefore: testNow().Add(time.Hour), NotAfter: testNow().Add(49 * time.Hour)},
			wantNotAfter: testNow().Add(49 * time.Hour), wantEKU: server,
		},
		{
			name:         "profile lifetime may exceed the CA default",
			req:          IssueRequest{DNSNames: []string{"a.example"}, Lifetime: 2 * testLifetime},
			wantNotAfter: testNow().Add(2 * testLifetime), wantEKU: server,
		},
		{
			name:         "clientAuth only",
			req:          IssueRequest{DNSNames: []string{"a.example"}, ExtKeyUsages: client},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: client,
		},
		{
			name:         "serverAuth and clientAuth",
			req:          IssueRequest{DNSNames: []string{"a.example"}, ExtKeyUsages: both},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: both,
		},
		{
			name:         "common-name none",
			req:          IssueRequest{DNSNames: []string{"a.example"}, CommonName: CommonNameNone},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: server,
		},
		{
			name:         "common-name first-name",
			req:          IssueRequest{DNSNames: []string{"b.example", "a.example"}, CommonName: CommonNameFirstName},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: server, wantCN: "b.example",
		},
		{
			name:         "first-name skips a name longer than 64",
			req:          IssueRequest{DNSNames: []string{long, "short.example"}, CommonName: CommonNameFirstName},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: server, wantCN: "short.example",
		},
		{
			name:         "first-name with only long names leaves the subject empty",
			req:          IssueRequest{DNSNames: []string{long}, CommonName: CommonNameFirstName},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: server,
		},
		{
			name: "first-name with only IP addresses leaves the subject empty",
			req: IssueRequest{IPAddresses: []net.IP{net.IPv4(192, 0, 2, 7)}, CommonName: CommonNameFirstName,
				ExtKeyUsages: both},
			wantNotAfter: testNow().Add(testLifetime), wantEKU: both,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.PublicKey = &key.PublicKey
			iss, err := c.Issue(tt.req)
			if err != nil {
				t.Fatalf("Issue: %v", err)
			}
			cert := iss.Cert
			if got := cert.NotAfter; !got.Equal(tt.wantNotAfter) {
				t.Errorf("NotAfter: got %v, want %v", got, tt.wantNotAfter)
			}
			if got := cert.ExtKeyUsage; !slices.Equal(got, tt.wantEKU) {
				t.Errorf("ExtKeyUsage: got %v, want %v", got, tt.wantEKU)
			}
			if got := cert.Subject.CommonName; got != tt.wantCN {
				t.Errorf("Subject CN: got %q, want %q", got, tt.wantCN)
			}
			if tt.wantCN == "" {
				if len(cert.RawSubject) != 2 || !sanCritical(cert) {
					t.Errorf("subject %q (%d raw bytes), SAN critical %v: want an empty subject and a critical SAN",
						cert.Subject, len(cert.RawSubject), sanCritical(cert))
				}
			} else if !slices.Contains(cert.DNSNames, tt.wantCN) {
				t.Errorf("DNSNames %q do not hold the CN %q", cert.DNSNames, tt.wantCN)
			}
		})
	}
}

// TestIssueClientAuthVerifies: a clientAuth-only leaf verifies for client
// authentication and not for server authentication.
func TestIssueClientAuthVerifies(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	h := c.Hierarchy()
	key := newECKey(t, elliptic.P256())
	iss, err := c.Issue(IssueRequest{PublicKey: &key.PublicKey, DNSNames: []string{"client.example"},
		ExtKeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CommonName: CommonNameFirstName})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	roots, inters := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(h.Root)
	inters.AddCert(h.Intermediate)
	verify := func(u x509.ExtKeyUsage) error {
		_, err := iss.Cert.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inters,
			CurrentTime: testNow().Add(time.Hour), KeyUsages: []x509.ExtKeyUsage{u}})
		return err
	}
	if err := verify(x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("Verify for clientAuth: got %v, want nil", err)
	}
	if err := verify(x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("Verify for serverAuth: got nil, want an EKU error")
	}
}
