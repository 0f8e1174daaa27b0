// SPDX-License-Identifier: Apache-2.0

//go:build pkcs11

package ca

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// newEd25519Token makes a SoftHSM2 token of the test's own holding a
// P-256 key pair (label "int", id 01, crypto11's), an Ed25519 pair made
// in the token by pkcs11-tool (label "log", id 02: CKA_EC_POINT a DER
// OCTET STRING) and an imported one (label "imported", id 03: the raw 32
// bytes), and returns the token's config for "log" and both public keys.
func newEd25519Token(t *testing.T) (PKCS11Config, ed25519.PublicKey, ed25519.PublicKey) {
	t.Helper()
	tok, pc := newToken(t)
	gen, err := tok.GenerateEd25519("log", "02")
	if err != nil {
		t.Fatalf("GenerateEd25519: %v", err)
	}
	imported, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.ImportKey(priv, "imported", "03"); err != nil {
		t.Fatalf("importing an Ed25519 key: %v", err)
	}
	pc.KeyLabel = "log"
	return pc, gen, imported
}

// openLogSigner opens pc as the log's key, closed at the test's end.
func openLogSigner(t *testing.T, pc PKCS11Config) Signer {
	t.Helper()
	s, err := OpenSigner("transparency.signer", SignerConfig{Type: SignerPKCS11, PKCS11: pc}, "")
	if err != nil {
		t.Fatalf("OpenSigner: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// signEd25519 signs msg with s (pure Ed25519) and checks the signature
// with ed25519.Verify against want, which must be s's public key.
func signEd25519(t *testing.T, s crypto.Signer, want ed25519.PublicKey, msg string) {
	t.Helper()
	pub, ok := s.Public().(ed25519.PublicKey)
	if !ok || !pub.Equal(want) {
		t.Fatalf("Public() = %T %x, want the token's Ed25519 key %x", s.Public(), s.Public(), want)
	}
	sig, err := s.Sign(rand.Reader, []byte(msg), crypto.Hash(0))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if !ed25519.Verify(want, []byte(msg), sig) {
		t.Fatal("the token's Ed25519 signature does not verify")
	}
}

// TestPKCS11SignerEd25519: an Ed25519 key pair in the token (made in it,
// or imported) is found by label or id and signs pure Ed25519 with
// CKM_EDDSA, its signatures verifying with ed25519.Verify; hashed or
// Ed25519ctx options are refused, saying why, without finding the key
// again; a wrong label or id is an error naming it.
func TestPKCS11SignerEd25519(t *testing.T) {
	pc, gen, imported := newEd25519Token(t)
	s := openLogSigner(t, pc)
	signEd25519(t, s, gen, "checkpoint body\n")

	byID := pc
	byID.KeyLabel, byID.KeyID = "", "02"
	signEd25519(t, openLogSigner(t, byID), gen, "by id")
	both := pc
	both.KeyLabel, both.KeyID = "imported", "03"
	signEd25519(t, openLogSigner(t, both), imported, "raw CKA_EC_POINT")

	digest := sha256.Sum256([]byte("m"))
	for _, opts := range []crypto.SignerOpts{crypto.SHA256, &ed25519.Options{Hash: crypto.SHA512}, &ed25519.Options{Context: "ctx"}} {
		_, err := s.Sign(rand.Reader, digest[:], opts)
		if err == nil || !errors.Is(err, errSignerOpts) || !strings.Contains(err.Error(), "pure Ed25519") || !strings.Contains(err.Error(), "transparency.signer") {
			t.Errorf("Sign with %#v: %v, want a refusal naming the key and pure Ed25519", opts, err)
		}
	}
	signEd25519(t, s, gen, "still signing after the refusals")

	for _, tt := range []struct {
		name string
		edit func(*PKCS11Config)
		want []string
	}{
		{"unknown label", func(c *PKCS11Config) { c.KeyLabel = "no-such-log-key" }, []string{"finding the key", `"no-such-log-key"`}},
		{"label and wrong id", func(c *PKCS11Config) { c.KeyID = "0a" }, []string{"finding the key", `"log"`, `"0a"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := pc
			tt.edit(&c)
			s, err := OpenSigner("transparency.signer", SignerConfig{Type: SignerPKCS11, PKCS11: c}, "")
			if err == nil {
				s.Close()
				t.Fatal("OpenSigner succeeded")
			}
			for _, w := range append([]string{"transparency.signer", "pkcs11 signer"}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestPKCS11SignerEd25519AndECDSA: an Ed25519 key (miekg/pkcs11) and a
// P-256 key (crypto11) of one module are open in one process, in either
// order, and each keeps signing once the other is closed: one
// C_Initialize, shared, and no C_Finalize under a key still in use.
func TestPKCS11SignerEd25519AndECDSA(t *testing.T) {
	pc, gen, _ := newEd25519Token(t)
	ecCfg := pc
	ecCfg.KeyLabel = "int"
	digest := sha256.Sum256([]byte("tbs"))
	signECDSA := func(s crypto.Signer) {
		t.Helper()
		sig, err := s.Sign(rand.Reader, digest[:], crypto.SHA256)
		if err != nil {
			t.Fatalf("ECDSA Sign: %v", err)
		}
		if !ecdsa.VerifyASN1(s.Public().(*ecdsa.PublicKey), digest[:], sig) {
			t.Fatal("the ECDSA signature does not verify")
		}
	}

	ed := openLogSigner(t, pc)
	ec := openLogSigner(t, ecCfg)
	if _, ok := ec.Public().(*ecdsa.PublicKey); !ok || ec.Public().(*ecdsa.PublicKey).Curve != elliptic.P256() {
		t.Fatalf("the crypto11 key's public key is a %T, want P-256", ec.Public())
	}
	signEd25519(t, ed, gen, "both open")
	signECDSA(ec)
	if err := ed.Close(); err != nil {
		t.Fatalf("closing the Ed25519 key: %v", err)
	}
	signECDSA(ec)

	ec2 := openLogSigner(t, ecCfg)
	ed2 := openLogSigner(t, pc)
	if err := ec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ec2.Close(); err != nil {
		t.Fatal(err)
	}
	signEd25519(t, ed2, gen, "the ECDSA keys closed")
}

// TestPKCS11SignerEd25519Concurrent: goroutines signing at once share
// the key's one session in turn, and every signature verifies.
func TestPKCS11SignerEd25519Concurrent(t *testing.T) {
	pc, gen, _ := newEd25519Token(t)
	s := openLogSigner(t, pc)
	const workers, each = 4, 8
	errs := make(chan error, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				msg := []byte(fmt.Sprintf("worker %d message %d", w, i))
				sig, err := s.Sign(rand.Reader, msg, crypto.Hash(0))
				if err == nil && !ed25519.Verify(gen, msg, sig) {
					err = fmt.Errorf("the signature of %q does not verify", msg)
				}
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestPKCS11SignerEd25519TokenRemoved: while the token is gone Sign
// fails as ErrSignerUnavailable; once it is back the same signer finds
// its Ed25519 key again and signs, as pkcs11Key does for crypto11's.
func TestPKCS11SignerEd25519TokenRemoved(t *testing.T) {
	pc, gen, _ := newEd25519Token(t)
	s := openLogSigner(t, pc)
	signEd25519(t, s, gen, "before")
	dir := filepath.Join(os.Getenv("SOFTHSM2_CONF"), "..", "tokens")
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(rand.Reader, []byte("gone"), crypto.Hash(0)); !errors.Is(err, ErrSignerUnavailable) || !strings.Contains(err.Error(), "transparency.signer") {
		t.Fatalf("Sign with the token gone: %v, want ErrSignerUnavailable naming the key", err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	signEd25519(t, s, gen, "after")

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(rand.Reader, []byte("closed"), crypto.Hash(0)); !errors.Is(err, ErrSignerUnavailable) {
		t.Fatalf("Sign after Close: %v, want ErrSignerUnavailable", err)
	}
}

// TestParseEdwardsPoint: CKA_EC_POINT as the raw 32 bytes or their DER
// OCTET STRING is the key; anything else is refused with its length.
func TestParseEdwardsPoint(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"raw": pub, "DER": append([]byte{0x04, 0x20}, pub...)} {
		got, err := parseEdwardsPoint(b)
		if err != nil || !got.Equal(pub) {
			t.Errorf("%s: %x, %v; want %x", name, got, err, pub)
		}
	}
	for name, b := range map[string][]byte{
		"short":          pub[:31],
		"DER of 31":      append([]byte{0x04, 0x1f}, pub[:31]...),
		"trailing bytes": append(append([]byte{0x04, 0x20}, pub...), 0),
		"bit string":     append([]byte{0x03, 0x21, 0x00}, pub...),
	} {
		if _, err := parseEdwardsPoint(b); err == nil || !strings.Contains(err.Error(), "CKA_EC_POINT is") {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
}
