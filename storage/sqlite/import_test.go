// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// TestImportRoundTrip copies a database into a new file through Import
// and exports both: every row is the same, a chain is stored split again,
// and the new file's store assigns IDs past the copied ones.
func TestImportRoundTrip(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	s, err := Open(ctx, src, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	a, c := seed(t, s)
	if err := s.RevokeCertificate(ctx, c.Serial, 4, fixedNow().Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	o := &acme.Order{ID: "order-2", AccountID: a.ID, Status: acme.StatusProcessing,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "b.example.com"}},
		Expires:     fixedNow().Add(time.Hour), CreatedAt: fixedNow()}
	if err := s.CreateOrder(ctx, o, nil); err != nil {
		t.Fatal(err)
	}
	der := []byte("der-2")
	chained := &acme.Certificate{Serial: "02", AccountID: a.ID, OrderID: o.ID, DER: der,
		ChainPEM: append(leafPEM(der), "-----BEGIN CERTIFICATE-----\naXNzdWVy\n-----END CERTIFICATE-----\n"...),
		Names:    []string{"b.example.com"}, NotBefore: fixedNow(), NotAfter: fixedNow().Add(time.Hour), IssuedAt: fixedNow()}
	if err := s.FinalizeOrder(ctx, chained); err != nil {
		t.Fatal(err)
	}
	cred := &acme.AdminCredential{Name: "ci", Role: "read", SHA256: strings.Repeat("ab", 32), CreatedAt: fixedNow(), CreatedBy: "admin"}
	if err := s.CreateAdminCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	dst := filepath.Join(dir, "dst.db")
	im, err := OpenImport(ctx, dst, fixedNow)
	if err != nil {
		t.Fatalf("OpenImport: %v", err)
	}
	e := openExporter(t, src)
	sum, err := e.Export(ctx, im, 1)
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	if _, err := im.Finish(ctx, sum); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if err := im.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	var before, after recordingSink
	for _, x := range []struct {
		path string
		sink *recordingSink
	}{{src, &before}, {dst, &after}} {
		e := openExporter(t, x.path)
		if _, err := e.Export(ctx, x.sink, 0); err != nil {
			t.Fatalf("Export %s: %v", x.path, err)
		}
		e.Close()
		x.sink.tables, x.sink.batches = nil, nil
	}
	if len(after.creds) != 1 || after.creds[0].Name != "ci" || after.creds[0].SHA256 != cred.SHA256 || after.creds[0].CreatedBy != "admin" {
		t.Errorf("the admin credentials copied: %+v; want ci", after.creds)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the copy differs:\n got %+v\nwant %+v", after, before)
	}

	s, err = Open(ctx, dst, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetCertificate(ctx, "02")
	if err != nil || string(got.ChainPEM) != string(chained.ChainPEM) {
		t.Errorf("GetCertificate 02: %v, chain %q", err, got.ChainPEM)
	}
	var split int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM certificates WHERE issuer_chain IS NOT NULL AND chain_pem IS NULL`).Scan(&split); err != nil || split != 1 {
		t.Errorf("certificates stored with their issuer chain apart: %d (%v), want 1", split, err)
	}
	b := &acme.Account{Key: []byte(`{"kty":"EC","x":"b"}`), KeyThumbprint: "thumb-b", Status: acme.StatusValid, CreatedAt: fixedNow()}
	if err := s.CreateAccount(ctx, b); err != nil || b.ID != "2" {
		t.Errorf("CreateAccount after the import: ID %q, %v; want 2", b.ID, err)
	}
}

// TestImportRefusesState: an import never writes into a database that
// holds ACME state.
func TestImportRefusesState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	im, err := OpenImport(t.Context(), path, fixedNow)
	if err == nil {
		im.Close()
		t.Fatal("OpenImport of a database with ACME state: no error")
	}
	if !strings.Contains(err.Error(), "already holds ACME state") {
		t.Errorf("OpenImport: %v", err)
	}
}
