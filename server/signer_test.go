// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	xacme "golang.org/x/crypto/acme"
)

// failingKey is the intermediate's key behind a switch: while down, Sign
// fails as a PKCS#11 session does when its token is removed.
type failingKey struct {
	ca.Signer
	down atomic.Bool
}

func (k *failingKey) Sign(r io.Reader, d []byte, o crypto.SignerOpts) ([]byte, error) {
	if k.down.Load() {
		return nil, errors.New("pkcs11: 0x32: CKR_DEVICE_REMOVED")
	}
	return k.Signer.Sign(r, d, o)
}

// withFailingKey makes the intermediate keys the test's servers open
// switchable; the test must not be parallel (keyBetween is global).
func withFailingKey(t *testing.T) *failingKey {
	fk := &failingKey{}
	keep := keyBetween
	keyBetween = func(s ca.Signer) ca.Signer { fk.Signer = s; return fk }
	t.Cleanup(func() { keyBetween = keep })
	return fk
}

// TestFinalizeSignerUnavailable: while the CA's key fails, finalize
// answers 503 serverInternal with a Retry-After, nothing is stored, the
// order stays processing, and it becomes valid with its certificate once
// the key is back (a replica claims it when its lease ends).
func TestFinalizeSignerUnavailable(t *testing.T) {
	fk := withFailingKey(t)
	e := startEnv(t, func(c *Config) { c.Challenges.Timeout = time.Second })
	ctx, key, c, acct := e.Registered(t)
	url, o := e.readyProfileOrder(ctx, c, acct.URI, "", "hsm.weir.test")

	fk.down.Store(true)
	csr := acmeenv.CSRFor(t, acmeenv.NewKey(t), "hsm.weir.test")
	body := acmeenv.MarshalJSON(t, map[string]string{"csr": base64.RawURLEncoding.EncodeToString(csr)})
	res := e.PostJWS(key, o.Finalize, body, acmeenv.SignOpts{KID: acct.URI})
	typ, detail := res.Problem()
	if res.Status != http.StatusServiceUnavailable || typ != string(acme.ProbServerInternal) || res.Header.Get("Retry-After") == "" ||
		!strings.Contains(detail, "signing key is unavailable") {
		t.Fatalf("finalize with the key down: %d %s Retry-After %q: %s, want 503 serverInternal with a Retry-After", res.Status, typ, res.Header.Get("Retry-After"), res.Body)
	}
	if got := e.getOrder(key, acct.URI, url); got.Status != "processing" || got.Certificate != "" {
		t.Fatalf("order after the failed signing: %+v, want processing without a certificate", got)
	}
	if n := snapshotDB(t, e).Counts["certificates"]; n != 0 {
		t.Fatalf("%d certificates stored with the key down, want 0", n)
	}
	// A retry of the same finalize gets the processing order.
	if res := e.PostJWS(key, o.Finalize, body, acmeenv.SignOpts{KID: acct.URI}); res.Status != http.StatusOK {
		t.Fatalf("repeated finalize: %d %s, want 200 with the processing order", res.Status, res.Body)
	}

	fk.down.Store(false)
	lease := e.srv.svc.Config().ValidationLease
	deadline := time.Now().Add(lease + 15*time.Second)
	got := e.getOrder(key, acct.URI, url)
	for got.Status == "processing" && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		got = e.getOrder(key, acct.URI, url)
	}
	if got.Status != "valid" || got.Certificate == "" {
		t.Fatalf("order after the key came back: %+v, want valid with a certificate within the lease (%s) and a claim", got, lease)
	}
	if n := snapshotDB(t, e).Counts["certificates"]; n != 1 {
		t.Fatalf("%d certificates stored, want 1", n)
	}
}

// TestEncryptedIntermediate: weir serves with an encrypted intermediate
// key; a wrong or missing passphrase stops New with an error naming the
// key and its file.
func TestEncryptedIntermediate(t *testing.T) {
	h, err := ca.GenerateHierarchy("Enc Test", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyPEM, err := ca.EncodeEncryptedKeyPEM(h.IntermediateKey, []byte("s3cret pass"))
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, "int.pem"), filepath.Join(dir, "int-key.pem")
	chain := append(ca.EncodeCertPEM(h.Intermediate.Raw), ca.EncodeCertPEM(h.Root.Raw)...)
	if err := os.WriteFile(certPath, chain, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	encrypted := func(env string) func(*Config) {
		return func(c *Config) {
			c.CA.Intermediate = IntermediateConfig{CertFile: certPath, KeyFile: keyPath,
				Signer: ca.SignerConfig{Type: ca.SignerEncryptedFile, Passphrase: ca.SecretSource{Env: env}}}
		}
	}
	t.Setenv("WEIR_TEST_INT_PASS", "s3cret pass")
	t.Setenv("WEIR_TEST_INT_WRONG", "not it")
	for _, tt := range []struct{ env, want string }{
		{"WEIR_TEST_INT_WRONG", "wrong passphrase"},
		{"WEIR_TEST_INT_UNSET", "WEIR_TEST_INT_UNSET is not set"},
	} {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		encrypted(tt.env)(&cfg)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		s, err := New(t.Context(), cfg, Options{})
		if err == nil {
			s.Close()
			t.Fatalf("New with %s: started, want an error", tt.env)
		}
		for _, w := range []string{"ca.intermediate", tt.want} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New with %s: %v, want it to name %q", tt.env, err, w)
			}
		}
	}
	e := startEnv(t, encrypted("WEIR_TEST_INT_PASS"))
	ctx, _, c, _ := e.Registered(t)
	chainDER, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "enc.weir.test"})
	e.VerifyChain(chainDER, "enc.weir.test")
}

// TestIntermediateSignerConfig: ca.intermediate.signer is checked with
// the rest of the file, each problem under its key.
func TestIntermediateSignerConfig(t *testing.T) {
	for _, tt := range []struct {
		ic   IntermediateConfig
		want string
	}{
		{IntermediateConfig{Signer: ca.SignerConfig{Type: "kms"}}, `ca.intermediate.signer.type: "kms" is not a signer type`},
		{IntermediateConfig{Signer: ca.SignerConfig{Type: ca.SignerEncryptedFile}}, "ca.intermediate.signer.passphrase: set one of"},
		{IntermediateConfig{CertFile: "/c.pem", KeyFile: "/k.pem", Signer: ca.SignerConfig{Type: ca.SignerPKCS11,
			PKCS11: ca.PKCS11Config{Module: "/m.so", TokenLabel: "t", KeyLabel: "k", PIN: ca.SecretSource{Env: "PIN"}}}},
			"ca.intermediate.key-file: a pkcs11 key has no file"},
		{IntermediateConfig{CertFile: "/c.pem"}, "cert-file and key-file must both be set"},
	} {
		cfg := DefaultConfig()
		cfg.CA.Intermediate = tt.ic
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate(%+v): %v, want %q", tt.ic, err, tt.want)
		}
	}
}

// TestPKCS11ConfigInPureGoBuild: check-config's Validate names the build
// that has PKCS#11 when this one has not.
func TestPKCS11ConfigInPureGoBuild(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CA.Intermediate = IntermediateConfig{CertFile: "/c.pem", Signer: ca.SignerConfig{Type: ca.SignerPKCS11,
		PKCS11: ca.PKCS11Config{Module: "/m.so", TokenLabel: "t", KeyLabel: "k", PIN: ca.SecretSource{Env: "PIN"}}}}
	err := cfg.Validate()
	if ca.PKCS11Built {
		if err != nil {
			t.Fatalf("Validate in the PKCS#11 build: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "-tags pkcs11") {
		t.Fatalf("Validate in the pure-Go build: %v, want an error naming -tags pkcs11", err)
	}
}
