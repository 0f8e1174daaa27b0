// SPDX-License-Identifier: Apache-2.0

package ca

import (
	"crypto"
	"crypto/elliptic"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// writeKey writes data to a 0600 file in a temporary directory.
func writeKey(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// encryptedKeyFile writes key encrypted under pass and returns its path.
func encryptedKeyFile(t *testing.T, key crypto.Signer, pass string) string {
	t.Helper()
	pemBytes, err := EncodeEncryptedKeyPEM(key, []byte(pass))
	if err != nil {
		t.Fatalf("EncodeEncryptedKeyPEM: %v", err)
	}
	if !strings.Contains(string(pemBytes), "ENCRYPTED PRIVATE KEY") {
		t.Fatalf("encrypted key PEM lacks its block type:\n%s", pemBytes)
	}
	return writeKey(t, "int-key.pem", pemBytes)
}

// TestEncryptedFileSigner: an encrypted PKCS#8 key opens with its
// passphrase from a file, an environment variable or a systemd
// credential, and signs as the key it holds.
func TestEncryptedFileSigner(t *testing.T) {
	key := newECKey(t, elliptic.P256())
	path := encryptedKeyFile(t, key, "correct horse")
	passFile := writeKey(t, "pass", []byte("correct horse\n"))
	t.Setenv("WEIR_TEST_PASS", "correct horse")
	credDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(credDir, "int-pass"), []byte("correct horse"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CREDENTIALS_DIRECTORY", credDir)
	for name, src := range map[string]SecretSource{
		"file": {File: passFile}, "env": {Env: "WEIR_TEST_PASS"}, "credential": {Credential: "int-pass"},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerEncryptedFile, Passphrase: src}, path)
			if err != nil {
				t.Fatalf("OpenSigner: %v", err)
			}
			defer s.Close()
			if !key.PublicKey.Equal(s.Public()) {
				t.Fatalf("the opened key's public key differs from the one encrypted")
			}
		})
	}
}

// TestEncryptedFileSignerFailures: a wrong or missing passphrase, or a
// plaintext file under the encrypted type, is an error naming the key,
// its file and the cause.
func TestEncryptedFileSignerFailures(t *testing.T) {
	key := newECKey(t, elliptic.P256())
	path := encryptedKeyFile(t, key, "correct horse")
	plain, err := EncodeKeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	plainPath := writeKey(t, "plain.pem", plain)
	t.Setenv("WEIR_TEST_WRONG", "battery staple")
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	tests := []struct {
		name string
		src  SecretSource
		file string
		want []string
	}{
		{"wrong passphrase", SecretSource{Env: "WEIR_TEST_WRONG"}, path, []string{"ca.intermediate", path, "wrong passphrase"}},
		{"unset variable", SecretSource{Env: "WEIR_TEST_UNSET_VARIABLE"}, path, []string{"ca.intermediate", "WEIR_TEST_UNSET_VARIABLE is not set"}},
		{"missing file", SecretSource{File: filepath.Join(t.TempDir(), "nope")}, path, []string{"ca.intermediate", "nope", "no such file"}},
		{"no credentials directory", SecretSource{Credential: "int-pass"}, path, []string{"ca.intermediate", "CREDENTIALS_DIRECTORY is not set"}},
		{"plaintext key", SecretSource{Env: "WEIR_TEST_WRONG"}, plainPath, []string{"ca.intermediate", plainPath, "no ENCRYPTED PRIVATE KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenSigner("ca.intermediate", SignerConfig{Type: SignerEncryptedFile, Passphrase: tt.src}, tt.file)
			if err == nil {
				s.Close()
				t.Fatal("OpenSigner succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestFileSignerMode: a plaintext key others can read is refused.
func TestFileSignerMode(t *testing.T) {
	plain, err := EncodeKeyPEM(newECKey(t, elliptic.P256()))
	if err != nil {
		t.Fatal(err)
	}
	p := writeKey(t, "k.pem", plain)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSigner("ca.intermediate", SignerConfig{}, p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("OpenSigner of a 0644 key: %v, want a chmod 600 hint", err)
	}
}

func TestSignerConfigValidate(t *testing.T) {
	slot := 0
	tests := []struct {
		name string
		c    SignerConfig
		want string // "" = valid
	}{
		{"zero", SignerConfig{}, ""},
		{"encrypted", SignerConfig{Type: SignerEncryptedFile, Passphrase: SecretSource{Env: "X"}}, ""},
		{"encrypted without passphrase", SignerConfig{Type: SignerEncryptedFile}, "passphrase: set one of"},
		{"two sources", SignerConfig{Type: SignerEncryptedFile, Passphrase: SecretSource{Env: "X", File: "/f"}}, "only one of"},
		{"credential path", SignerConfig{Type: SignerEncryptedFile, Passphrase: SecretSource{Credential: "a/b"}}, "not a path"},
		{"passphrase on file", SignerConfig{Passphrase: SecretSource{Env: "X"}}, "only the encrypted-file type"},
		{"unknown", SignerConfig{Type: "kms"}, `"kms" is not a signer type`},
		{"pkcs11", SignerConfig{Type: SignerPKCS11, PKCS11: PKCS11Config{Module: "/m.so", TokenLabel: "t", KeyLabel: "k", PIN: SecretSource{Env: "P"}}}, ""},
		{"pkcs11 slot and label", SignerConfig{Type: SignerPKCS11, PKCS11: PKCS11Config{Module: "/m.so", TokenLabel: "t", Slot: &slot, KeyID: "01", PIN: SecretSource{Env: "P"}}}, "exactly one of token-label and slot"},
		{"pkcs11 bad id", SignerConfig{Type: SignerPKCS11, PKCS11: PKCS11Config{Module: "/m.so", Slot: &slot, KeyID: "zz", PIN: SecretSource{Env: "P"}}}, "key-id"},
		{"pkcs11 bare", SignerConfig{Type: SignerPKCS11}, "pkcs11.module"},
		{"pkcs11 block on file", SignerConfig{PKCS11: PKCS11Config{Module: "/m.so"}}, "only the pkcs11 type"},
	}
	for _, tt := range tests {
		err := tt.c.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

// flakyKey is a key whose Sign fails while down is set, as a token
// pulled out of its reader does.
type flakyKey struct {
	crypto.Signer
	down atomic.Bool
}

func (k *flakyKey) Sign(r io.Reader, d []byte, o crypto.SignerOpts) ([]byte, error) {
	if k.down.Load() {
		return nil, errors.New("CKR_DEVICE_REMOVED")
	}
	return k.Signer.Sign(r, d, o)
}

// TestIssueSignerUnavailable: a failure of the CA's key is
// ErrSignerUnavailable, naming the key, and the CA signs again once the
// key is back; a refused request is not.
func TestIssueSignerUnavailable(t *testing.T) {
	h := newTestHierarchy(t)
	fk := &flakyKey{Signer: h.IntermediateKey}
	h.IntermediateKey = fk
	c, err := New(testConfig(), h, testNow)
	if err != nil {
		t.Fatal(err)
	}
	req := IssueRequest{PublicKey: newECKey(t, elliptic.P256()).Public(), DNSNames: []string{"a.example"}}
	fk.down.Store(true)
	_, err = c.Issue(req)
	if !errors.Is(err, ErrSignerUnavailable) || !strings.Contains(err.Error(), "CKR_DEVICE_REMOVED") || !strings.Contains(err.Error(), "intermediate") {
		t.Fatalf("Issue with the key down: %v, want ErrSignerUnavailable naming the key and the cause", err)
	}
	fk.down.Store(false)
	if _, err := c.Issue(req); err != nil {
		t.Fatalf("Issue with the key back: %v", err)
	}
	if _, err := c.Issue(IssueRequest{PublicKey: req.PublicKey}); err == nil || errors.Is(err, ErrSignerUnavailable) {
		t.Fatalf("Issue without names: %v, want a refusal that is not ErrSignerUnavailable", err)
	}
}
