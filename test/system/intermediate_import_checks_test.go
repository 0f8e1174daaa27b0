// SPDX-License-Identifier: Apache-2.0

package system

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/server"
)

// TestImportRefusesBadIntermediates: weir ca import and add-issuer
// refuse an intermediate that weir serve would refuse or misuse (RFC 5280
// §4.2.1.3, §4.2.1.12), changing nothing in the data directory, and
// serve refuses each as its active issuer with the same reason: one
// check (ca.CheckIntermediate) serves all three. serve takes one that
// allows some of each profile's extended key usages (Use.Installing). A
// retired issuer is held to its form only: an expired one still starts. A
// reload that adds a profile none of whose usages the active
// intermediate allows is refused.
func TestImportRefusesBadIntermediates(t *testing.T) {
	cfg := server.DefaultConfig()
	cfg.DataDir = t.TempDir()
	if _, err := server.InitDataDir(cfg, time.Now(), server.InitOptions{}); err != nil {
		t.Fatal(err)
	}
	dd, now := cfg.DataDir, time.Now()
	root, err := readCerts(server.RootCertFile(dd))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*x509.Certificate)
		want   string
		// serves: serve takes it as the active issuer all the same, its
		// certificates verifying for the usages it allows (the others
		// logged): import and add-issuer want every one.
		serves bool
	}{
		{"no cRLSign", func(c *x509.Certificate) { c.KeyUsage &^= x509.KeyUsageCRLSign }, "cRLSign", false},
		{"expired", func(c *x509.Certificate) { c.NotBefore, c.NotAfter = now.Add(-48*time.Hour), now.Add(-time.Hour) }, "expired at", false},
		{"not yet valid", func(c *x509.Certificate) { c.NotBefore = now.Add(time.Hour) }, "not valid before", false},
		{"codeSigning only", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning} },
			"does not allow the extended key usage serverAuth", false},
		{"serverAuth only, under a serverAuth and clientAuth profile", func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} },
			"clientAuth that ca.profiles.tls-client-server.key-usages puts", true},
		{"outlives its root", func(c *x509.Certificate) { c.NotAfter = root[0].NotAfter.Add(time.Hour) }, "after its root", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, key := reshapedIntermediate(t, dd, tc.mutate)
			before := treeOf(t, dd)
			_, err := server.ImportIntermediate(t.Context(), cfg, cert, key, now)
			checkImportRefused(t, err, tc.want)
			_, err = server.AddIssuer(t.Context(), cfg, "r2", cert, key, now)
			checkImportRefused(t, err, tc.want)
			if after := treeOf(t, dd); !maps.Equal(before, after) {
				t.Errorf("the refused import changed the data directory: %v before, %v after", before, after)
			}
			s, err := server.New(t.Context(), withIssuer(cfg, cert, key, true), server.Options{})
			if err == nil {
				s.Close()
			}
			switch {
			case tc.serves && err != nil:
				t.Errorf("serve with it as the active issuer: %v, want it served", err)
			case !tc.serves && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("serve with it as the active issuer: %v, want %q", err, tc.want)
			}
		})
	}

	t.Run("expired, retired", func(t *testing.T) {
		cert, key := reshapedIntermediate(t, dd, func(c *x509.Certificate) { c.NotBefore, c.NotAfter = now.Add(-48*time.Hour), now.Add(-time.Hour) })
		s, err := server.New(t.Context(), withIssuer(cfg, cert, key, false), server.Options{})
		if err != nil {
			t.Fatalf("serve with an expired retired issuer: %v", err)
		}
		s.Close()
	})

	t.Run("reload", func(t *testing.T) {
		cert, key := reshapedIntermediate(t, dd, func(c *x509.Certificate) { c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth} })
		e := startEnv(t, func(c *server.Config) {
			*c = withIssuer(*c, cert, key, true)
			c.DataDir = dd
			delete(c.CA.Profiles, "tls-client-server")
		})
		cfg := e.cfg
		cfg.CA.Profiles = server.DefaultConfig().CA.Profiles
		cfg.CA.Profiles["client"] = acme.ProfileConfig{Description: "clientAuth only", KeyUsages: []acme.KeyUsage{acme.KeyUsageClientAuth}, IdentifierTypes: []acme.IdentifierType{acme.IdentifierDNS}}
		if r := e.writeAndReload(t, cfg); r.OK || !strings.Contains(r.Error, "clientAuth that ca.profiles.client.key-usages puts") {
			t.Errorf("a reload adding a clientAuth-only profile under a serverAuth intermediate: %+v, want it refused", r)
		}
		// tls-client-server's certificates verify for serverAuth.
		delete(cfg.CA.Profiles, "client")
		if r := e.writeAndReload(t, cfg); !r.OK {
			t.Errorf("a reload adding a serverAuth and clientAuth profile under a serverAuth intermediate: %v, want it taken", r.Error)
		}
	})
}

// withIssuer is cfg with the intermediate in certFile and keyFile as the
// ca.issuers entry r2, active or not.
func withIssuer(cfg server.Config, certFile, keyFile string, active bool) server.Config {
	cfg.CA.Issuers = []server.IssuerConfig{{ID: "r2", IntermediateConfig: server.IntermediateConfig{CertFile: certFile, KeyFile: keyFile}}}
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
	roots, err := readCerts(server.RootCertFile(dd))
	if err != nil {
		t.Fatal(err)
	}
	rootKey := parseKeyFile(t, server.RootKeyFile(dd))
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

// readCerts reads the PEM certificates in path.
func readCerts(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	certs, err := ca.ParseCertsPEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return certs, nil
}
