// SPDX-License-Identifier: Apache-2.0

package system

import (
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	xacme "golang.org/x/crypto/acme"

	"github.com/weir-pki/weir/internal/acmeenv"
	"github.com/weir-pki/weir/internal/systest"
)

// revocable issues one certificate after the change, then revokes every
// certificate of the row, issued before the change or after it, and
// checks each on the CRL at its distribution point (checkRevoked).
func (m *changeRun) revocable(t *testing.T) {
	typ := m.row.afterType
	if typ == "" {
		typ = "http-01"
	}
	m.check(t, "issued after the change", func(t *testing.T) {
		c := m.issue(t, typ, afterName)
		if m.issuer != nil && !c.issuer.Equal(m.issuer) {
			t.Errorf("the certificate issued after the change is signed by %s, want the new intermediate %s", c.issuer.Subject, m.issuer.Subject)
		}
	})
	for _, c := range m.certs {
		m.check(t, c.name, func(t *testing.T) { m.checkRevoked(t, c) })
	}
}

// checkRevoked revokes c with its own key (RFC 8555 §7.6) and checks
// that the CRL served at the URL of its CRL distribution point lists it
// and is signed by c's own issuer, as Go reads it and as openssl does:
// `openssl crl -verify` with the issuer, and `openssl verify -crl_check`
// of the leaf with the issuer and the root, which must say it is revoked.
// startEnv's ca.crl-delay 0 makes the CRL on the read after the
// revocation, so nothing waits for the CRL updater.
func (m *changeRun) checkRevoked(t *testing.T, c *matrixCert) {
	if err := m.c.RevokeCert(t.Context(), c.key, c.leaf.Raw, xacme.CRLReasonKeyCompromise); err != nil {
		t.Fatalf("revoking %s with its key: %v", c.name, err)
	}
	dp := c.leaf.CRLDistributionPoints
	if len(dp) != 1 {
		t.Fatalf("%s has CRL distribution points %v, want one", c.name, dp)
	}
	crl := systest.FetchCRL(t, m.e.HTTP, dp[0], c.issuer)
	if !acmeenv.CRLLists(crl, c.leaf.SerialNumber) {
		t.Fatalf("the CRL at %s (signed by %s) does not list the revoked %s", dp[0], c.issuer.Subject, c.name)
	}
	openssl := opensslPath(t)
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := filepath.Join(dir, "root.pem")
	if err := os.WriteFile(root, m.e.srv.RootPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	issuer := write("issuer.pem", "CERTIFICATE", c.issuer.Raw)
	leaf := write("leaf.pem", "CERTIFICATE", c.leaf.Raw)
	crlFile := write("crl.pem", "X509 CRL", crl.Raw)
	out, err := exec.Command(openssl, "crl", "-in", crlFile, "-noout", "-verify", "-CAfile", issuer).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verify OK") {
		t.Errorf("openssl crl -verify of the CRL at %s with %s's issuer: %v\n%s", dp[0], c.name, err, out)
	}
	out, err = exec.Command(openssl, "verify", "-crl_check", "-CRLfile", crlFile, "-untrusted", issuer, "-CAfile", root, leaf).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "certificate revoked") {
		t.Errorf("openssl verify -crl_check of %s with the CRL at %s: %v\n%s\nwant \"certificate revoked\"", c.name, dp[0], err, out)
	}
}

// opensslPath is the openssl binary. Without one the test is skipped
// (its CRL was checked by Go alone), but fails under CI=true.
func opensslPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("openssl is required under CI=true (apt-get install -y openssl)")
		}
		t.Skip("openssl not installed: the CRL was checked by Go alone")
	}
	return p
}
