// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
)

func TestCheckCSRSignature(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr := func(key crypto.Signer, alg x509.SignatureAlgorithm) *x509.CertificateRequest {
		t.Helper()
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: []string{"a.test"}, SignatureAlgorithm: alg}, key)
		if err != nil {
			t.Fatalf("CreateCertificateRequest(%s): %v", alg, err)
		}
		c, err := x509.ParseCertificateRequest(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	broken := csr(ecKey, x509.ECDSAWithSHA256)
	broken.Signature[len(broken.Signature)-1] ^= 1
	// x509 cannot make an MD5 signature; the algorithm is refused before
	// any verification, so the field alone stands in for one.
	md5 := csr(rsaKey, x509.SHA256WithRSA)
	md5.SignatureAlgorithm = x509.MD5WithRSA
	unknown := csr(rsaKey, x509.SHA256WithRSA)
	unknown.SignatureAlgorithm = x509.UnknownSignatureAlgorithm

	tests := []struct {
		name    string
		csr     *x509.CertificateRequest
		wantErr string // "" means acceptable
	}{
		{"SHA256-RSA", csr(rsaKey, x509.SHA256WithRSA), ""},
		{"SHA384-RSA", csr(rsaKey, x509.SHA384WithRSA), ""},
		{"SHA512-RSA", csr(rsaKey, x509.SHA512WithRSA), ""},
		{"SHA256-RSAPSS", csr(rsaKey, x509.SHA256WithRSAPSS), ""},
		{"SHA512-RSAPSS", csr(rsaKey, x509.SHA512WithRSAPSS), ""},
		{"ECDSA-SHA256", csr(ecKey, x509.ECDSAWithSHA256), ""},
		{"ECDSA-SHA384", csr(ecKey, x509.ECDSAWithSHA384), ""},
		{"ECDSA-SHA512", csr(ecKey, x509.ECDSAWithSHA512), ""},
		{"Ed25519", csr(edKey, x509.PureEd25519), ""},
		{"SHA1-RSA", csr(rsaKey, x509.SHA1WithRSA), "signed with SHA1-RSA; accepted are SHA256-RSA"},
		{"ECDSA-SHA1", csr(ecKey, x509.ECDSAWithSHA1), "signed with ECDSA-SHA1"},
		{"MD5-RSA", md5, "signed with MD5-RSA"},
		{"unknown algorithm", unknown, "signed with an unknown signature algorithm"},
		{"bad signature", broken, "signature is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckCSRSignature(tt.csr)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrBadCSRSignature) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an ErrBadCSRSignature containing %q", err, tt.wantErr)
			}
		})
	}
}
