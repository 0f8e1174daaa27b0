// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/x509"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
	"github.com/weir-pki/weir/ca"
	"github.com/weir-pki/weir/storage/sqlite"
)

// TestPopulateLog: -populate -log fills the verifiable log of the store it
// makes: a checkpoint of size N signed by the data directory's log key
// (whose verifier key it writes) under populateLogOrigin, an inclusion
// proof of a certificate's issuance entry that verifies, and a served log
// that weir log verify's audit accepts entry for entry, hash for hash.
func TestPopulateLog(t *testing.T) {
	const n = 600
	dir := t.TempDir()
	o, err := parseFlags([]string{"-populate", "600", "-log", "-data", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := populate(t.Context(), o, io.Discard); err != nil {
		t.Fatalf("populate: %v", err)
	}
	keyInfo, err := os.Stat(filepath.Join(dir, "transparency", "log-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if keyInfo.Mode().Perm() != 0o600 {
		t.Errorf("log key mode %v, want 0600", keyInfo.Mode().Perm())
	}
	vkey, err := os.ReadFile(filepath.Join(dir, "transparency", "log-key.vkey"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := transparency.ParseVerifierKey(string(vkey))
	if err != nil {
		t.Fatal(err)
	}
	if v.Name() != populateLogOrigin {
		t.Errorf("verifier key named %q, want %q", v.Name(), populateLogOrigin)
	}
	s, err := sqlite.Open(t.Context(), filepath.Join(dir, "weir.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size, head, err := s.LogHead(t.Context())
	if err != nil || size != n {
		t.Fatalf("LogHead: size %d, %v; want %d", size, err, n)
	}
	c, err := transparency.OpenCheckpoint(head, v)
	if err != nil || c.Size != n {
		t.Fatalf("the head checkpoint: %+v, %v; want size %d verifying with the log key", c, err, n)
	}
	certs, _, err := s.ListCertificates(t.Context(), acme.CertQuery{Search: "scale.test", Now: time.Now(), Limit: 100})
	if err != nil || len(certs) != 100 {
		t.Fatalf("ListCertificates: %d, %v; want 100", len(certs), err)
	}
	indexes := map[int64]bool{}
	for _, cert := range certs[:5] {
		p, err := transparency.ProveSerial(t.Context(), s, cert.Serial)
		if err != nil {
			t.Fatalf("ProveSerial %s: %v", cert.Serial, err)
		}
		if err := p.VerifyCertificate(v, cert.DER); err != nil {
			t.Errorf("certificate %s: %v", cert.Serial, err)
		}
		_, e, err := p.Verify(v)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(cert.DER)
		if err != nil {
			t.Fatal(err)
		}
		if e.Issued.Issuer != acme.DefaultIssuer || e.Issued.Account != string(cert.AccountID) || e.Issued.Order != string(cert.OrderID) ||
			len(e.Issued.Validations) != len(leaf.DNSNames) || e.Issued.Validations[0].Method != string(acme.ChallengeHTTP01) ||
			e.Issued.Validations[0].Name != leaf.DNSNames[0] {
			t.Errorf("certificate %s: entry %+v, want issuer %q, account %s, order %s, an http-01 validation of each of %v",
				cert.Serial, e.Issued, acme.DefaultIssuer, cert.AccountID, cert.OrderID, leaf.DNSNames)
		}
		if indexes[p.Index] {
			t.Errorf("certificate %s at leaf %d, as another", cert.Serial, p.Index)
		}
		indexes[p.Index] = true
	}
	srv := httptest.NewServer(transparency.NewHandler(s))
	t.Cleanup(srv.Close)
	rep, err := transparency.VerifyLog(t.Context(), transparency.HTTPSource{Base: srv.URL, Client: srv.Client()}, v, [][]byte{head})
	if err != nil {
		t.Fatalf("VerifyLog: %v", err)
	}
	if rep.Size != n || rep.Kinds[transparency.KindIssued] != n || rep.Root != c.Hash {
		t.Errorf("VerifyLog: %+v, want %d issuance entries and root %x", rep, n, c.Hash)
	}
}

// TestPopulateLogKeyKept: -populate -log signs with a log key the data
// directory already has, rather than replacing it.
func TestPopulateLogKeyKept(t *testing.T) {
	dir := t.TempDir()
	if _, err := openPopLog(dir, 3); err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, "transparency", "log-key.pem")
	before, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"-populate", "3", "-log", "-data", dir}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := populate(t.Context(), o, io.Discard); err != nil {
		t.Fatalf("populate: %v", err)
	}
	after, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("populate replaced the data directory's log key")
	}
	key, err := ca.ParseKeyPEM(after)
	if err != nil {
		t.Fatal(err)
	}
	_, vkey, err := transparency.NewNoteSigner(populateLogOrigin, key)
	if err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, "transparency", "log-key.vkey"))
	if err != nil || string(written) != vkey+"\n" {
		t.Errorf("log-key.vkey %q, %v; want %q", written, err, vkey+"\n")
	}
}
