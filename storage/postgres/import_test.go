// SPDX-License-Identifier: Apache-2.0

package postgres

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/storage/transfer"
)

// ns is t in the stored form of the transfer records.
func ns(t time.Time) int64 { return t.UnixNano() }

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// importFixture is a small export, with gaps in the IDs: accounts 3 and 7
// (7 bound with an EAB key), a pending order of 3 with a wildcard
// authorization, and a valid order of 7 with a revoked certificate in an
// incident. The source assigned account IDs up to 9 and order sequence
// numbers up to 12.
func importFixture() (transfer.Summary, []transfer.Account, []transfer.EABKey, []transfer.Authz, []transfer.Challenge, []transfer.Order, []transfer.Certificate) {
	t0 := fixedNow()
	problem := `{"type":"urn:ietf:params:acme:error:unauthorized","detail":"nul \u0000 and ünïcode","status":403}`
	accts := []transfer.Account{
		{ID: 3, KeyThumbprint: "thumb-3", JWK: []byte(`{"kty":"EC","x":"3"}`), Contact: `["mailto:a@example.org"]`,
			Status: "valid", CreatedAt: ns(t0), CreatedIP: "192.0.2.3"},
		{ID: 7, KeyThumbprint: "thumb-7", JWK: []byte(`{"kty":"EC","x":"7"}`), Contact: "[]", Status: "valid",
			CreatedAt: ns(t0.Add(time.Second)), EABKeyID: "kid-1"},
	}
	keys := []transfer.EABKey{
		{ID: "kid-1", Label: "team", HMACKey: []byte("0123456789abcdef0123456789abcdef"), CreatedAt: ns(t0),
			BoundAccount: ptr(int64(7)), BoundAt: ptr(ns(t0.Add(time.Second)))},
		{ID: "kid-2", Label: "team", HMACKey: []byte("fedcba9876543210fedcba9876543210"), CreatedAt: ns(t0),
			RevokedAt: ptr(ns(t0.Add(time.Minute)))},
	}
	authzs := []transfer.Authz{
		{ID: "authz-a", AccountID: 3, IdentType: "dns", IdentValue: "example.org", Wildcard: true, Status: "pending",
			Expires: ns(t0.Add(time.Hour)), CreatedAt: ns(t0)},
		{ID: "authz-b", AccountID: 7, IdentType: "dns", IdentValue: "b.example.org", Status: "valid",
			Expires: ns(t0.Add(30 * 24 * time.Hour)), CreatedAt: ns(t0)},
	}
	chs := []transfer.Challenge{
		{ID: "ch-a", AuthzID: "authz-a", Position: 0, Type: "dns-01", Token: "tok-a", Status: "invalid",
			Error: &problem, UpdatedAt: ns(t0)},
		{ID: "ch-b1", AuthzID: "authz-b", Position: 0, Type: "http-01", Token: "tok-b1", Status: "valid",
			Validated: ns(t0.Add(time.Second)), UpdatedAt: ns(t0.Add(time.Second))},
		{ID: "ch-b2", AuthzID: "authz-b", Position: 1, Type: "dns-01", Token: "tok-b2", Status: "pending", UpdatedAt: ns(t0)},
	}
	orders := []transfer.Order{
		{Seq: 5, ID: "order-a", AccountID: 3, Status: "pending", Identifiers: `[{"type":"dns","value":"*.example.org"}]`,
			AuthzIDs: `["authz-a"]`, Expires: ns(t0.Add(time.Hour)), CreatedAt: ns(t0), Profile: "tls-server"},
		{Seq: 9, ID: "order-b", AccountID: 7, Status: "valid", Identifiers: `[{"type":"dns","value":"b.example.org"}]`,
			AuthzIDs: `["authz-b"]`, NotBefore: ns(t0), NotAfter: ns(t0.Add(48 * time.Hour)), Expires: ns(t0.Add(time.Hour)),
			CertSerial: "0abc", CreatedAt: ns(t0), Replaces: "aaaa.AQ"},
	}
	certs := []transfer.Certificate{
		{Serial: "0abc", AccountID: 7, OrderID: "order-b", DER: []byte("DER"), ChainPEM: []byte("PEM"),
			Names: `["b.example.org"]`, NameSet: "b.example.org", NotBefore: ns(t0), NotAfter: ns(t0.Add(48 * time.Hour)),
			IssuedAt: ns(t0), RevokedAt: ptr(ns(t0.Add(time.Hour))), Reason: 4, Profile: "tls-server",
			RenewalStart: ns(t0.Add(-time.Hour)), RenewalEnd: ns(t0.Add(-time.Minute)), RenewNow: true},
	}
	sum := transfer.Summary{
		Counts: transfer.Counts{transfer.Accounts: 2, transfer.EABKeys: 2, transfer.Authzs: 2, transfer.Challenges: 3,
			transfer.Orders: 2, transfer.Certificates: 1},
		AccountSeq: 9, OrderSeq: 12,
	}
	return sum, accts, keys, authzs, chs, orders, certs
}

// runImport imports importFixture into s, one row per batch for the
// tables with several, and returns its summary and the Finish result.
func runImport(t *testing.T, s *Store, force bool) (transfer.Summary, transfer.Counts, error) {
	t.Helper()
	ctx := t.Context()
	sum, accts, keys, authzs, chs, orders, certs := importFixture()
	im, err := s.BeginImport(ctx, force)
	if err != nil {
		t.Fatalf("BeginImport: %v", err)
	}
	defer im.Close()
	for i := range accts {
		if err := im.Accounts(ctx, accts[i:i+1]); err != nil {
			t.Fatalf("Accounts: %v", err)
		}
	}
	steps := []error{
		im.EABKeys(ctx, keys), im.Authzs(ctx, authzs), im.Challenges(ctx, chs),
		im.Orders(ctx, orders[:1]), im.Orders(ctx, orders[1:]), im.Orders(ctx, nil), im.Certificates(ctx, certs),
	}
	if err := errors.Join(steps...); err != nil {
		t.Fatalf("import: %v", err)
	}
	got, err := im.Finish(ctx, sum)
	return sum, got, err
}

// TestImport: every row reads back through the store as the source wrote
// it, with the same IDs, and new accounts and orders come after the
// highest IDs the source ever assigned.
func TestImport(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	sum, got, err := runImport(t, s, false)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if err := transfer.Compare(sum.Counts, got); err != nil {
		t.Error(err)
	}
	t0 := fixedNow()

	a, err := s.GetAccount(ctx, "7")
	if err != nil || a.KeyThumbprint != "thumb-7" || a.EABKeyID != "kid-1" || !a.CreatedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("account 7: %+v, %v", a, err)
	}
	if a, err := s.GetAccountByKey(ctx, "thumb-3"); err != nil || a.ID != "3" || !slices.Equal(a.Contact, []string{"mailto:a@example.org"}) || a.CreatedIP != "192.0.2.3" {
		t.Errorf("account by thumb-3: %+v, %v", a, err)
	}
	if k, err := s.GetEABKey(ctx, "kid-1"); err != nil || k.BoundAccount != "7" || !k.BoundAt.Equal(t0.Add(time.Second)) {
		t.Errorf("EAB key kid-1: %+v, %v", k, err)
	}
	if k, err := s.GetEABKey(ctx, "kid-2"); err != nil || k.BoundAccount != "" || !k.RevokedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("EAB key kid-2: %+v, %v", k, err)
	}
	z, err := s.GetAuthz(ctx, "authz-b")
	if err != nil || len(z.Challenges) != 2 || z.Challenges[0].ID != "ch-b1" || z.Challenges[1].ID != "ch-b2" ||
		!z.Challenges[0].Validated.Equal(t0.Add(time.Second)) || z.AccountID != "7" {
		t.Errorf("authz-b: %+v, %v", z, err)
	}
	ch, err := s.GetChallenge(ctx, "ch-a")
	if err != nil || ch.Error == nil || ch.Error.Detail != "nul \x00 and ünïcode" || ch.Error.Status != 403 {
		t.Errorf("ch-a: %+v, %v", ch, err)
	}
	if z, err := s.GetAuthz(ctx, "authz-a"); err != nil || !z.Wildcard || z.Identifier.Value != "example.org" {
		t.Errorf("authz-a: %+v, %v", z, err)
	}
	o, err := s.GetOrder(ctx, "order-b")
	if err != nil || o.Status != acme.StatusValid || o.CertSerial != "0abc" || o.Replaces != "aaaa.AQ" ||
		!o.NotAfter.Equal(t0.Add(48*time.Hour)) || !slices.Equal(o.AuthzIDs, []acme.AuthzID{"authz-b"}) {
		t.Errorf("order-b: %+v, %v", o, err)
	}
	if r, err := s.ReplacingOrder(ctx, "aaaa.AQ"); err != nil || r.ID != "order-b" {
		t.Errorf("ReplacingOrder: %+v, %v", r, err)
	}
	c, err := s.GetCertificate(ctx, "0abc")
	if err != nil || !c.RevokedAt.Equal(t0.Add(time.Hour)) || c.RevocationReason != 4 || !c.RenewNow ||
		!c.RenewalEnd.Equal(t0.Add(-time.Minute)) || string(c.DER) != "DER" || !slices.Equal(c.Names, []string{"b.example.org"}) {
		t.Errorf("certificate: %+v, %v", c, err)
	}
	if n, err := s.RevokedCount(ctx); err != nil || n != 1 {
		t.Errorf("RevokedCount: %d, %v", n, err)
	}

	// New IDs follow the source's highest: account 10, order seq 13.
	na := &acme.Account{Key: []byte(`{}`), KeyThumbprint: "thumb-new", Status: acme.StatusValid, CreatedAt: t0}
	if err := s.CreateAccount(ctx, na); err != nil || na.ID != "10" {
		t.Errorf("new account: ID %q, %v; want 10", na.ID, err)
	}
	no := &acme.Order{ID: "order-new", AccountID: "3", Status: acme.StatusPending, Expires: t0.Add(time.Hour), CreatedAt: t0,
		Identifiers: []acme.Identifier{{Type: acme.IdentifierDNS, Value: "example.org"}}, AuthzIDs: []acme.AuthzID{"authz-a"}}
	if err := s.CreateOrder(ctx, no, nil); err != nil {
		t.Fatal(err)
	}
	var seq int64
	if err := s.pool.QueryRow(ctx, `SELECT seq FROM orders WHERE id = 'order-new'`).Scan(&seq); err != nil || seq != 13 {
		t.Errorf("new order's seq %d, %v; want 13", seq, err)
	}
	// Paging keeps the source's order: order-a (5) before order-new (13).
	if ids, _, err := s.ListOrders(ctx, "3", "", 10); err != nil || !slices.Equal(ids, []acme.OrderID{"order-a", "order-new"}) {
		t.Errorf("ListOrders(3): %v, %v", ids, err)
	}
}

// TestImportRefusesNonEmpty: a schema with ACME state is refused with its
// counts, and with force it is emptied first.
func TestImportRefusesNonEmpty(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	for i, th := range []acme.Thumbprint{"x", "y"} {
		if err := s.CreateAccount(ctx, &acme.Account{Key: []byte(`{}`), KeyThumbprint: th, Status: acme.StatusValid, CreatedAt: fixedNow()}); err != nil {
			t.Fatalf("CreateAccount %d: %v", i, err)
		}
	}
	_, err := s.BeginImport(ctx, false)
	var ne *NotEmptyError
	if !errors.As(err, &ne) || ne.Counts[transfer.Accounts] != 2 || ne.Counts[transfer.Orders] != 0 {
		t.Fatalf("BeginImport into a schema with 2 accounts: %v, want a NotEmptyError counting them", err)
	}

	im, err := s.BeginImport(ctx, true)
	if err != nil {
		t.Fatalf("BeginImport(force): %v", err)
	}
	if im.Emptied()[transfer.Accounts] != 2 {
		t.Errorf("Emptied: %v, want 2 accounts", im.Emptied())
	}
	im.Close()
	sum, got, err := runImport(t, s, false) // empty now
	if err != nil {
		t.Fatalf("import after force: %v", err)
	}
	if err := transfer.Compare(sum.Counts, got); err != nil {
		t.Error(err)
	}
	if _, err := s.GetAccountByKey(ctx, "x"); !errors.Is(err, acme.ErrNotFound) {
		t.Errorf("an account of before the forced import: %v, want ErrNotFound", err)
	}
}

// TestImportVerifiesCounts: Finish fails when the tables do not hold what
// the source counted.
func TestImportVerifiesCounts(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	im, err := s.BeginImport(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	_, accts, _, _, _, _, _ := importFixture()
	if err := im.Accounts(ctx, accts); err != nil {
		t.Fatal(err)
	}
	want := transfer.Summary{Counts: transfer.Counts{transfer.Accounts: 3}}
	if _, err := im.Finish(ctx, want); err == nil {
		t.Error("Finish with 2 accounts of 3: nil error")
	}
}

// TestImportConflict: a row whose key is already there fails as
// acme.ErrConflict, and its batch writes nothing.
func TestImportConflict(t *testing.T) {
	s := openFresh(t)
	ctx := t.Context()
	im, err := s.BeginImport(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	_, accts, _, _, _, _, _ := importFixture()
	if err := im.Accounts(ctx, accts[:1]); err != nil {
		t.Fatal(err)
	}
	if err := im.Accounts(ctx, accts); !errors.Is(err, acme.ErrConflict) {
		t.Errorf("a batch repeating account 3: %v, want ErrConflict", err)
	}
	if _, err := s.GetAccount(ctx, "7"); !errors.Is(err, acme.ErrNotFound) {
		t.Errorf("account 7 of the failed batch: %v, want ErrNotFound", err)
	}
}

// TestImportHoldsMigrationLock: a weir starting on the schema during an
// import waits for it to end.
func TestImportHoldsMigrationLock(t *testing.T) {
	_, dsn := freshSchema(t)
	s := openDSN(t, dsn)
	im, err := s.BeginImport(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if other, err := Open(ctx, Config{DSN: dsn}, fixedNow); err == nil {
		other.Close()
		t.Error("Open during an import: nil error, want it to wait for the migration lock")
	}
	im.Close()
	openDSN(t, dsn)
}
