// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGenerateHierarchy(t *testing.T) {
	h := newTestHierarchy(t)
	wantNotBefore := testNow().Add(-time.Hour)

	tests := []struct {
		name        string
		cert        *x509.Certificate
		cn          string
		curve       elliptic.Curve
		validity    time.Duration
		keyUsage    x509.KeyUsage
		maxPathLen  int
		maxPathZero bool
		extKeyUsage []x509.ExtKeyUsage
		issuer      *x509.Certificate
	}{
		{
			name: "root", cert: h.Root, cn: "Weir Test Root CA", curve: elliptic.P384(),
			validity: 10 * 365 * 24 * time.Hour, keyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
			maxPathLen: 1, issuer: h.Root,
		},
		{
			name: "intermediate", cert: h.Intermediate, cn: "Weir Test Intermediate CA", curve: elliptic.P256(),
			validity:   5 * 365 * 24 * time.Hour,
			keyUsage:   x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
			maxPathLen: 0, maxPathZero: true,
			extKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			issuer:      h.Root,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cert
			if got := c.Subject.CommonName; got != tt.cn {
				t.Errorf("CN: got %q, want %q", got, tt.cn)
			}
			if got := c.Subject.Organization; !slices.Equal(got, []string{"Weir Test"}) {
				t.Errorf("O: got %q, want [Weir Test]", got)
			}
			pub, ok := c.PublicKey.(*ecdsa.PublicKey)
			if !ok || pub.Curve != tt.curve {
				t.Errorf("public key: got %T, want ECDSA %s", c.PublicKey, tt.curve.Params().Name)
			}
			if !c.NotBefore.Equal(wantNotBefore) {
				t.Errorf("NotBefore: got %v, want %v", c.NotBefore, wantNotBefore)
			}
			if got, want := c.NotAfter.Sub(c.NotBefore), tt.validity; got != want {
				t.Errorf("validity: got %v, want %v", got, want)
			}
			if !c.BasicConstraintsValid || !c.IsCA {
				t.Errorf("basicConstraints: got valid=%v IsCA=%v, want both true", c.BasicConstraintsValid, c.IsCA)
			}
			if c.KeyUsage != tt.keyUsage {
				t.Errorf("KeyUsage: got %v, want %v", c.KeyUsage, tt.keyUsage)
			}
			if c.MaxPathLen != tt.maxPathLen || c.MaxPathLenZero != tt.maxPathZero {
				t.Errorf("path length: got %d (zero=%v), want %d (zero=%v)",
					c.MaxPathLen, c.MaxPathLenZero, tt.maxPathLen, tt.maxPathZero)
			}
			if !slices.Equal(c.ExtKeyUsage, tt.extKeyUsage) {
				t.Errorf("ExtKeyUsage: got %v, want %v", c.ExtKeyUsage, tt.extKeyUsage)
			}
			if got := c.SerialNumber.BitLen(); got > 128 || got <= 64 {
				t.Errorf("serial: got %d bits, want 65..128", got)
			}
			ski, err := SubjectKeyID(c.PublicKey)
			if err != nil {
				t.Fatalf("SubjectKeyID: %v", err)
			}
			if !bytes.Equal(c.SubjectKeyId, ski) {
				t.Errorf("SubjectKeyId: got %x, want %x", c.SubjectKeyId, ski)
			}
			if err := c.CheckSignatureFrom(tt.issuer); err != nil {
				t.Errorf("CheckSignatureFrom(%s): %v", tt.issuer.Subject.CommonName, err)
			}
		})
	}
	if !bytes.Equal(h.Intermediate.AuthorityKeyId, h.Root.SubjectKeyId) {
		t.Errorf("intermediate AKI: got %x, want root SKI %x", h.Intermediate.AuthorityKeyId, h.Root.SubjectKeyId)
	}
	if h.RootKey == nil || h.IntermediateKey == nil {
		t.Errorf("keys: got root %v, intermediate %v; want both set", h.RootKey, h.IntermediateKey)
	}
}

func TestGenerateHierarchyEmptyName(t *testing.T) {
	if _, err := GenerateHierarchy("", testNow()); err == nil {
		t.Error("GenerateHierarchy(\"\"): got nil error, want error")
	}
}

func TestLoadHierarchy(t *testing.T) {
	h := newTestHierarchy(t)
	sameName := newTestHierarchy(t)
	other, err := GenerateHierarchy("Other", testNow())
	if err != nil {
		t.Fatalf("GenerateHierarchy: %v", err)
	}

	// A leaf certificate with its key, to try as an "intermediate".
	c, err := New(Config{Lifetime: testLifetime}, h, testNow)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	leafKey := newECKey(t, elliptic.P256())
	leaf, err := c.Issue(IssueRequest{PublicKey: &leafKey.PublicKey, DNSNames: []string{"leaf.example.internal"}})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}

	// A CA certificate without keyCertSign.
	noSignKey := newECKey(t, elliptic.P256())
	noSignDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber:          big.NewInt(12345),
		Subject:               pkix.Name{CommonName: "No Sign CA"},
		NotBefore:             testNow(),
		NotAfter:              testNow().Add(time.Hour),
		BasicConstraintsValid: true,
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageDigitalSignature,
	}, h.Root, &noSignKey.PublicKey, h.RootKey)
	if err != nil {
		t.Fatal(err)
	}
	noSign, err := x509.ParseCertificate(noSignDER)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		root    *x509.Certificate
		inter   *x509.Certificate
		key     crypto.Signer
		wantErr string
	}{
		{"ok with root", h.Root, h.Intermediate, h.IntermediateKey, ""},
		{"ok without root", nil, h.Intermediate, h.IntermediateKey, ""},
		{"mismatched key", h.Root, h.Intermediate, other.IntermediateKey, "does not match"},
		{"root key for intermediate", h.Root, h.Intermediate, h.RootKey, "does not match"},
		{"wrong root", other.Root, h.Intermediate, h.IntermediateKey, "does not match root subject"},
		{"same-named wrong root", sameName.Root, h.Intermediate, h.IntermediateKey, "does not chain to root"},
		{"leaf as intermediate", h.Root, leaf.Cert, leafKey, "is not a CA"},
		{"no keyCertSign", h.Root, noSign, noSignKey, "keyCertSign"},
		{"nil intermediate", h.Root, nil, h.IntermediateKey, "intermediate certificate is missing"},
		{"nil key", h.Root, h.Intermediate, nil, "private key is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadHierarchy(tt.root, tt.inter, tt.key, Use{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("LoadHierarchy: got %v, want nil", err)
				}
				if got.RootKey != nil || got.Root != tt.root || got.Intermediate != tt.inter {
					t.Errorf("LoadHierarchy: got %+v, want root, intermediate and no root key", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("LoadHierarchy: got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}
