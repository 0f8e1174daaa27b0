// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
)

// TestRootCRL: an intermediate is revoked on the root's CRL. The
// intermediate weir generates names the root CRL on the plain-HTTP
// listener, and the first root CRL (signed at generation, listing
// nothing) is served there; a second intermediate, signed in the root's
// ceremony, names it too and becomes the active issuer. The root CRL
// ceremony then revokes the retired first intermediate into the data
// directory's file, which weir serves within its poll and on /metrics.
// openssl verify -crl_check_all, with the root CRL and both
// intermediates' CRLs as weir serves them, refuses the retired one's
// leaf (certificate revoked) and accepts the active one's.
func TestRootCRL(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not installed")
	}
	dd, work := t.TempDir(), t.TempDir()
	rootFile, rootKey := dataPath(dd, fileCARoot), RootKey{KeyFile: dataPath(dd, fileCARootKey)}
	var (
		oldLeaf, oldInter *x509.Certificate
		firstURL          string // the root CRL's URL on the first server
	)
	t.Run("default issuer", func(t *testing.T) {
		e := startEnv(t, func(c *Config) { c.DataDir = dd })
		url := e.artefacts + "/ca/root-crl.der"
		firstURL = url
		oldInter = e.srv.svc.CA().Hierarchy().Intermediate
		if dp := oldInter.CRLDistributionPoints; len(dp) != 1 || dp[0] != url {
			t.Errorf("the generated intermediate's CRL distribution points %v, want [%s]", dp, url)
		}
		rl, err := ca.ParseRootCRL(acmeenv.PlainGet(t, "GET", url).Body, e.srv.caRoot())
		if err != nil || rl.Number.Int64() != 1 || len(rl.RevokedCertificateEntries) != 0 {
			t.Fatalf("the first root CRL at %s: %v, %+v; want number 1, no entry", url, err, rl)
		}
		ctx, _, c, _ := e.Registered(t)
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("retired.weir.test")...)
		oldLeaf = e.VerifyChain(chain, "retired.weir.test")

		// The root's ceremony: the intermediate r2, naming the root CRL.
		csr, err := NewIntermediateKey("weir Intermediate CA R2", "weir", filepath.Join(work, "r2-key.pem"), "")
		if err != nil {
			t.Fatal(err)
		}
		signed, err := SignIntermediateCSR(rootFile, rootKey, csr, time.Now(), rootCRLURL(e.cfg))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, "r2.pem"), signed, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := AddIssuer(t.Context(), e.cfg, "r2", filepath.Join(work, "r2.pem"), filepath.Join(work, "r2-key.pem"), time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("r2 active, default revoked", func(t *testing.T) {
		e := startEnv(t, func(c *Config) {
			c.DataDir, c.CA.Issuers, c.CA.ActiveIssuer = dd, []IssuerConfig{{ID: "r2"}}, "r2"
		})
		ctx, _, c, _ := e.Registered(t)
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.DomainIDs("active.weir.test")...)
		newLeaf := e.VerifyChain(chain, "active.weir.test")
		newInter, err := x509.ParseCertificate(chain[1])
		if err != nil {
			t.Fatal(err)
		}
		url := e.artefacts + "/ca/root-crl.der"
		if dp := newInter.CRLDistributionPoints; len(dp) != 1 || dp[0] != firstURL {
			t.Errorf("r2's CRL distribution points %v, want [%s]", dp, firstURL)
		}

		// The root CRL's ceremony, into the file weir serves.
		writePEM(t, filepath.Join(work, "default.pem"), "CERTIFICATE", oldInter.Raw)
		signing, err := SignRootCRL(rootFile, rootKey, dataPath(dd, fileCARootCRL), []string{filepath.Join(work, "default.pem")}, "keyCompromise", 0, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if signing.Number.Int64() != 2 || len(signing.Added) != 1 || signing.Listed != 1 {
			t.Fatalf("the root CRL signing: %+v, want number 2 and the one intermediate", signing)
		}
		var arl []byte
		for i := 0; ; i++ {
			arl = acmeenv.PlainGet(t, "GET", url).Body
			if rl, err := ca.ParseRootCRL(arl, e.srv.caRoot()); err == nil && rl.Number.Int64() == 2 {
				break
			}
			if i == 100 {
				t.Fatalf("weir does not serve the new root CRL at %s 10 s after it was written", url)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if res := e.Get(t, e.Base+"/ca/root-crl.der"); string(res.Body) != string(arl) {
			t.Error("the ACME listener does not serve the root CRL the plain-HTTP one does")
		}
		if got := systest.ScrapeHandler(t, e.srv.metrics.Handler()).Get("weir_root_crl_next_update_timestamp_seconds"); got != float64(signing.NextUpdate.Unix()) {
			t.Errorf("weir_root_crl_next_update_timestamp_seconds = %v, want %d", got, signing.NextUpdate.Unix())
		}

		// What a relying party checking every CA of the chain concludes.
		writePEM(t, filepath.Join(work, "arl.pem"), "X509 CRL", arl)
		writePEM(t, filepath.Join(work, "default-crl.pem"), "X509 CRL", acmeenv.PlainGet(t, "GET", e.artefacts+"/ca/crl.der").Body)
		writePEM(t, filepath.Join(work, "r2-crl.pem"), "X509 CRL", acmeenv.PlainGet(t, "GET", e.artefacts+"/crl/r2").Body)
		writePEM(t, filepath.Join(work, "r2-inter.pem"), "CERTIFICATE", newInter.Raw)
		verify := func(leaf *x509.Certificate, inter string) (string, error) {
			writePEM(t, filepath.Join(work, "leaf.pem"), "CERTIFICATE", leaf.Raw)
			out, err := exec.Command(openssl, "verify", "-crl_check_all", "-CAfile", rootFile, "-untrusted", filepath.Join(work, inter),
				"-CRLfile", filepath.Join(work, "arl.pem"), "-CRLfile", filepath.Join(work, "default-crl.pem"), "-CRLfile", filepath.Join(work, "r2-crl.pem"),
				filepath.Join(work, "leaf.pem")).CombinedOutput()
			return string(out), err
		}
		if out, err := verify(oldLeaf, "default.pem"); err == nil || !strings.Contains(out, "certificate revoked") {
			t.Errorf("openssl verify -crl_check_all of the retired intermediate's leaf: %v\n%s\nwant it refused: certificate revoked", err, out)
		}
		if out, err := verify(newLeaf, "r2-inter.pem"); err != nil || !strings.Contains(out, ": OK") {
			t.Errorf("openssl verify -crl_check_all of the active intermediate's leaf: %v\n%s\nwant OK", err, out)
		}
	})
}

// writePEM writes der to path as one PEM block of type typ.
func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRootCRLRefused: weir serves only a root CRL that the root signed and
// that is not past its nextUpdate. A reload naming another (one signed by
// the intermediate, one expired) is refused, and so is a changed file, and
// the one served stays. A start with one the root did not sign is
// refused, naming the key; one past its nextUpdate is served with an
// error (startRootCRL), and a reload that keeps it is not refused. One
// close to its nextUpdate is served with a warning.
func TestRootCRLRefused(t *testing.T) {
	e, logs := startLoggedEnv(t, nil)
	h := e.srv.caKey
	served := acmeRootCRL(t, e)
	rootKey, err := ca.OpenSigner("the root key", ca.SignerConfig{}, dataPath(e.cfg.DataDir, fileCARootKey))
	if err != nil {
		t.Fatal(err)
	}
	defer rootKey.Close()
	work := t.TempDir()
	write := func(name string, der []byte) string {
		t.Helper()
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, der, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	byIntermediate, err := e.srv.svc.CA().CRL(nil, big.NewInt(1), time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	expired, _, err := ca.SignRootCRL(h.Root, rootKey, ca.RootCRLRequest{Now: time.Now().Add(-2 * time.Hour), Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		der  []byte
		want string
	}{
		"signed by the intermediate": {byIntermediate, "not by the root"},
		"past its nextUpdate":        {expired, "past its nextUpdate"},
	} {
		cfg := e.cfg
		cfg.CA.RootCRLFile = write(strings.ReplaceAll(name, " ", "-")+".der", tc.der)
		e.writeConfig(cfg)
		if err := e.srv.reload("test"); err == nil || !strings.Contains(err.Error(), "ca.root-crl-file") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reload with a root CRL %s: err = %v, want a refusal naming ca.root-crl-file, %q", name, err, tc.want)
		}
		if got := acmeRootCRL(t, e); string(got) != string(served) {
			t.Errorf("after the refused reload with a root CRL %s, another root CRL is served", name)
		}
		rc, err := startRootCRL(e.srv.log, cfg, h.Root, time.Now())
		switch {
		case name == "past its nextUpdate" && (err != nil || rc == nil || string(rc.der) != string(tc.der)):
			t.Errorf("a start with a root CRL %s: %v, %v; want it served", name, rc, err)
		case name != "past its nextUpdate" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("a start with a root CRL %s: err = %v, want %q", name, err, tc.want)
		}
	}
	if len(logs.lines("serving the root's CRL although it is past its nextUpdate")) != 1 {
		t.Errorf("the start with a root CRL past its nextUpdate is not logged as an error once:\n%s", logs.b.String())
	}
	// The served file changed to one the root did not sign: refused.
	e.writeConfig(e.cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(dataPath(e.cfg.DataDir, fileCARootCRL), byIntermediate, 0o644); err != nil {
		t.Fatal(err)
	}
	var refused [32]byte
	e.srv.refreshRootCRL(&refused)
	if got := acmeRootCRL(t, e); string(got) != string(served) {
		t.Error("a root CRL file changed to one the root did not sign is served")
	}
	if len(logs.lines("the root's CRL was refused", "not by the root")) != 1 {
		t.Errorf("the refused file is not logged once:\n%s", logs.b.String())
	}
	// One valid for 10 more days: served, with a warning.
	soon, _, err := ca.SignRootCRL(h.Root, rootKey, ca.RootCRLRequest{Validity: 10 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(dataPath(e.cfg.DataDir, fileCARootCRL), soon, 0o644); err != nil {
		t.Fatal(err)
	}
	e.srv.refreshRootCRL(&refused)
	if got := acmeRootCRL(t, e); string(got) != string(soon) {
		t.Error("the new root CRL is not served after its file changed")
	}
	if len(logs.lines("passes its nextUpdate soon", "weir ca sign-root-crl")) == 0 {
		t.Errorf("no warning for a root CRL 10 days from its nextUpdate:\n%s", logs.b.String())
	}
}

// acmeRootCRL is the root CRL e's ACME listener serves (the reload
// tests' server has no plain-HTTP listener).
func acmeRootCRL(t *testing.T, e *testEnv) []byte {
	t.Helper()
	res := e.Get(t, e.Base+"/ca/root-crl.der")
	if res.Status != 200 {
		t.Fatalf("GET /ca/root-crl.der: %d", res.Status)
	}
	return res.Body
}

// TestRootCRLStaleAtStart: a weir whose root CRL passed its nextUpdate
// while it was stopped starts and serves it (startRootCRL), and a reload
// that keeps it is not refused for it.
func TestRootCRLStaleAtStart(t *testing.T) {
	e := startEnv(t, nil)
	rootKey, err := ca.OpenSigner("the root key", ca.SignerConfig{}, dataPath(e.cfg.DataDir, fileCARootKey))
	if err != nil {
		t.Fatal(err)
	}
	defer rootKey.Close()
	stale, _, err := ca.SignRootCRL(e.srv.caKey.Root, rootKey, ca.RootCRLRequest{Now: time.Now().Add(-2 * time.Hour), Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(dataPath(e.cfg.DataDir, fileCARootCRL), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	e = e.restart(t, nil)
	if got := acmeRootCRL(t, e); string(got) != string(stale) {
		t.Error("the root CRL past its nextUpdate is not served after the start")
	}
	e.writeConfig(e.cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Errorf("a reload that keeps the root CRL served since the start: %v", err)
	}
}
