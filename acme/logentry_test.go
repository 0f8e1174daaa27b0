// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
)

// checkLogged checks that the one pending entry of the verifiable log is
// cert's issuance (TestIssuanceRecordsValidations, with acme.Config.Log):
// the certificate itself, its issuer, account, tenant and order, each
// name with how it was validated, and who finalized it. Then an
// administrator revokes it: a second entry, with the admin and reason;
// the refused second revocation writes none.
func checkLogged(t *testing.T, st acme.Store, cert *acme.Certificate, o *acme.Order, tenant string, want []acme.NameValidation, actor transparency.Actor) {
	t.Helper()
	ctx := t.Context()
	ps, err := st.PendingLogEntries(ctx, 10)
	if err != nil || len(ps) != 1 {
		t.Fatalf("pending log entries: %d, %v; want the issuance's", len(ps), err)
	}
	e, err := transparency.ParseEntry(ps[0].Entry)
	if err != nil {
		t.Fatalf("the issuance's entry: %v\n%s", err, ps[0].Entry)
	}
	is := e.Issued
	switch {
	case e.Kind != transparency.KindIssued || is == nil:
		t.Fatalf("entry of kind %q, want %q", e.Kind, transparency.KindIssued)
	case string(is.Certificate) != string(cert.DER):
		t.Errorf("the entry's certificate is not the stored one")
	case is.Issuer != acme.DefaultIssuer || is.Account != string(o.AccountID) || is.Order != string(o.ID) || is.Tenant != tenant:
		t.Errorf("issued by %q to account %q, order %q, tenant %q; want %q, %q, %q, %q",
			is.Issuer, is.Account, is.Order, is.Tenant, acme.DefaultIssuer, o.AccountID, o.ID, tenant)
	case !e.Time.Equal(cert.IssuedAt):
		t.Errorf("logged at %v, issued at %v", e.Time, cert.IssuedAt)
	}
	if e.Actor != actor {
		t.Errorf("actor %+v, want %+v", e.Actor, actor)
	}
	if len(is.Validations) != len(want) {
		t.Fatalf("validations %+v, want %d", is.Validations, len(want))
	}
	for i, v := range is.Validations {
		if v.Name != want[i].Name || v.Method != want[i].Method {
			t.Errorf("validation %d: %+v, want %s by %s", i, v, want[i].Name, want[i].Method)
		}
	}
}

// TestRevocationLogged: with acme.Config.Log, an administrator's
// revocation writes its entry (serial, issuer, reason, the admin and
// address, the time) with the revocation; the refused second one writes
// none.
func TestRevocationLogged(t *testing.T) {
	ctx := t.Context()
	st := openSQLite(t)
	clock := newFakeClock()
	svc := newService(t, acme.Config{Owner: "a", Log: true}, acme.Deps{Store: st, Validator: &recorder{}, Now: clock.now})
	c := challengeAccount(t, svc, st, nil, clock.now())
	cert := &acme.Certificate{Serial: "0a1b2c", AccountID: c.Account.ID, OrderID: "o1", DER: []byte("der"),
		Names: []string{"a.example"}, NotBefore: clock.now(), NotAfter: clock.now().Add(24 * time.Hour), IssuedAt: clock.now()}
	issueStored(t, st, c, cert)
	admin := acme.Actor{Kind: "admin", ID: "oncall", Address: netip.MustParseAddr("192.0.2.9")}
	if _, err := svc.AdminRevoke(acme.WithActor(ctx, admin), cert.Serial, 4); err != nil {
		t.Fatal(err)
	}
	var p *acme.Problem
	if _, err := svc.AdminRevoke(acme.WithActor(ctx, admin), cert.Serial, 4); !errors.As(err, &p) || p.Type != acme.ProbAlreadyRevoked {
		t.Fatalf("second revocation: %v, want alreadyRevoked", err)
	}
	ps, err := st.PendingLogEntries(ctx, 10)
	if err != nil || len(ps) != 1 {
		t.Fatalf("pending log entries: %d, %v; want the revocation's alone", len(ps), err)
	}
	e, err := transparency.ParseEntry(ps[0].Entry)
	if err != nil {
		t.Fatal(err)
	}
	want := transparency.Revoked{Serial: cert.Serial, Issuer: acme.DefaultIssuer, Reason: 4}
	if e.Kind != transparency.KindRevoked || e.Revoked == nil || *e.Revoked != want || !e.Time.Equal(clock.now()) {
		t.Fatalf("entry %+v (revoked %+v), want %+v at %v", e, e.Revoked, want, clock.now())
	}
	if wantActor := (transparency.Actor{Kind: "admin", ID: "oncall", Address: "192.0.2.9"}); e.Actor != wantActor {
		t.Errorf("actor %+v, want %+v", e.Actor, wantActor)
	}
}

// issueStored stores cert as issued for a new order of c: the order is
// created, finalized and made valid through the store alone.
func issueStored(t *testing.T, st acme.Store, c acme.Caller, cert *acme.Certificate) {
	t.Helper()
	ctx := t.Context()
	now := cert.IssuedAt
	id := acme.Identifier{Type: acme.IdentifierDNS, Value: cert.Names[0]}
	a := &acme.Authorization{ID: acme.AuthzID("authz-" + string(cert.OrderID)), AccountID: c.Account.ID, Identifier: id,
		Status: acme.StatusValid, Expires: now.Add(time.Hour), CreatedAt: now}
	o := &acme.Order{ID: cert.OrderID, AccountID: c.Account.ID, Status: acme.StatusPending, Identifiers: []acme.Identifier{id},
		AuthzIDs: []acme.AuthzID{a.ID}, Expires: now.Add(time.Hour), CreatedAt: now}
	if err := st.CreateOrder(ctx, o, []*acme.Authorization{a}); err != nil {
		t.Fatal(err)
	}
	if err := st.StartFinalize(ctx, o.ID, "a", []byte("csr"), now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.FinalizeOrder(ctx, cert); err != nil {
		t.Fatal(err)
	}
}
