package main

import (
	"crypto/x509"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/sqlite"
)

// TestPopulate: -populate makes the data directory's CA and a SQLite store
// of real certificates it signed, one account per 50, one in 20 revoked,
// that weir's store opens, counts and searches.
func TestPopulate(t *testing.T) {
	dir := t.TempDir()
	o, err := parseFlags([]string{"-populate", "120", "-data", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := populate(t.Context(), o, io.Discard); err != nil {
		t.Fatalf("populate: %v", err)
	}
	issuer, err := dataDirCA(dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Counts(t.Context(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.Accounts[acme.StatusValid] != 3 || c.Orders[acme.StatusValid] != 120 ||
		c.Certificates[acme.CertActive] != 114 || c.Certificates[acme.CertRevoked] != 6 {
		t.Errorf("counts %+v, want 3 accounts, 120 orders, 114 active and 6 revoked certificates", c)
	}
	certs, _, err := s.ListCertificates(t.Context(), acme.CertQuery{Search: "team2.scale.test", Now: time.Now()})
	if err != nil || len(certs) != 40 {
		t.Fatalf("search team2.scale.test: %d certificates, %v; want 40", len(certs), err)
	}
	leaf, err := x509.ParseCertificate(certs[0].DER)
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.CheckSignatureFrom(issuer.Hierarchy().Intermediate); err != nil {
		t.Errorf("certificate %s: not signed by the data directory's intermediate: %v", certs[0].Serial, err)
	}
	if len(certs[0].ChainPEM) == 0 {
		t.Error("no chain")
	}
	if _, err := parseFlags([]string{"-populate", "-1"}, io.Discard); err == nil {
		t.Error("-populate -1: no error")
	}
}
