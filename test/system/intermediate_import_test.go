// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"io/fs"
	"maps"
	"net/url"
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
	"github.com/weir-pki/weir/server"
)

// TestImportKeepsRevocation: with a certificate of the working
// intermediate in the store, weir ca import of a new intermediate is
// refused, while weir runs on the data directory (SQLite's lock held)
// and once it has stopped, naming the count and weir ca add-issuer, and
// changes nothing in the data directory. After a restart, the
// certificate's revocation is on a CRL its own intermediate signed, as
// openssl verifies it (RFC 5280 §6.3.3).
func TestImportKeepsRevocation(t *testing.T) {
	dd, work := t.TempDir(), t.TempDir()
	useDir := func(c *server.Config) { c.DataDir = dd }
	var (
		cfg                server.Config
		chain              [][]byte
		leaf               *x509.Certificate
		newCert, newKeyPEM string
	)
	t.Run("issue, then import while weir runs", func(t *testing.T) {
		e := startEnv(t, useDir)
		cfg = e.cfg
		ctx, _, c, _ := e.Registered(t)
		chain, _ = e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "before.weir.test"})
		leaf = e.VerifyChain(chain, "before.weir.test")
		newCert, newKeyPEM = signedIntermediate(t, dd, work, "weir Intermediate CA 2")
		before := treeOf(t, caDir(dd))
		_, err := server.ImportIntermediate(t.Context(), cfg, newCert, newKeyPEM, time.Now())
		checkImportRefused(t, err, "1 unexpired certificate", "weir ca add-issuer", "renew-early")
		if after := treeOf(t, caDir(dd)); !maps.Equal(before, after) {
			t.Errorf("the refused import changed the data directory's ca/: %v before, %v after", before, after)
		}
	})
	if t.Failed() && leaf == nil {
		t.FailNow()
	}

	before := treeOf(t, dd)
	_, err := server.ImportIntermediate(t.Context(), cfg, newCert, newKeyPEM, time.Now())
	checkImportRefused(t, err, "1 unexpired certificate", "weir ca add-issuer")
	if after := treeOf(t, dd); !maps.Equal(before, after) {
		t.Errorf("the refused import changed the data directory: %v before, %v after", before, after)
	}

	t.Run("restart, revoke", func(t *testing.T) {
		e := startEnv(t, useDir)
		if _, err := e.srv.Service().AdminRevoke(t.Context(), ca.SerialHex(leaf.SerialNumber), 1); err != nil {
			t.Fatal(err)
		}
		inter, err := x509.ParseCertificate(chain[1])
		if err != nil {
			t.Fatal(err)
		}
		// The restarted weir listens elsewhere: the CRL's path on it.
		dp, err := url.Parse(leaf.CRLDistributionPoints[0])
		if err != nil {
			t.Fatal(err)
		}
		der := systest.Fetch(t, e.HTTP, e.Base+dp.Path)
		crl, err := x509.ParseRevocationList(der)
		if err != nil {
			t.Fatal(err)
		}
		if err := crl.CheckSignatureFrom(inter); err != nil {
			t.Errorf("the CRL at %s does not verify with the certificate's own intermediate: %v", leaf.CRLDistributionPoints[0], err)
		}
		if !acmeenv.CRLLists(crl, leaf.SerialNumber) {
			t.Errorf("the CRL at %s does not list the revoked certificate", leaf.CRLDistributionPoints[0])
		}
		opensslRevoked(t, e.srv.RootPEM(), chain, der)
	})
}

// checkImportRefused checks that err refuses an import, saying each of
// want.
func checkImportRefused(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Error("the import was not refused")
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the refusal does not say %q: %v", w, err)
		}
	}
}

// opensslRevoked checks with openssl, when it is installed, that the CRL
// (DER) verifies with the chain's intermediate (openssl crl -verify) and
// that the chain's leaf is revoked by it (openssl verify -crl_check).
func opensslRevoked(t *testing.T, rootPEM []byte, chain [][]byte, crlDER []byte) {
	t.Helper()
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Log("openssl is not installed: the CRL was checked by Go alone")
		return
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := write("root.pem", rootPEM)
	inter := write("inter.pem", ca.EncodeCertPEM(chain[1]))
	cas := write("cas.pem", append(ca.EncodeCertPEM(chain[1]), rootPEM...))
	leaf := write("leaf.pem", ca.EncodeCertPEM(chain[0]))
	crl := write("crl.pem", pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: crlDER}))
	if out, err := exec.Command(openssl, "crl", "-in", crl, "-noout", "-verify", "-CAfile", cas).CombinedOutput(); err != nil || !strings.Contains(string(out), "verify OK") {
		t.Errorf("openssl crl -verify with the certificate's own intermediate: %v\n%s", err, out)
	}
	out, err := exec.Command(openssl, "verify", "-crl_check", "-CAfile", root, "-untrusted", inter, "-CRLfile", crl, leaf).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "certificate revoked") {
		t.Errorf("openssl verify -crl_check: %v, want the certificate revoked\n%s", err, out)
	}
}

// signedIntermediate makes a new intermediate's key and certificate,
// signed by the root of data directory dd (its key there), as weir ca
// new-intermediate-key and sign-intermediate do, and returns their files
// in the directory work.
func signedIntermediate(t *testing.T, dd, work, name string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(work, "int.pem"), filepath.Join(work, "int-key.pem")
	csr, err := server.NewIntermediateKey(name, "weir", keyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	signed, err := server.SignIntermediateCSR(server.RootCertFile(dd), server.RootKey{KeyFile: server.RootKeyFile(dd), Signer: ca.SignerConfig{Type: ca.SignerFile}}, csr, time.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, signed, 0o644); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// treeOf maps each file under dir to its mode and the SHA-256 of its
// content.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, p)
		tree[rel] = info.Mode().String() + " " + hex.EncodeToString(sum[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestImportRefusedStores: the refusal counts the certificates in the
// store weir uses, PostgreSQL as well as SQLite, and only the unexpired
// ones of the issuer replaced: weir ca add-issuer over an issuer with
// certificates is refused as import is, and an import once every
// certificate has expired is not. A store that cannot be read refuses
// the import (fail closed), and nothing changes on disk.
func TestImportRefusedStores(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		dsn := postgresSchema(t)
		e := startEnv(t, func(c *server.Config) {
			c.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: dsn, MaxConns: 4}
		})
		ctx, _, c, _ := e.Registered(t)
		chain, _ := e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "pg.weir.test"})
		leaf := e.VerifyChain(chain, "pg.weir.test")
		cert, key := signedIntermediate(t, e.cfg.DataDir, t.TempDir(), "weir Intermediate CA 2")
		before := treeOf(t, caDir(e.cfg.DataDir))
		_, err := server.ImportIntermediate(t.Context(), e.cfg, cert, key, time.Now())
		checkImportRefused(t, err, "1 unexpired certificate", "weir ca add-issuer")
		if after := treeOf(t, caDir(e.cfg.DataDir)); !maps.Equal(before, after) {
			t.Errorf("the refused import changed ca/: %v before, %v after", before, after)
		}
		if _, err := server.ImportIntermediate(t.Context(), e.cfg, cert, key, leaf.NotAfter.Add(time.Second)); err != nil {
			t.Errorf("import once the certificate has expired: %v", err)
		}
	})

	t.Run("add-issuer over an issuer with certificates", func(t *testing.T) {
		cfg := server.DefaultConfig()
		cfg.DataDir = t.TempDir()
		if _, err := server.InitDataDir(cfg, time.Now(), server.InitOptions{}); err != nil {
			t.Fatal(err)
		}
		work := t.TempDir()
		cert, key := signedIntermediate(t, cfg.DataDir, work, "weir Intermediate CA R2")
		if _, err := server.AddIssuer(t.Context(), cfg, "r2", cert, key, time.Now()); err != nil {
			t.Fatal(err)
		}
		e := startEnv(t, func(c *server.Config) {
			c.DataDir = cfg.DataDir
			c.CA.Issuers, c.CA.ActiveIssuer = []server.IssuerConfig{{ID: "r2"}}, "r2"
		})
		ctx, _, c, _ := e.Registered(t)
		e.Issue(ctx, c, acmeenv.NewKey(t), "http-01", xacme.AuthzID{Type: "dns", Value: "r2.weir.test"})
		cert3, key3 := signedIntermediate(t, cfg.DataDir, t.TempDir(), "weir Intermediate CA R3")
		before := treeOf(t, caDir(cfg.DataDir))
		_, err := server.AddIssuer(t.Context(), e.cfg, "r2", cert3, key3, time.Now())
		checkImportRefused(t, err, "1 unexpired certificate(s) of the issuer r2", "under another id")
		if after := treeOf(t, caDir(cfg.DataDir)); !maps.Equal(before, after) {
			t.Errorf("the refused add-issuer changed ca/: %v before, %v after", before, after)
		}
		// The default intermediate signed nothing but weir's own HTTPS
		// certificate, which is not in the store.
		if _, err := server.ImportIntermediate(t.Context(), e.cfg, cert3, key3, time.Now()); err != nil {
			t.Errorf("import over an intermediate without certificates: %v", err)
		}
	})

	for _, tc := range []struct {
		name  string
		store func(t *testing.T, cfg *server.Config)
	}{
		{"postgres unreachable", func(t *testing.T, cfg *server.Config) {
			cfg.Storage = server.StorageConfig{Driver: server.DriverPostgres, DSN: "postgres://weir@127.0.0.1:1/weir?sslmode=disable&connect_timeout=2"}
		}},
		{"sqlite unreadable", func(t *testing.T, cfg *server.Config) {
			if err := os.WriteFile(filepath.Join(cfg.DataDir, cfg.Storage.Path), []byte(strings.Repeat("not a database ", 16)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := server.DefaultConfig()
			cfg.DataDir = t.TempDir()
			if _, err := server.InitDataDir(cfg, time.Now(), server.InitOptions{}); err != nil {
				t.Fatal(err)
			}
			tc.store(t, &cfg)
			cert, key := signedIntermediate(t, cfg.DataDir, t.TempDir(), "weir Intermediate CA 2")
			before := treeOf(t, cfg.DataDir)
			_, err := server.ImportIntermediate(t.Context(), cfg, cert, key, time.Now())
			checkImportRefused(t, err, "nothing was changed", "the store cannot be read")
			if after := treeOf(t, cfg.DataDir); !maps.Equal(before, after) {
				t.Errorf("the refused import changed the data directory: %v before, %v after", before, after)
			}
		})
	}
}

// TestImportKeepsEveryReplaced: an import within the same second as the
// one before is refused rather than renaming the working intermediate
// over the key that one kept, which stays as it was.
func TestImportKeepsEveryReplaced(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.DataDir = t.TempDir()
	if _, err := server.InitDataDir(cfg, time.Now(), server.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	first := treeOf(t, caDir(cfg.DataDir))
	now := time.Now()
	for i, name := range []string{"weir Intermediate CA 2", "weir Intermediate CA 3"} {
		cert, key := signedIntermediate(t, cfg.DataDir, t.TempDir(), name)
		kept, err := server.ImportIntermediate(t.Context(), cfg, cert, key, now)
		switch {
		case i == 0 && (err != nil || len(kept) != 2):
			t.Fatalf("the first import: kept %v, %v", kept, err)
		case i == 1:
			checkImportRefused(t, err, "never overwrites a kept key")
		}
	}
	stamp := now.UTC().Format("20060102T150405Z")
	after := treeOf(t, caDir(cfg.DataDir))
	for _, name := range []string{"intermediate.pem", "intermediate-key.pem"} {
		if got := after[name+".replaced-"+stamp]; got != first[name] {
			t.Errorf("%s.replaced-%s is %q, want the first intermediate's %q", name, stamp, got, first[name])
		}
	}
}

// caDir is the data directory's ca/, where the root and the working
// intermediate are kept (server.RootCertFile's directory).
func caDir(dataDir string) string { return filepath.Dir(server.RootCertFile(dataDir)) }
