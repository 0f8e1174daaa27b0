// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/x509"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/ca"
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

// TestPopulateShards: with -crl-shards N every certificate is in CRL shard
// 1 + (serial mod N), as weir's issuance with ca.crl-shards N puts it, and
// a bad N is refused.
func TestPopulateShards(t *testing.T) {
	dir := t.TempDir()
	o, err := parseFlags([]string{"-populate", "60", "-crl-shards", "4", "-data", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := populate(t.Context(), o, io.Discard); err != nil {
		t.Fatalf("populate: %v", err)
	}
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	certs, _, err := s.ListCertificates(t.Context(), acme.CertQuery{Search: "scale.test", Now: time.Now(), Limit: 100})
	if err != nil || len(certs) != 60 {
		t.Fatalf("search scale.test: %d certificates, %v; want 60", len(certs), err)
	}
	seen := map[int]int{}
	for _, c := range certs {
		leaf, err := x509.ParseCertificate(c.DER)
		if err != nil {
			t.Fatal(err)
		}
		if want := ca.CRLShard(leaf.SerialNumber, 4); c.CRLShard != want {
			t.Errorf("certificate %s in CRL shard %d, want %d", c.Serial, c.CRLShard, want)
		}
		seen[c.CRLShard]++
	}
	if len(seen) != 4 {
		t.Errorf("60 certificates in shards %v, want all of 1 to 4", seen)
	}
	for _, bad := range []string{"-1", "1025"} {
		if _, err := parseFlags([]string{"-populate", "10", "-crl-shards", bad}, io.Discard); err == nil {
			t.Errorf("-crl-shards %s: no error", bad)
		}
	}
}
