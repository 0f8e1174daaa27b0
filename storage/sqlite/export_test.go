// SPDX-License-Identifier: Apache-2.0

package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/transfer"
)

// recordingSink is a transfer.Sink that keeps every row and the size of
// every batch, in the order received.
type recordingSink struct {
	tables  []transfer.Table // the table of each batch
	batches []int            // the size of each batch
	creds   []transfer.AdminCredential
	tenants []transfer.Tenant
	accts   []transfer.Account
	keys    []transfer.EABKey
	authzs  []transfer.Authz
	chs     []transfer.Challenge
	orders  []transfer.Order
	certs   []transfer.Certificate
	log     []transfer.LogEntry // export_log_test.go
	hashes  []transfer.LogHash
	cps     []transfer.LogCheckpoint
}

func (r *recordingSink) note(t transfer.Table, n int) {
	r.tables = append(r.tables, t)
	r.batches = append(r.batches, n)
}

func (r *recordingSink) AdminCredentials(_ context.Context, rows []transfer.AdminCredential) error {
	r.note(transfer.AdminCreds, len(rows))
	r.creds = append(r.creds, rows...)
	return nil
}

func (r *recordingSink) Tenants(_ context.Context, rows []transfer.Tenant) error {
	r.note(transfer.Tenants, len(rows))
	r.tenants = append(r.tenants, rows...)
	return nil
}

func (r *recordingSink) Accounts(_ context.Context, rows []transfer.Account) error {
	r.note(transfer.Accounts, len(rows))
	r.accts = append(r.accts, rows...)
	return nil
}

func (r *recordingSink) EABKeys(_ context.Context, rows []transfer.EABKey) error {
	r.note(transfer.EABKeys, len(rows))
	r.keys = append(r.keys, rows...)
	return nil
}

func (r *recordingSink) Authzs(_ context.Context, rows []transfer.Authz) error {
	r.note(transfer.Authzs, len(rows))
	r.authzs = append(r.authzs, rows...)
	return nil
}

func (r *recordingSink) Challenges(_ context.Context, rows []transfer.Challenge) error {
	r.note(transfer.Challenges, len(rows))
	r.chs = append(r.chs, rows...)
	return nil
}

func (r *recordingSink) Orders(_ context.Context, rows []transfer.Order) error {
	r.note(transfer.Orders, len(rows))
	r.orders = append(r.orders, rows...)
	return nil
}

func (r *recordingSink) Certificates(_ context.Context, rows []transfer.Certificate) error {
	r.note(transfer.Certificates, len(rows))
	r.certs = append(r.certs, rows...)
	return nil
}

// openExporter opens an exporter on path, closed when the test ends.
func openExporter(t *testing.T, path string) *Exporter {
	t.Helper()
	e, err := OpenExporter(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatalf("OpenExporter: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// TestExportCoversSchema: every table of the schema is exported or named
// in notExported with its reason, and so is every column of an exported
// table. A migration that adds ACME state fails here until weir
// migrate-storage copies it (or says why not).
func TestExportCoversSchema(t *testing.T) {
	s := openTemp(t)
	ctx := t.Context()
	rows, err := s.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	skip := notExported()
	for _, name := range tables {
		if _, ok := skip[name]; ok {
			continue
		}
		if !slices.Contains(transfer.Tables(), transfer.Table(name)) {
			t.Errorf("table %s is neither exported (transfer.Tables) nor in notExported: decide whether weir migrate-storage copies it", name)
		}
	}
	for _, tbl := range transfer.Tables() {
		if !slices.Contains(tables, string(tbl)) {
			t.Errorf("transfer table %s is not in the SQLite schema", tbl)
			continue
		}
		cols, err := s.r.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, string(tbl))
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for cols.Next() {
			var c string
			if err := cols.Scan(&c); err != nil {
				t.Fatal(err)
			}
			have = append(have, c)
		}
		cols.Close()
		exported := strings.Split(exportColumns(tbl), ", ")
		for _, c := range have {
			if _, ok := skip[string(tbl)+"."+c]; !ok && !slices.Contains(exported, c) {
				t.Errorf("column %s.%s is neither exported nor in notExported: add it to the transfer record and exportColumns, or say why not", tbl, c)
			}
		}
		for _, c := range exported {
			if !slices.Contains(have, c) {
				t.Errorf("exported column %s.%s is not in the schema", tbl, c)
			}
		}
	}
}

// TestExportRefusesOpenDatabase: while a store (a running weir) has the
// file open, OpenExporter fails with ErrInUse; once it closes, the export
// opens, and holds the file against a second one and a store.
func TestExportRefusesOpenDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	start := time.Now()
	if _, err := OpenExporter(t.Context(), path, fixedNow); !errors.Is(err, ErrInUse) {
		t.Errorf("OpenExporter with the store open: %v, want ErrInUse", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("OpenExporter took %s to give up", d)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	e := openExporter(t, path)
	if _, err := OpenExporter(t.Context(), path, fixedNow); !errors.Is(err, ErrInUse) {
		t.Errorf("a second OpenExporter: %v, want ErrInUse", err)
	}
	// A weir starting during the export cannot open the file.
	if s, err := Open(t.Context(), path, fixedNow); err == nil {
		s.Close()
		t.Error("Open during an export: nil error, want the database locked")
	}
	e.Close()
	openExporter(t, path).Close()
}

// TestExportMissingFile: a path that does not exist is an error, and no
// empty database is created there.
func TestExportMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.db")
	if _, err := OpenExporter(t.Context(), path, fixedNow); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExporter(missing): %v, want a not-exist error", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExporter created %s", path)
	}
}

// TestExportRows: every row comes out in its stored form, tables in the
// order of transfer.Tables, in batches of at most the size asked for, with
// the counts and AUTOINCREMENT's counters.
func TestExportRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	a, c := seed(t, s)
	if err := s.CreateEABKey(ctx, &acme.EABKey{ID: "kid-1", Label: "team", HMACKey: []byte("0123456789abcdef0123456789abcdef"), CreatedAt: fixedNow()}); err != nil {
		t.Fatal(err)
	}
	b := &acme.Account{Key: []byte(`{"kty":"EC","x":"b"}`), KeyThumbprint: "thumb-b", Status: acme.StatusValid,
		CreatedAt: fixedNow().Add(time.Second), EABKeyID: "kid-1", Contact: []string{"mailto:b@example.org"}}
	if err := s.CreateAccount(ctx, b); err != nil {
		t.Fatal(err)
	}
	authz := &acme.Authorization{ID: "authz-1", AccountID: b.ID, Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: "example.org"},
		Wildcard: true, Status: acme.StatusPending, Expires: fixedNow().Add(time.Hour), CreatedAt: fixedNow(),
		Challenges: []*acme.Challenge{{ID: "ch-1", AuthzID: "authz-1", Type: acme.ChallengeDNS01, Token: "tok", Status: acme.StatusPending, UpdatedAt: fixedNow()}}}
	o := &acme.Order{ID: "order-2", AccountID: b.ID, Status: acme.StatusPending, Identifiers: []acme.Identifier{authz.Identifier},
		AuthzIDs: []acme.AuthzID{"authz-1"}, Expires: fixedNow().Add(time.Hour), CreatedAt: fixedNow(), Replaces: "aaaa.AQ", Profile: "tls-server"}
	if err := s.CreateOrder(ctx, o, []*acme.Authorization{authz}); err != nil {
		t.Fatal(err)
	}
	revokedAt := fixedNow().Add(time.Minute)
	if err := s.RevokeCertificate(ctx, c.Serial, 1, revokedAt, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRenewalWindows(ctx, []string{c.Serial}, fixedNow(), fixedNow().Add(time.Second), fixedNow()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	e := openExporter(t, path)
	var sink recordingSink
	sum, err := e.Export(ctx, &sink, 1)
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	want := transfer.Counts{transfer.Accounts: 2, transfer.EABKeys: 1, transfer.Authzs: 1, transfer.Challenges: 1,
		transfer.Orders: 2, transfer.Certificates: 1}
	if err := transfer.Compare(want, sum.Counts); err != nil {
		t.Error(err)
	}
	if sum.AccountSeq != 2 || sum.OrderSeq != 2 {
		t.Errorf("sequences: accounts %d, orders %d; want 2 and 2", sum.AccountSeq, sum.OrderSeq)
	}
	wantTables := []transfer.Table{transfer.Accounts, transfer.Accounts, transfer.EABKeys, transfer.Authzs,
		transfer.Challenges, transfer.Orders, transfer.Orders, transfer.Certificates}
	if !slices.Equal(sink.tables, wantTables) {
		t.Errorf("batches by table %v, want %v", sink.tables, wantTables)
	}
	for i, n := range sink.batches {
		if n != 1 {
			t.Errorf("batch %d has %d rows, want 1", i, n)
		}
	}

	if got := sink.accts[0]; got.ID != 1 || got.KeyThumbprint != string(a.KeyThumbprint) || string(got.JWK) != string(a.Key) ||
		got.Contact != "[]" || got.CreatedAt != fixedNow().UnixNano() {
		t.Errorf("account 1: %+v", got)
	}
	if got := sink.accts[1]; got.ID != 2 || got.EABKeyID != "kid-1" || got.Contact != `["mailto:b@example.org"]` {
		t.Errorf("account 2: %+v", got)
	}
	if k := sink.keys[0]; k.BoundAccount == nil || *k.BoundAccount != 2 || k.BoundAt == nil || k.RevokedAt != nil || k.Label != "team" {
		t.Errorf("EAB key: %+v", k)
	}
	if z := sink.authzs[0]; !z.Wildcard || z.AccountID != 2 || z.IdentValue != "example.org" {
		t.Errorf("authz: %+v", z)
	}
	if ch := sink.chs[0]; ch.AuthzID != "authz-1" || ch.Position != 0 || ch.Error != nil || ch.Token != "tok" {
		t.Errorf("challenge: %+v", ch)
	}
	if o := sink.orders[0]; o.Seq != 1 || o.ID != "order-1" || o.Status != "valid" || o.CertSerial != c.Serial {
		t.Errorf("order 1: %+v", o)
	}
	if o := sink.orders[1]; o.Seq != 2 || o.Replaces != "aaaa.AQ" || o.Profile != "tls-server" || o.AuthzIDs != `["authz-1"]` {
		t.Errorf("order 2: %+v", o)
	}
	cert := sink.certs[0]
	if cert.Serial != c.Serial || cert.RevokedAt == nil || *cert.RevokedAt != revokedAt.UnixNano() || cert.Reason != 1 ||
		!cert.RenewNow || cert.RenewalEnd != fixedNow().Add(time.Second).UnixNano() || cert.NameSet != "example.com" ||
		string(cert.DER) != "der" || cert.Names != `["example.com"]` {
		t.Errorf("certificate: %+v", cert)
	}
}

// failingSink fails on the first batch of certificates.
type failingSink struct{ recordingSink }

func (f *failingSink) Certificates(context.Context, []transfer.Certificate) error {
	return errors.New("target is gone")
}

// TestExportSinkError: a sink's error ends the export with it.
func TestExportSinkError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weir.db")
	s, err := Open(t.Context(), path, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	s.Close()
	e := openExporter(t, path)
	if _, err := e.Export(t.Context(), &failingSink{}, 0); err == nil || !strings.Contains(err.Error(), "target is gone") {
		t.Errorf("Export into a failing sink: %v", err)
	}
}
