// SPDX-License-Identifier: Apache-2.0

//go:build pkcs11

package ca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/internal/softhsm"
)

// newToken makes a SoftHSM2 token of the test's own holding one P-256
// key pair (label "int", id 01), and points the module at it. Without
// softhsm2 it skips, but fails under CI=true.
func newToken(t *testing.T) (*softhsm.Token, PKCS11Config) {
	t.Helper()
	tok := softhsm.ForTest(t, "weir-test", "1234")
	if err := tok.ImportKey(newECKey(t, elliptic.P256()), "int", "01"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WEIR_TEST_PIN", tok.PIN)
	return tok, PKCS11Config{Module: tok.Module, TokenLabel: tok.Label, KeyLabel: "int", PIN: SecretSource{Env: "WEIR_TEST_PIN"}}
}

// TestPKCS11Signer: a key in a SoftHSM2 token signs certificates, found
// by label or id; a wrong PIN, a missing module, an unknown token or key
// is an error naming the key and the cause.
func TestPKCS11Signer(t *testing.T) {
	_, pc := newToken(t)
	s, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerPKCS11, PKCS11: pc}, "")
	if err != nil {
		t.Fatalf("OpenSigner: %v", err)
	}
	h := newTestHierarchy(t)
	// An intermediate for the token's key, signed by the test root.
	tmpl := *h.Intermediate
	tmpl.PublicKey, tmpl.Raw, tmpl.RawTBSCertificate, tmpl.SubjectKeyId = nil, nil, nil, nil
	der, err := x509.CreateCertificate(nil, &tmpl, h.Root, s.Public(), h.RootKey)
	if err != nil {
		t.Fatal(err)
	}
	inter, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := LoadHierarchy(h.Root, inter, s, Use{Now: testNow(), LeafEKUs: bothEKUs})
	if err != nil {
		t.Fatalf("LoadHierarchy with the token's key: %v", err)
	}
	c, err := New(testConfig(), hs, testNow)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := c.Issue(IssueRequest{PublicKey: newECKey(t, elliptic.P256()).Public(), DNSNames: []string{"hsm.example"}})
	if err != nil {
		t.Fatalf("Issue through the token: %v", err)
	}
	if err := iss.Cert.CheckSignatureFrom(inter); err != nil {
		t.Fatalf("the leaf's signature: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	byID := pc
	byID.KeyLabel, byID.KeyID = "", "01"
	s2, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerPKCS11, PKCS11: byID}, "")
	if err != nil {
		t.Fatalf("OpenSigner by key id: %v", err)
	}
	if !s2.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(s.Public()) {
		t.Error("the key found by id differs from the one found by label")
	}
	s2.Close()

	t.Setenv("WEIR_TEST_BAD_PIN", "9999")
	wrong := func(f func(*PKCS11Config)) PKCS11Config { c := pc; f(&c); return c }
	for _, tt := range []struct {
		name string
		c    PKCS11Config
		want []string
	}{
		{"wrong PIN", wrong(func(c *PKCS11Config) { c.PIN.Env = "WEIR_TEST_BAD_PIN" }), []string{"wrong PIN", "CKR_PIN_INCORRECT"}},
		{"missing module", wrong(func(c *PKCS11Config) { c.Module = "/nonexistent/libpkcs11.so" }), []string{"/nonexistent/libpkcs11.so", "no such file"}},
		{"unknown token", wrong(func(c *PKCS11Config) { c.TokenLabel = "no-such-token" }), []string{"no-such-token", "no such token"}},
		{"unknown key", wrong(func(c *PKCS11Config) { c.KeyLabel = "nope" }), []string{"finding the key", "nope"}},
		{"unset PIN variable", wrong(func(c *PKCS11Config) { c.PIN.Env = "WEIR_TEST_NO_PIN" }), []string{"PIN", "WEIR_TEST_NO_PIN is not set"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerPKCS11, PKCS11: tt.c}, "")
			if err == nil {
				s.Close()
				t.Fatal("OpenSigner succeeded")
			}
			for _, w := range append([]string{"ca.intermediate", "pkcs11 signer"}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestPKCS11SignAfterClose: signing with a closed context is
// ErrSignerUnavailable, as a lost session is.
func TestPKCS11SignAfterClose(t *testing.T) {
	_, pc := newToken(t)
	s, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerPKCS11, PKCS11: pc}, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	digest := make([]byte, 32)
	if _, err := s.Sign(nil, digest, nil); !errors.Is(err, ErrSignerUnavailable) {
		t.Fatalf("Sign after Close: %v, want ErrSignerUnavailable", err)
	}
}

// TestPKCS11TokenRemoved: while the token is gone (its directory moved
// away) Sign fails as ErrSignerUnavailable; once it is back, the same
// signer finds its key again and signs, without a restart.
func TestPKCS11TokenRemoved(t *testing.T) {
	tok, pc := newToken(t)
	s, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerPKCS11, PKCS11: pc}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	digest := sha256.Sum256([]byte("tbs"))
	if _, err := s.Sign(nil, digest[:], crypto.SHA256); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	dir := filepath.Join(tok.Dir, "tokens")
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(nil, digest[:], crypto.SHA256); !errors.Is(err, ErrSignerUnavailable) || !strings.Contains(err.Error(), "ca.intermediate") {
		t.Fatalf("Sign with the token gone: %v, want ErrSignerUnavailable naming the key", err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	sig, err := s.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		t.Fatalf("Sign with the token back: %v", err)
	}
	if !ecdsa.VerifyASN1(s.Public().(*ecdsa.PublicKey), digest[:], sig) {
		t.Fatal("the signature made after the token came back does not verify")
	}
}

// BenchmarkSign is what one signature costs through each signer: a
// P-256 key in memory (the file signers) and in a SoftHSM2 token.
func BenchmarkSign(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tok := softhsm.ForTest(b, "weir-bench", "1234")
	if err := tok.ImportKey(key, "int", "01"); err != nil {
		b.Fatal(err)
	}
	b.Setenv("WEIR_TEST_PIN", tok.PIN)
	hsm, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerPKCS11, PKCS11: PKCS11Config{
		Module: tok.Module, TokenLabel: tok.Label, KeyLabel: "int", PIN: SecretSource{Env: "WEIR_TEST_PIN"}}}, "")
	if err != nil {
		b.Fatal(err)
	}
	defer hsm.Close()
	digest := sha256.Sum256([]byte("tbs"))
	for name, s := range map[string]crypto.Signer{"file": WrapSigner("file", key), "softhsm2": hsm} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Sign(rand.Reader, digest[:], crypto.SHA256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
