// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNew(t *testing.T) {
	h := newTestHierarchy(t)
	other := newTestHierarchy(t)

	// An intermediate that may sign certificates but not CRLs.
	noCRLKey := newECKey(t, elliptic.P256())
	ski, err := SubjectKeyID(&noCRLKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	noCRLDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber:          big.NewInt(7),
		Subject:               pkix.Name{CommonName: "No CRL CA"},
		NotBefore:             testNow(),
		NotAfter:              testNow().Add(time.Hour),
		BasicConstraintsValid: true,
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		SubjectKeyId:          ski,
	}, h.Root, &noCRLKey.PublicKey, h.RootKey)
	if err != nil {
		t.Fatal(err)
	}
	noCRL, err := x509.ParseCertificate(noCRLDER)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		cfg     Config
		h       *Hierarchy
		wantErr string
	}{
		{"ok", testConfig(), h, ""},
		{"ok no CRL sign without CRL URL", Config{Lifetime: time.Hour}, &Hierarchy{Intermediate: noCRL, IntermediateKey: noCRLKey}, ""},
		{"invalid config", Config{}, h, "invalid config"},
		{"nil hierarchy", testConfig(), nil, "hierarchy is nil"},
		{"mismatched key", testConfig(), &Hierarchy{Intermediate: h.Intermediate, IntermediateKey: other.IntermediateKey}, "does not match"},
		{"CRL URL without cRLSign", testConfig(), &Hierarchy{Intermediate: noCRL, IntermediateKey: noCRLKey}, "cRLSign"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg, tt.h, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: got %v, want nil", err)
				}
				if got := c.Config(); !reflect.DeepEqual(got, tt.cfg) {
					t.Errorf("Config: got %+v, want %+v", got, tt.cfg)
				}
				if got := c.Hierarchy(); got == tt.h || *got != *tt.h {
					t.Errorf("Hierarchy: got %p (%+v), want a copy of %p", got, got, tt.h)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New: got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewDefaultClock(t *testing.T) {
	h, err := GenerateHierarchy("Weir Clock", time.Time{})
	if err != nil {
		t.Fatalf("GenerateHierarchy: %v", err)
	}
	c, err := New(Config{Lifetime: time.Hour}, h, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	key := newECKey(t, elliptic.P256())
	before := time.Now().Truncate(time.Second)
	iss, err := c.Issue(IssueRequest{PublicKey: &key.PublicKey, DNSNames: []string{"clock.example"}})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	after := time.Now()
	if nb := iss.Cert.NotBefore; nb.Before(before) || nb.After(after) {
		t.Errorf("NotBefore: got %v, want between %v and %v", nb, before, after)
	}
}

func TestChainPEM(t *testing.T) {
	c := newTestCA(t, testConfig(), testNow())
	key := newECKey(t, elliptic.P256())
	iss, err := c.Issue(IssueRequest{PublicKey: &key.PublicKey, DNSNames: []string{"chain.example"}})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	chain := c.ChainPEM(iss.DER)
	if got, want := strings.Count(string(chain), "-----BEGIN CERTIFICATE-----"), 2; got != want {
		t.Fatalf("ChainPEM: got %d CERTIFICATE blocks, want %d", got, want)
	}
	certs, err := ParseCertsPEM(chain)
	if err != nil {
		t.Fatalf("ParseCertsPEM: %v", err)
	}
	h := c.Hierarchy()
	if !certs[0].Equal(iss.Cert) {
		t.Errorf("chain[0]: got %q, want the leaf", certs[0].Subject)
	}
	if !certs[1].Equal(h.Intermediate) {
		t.Errorf("chain[1]: got %q, want the intermediate", certs[1].Subject)
	}
	if strings.Contains(string(chain), string(EncodeCertPEM(h.Root.Raw))) {
		t.Error("ChainPEM: got the root in the chain, want it left out")
	}
}
