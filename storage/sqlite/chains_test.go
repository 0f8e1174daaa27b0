// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestIssuerChains: a certificate whose chain is its leaf then an issuer
// chain is stored with that issuer chain named, once per distinct chain;
// any other chain is stored whole. Every read (after a reopen, so not from
// the cache) and the export give back the chain byte for byte.
func TestIssuerChains(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	a := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "thumb", Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	issuerA := []byte("-----BEGIN CERTIFICATE-----\naW50ZXJtZWRpYXRlIEE=\n-----END CERTIFICATE-----\n")
	issuerB := []byte("-----BEGIN CERTIFICATE-----\naW50ZXJtZWRpYXRlIEI=\n-----END CERTIFICATE-----\n")
	der := func(i int) []byte { return []byte(fmt.Sprintf("leaf certificate %d", i)) }
	cases := []struct {
		chain []byte
		split bool   // stored with issuer_chain set and chain_pem NULL
		group string // cases with the same group share an issuer_chains row
	}{
		{append(leafPEM(der(0)), issuerA...), true, "A"},
		{append(leafPEM(der(1)), issuerA...), true, "A"},
		{append(leafPEM(der(2)), issuerB...), true, "B"},
		{append(leafPEM(der(3)), append(issuerB, issuerA...)...), true, "BA"},
		{append(leafPEM(der(99)), issuerA...), false, ""}, // another certificate's leaf
		{leafPEM(der(5)), false, ""},                      // the leaf alone
		{[]byte("pem"), false, ""},
		{nil, false, ""},
	}
	certs := make([]*acme.Certificate, len(cases))
	for i, tc := range cases {
		o := &acme.Order{ID: acme.OrderID(fmt.Sprintf("order-%d", i)), AccountID: a.ID, Status: acme.StatusProcessing,
			Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "example.com"}},
			Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
		if err := s.CreateOrder(ctx, o, nil); err != nil {
			t.Fatal(err)
		}
		certs[i] = &acme.Certificate{Serial: fmt.Sprintf("%02x", i+1), AccountID: a.ID, OrderID: o.ID, DER: der(i),
			ChainPEM: bytes.Clone(tc.chain), Names: []string{"example.com"}, NotBefore: fixedNow(),
			NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow().Add(time.Duration(i) * time.Second)}
		if err := s.FinalizeOrder(ctx, certs[i]); err != nil {
			t.Fatalf("case %d: FinalizeOrder: %v", i, err)
		}
	}

	ids := map[string]int64{}
	for i, tc := range cases {
		var (
			whole  []byte
			issuer *int64
		)
		if err := s.DB().QueryRowContext(ctx, `SELECT chain_pem, issuer_chain FROM certificates WHERE serial = ?`,
			certs[i].Serial).Scan(&whole, &issuer); err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.split && (whole != nil || issuer == nil):
			t.Errorf("case %d: chain_pem %q, issuer_chain %v; want NULL and an issuer chain", i, whole, issuer)
		case tc.split:
			if id, ok := ids[tc.group]; ok && id != *issuer {
				t.Errorf("case %d: issuer chain %d, want %d as for the same chain before", i, *issuer, id)
			}
			ids[tc.group] = *issuer
		case issuer != nil || !bytes.Equal(whole, tc.chain):
			t.Errorf("case %d: chain_pem %q, issuer_chain %v; want the whole chain and NULL", i, whole, issuer)
		}
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM issuer_chains`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 || len(ids) != 3 {
		t.Errorf("%d issuer chains stored, %d distinct IDs named; want 3 (A, B, BA)", n, len(ids))
	}
	if err := s.RevokeCertificate(ctx, certs[0].Serial, 1, fixedNow(), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path) // an empty cache: every read below is from the file
	for i, tc := range cases {
		got, err := s.GetCertificate(ctx, certs[i].Serial)
		if err != nil {
			t.Fatalf("case %d: GetCertificate: %v", i, err)
		}
		if !bytes.Equal(got.ChainPEM, tc.chain) || (tc.chain == nil) != (got.ChainPEM == nil) {
			t.Errorf("case %d: GetCertificate chain %q, want %q", i, got.ChainPEM, tc.chain)
		}
	}
	listed, _, err := s.ListCertificates(ctx, acme.CertQuery{Limit: len(cases)})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(cases) {
		t.Fatalf("ListCertificates: %d certificates, want %d", len(listed), len(cases))
	}
	for _, c := range listed {
		var i int
		fmt.Sscanf(c.Serial, "%x", &i)
		if want := cases[i-1].chain; !bytes.Equal(c.ChainPEM, want) {
			t.Errorf("ListCertificates: %s chain %q, want %q", c.Serial, c.ChainPEM, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	e := openExporter(t, path)
	var sink recordingSink
	if _, err := e.Export(ctx, &sink, 3); err != nil {
		t.Fatalf("Export: %v", err)
	}
	if len(sink.certs) != len(cases) {
		t.Fatalf("exported %d certificates, want %d", len(sink.certs), len(cases))
	}
	for i, c := range sink.certs { // in serial order, which is case order
		if !bytes.Equal(c.ChainPEM, cases[i].chain) || (cases[i].chain == nil) != (c.ChainPEM == nil) {
			t.Errorf("case %d: exported chain %q, want %q", i, c.ChainPEM, cases[i].chain)
		}
	}
}

// TestIssuerChainIDRolledBack: the writer remembers an issuer chain's ID
// only once the transaction that stored it commits. A finalize that
// inserts a new chain and then fails (a serial already taken) leaves no
// ID behind; the chain that takes the same row ID next must not be
// confused with it, and the first chain, stored again, reads back as
// itself.
func TestIssuerChainIDRolledBack(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "weir.db"))
	ctx := t.Context()
	a := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: "thumb", Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	issuer := func(name string) []byte {
		return []byte("-----BEGIN CERTIFICATE-----\n" + name + "\n-----END CERTIFICATE-----\n")
	}
	finalize := func(i int, serial string, chain []byte) (*acme.Certificate, error) {
		o := &acme.Order{ID: acme.OrderID(fmt.Sprintf("order-%d", i)), AccountID: a.ID, Status: acme.StatusProcessing,
			Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "example.com"}},
			Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
		if err := s.CreateOrder(ctx, o, nil); err != nil {
			t.Fatal(err)
		}
		der := []byte(fmt.Sprintf("leaf %d", i))
		c := &acme.Certificate{Serial: serial, AccountID: a.ID, OrderID: o.ID, DER: der,
			ChainPEM: append(leafPEM(der), chain...), Names: []string{"example.com"}, NotBefore: fixedNow(),
			NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow()}
		return c, s.FinalizeOrder(ctx, c)
	}
	if _, err := finalize(0, "01", issuer("WQ==")); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.cache.chainID(issuer("WQ==")); !ok {
		t.Fatal("the committed issuer chain's ID is not remembered")
	}
	if _, err := finalize(1, "01", issuer("WA==")); err == nil {
		t.Fatal("FinalizeOrder with a serial already taken succeeded")
	}
	if _, ok := s.cache.chainID(issuer("WA==")); ok {
		t.Fatal("the ID of an issuer chain whose insert was rolled back is remembered")
	}
	if _, err := finalize(2, "02", issuer("Wg==")); err != nil {
		t.Fatal(err)
	}
	c, err := finalize(3, "03", issuer("WA=="))
	if err != nil {
		t.Fatal(err)
	}
	var whole []byte
	if err := s.DB().QueryRowContext(ctx, `SELECT (SELECT pem FROM issuer_chains WHERE id = issuer_chain)
		FROM certificates WHERE serial = '03'`).Scan(&whole); err != nil {
		t.Fatal(err)
	}
	if want := issuer("WA=="); !bytes.Equal(whole, want) {
		t.Errorf("certificate 03 names the issuer chain %q in the database, want %q", whole, want)
	}
	got, err := s.GetCertificate(ctx, "03")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.ChainPEM, c.ChainPEM) {
		t.Errorf("certificate 03 reads back with chain %q, want %q", got.ChainPEM, c.ChainPEM)
	}
}
