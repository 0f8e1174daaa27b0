// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"math/big"
	"strings"
	"testing"
)

func TestCheckKey(t *testing.T) {
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatalf("rsa.GenerateKey(1024): %v", err)
	}
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("rsa.GenerateKey(2048): %v", err)
	}
	hugeN := new(big.Int).Lsh(big.NewInt(1), 8200)
	hugeN.SetBit(hugeN, 0, 1)
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("ed25519.GenerateKey: %v", err)
	}

	tests := []struct {
		name    string
		policy  KeyPolicy
		pub     crypto.PublicKey
		wantErr string // "" means acceptable
	}{
		{"RSA 1024", KeyPolicy{}, &rsa1024.PublicKey, "RSA key of 1024 bits; at least 2048 required"},
		{"RSA 2048", KeyPolicy{}, &rsa2048.PublicKey, ""},
		{"RSA 8200", KeyPolicy{}, &rsa.PublicKey{N: hugeN, E: 65537}, "RSA key of 8201 bits; at most 8192 allowed"},
		{"RSA even exponent", KeyPolicy{}, &rsa.PublicKey{N: rsa2048.N, E: 4}, "exponent 4"},
		{"P-224", KeyPolicy{}, publicOf(newECKey(t, elliptic.P224())), "ECDSA key on curve P-224; only P-256 and P-384 allowed"},
		{"P-256", KeyPolicy{}, publicOf(newECKey(t, elliptic.P256())), ""},
		{"P-384", KeyPolicy{}, publicOf(newECKey(t, elliptic.P384())), ""},
		{"P-521", KeyPolicy{}, publicOf(newECKey(t, elliptic.P521())), "curve P-521"},
		{"Ed25519 disallowed", KeyPolicy{}, edPub, "Ed25519 keys are not allowed"},
		{"Ed25519 allowed", KeyPolicy{AllowEd25519: true}, edPub, ""},
		{"Ed25519 short", KeyPolicy{AllowEd25519: true}, edPub[:16], "Ed25519 key of 16 bytes"},
		{"nil", KeyPolicy{}, nil, "no public key"},
		{"private key", KeyPolicy{}, rsa2048, "unsupported key type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.CheckKey(tt.pub)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckKey: got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckKey: got nil, want error containing %q", tt.wantErr)
			}
			if !errors.Is(err, ErrBadKey) {
				t.Errorf("CheckKey: got %v, want it to wrap ErrBadKey", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("CheckKey: got %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}

	// The RSA-2048 key is also used to check RSA-specific issuance.
	t.Run("issue RSA leaf", func(t *testing.T) {
		c := newTestCA(t, testConfig(), testNow())
		iss, err := c.Issue(IssueRequest{PublicKey: &rsa2048.PublicKey, DNSNames: []string{"rsa.example.internal"}})
		if err != nil {
			t.Fatalf("Issue: %v", err)
		}
		if got, want := iss.Cert.KeyUsage, x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment; got != want {
			t.Errorf("KeyUsage: got %v, want %v", got, want)
		}
	})
}
