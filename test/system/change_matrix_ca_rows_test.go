// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/server"
)

// caChangeRows are the changes to the CA itself: its issuers, its CRLs,
// its keys. Each takes a restart on the same data directory, as
// docs/operations.md says; the state in flight then completes on the new
// server, and what it issued before stays revocable.
func caChangeRows() []changeRow {
	return []changeRow{
		{
			// docs/operations.md, "Rotating the intermediate".
			name: "active issuer rotated",
			change: func(m *changeRun) {
				cert, key := m.newIntermediate("weir Intermediate CA R2")
				m.e.cli.Run(m.t, 0, "ca", "add-issuer", "-id", "r2", "-cert", cert, "-key", key)
				m.issuer = readCert(m.t, cert)
				m.restart(func(c *server.Config) {
					c.CA.Issuers = []server.IssuerConfig{{ID: "r2"}}
					c.CA.ActiveIssuer = "r2"
				})
			},
			after: afterNewIssuer,
		},
		{
			// weir ca import over the working intermediate: either it is
			// refused while certificates of the one it replaces are
			// unexpired (and nothing on disk changes), or the replaced one
			// keeps signing the CRL of its certificates ("revocable").
			name: "intermediate imported",
			change: func(m *changeRun) {
				cert, key := m.newIntermediate("weir Intermediate CA 2")
				before := caFiles(m.t, m.e.cfg)
				code, stdout, stderr := m.e.cli.Exit(m.t, "ca", "import", "-cert", cert, "-key", key)
				if code != 0 {
					m.t.Logf("weir ca import refused (exit %d): %s%s", code, stdout, stderr)
					if after := caFiles(m.t, m.e.cfg); !maps.Equal(before, after) {
						m.t.Errorf("the refused weir ca import changed the CA's files: %v before, %v after", before, after)
					}
				} else {
					m.issuer = readCert(m.t, cert)
				}
				m.restart(nil)
			},
			after: afterNewIssuer,
		},
		{
			name:   "CRL shards raised",
			change: func(m *changeRun) { m.restart(func(c *server.Config) { c.CA.CRLShards = 4 }) },
			after: func(t *testing.T, m *changeRun) {
				for _, c := range m.completeInFlight(t) {
					if dp := c.leaf.CRLDistributionPoints; len(dp) != 1 || !strings.HasPrefix(dp[0], m.e.artefacts+"/crl/default/") {
						t.Errorf("%s, issued with 4 shards: CRL distribution points %v, want one of %s/crl/default/N", c.name, dp, m.e.artefacts)
					}
				}
			},
		},
		{
			// Certificates naming /crl/default/N for N above the new count
			// must still be on a served CRL ("revocable").
			name:  "CRL shards lowered",
			setup: func(c *server.Config) { c.CA.CRLShards = 4 },
			inflight: inflight{then: func(t *testing.T, m *changeRun) {
				for i := 0; !m.aboveShard(1); i++ {
					if i == 16 {
						t.Fatal("16 certificates, none in a shard above 1")
					}
					m.issue(t, "http-01", fmt.Sprintf("s%d.%s", i, keepZone))
				}
			}},
			change: func(m *changeRun) { m.restart(func(c *server.Config) { c.CA.CRLShards = 1 }) },
			after: func(t *testing.T, m *changeRun) {
				for _, c := range m.completeInFlight(t) {
					if dp := c.leaf.CRLDistributionPoints; len(dp) != 1 || dp[0] != m.e.artefacts+"/ca/crl.der" {
						t.Errorf("%s, issued with 1 shard: CRL distribution points %v, want [%s/ca/crl.der]", c.name, dp, m.e.artefacts)
					}
				}
			},
		},
		{
			// docs/operations.md, "The CA's keys": weir serve never needs
			// the root's key.
			name: "root taken offline",
			change: func(m *changeRun) {
				to := filepath.Join(m.t.TempDir(), "root-key.pem")
				m.e.cli.Run(m.t, 0, "ca", "take-root-offline", "-to", to)
				if rootKey := server.RootKeyFile(m.e.cfg.DataDir); exists(rootKey) || !exists(to) {
					m.t.Fatalf("weir ca take-root-offline left the root key in the data directory, or did not write %s", to)
				}
				m.restart(nil)
			},
			after: func(t *testing.T, m *changeRun) { m.completeInFlight(t) },
		},
	}
}

// afterNewIssuer: what was in flight completes after the restart, signed
// by the intermediate that issues now (m.issuer, unless the change was
// refused).
func afterNewIssuer(t *testing.T, m *changeRun) {
	for _, c := range m.completeInFlight(t) {
		if m.issuer != nil && !c.issuer.Equal(m.issuer) {
			t.Errorf("%s, issued after the change, is signed by %s; want the new intermediate %s", c.name, c.issuer.Subject, m.issuer.Subject)
		}
	}
}

// newIntermediate makes a new intermediate as the ceremony does, with the
// weir binary: a key and CSR, signed by the data directory's root key.
// It returns the certificate's file and the key's.
func (m *changeRun) newIntermediate(cn string) (cert, key string) {
	t := m.t
	dir := t.TempDir()
	cert, key, csr := filepath.Join(dir, "int.pem"), filepath.Join(dir, "int-key.pem"), filepath.Join(dir, "int.csr")
	m.e.weirCLIArgs(t, 0, "ca", "new-intermediate-key", "-name", cn, "-org", "weir", "-key-out", key, "-csr-out", csr)
	rootCert, rootKey := server.RootCertFile(m.e.cfg.DataDir), server.RootKeyFile(m.e.cfg.DataDir)
	m.e.weirCLIArgs(t, 0, "ca", "sign-intermediate", "-root-cert", rootCert,
		"-root-key", rootKey, "-csr", csr, "-out", cert)
	return cert, key
}

// aboveShard reports whether a certificate of the row names a CRL shard
// above n.
func (m *changeRun) aboveShard(n int) bool {
	for _, c := range m.certs {
		var k int
		for _, dp := range c.leaf.CRLDistributionPoints {
			if _, err := fmt.Sscanf(strings.TrimPrefix(dp, m.e.artefacts+"/crl/default/"), "%d", &k); err == nil && k > n {
				return true
			}
		}
	}
	return false
}

// readCert reads the first certificate of a PEM file.
func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := ca.ParseCertsPEM(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return certs[0]
}

// caFiles are the files under the data directory's ca/, each with the
// digest of its content.
func caFiles(t *testing.T, cfg server.Config) map[string][sha256.Size]byte {
	t.Helper()
	out := map[string][sha256.Size]byte{}
	root := caDir(cfg.DataDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(p, root)] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
