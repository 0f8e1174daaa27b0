// SPDX-License-Identifier: Apache-2.0

package server

import (
	"crypto"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
)

// TestImportRefusesBadIntermediatesReload: a reload that adds a profile
// none of whose usages the active intermediate allows is refused, by the
// check weir ca import, add-issuer and serve make
// (test/system's TestImportRefusesBadIntermediates); one that adds a
// profile some of whose usages it allows is taken. It stays in package
// server to call the reload directly and read its error.
func TestImportRefusesBadIntermediatesReload(t *testing.T) {
	dd := t.TempDir()
	initCfg := DefaultConfig()
	initCfg.DataDir = dd
	if _, err := InitDataDir(initCfg, time.Now(), InitOptions{}); err != nil {
		t.Fatal(err)
	}
	cert, key := reshapedIntermediate(t, dd, func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} })
	e := startEnv(t, func(c *Config) {
		*c = withIssuer(*c, cert, key, true)
		c.DataDir = dd
		delete(c.CA.Profiles, profileTLSClientServer)
	})
	cfg := e.cfg
	cfg.CA.Profiles = defaultProfiles()
	cfg.CA.Profiles["client"] = acme.ProfileConfig{Description: "clientAuth only", KeyUsages: []acme.KeyUsage{acme.KeyUsageClientAuth}, IdentifierTypes: []acme.IdentifierType{acme.IdentifierDNS}}
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err == nil || !strings.Contains(err.Error(), "clientAuth that ca.profiles.client.key-usages puts") {
		t.Errorf("a reload adding a clientAuth-only profile under a serverAuth intermediate: %v, want it refused", err)
	}
	// tls-client-server's certificates verify for serverAuth.
	delete(cfg.CA.Profiles, "client")
	e.writeConfig(cfg)
	if err := e.srv.reload("test"); err != nil {
		t.Errorf("a reload adding a serverAuth and clientAuth profile under a serverAuth intermediate: %v, want it taken", err)
	}
}

// withIssuer is cfg with the intermediate in certFile and keyFile as the
// ca.issuers entry r2, active or not.
func withIssuer(cfg Config, certFile, keyFile string, active bool) Config {
	cfg.CA.Issuers = []IssuerConfig{{ID: "r2", IntermediateConfig: IntermediateConfig{CertFile: certFile, KeyFile: keyFile}}}
	if active {
		cfg.CA.ActiveIssuer = "r2"
	}
	return cfg
}

// reshapedIntermediate signs, with the root of data directory dd, an
// intermediate shaped as weir ca sign-intermediate makes it and then
// changed by mutate, and returns its certificate and key files.
func reshapedIntermediate(t *testing.T, dd string, mutate func(*x509.Certificate)) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = signedIntermediate(t, dd, t.TempDir(), "weir Intermediate CA 2")
	certs, err := readCerts(certFile)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := readCerts(dataPath(dd, fileCARoot))
	if err != nil {
		t.Fatal(err)
	}
	rootKey := parseKeyFile(t, dataPath(dd, fileCARootKey))
	tmpl := *certs[0]
	tmpl.Raw, tmpl.RawTBSCertificate, tmpl.RawSubjectPublicKeyInfo, tmpl.PublicKey = nil, nil, nil, nil
	mutate(&tmpl)
	der, err := x509.CreateCertificate(nil, &tmpl, roots[0], parseKeyFile(t, keyFile).Public(), rootKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, ca.EncodeCertPEM(der), 0o644); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// parseKeyFile reads the PEM key in path.
func parseKeyFile(t *testing.T, path string) crypto.Signer {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ca.ParseKeyPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// signedIntermediate makes a new intermediate's key and certificate,
// signed by the root of data directory dd (its key there), as weir ca
// new-intermediate-key and sign-intermediate do, and returns their files
// in the directory work.
func signedIntermediate(t *testing.T, dd, work, name string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(work, "int.pem"), filepath.Join(work, "int-key.pem")
	csr, err := NewIntermediateKey(name, "weir", keyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	signed, err := SignIntermediateCSR(dataPath(dd, fileCARoot), RootKey{KeyFile: dataPath(dd, fileCARootKey), Signer: ca.SignerConfig{Type: ca.SignerFile}}, csr, time.Now(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, signed, 0o644); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
