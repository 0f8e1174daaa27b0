// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCertPEMRoundTrip(t *testing.T) {
	h := newTestHierarchy(t)
	var bundle []byte
	bundle = append(bundle, EncodeCertPEM(h.Intermediate.Raw)...)
	bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{1}})...)
	bundle = append(bundle, EncodeCertPEM(h.Root.Raw)...)
	path := filepath.Join(t.TempDir(), "bundle.pem")
	if err := os.WriteFile(path, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ParseCertsPEM(data)
	if err != nil {
		t.Fatalf("ParseCertsPEM: %v", err)
	}
	if got, want := len(certs), 2; got != want {
		t.Fatalf("ParseCertsPEM: got %d certificates, want %d", got, want)
	}
	if !certs[0].Equal(h.Intermediate) || !certs[1].Equal(h.Root) {
		t.Errorf("ParseCertsPEM: got %q, %q; want intermediate then root", certs[0].Subject, certs[1].Subject)
	}
}

func TestParseCertsPEMErrors(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no CERTIFICATE"},
		{"only key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}), "no CERTIFICATE"},
		{"garbage cert", EncodeCertPEM([]byte("not DER")), "parsing certificate 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCertsPEM(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseCertsPEM: got %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestKeyPEMRoundTrip(t *testing.T) {
	ec := newECKey(t, elliptic.P256())
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024) // size is irrelevant to PEM handling
	if err != nil {
		t.Fatalf("rsa.GenerateKey: %v", err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("ed25519.GenerateKey: %v", err)
	}
	ecDER, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := func(k crypto.Signer) []byte {
		t.Helper()
		b, err := EncodeKeyPEM(k)
		if err != nil {
			t.Fatalf("EncodeKeyPEM(%T): %v", k, err)
		}
		if !strings.HasPrefix(string(b), "-----BEGIN PRIVATE KEY-----") {
			t.Fatalf("EncodeKeyPEM(%T): got %q, want a PRIVATE KEY block", k, b)
		}
		return b
	}
	tests := []struct {
		name string
		key  crypto.Signer
		data []byte
	}{
		{"PKCS#8 ECDSA", ec, pkcs8(ec)},
		{"PKCS#8 RSA", rsaKey, pkcs8(rsaKey)},
		{"PKCS#8 Ed25519", ed, pkcs8(ed)},
		{"SEC 1 with EC PARAMETERS", ec, append(
			pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{6, 8, 42, 134, 72, 206, 61, 3, 1, 7}}),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER})...)},
		{"PKCS#1", rsaKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)})},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "key"+string(rune('a'+i))+".pem")
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseKeyPEM(data)
			if err != nil {
				t.Fatalf("ParseKeyPEM: %v", err)
			}
			pub := got.Public().(interface{ Equal(crypto.PublicKey) bool })
			if !pub.Equal(tt.key.Public()) {
				t.Errorf("ParseKeyPEM: got key %T not matching original %T", got, tt.key)
			}
		})
	}
}

func TestParseKeyPEMErrors(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no private key"},
		{"certificate only", EncodeCertPEM([]byte{1}), "no private key"},
		{"encrypted PKCS#8", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}), "encrypted"},
		{"legacy encrypted", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00"}, Bytes: []byte{1}}), "encrypted"},
		{"garbage", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")}), "parsing PRIVATE KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseKeyPEM(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseKeyPEM: got %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestEncodeKeyPEMNil(t *testing.T) {
	if _, err := EncodeKeyPEM(nil); err == nil {
		t.Error("EncodeKeyPEM(nil): got nil error, want error")
	}
}
