// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// The CA's rules (naming policy, profiles) can change by a live reload
// while an order waits to be finalized; finalize, and the take-over of an
// interrupted finalization, admit the order again under the rules in
// force then.

// rules is what a reload swaps: the naming policy and the profiles.
type rules struct {
	policy   acme.PolicyConfig
	def      string
	profiles map[string]acme.ProfileConfig
}

// apply installs r on svc, as package server's reload does.
func (r rules) apply(t *testing.T, svc *acme.Service) {
	t.Helper()
	p, err := acme.NewPolicy(r.policy)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := acme.NewProfiles(r.def, r.profiles, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	svc.SetLive(acme.Live{Policy: p, Profiles: ps})
}

// orderSpec is the order a case finalizes.
type orderSpec struct {
	names    []string // DNS names or IP addresses
	profile  string
	notAfter time.Duration // from now; 0 asks for none
}

// seedOrder stores a valid account and a ready order of it as spec says
// (its authorizations already valid), and returns a CSR for its names.
func seedOrder(t *testing.T, st acme.Store, now time.Time, spec orderSpec) (acme.Caller, *acme.Order, []byte) {
	t.Helper()
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: acme.Thumbprint("thumb-" + rand.Text()), Status: acme.StatusValid, CreatedAt: now}
	if err := st.CreateAccount(t.Context(), acct); err != nil {
		t.Fatal(err)
	}
	o := &acme.Order{ID: acme.OrderID("order-" + rand.Text()), AccountID: acct.ID, Status: acme.StatusPending,
		Expires: now.Add(24 * time.Hour), CreatedAt: now, Profile: spec.profile}
	if spec.notAfter != 0 {
		o.NotAfter = now.Add(spec.notAfter)
	}
	tmpl := &x509.CertificateRequest{}
	var authzs []*acme.Authorization
	for i, n := range spec.names {
		id := acme.Identifier{Type: acme.IdentifierDNS, Value: n}
		if ip := net.ParseIP(n); ip != nil {
			id.Type = acme.IdentifierIP
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
		a := &acme.Authorization{ID: acme.AuthzID(fmt.Sprintf("authz-%d-%s", i, rand.Text())), AccountID: acct.ID, Identifier: id,
			Status: acme.StatusValid, Expires: now.Add(24 * time.Hour), CreatedAt: now}
		a.Challenges = []*acme.Challenge{{ID: acme.ChallengeID(fmt.Sprintf("chall-%d-%s", i, rand.Text())), AuthzID: a.ID,
			Type: acme.ChallengeHTTP01, Token: rand.Text(), Status: acme.StatusValid, Validated: now, UpdatedAt: now}}
		o.Identifiers = append(o.Identifiers, id)
		o.AuthzIDs = append(o.AuthzIDs, a.ID)
		authzs = append(authzs, a)
	}
	if err := st.CreateOrder(t.Context(), o, authzs); err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	return acme.Caller{Account: acct}, o, csr
}

// finalizeSpends counts the finalize spends of the limiter.
type finalizeSpends struct {
	acme.NoLimits
	n atomic.Int64
}

func (f *finalizeSpends) Finalize(context.Context, *acme.Account, *acme.Order) (func(), error) {
	f.n.Add(1)
	return func() { f.n.Add(-1) }, nil
}

// certificatesOf counts the certificates stored for an account.
func certificatesOf(t *testing.T, st acme.Store, accountID acme.AccountID) int {
	t.Helper()
	certs, _, err := st.(acme.Inventory).ListCertificates(t.Context(), acme.CertQuery{AccountID: accountID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return len(certs)
}

// policyChange is a change of the rules that no longer admits an order
// the rules before admitted.
type policyChange struct {
	name          string
	order         orderSpec
	before, after rules
	wantType      acme.ProblemType
	wantSubs      int // subproblems, one per refused identifier when several
}

func policyChanges() []policyChange {
	day := 24 * time.Hour
	dnsOnly := map[string]acme.ProfileConfig{"p": {IdentifierTypes: []acme.IdentifierType{acme.IdentifierDNS}}}
	ipOnly := map[string]acme.ProfileConfig{"p": {IdentifierTypes: []acme.IdentifierType{acme.IdentifierIP}}}
	threeDays, oneDay := 3*day, day
	return []policyChange{
		{name: "denied-domains", order: orderSpec{names: []string{"www.example.com"}},
			after: rules{policy: acme.PolicyConfig{DeniedDomains: []string{"example.com"}}}, wantType: acme.ProbRejectedIdentifier},
		{name: "denied-domains, two names", order: orderSpec{names: []string{"a.example.com", "b.example.com"}},
			after:    rules{policy: acme.PolicyConfig{DeniedDomains: []string{"example.com"}}},
			wantType: acme.ProbRejectedIdentifier, wantSubs: 2},
		{name: "allowed-domains", order: orderSpec{names: []string{"www.example.com"}},
			after: rules{policy: acme.PolicyConfig{AllowedDomains: []string{"example.org"}}}, wantType: acme.ProbRejectedIdentifier},
		{name: "allowed-ip-ranges", order: orderSpec{names: []string{"127.0.0.1"}},
			before:   rules{policy: acme.PolicyConfig{AllowedIPRanges: []string{"127.0.0.0/8"}}},
			after:    rules{policy: acme.PolicyConfig{AllowedIPRanges: []string{"10.0.0.0/8"}}},
			wantType: acme.ProbRejectedIdentifier},
		{name: "profile identifier-types", order: orderSpec{names: []string{"www.example.com"}, profile: "p"},
			before: rules{def: "p", profiles: dnsOnly}, after: rules{def: "p", profiles: ipOnly}, wantType: acme.ProbRejectedIdentifier},
		{name: "profile withdrawn", order: orderSpec{names: []string{"www.example.com"}, profile: "p"},
			before:   rules{def: "p", profiles: map[string]acme.ProfileConfig{"p": {}, "q": {}}},
			after:    rules{def: "q", profiles: map[string]acme.ProfileConfig{"q": {}}},
			wantType: acme.ProbInvalidProfile},
		{name: "profile certificate-lifetime", order: orderSpec{names: []string{"www.example.com"}, profile: "p", notAfter: 2 * day},
			before:   rules{def: "p", profiles: map[string]acme.ProfileConfig{"p": {CertificateLifetime: &threeDays}}},
			after:    rules{def: "p", profiles: map[string]acme.ProfileConfig{"p": {CertificateLifetime: &oneDay}}},
			wantType: acme.ProbMalformed},
	}
}

// TestFinalizeReadmitsOrder: an order made ready under one set of rules
// is issued while they hold; once a reload no longer admits it, its
// finalize gets the problem new-order would give (400), nothing is spent
// or issued, and the order is invalid with that problem.
func TestFinalizeReadmitsOrder(t *testing.T) {
	for _, tc := range policyChanges() {
		t.Run(tc.name, func(t *testing.T) {
			st := openSQLite(t)
			clock := newFakeClock()
			spends := &finalizeSpends{}
			svc := limitedReplica(t, st, "replica-a", clock.now, &recorder{}, spends)
			tc.before.apply(t, svc)
			caller, o, csr := seedOrder(t, st, clock.now(), tc.order)
			if got, err := svc.Finalize(t.Context(), caller, o.ID, csr); err != nil || got.Status != acme.StatusValid {
				t.Fatalf("finalize under the rules before: %+v, %v; want a valid order", got, err)
			}

			caller, o, csr = seedOrder(t, st, clock.now(), tc.order)
			tc.after.apply(t, svc)
			spent := spends.n.Load()
			_, err := svc.Finalize(t.Context(), caller, o.ID, csr)
			p := acme.AsProblem(err)
			if p == nil || p.Type != tc.wantType || p.Status != 400 || len(p.Subproblems) != tc.wantSubs {
				t.Fatalf("finalize after the change: %v, want %s, 400, %d subproblems", err, tc.wantType, tc.wantSubs)
			}
			if n := spends.n.Load(); n != spent {
				t.Errorf("finalize spends: %d after the refused finalize, want %d as before it", n, spent)
			}
			if n := certificatesOf(t, st, caller.Account.ID); n != 0 {
				t.Errorf("%d certificates stored for the refused order's account, want 0", n)
			}
			stored, err := st.GetOrder(t.Context(), o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != acme.StatusInvalid || stored.Error == nil || stored.Error.Type != tc.wantType {
				t.Errorf("the order after the refused finalize: %s, error %v; want invalid with %s", stored.Status, stored.Error, tc.wantType)
			}
			_, err = svc.Finalize(t.Context(), caller, o.ID, csr)
			if p := acme.AsProblem(err); p == nil || p.Type != acme.ProbOrderNotReady {
				t.Errorf("a second finalize: %v, want orderNotReady", err)
			}
		})
	}
}

// TestFinalizeTakeoverReadmitsOrder: replica A moves a ready order to
// processing and dies before storing the certificate; the rules change
// while its lease lives. Replica B, taking the finalization over once the
// lease ends, issues nothing and makes the order invalid with the
// problem new-order would give.
func TestFinalizeTakeoverReadmitsOrder(t *testing.T) {
	for _, tc := range policyChanges() {
		t.Run(tc.name, func(t *testing.T) {
			st := openSQLite(t)
			clock := newFakeClock()
			b := replica(t, st, "replica-b", clock.now, &recorder{})
			tc.before.apply(t, b)
			caller, o, csr := seedOrder(t, st, clock.now(), tc.order)
			lease := b.Config().ValidationLease
			if err := st.StartFinalize(t.Context(), o.ID, "replica-a", csr, clock.now(), lease); err != nil {
				t.Fatalf("StartFinalize as A: %v", err)
			}
			tc.after.apply(t, b)
			start(t, b)
			clock.advance(lease) // A's lease ends now
			waitFor(t, "B to settle the order A left", func() bool { return orderStatus(t, st, o.ID) != acme.StatusProcessing })
			stored, err := st.GetOrder(t.Context(), o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != acme.StatusInvalid || stored.Error == nil || stored.Error.Type != tc.wantType ||
				!strings.Contains(stored.Error.Detail, "create a new order") {
				t.Errorf("the order B took over: %s, error %v; want invalid with %s", stored.Status, stored.Error, tc.wantType)
			}
			if n := certificatesOf(t, st, caller.Account.ID); n != 0 {
				t.Errorf("B stored %d certificates for the order, want 0", n)
			}
		})
	}
}
