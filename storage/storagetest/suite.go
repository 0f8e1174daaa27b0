// SPDX-License-Identifier: Apache-2.0

package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Run runs the contract suite as sub-tests of t. open must return a new,
// empty store for each call, and arrange (with t.Cleanup) to close it.
func Run(t *testing.T, open func(t *testing.T) acme.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f *fixture)
	}{
		{"Accounts", testAccounts},
		{"AccountUpdate", testAccountUpdate},
		{"AccountKeyChange", testAccountKeyChange},
		{"Orders", testOrders},
		{"OrderReusesAuthz", testOrderReusesAuthz},
		{"OrderDuplicateIDs", testOrderDuplicateIDs},
		{"GetAuthzs", testGetAuthzs},
		{"OrderList", testOrderList},
		{"OrderUpdate", testOrderUpdate},
		{"Authz", testAuthz},
		{"FindValidAuthz", testFindValidAuthz},
		{"AuthzUpdate", testAuthzUpdate},
		{"Challenges", testChallenges},
		{"Certificates", testCertificates},
		{"FinalizeConcurrent", testFinalizeConcurrent},
		{"FinalizeNotProcessing", testFinalizeNotProcessing},
		{"CertValidations", testCertValidations},
		{"Revoke", testRevoke},
		{"ListRevoked", testListRevoked},
		{"RevokedCount", testRevokedCount},
		{"RevokedByIssuer", testRevokedByIssuer},
		{"CRLNumbers", testCRLNumbers},
		{"CRLShardsInUse", testCRLShardsInUse},
		{"IssuerCounts", testIssuerCounts},
		{"NotFound", testNotFound},
		{"ListAccounts", testListAccounts},
		{"ListCertificates", testListCertificates},
		{"CountsKept", testCountsKept},
		{"Search", testSearch},
		{"ListAllOrders", testListAllOrders},
		{"InventoryBadCursor", testInventoryBadCursor},
		{"RecentNames", testRecentNames},
		{"EAB", testEAB},
		{"Tenants", testTenants},
		{"AdminCredentials", testAdminCredentials},
		{"Replacement", testReplacement},
		{"RenewalWindows", testRenewalWindows},
		{"IssuedWindows", testIssuedWindows},
		{"PlanRemovals", testPlanRemovals},
		{"Leases", testLeases},
		{"Log", testLog},
		{"LogCosign", testLogCosign},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, &fixture{ctx: t.Context(), s: open(t)})
		})
	}
}

// fixture is one sub-test's store and the helpers that fill it.
type fixture struct {
	ctx context.Context
	s   acme.Store
	n   int // the last number handed out by id
}

// base is the instant the suite's times are built from. It has microsecond
// precision and a zone other than UTC, to check that times round-trip by
// time.Equal whatever the location.
func base() time.Time {
	return time.Date(2031, 3, 4, 5, 6, 7, 891011000, time.FixedZone("UTC+2", 2*60*60))
}

// at returns base plus d.
func at(d time.Duration) time.Time { return base().Add(d) }

// id returns a new ID with the given prefix, unique within the fixture.
func (f *fixture) id(prefix string) string {
	f.n++
	return fmt.Sprintf("%s-%d", prefix, f.n)
}

// account creates and returns a valid account.
func (f *fixture) account(t *testing.T) *acme.Account {
	t.Helper()
	a := &acme.Account{
		Key:           []byte(`{"kty":"EC","crv":"P-256","x":"` + f.id("x") + `"}`),
		KeyThumbprint: acme.Thumbprint(f.id("thumb")),
		Contact:       []string{"mailto:admin@example.com", "mailto:ops@example.com"},
		Status:        acme.StatusValid,
		CreatedAt:     at(0),
		CreatedIP:     "192.0.2.1",
	}
	if err := f.s.CreateAccount(f.ctx, a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return a
}

// authz returns a new, unstored authorization of accountID for a DNS name
// with three challenges in the given status.
func (f *fixture) authz(accountID acme.AccountID, name string, wildcard bool, status acme.Status, expires time.Time) *acme.Authorization {
	a := &acme.Authorization{
		ID:         acme.AuthzID(f.id("authz")),
		AccountID:  accountID,
		Identifier: acme.Identifier{Type: acme.IdentifierDNS, Value: name},
		Wildcard:   wildcard,
		Status:     status,
		Expires:    expires,
		CreatedAt:  at(time.Second),
	}
	for _, typ := range []acme.ChallengeType{acme.ChallengeTLSALPN01, acme.ChallengeHTTP01, acme.ChallengeDNS01} {
		if wildcard && typ != acme.ChallengeDNS01 {
			continue
		}
		a.Challenges = append(a.Challenges, &acme.Challenge{
			ID:        acme.ChallengeID(f.id("chall")),
			AuthzID:   a.ID,
			Type:      typ,
			Token:     f.id("token"),
			Status:    acme.StatusPending,
			UpdatedAt: at(time.Second),
		})
	}
	return a
}

// order creates and returns a pending order of accountID whose new
// authorizations are authzs and whose other authorization IDs are reused.
func (f *fixture) order(t *testing.T, accountID acme.AccountID, authzs []*acme.Authorization, reused ...acme.AuthzID) *acme.Order {
	t.Helper()
	o := &acme.Order{
		ID:        acme.OrderID(f.id("order")),
		AccountID: accountID,
		Status:    acme.StatusPending,
		Expires:   at(7 * 24 * time.Hour),
		CreatedAt: at(2 * time.Second),
		Profile:   "tls-server",
	}
	for _, a := range authzs {
		o.Identifiers = append(o.Identifiers, a.Identifier)
		o.AuthzIDs = append(o.AuthzIDs, a.ID)
	}
	o.AuthzIDs = append(o.AuthzIDs, reused...)
	if err := f.s.CreateOrder(f.ctx, o, authzs); err != nil {
		t.Fatalf("CreateOrder(%s): %v", o.ID, err)
	}
	return o
}

// simpleOrder creates a pending order of accountID for one new pending
// authorization of name.
func (f *fixture) simpleOrder(t *testing.T, accountID acme.AccountID, name string) *acme.Order {
	t.Helper()
	return f.order(t, accountID, []*acme.Authorization{
		f.authz(accountID, name, false, acme.StatusPending, at(24*time.Hour)),
	})
}

// processingOrder creates an order of accountID for name and moves it to
// processing.
func (f *fixture) processingOrder(t *testing.T, accountID acme.AccountID, name string) *acme.Order {
	t.Helper()
	o := f.simpleOrder(t, accountID, name)
	o.Status = acme.StatusProcessing
	if err := f.s.UpdateOrder(f.ctx, o, acme.StatusPending); err != nil {
		t.Fatalf("UpdateOrder(%s, pending->processing): %v", o.ID, err)
	}
	return o
}

// settle writes the outcome of challenge c (its status, error and times)
// with its authorization, whose own status and expiry stay as stored
// (UpdateAuthz of one challenge, as a validation writes it).
func (f *fixture) settle(t *testing.T, c *acme.Challenge) {
	t.Helper()
	a, err := f.s.GetAuthz(f.ctx, c.AuthzID)
	if err != nil {
		t.Fatalf("GetAuthz(%s): %v", c.AuthzID, err)
	}
	a.Challenges = []*acme.Challenge{c}
	if err := f.s.UpdateAuthz(f.ctx, a, a.Status); err != nil {
		t.Fatalf("UpdateAuthz(%s, challenge %s %s): %v", a.ID, c.ID, c.Status, err)
	}
}

// cert returns a new, unstored certificate for order o.
func (f *fixture) cert(o *acme.Order, serial string, notAfter time.Time) *acme.Certificate {
	names := make([]string, len(o.Identifiers))
	for i, id := range o.Identifiers {
		names[i] = id.Value
	}
	slices.Sort(names)
	validations := make([]acme.NameValidation, len(names))
	for i, n := range names {
		validations[i] = acme.NameValidation{Name: n, Method: string(acme.ChallengeHTTP01), AuthzID: acme.AuthzID("authz-" + n),
			ValidatedAt: notAfter.Add(-90*24*time.Hour - time.Minute)}
	}
	return &acme.Certificate{
		Serial:    serial,
		AccountID: o.AccountID,
		OrderID:   o.ID,
		DER:       []byte("DER of " + serial),
		ChainPEM:  []byte("-----BEGIN CERTIFICATE-----\n" + serial + "\n-----END CERTIFICATE-----\n"),
		Names:     names,
		NotBefore: notAfter.Add(-90 * 24 * time.Hour),
		NotAfter:  notAfter,
		IssuedAt:  notAfter.Add(-90*24*time.Hour + time.Minute),
		Profile:   o.Profile,
		// A window in the last third of the lifetime, as ARI suggests.
		RenewalStart: notAfter.Add(-30 * 24 * time.Hour),
		RenewalEnd:   notAfter.Add(-28 * 24 * time.Hour),
		Validations:  validations,
	}
}

// issue creates an order of accountID for name, finalizes it with a new
// certificate expiring at notAfter, and returns the certificate.
func (f *fixture) issue(t *testing.T, accountID acme.AccountID, name string, notAfter time.Time) *acme.Certificate {
	t.Helper()
	o := f.processingOrder(t, accountID, name)
	c := f.cert(o, fmt.Sprintf("%040x", f.n), notAfter)
	if err := f.s.FinalizeOrder(f.ctx, c); err != nil {
		t.Fatalf("FinalizeOrder(%s): %v", o.ID, err)
	}
	return c
}

// wantErr fails t unless err wraps target. call describes the call.
func wantErr(t *testing.T, call string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want one wrapping %v", call, err, target)
	}
}

// diffs accumulates the differences found when comparing two values.
type diffs []string

// add records a difference in field when got != want.
func add[T comparable](d *diffs, field string, got, want T) {
	if got != want {
		*d = append(*d, fmt.Sprintf("%s: got %v, want %v", field, got, want))
	}
}

// addTime records a difference in field when !got.Equal(want).
func (d *diffs) addTime(field string, got, want time.Time) {
	if !got.Equal(want) {
		*d = append(*d, fmt.Sprintf("%s: got %v, want %v", field, got, want))
	}
}

// addSlice records a difference in field when the slices differ; nil and
// empty are equal.
func addSlice[T comparable](d *diffs, field string, got, want []T) {
	if !slices.Equal(got, want) {
		*d = append(*d, fmt.Sprintf("%s: got %v, want %v", field, got, want))
	}
}

// addProblem records a difference in field when the problems' serialized
// fields differ.
func (d *diffs) addProblem(field string, got, want *acme.Problem) {
	if (got == nil) != (want == nil) {
		*d = append(*d, fmt.Sprintf("%s: got %v, want %v", field, got, want))
		return
	}
	if got == nil {
		return
	}
	add(d, field+".Type", got.Type, want.Type)
	add(d, field+".Detail", got.Detail, want.Detail)
	add(d, field+".Status", got.Status, want.Status)
	if (got.Identifier == nil) != (want.Identifier == nil) {
		*d = append(*d, fmt.Sprintf("%s.Identifier: got %v, want %v", field, got.Identifier, want.Identifier))
	} else if got.Identifier != nil {
		add(d, field+".Identifier", *got.Identifier, *want.Identifier)
	}
	addSlice(d, field+".Algorithms", got.Algorithms, want.Algorithms)
	if len(got.Subproblems) != len(want.Subproblems) {
		*d = append(*d, fmt.Sprintf("%s.Subproblems: got %d, want %d", field, len(got.Subproblems), len(want.Subproblems)))
		return
	}
	for i := range got.Subproblems {
		d.addProblem(fmt.Sprintf("%s.Subproblems[%d]", field, i), got.Subproblems[i], want.Subproblems[i])
	}
}

// report fails t with every difference, prefixed by what.
func (d diffs) report(t *testing.T, what string) {
	t.Helper()
	for _, s := range d {
		t.Errorf("%s: %s", what, s)
	}
}

// checkAccount compares every field of two accounts.
func checkAccount(t *testing.T, what string, got, want *acme.Account) {
	t.Helper()
	var d diffs
	add(&d, "ID", got.ID, want.ID)
	add(&d, "Key", string(got.Key), string(want.Key))
	add(&d, "KeyThumbprint", got.KeyThumbprint, want.KeyThumbprint)
	addSlice(&d, "Contact", got.Contact, want.Contact)
	add(&d, "Status", got.Status, want.Status)
	d.addTime("CreatedAt", got.CreatedAt, want.CreatedAt)
	add(&d, "CreatedIP", got.CreatedIP, want.CreatedIP)
	add(&d, "EABKeyID", got.EABKeyID, want.EABKeyID)
	d.report(t, what)
}

// checkOrder compares every field of two orders.
func checkOrder(t *testing.T, what string, got, want *acme.Order) {
	t.Helper()
	var d diffs
	add(&d, "ID", got.ID, want.ID)
	add(&d, "AccountID", got.AccountID, want.AccountID)
	add(&d, "Status", got.Status, want.Status)
	addSlice(&d, "Identifiers", got.Identifiers, want.Identifiers)
	addSlice(&d, "AuthzIDs", got.AuthzIDs, want.AuthzIDs)
	d.addTime("NotBefore", got.NotBefore, want.NotBefore)
	d.addTime("NotAfter", got.NotAfter, want.NotAfter)
	d.addTime("Expires", got.Expires, want.Expires)
	d.addProblem("Error", got.Error, want.Error)
	add(&d, "CertSerial", got.CertSerial, want.CertSerial)
	d.addTime("CreatedAt", got.CreatedAt, want.CreatedAt)
	add(&d, "Replaces", got.Replaces, want.Replaces)
	add(&d, "Profile", got.Profile, want.Profile)
	d.report(t, what)
}

// checkChallenge compares every field of two challenges.
func checkChallenge(t *testing.T, what string, got, want *acme.Challenge) {
	t.Helper()
	var d diffs
	add(&d, "ID", got.ID, want.ID)
	add(&d, "AuthzID", got.AuthzID, want.AuthzID)
	add(&d, "Type", got.Type, want.Type)
	add(&d, "Token", got.Token, want.Token)
	add(&d, "Status", got.Status, want.Status)
	d.addTime("Validated", got.Validated, want.Validated)
	d.addProblem("Error", got.Error, want.Error)
	d.addTime("UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	d.report(t, what)
}

// checkAuthz compares every field of two authorizations and their
// challenges, in order.
func checkAuthz(t *testing.T, what string, got, want *acme.Authorization) {
	t.Helper()
	var d diffs
	add(&d, "ID", got.ID, want.ID)
	add(&d, "AccountID", got.AccountID, want.AccountID)
	add(&d, "Identifier", got.Identifier, want.Identifier)
	add(&d, "Wildcard", got.Wildcard, want.Wildcard)
	add(&d, "Status", got.Status, want.Status)
	d.addTime("Expires", got.Expires, want.Expires)
	d.addTime("CreatedAt", got.CreatedAt, want.CreatedAt)
	d.report(t, what)
	if len(got.Challenges) != len(want.Challenges) {
		t.Errorf("%s: got %d challenges, want %d", what, len(got.Challenges), len(want.Challenges))
		return
	}
	for i := range got.Challenges {
		checkChallenge(t, fmt.Sprintf("%s: challenge %d", what, i), got.Challenges[i], want.Challenges[i])
	}
}

// checkCert compares every field of two certificates.
func checkCert(t *testing.T, what string, got, want *acme.Certificate) {
	t.Helper()
	var d diffs
	add(&d, "Serial", got.Serial, want.Serial)
	add(&d, "AccountID", got.AccountID, want.AccountID)
	add(&d, "OrderID", got.OrderID, want.OrderID)
	add(&d, "DER", string(got.DER), string(want.DER))
	add(&d, "ChainPEM", string(got.ChainPEM), string(want.ChainPEM))
	addSlice(&d, "Names", got.Names, want.Names)
	d.addTime("NotBefore", got.NotBefore, want.NotBefore)
	d.addTime("NotAfter", got.NotAfter, want.NotAfter)
	d.addTime("IssuedAt", got.IssuedAt, want.IssuedAt)
	d.addTime("RevokedAt", got.RevokedAt, want.RevokedAt)
	add(&d, "RevocationReason", got.RevocationReason, want.RevocationReason)
	add(&d, "Profile", got.Profile, want.Profile)
	wantIssuer := want.Issuer
	if wantIssuer == "" {
		wantIssuer = acme.DefaultIssuer
	}
	add(&d, "Issuer", got.Issuer, wantIssuer)
	add(&d, "CRLShard", got.CRLShard, want.CRLShard)
	d.addTime("RenewalStart", got.RenewalStart, want.RenewalStart)
	d.addTime("RenewalEnd", got.RenewalEnd, want.RenewalEnd)
	d.addValidations(got.Validations, want.Validations)
	d.report(t, what)
}

// addValidations records the differences of two certificates'
// validations: nil (unknown) differs from an empty list, and each
// record's time is compared by time.Equal.
func (d *diffs) addValidations(got, want []acme.NameValidation) {
	if (got == nil) != (want == nil) || len(got) != len(want) {
		*d = append(*d, fmt.Sprintf("Validations: got %+v, want %+v", got, want))
		return
	}
	for i, g := range got {
		w := want[i]
		d.addTime(fmt.Sprintf("Validations[%d].ValidatedAt", i), g.ValidatedAt, w.ValidatedAt)
		g.ValidatedAt, w.ValidatedAt = time.Time{}, time.Time{}
		add(d, fmt.Sprintf("Validations[%d]", i), g, w)
	}
}
