// SPDX-License-Identifier: Apache-2.0

//go:build pkcs11

package server

import (
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/softhsm"
)

// hsmIntermediate makes a hierarchy whose intermediate key is in a
// SoftHSM2 token of the test's own, and returns the ca.intermediate
// block that names it (the chain in a file, the key in the token), and
// the token.
func hsmIntermediate(t *testing.T) (IntermediateConfig, *softhsm.Token) {
	t.Helper()
	tok := softhsm.ForTest(t, "weir-e2e", "4321")
	h, err := ca.GenerateHierarchy("HSM Test", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.ImportKey(h.IntermediateKey, "weir-intermediate", "0a"); err != nil {
		t.Fatal(err)
	}
	certPath := filepath.Join(t.TempDir(), "intermediate.pem")
	if err := os.WriteFile(certPath, append(ca.EncodeCertPEM(h.Intermediate.Raw), ca.EncodeCertPEM(h.Root.Raw)...), 0o644); err != nil {
		t.Fatal(err)
	}
	pinFile := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(pinFile, []byte(tok.PIN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return IntermediateConfig{CertFile: certPath, Signer: ca.SignerConfig{Type: ca.SignerPKCS11, PKCS11: ca.PKCS11Config{
		Module: tok.Module, TokenLabel: tok.Label, KeyLabel: "weir-intermediate", PIN: ca.SecretSource{File: pinFile}}}}, tok
}

// TestPKCS11Issuance: x/crypto/acme gets a certificate from a weir whose
// intermediate key is in a SoftHSM2 token; a wrong PIN or a missing
// module stops New with an error naming the key and the cause.
func TestPKCS11Issuance(t *testing.T) {
	ic, _ := hsmIntermediate(t)
	t.Setenv("WEIR_TEST_WRONG_PIN", "0000")
	for _, tt := range []struct {
		name string
		edit func(*IntermediateConfig)
		want string
	}{
		{"wrong PIN", func(c *IntermediateConfig) { c.Signer.PKCS11.PIN = ca.SecretSource{Env: "WEIR_TEST_WRONG_PIN"} }, "wrong PIN"},
		{"missing module", func(c *IntermediateConfig) { c.Signer.PKCS11.Module = "/nonexistent/libsofthsm2.so" }, "/nonexistent/libsofthsm2.so"},
	} {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		cfg.CA.Intermediate = ic
		tt.edit(&cfg.CA.Intermediate)
		s, err := New(t.Context(), cfg, Options{})
		if err == nil {
			s.Close()
			t.Fatalf("%s: New started", tt.name)
		}
		if !strings.Contains(err.Error(), "ca.intermediate (pkcs11 signer)") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want it to name ca.intermediate and %q", tt.name, err, tt.want)
		}
	}
	e := startEnv(t, func(c *Config) { c.CA.Intermediate = ic })
	ctx, _, c, _ := e.Registered(t)
	chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "hsm.weir.test"})
	e.VerifyChain(chain, "hsm.weir.test")
}

// TestPKCS11TokenRemovedWhileServing: with the token gone (its directory
// moved away), finalize answers 503 serverInternal with a Retry-After
// and the order stays processing; with the token back, the order becomes
// valid with its certificate, without a restart.
func TestPKCS11TokenRemovedWhileServing(t *testing.T) {
	ic, tok := hsmIntermediate(t)
	e := startEnv(t, func(c *Config) { c.CA.Intermediate = ic; c.Challenges.Timeout = time.Second })
	ctx, key, c, acct := e.Registered(t)
	url, o := e.readyProfileOrder(ctx, c, acct.URI, "", "removed.weir.test")

	dir := filepath.Join(tok.Dir, "tokens")
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	body := acmeenv.MarshalJSON(t, map[string]string{"csr": base64.RawURLEncoding.EncodeToString(acmeenv.CSRFor(t, acmeenv.NewKey(t), "removed.weir.test"))})
	res := e.PostJWS(key, o.Finalize, body, acmeenv.SignOpts{KID: acct.URI})
	if typ, _ := res.Problem(); res.Status != http.StatusServiceUnavailable || typ != string(acme.ProbServerInternal) || res.Header.Get("Retry-After") == "" {
		t.Fatalf("finalize with the token gone: %d %s Retry-After %q: %s", res.Status, typ, res.Header.Get("Retry-After"), res.Body)
	}
	if got := e.getOrder(key, acct.URI, url); got.Status != "processing" {
		t.Fatalf("order with the token gone: %+v, want processing", got)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(e.srv.svc.Config().ValidationLease + 15*time.Second)
	got := e.getOrder(key, acct.URI, url)
	for got.Status == "processing" && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		got = e.getOrder(key, acct.URI, url)
	}
	if got.Status != "valid" || got.Certificate == "" {
		t.Fatalf("order after the token came back: %+v, want valid with a certificate", got)
	}
}
