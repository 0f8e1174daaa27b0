// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// Service.NewOrder against a real store (RFC 8555 §7.4): what it stores,
// reuses and refuses.

// newAccount stores a valid account.
func newAccount(t *testing.T, st acme.Store, now time.Time) acme.Caller {
	t.Helper()
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: acme.Thumbprint("thumb-" + rand.Text()), Status: acme.StatusValid, CreatedAt: now}
	if err := st.CreateAccount(t.Context(), acct); err != nil {
		t.Fatal(err)
	}
	return acme.Caller{Account: acct}
}

// seedValidAuthz stores a valid authorization of the caller for the DNS
// name (a "*." name is a wildcard one), validated by http-01 (dns-01 for
// a wildcard), and returns its ID.
func seedValidAuthz(t *testing.T, st acme.Store, c acme.Caller, now time.Time, name string) acme.AuthzID {
	t.Helper()
	id := acme.Identifier{Type: acme.IdentifierDNS, Value: name}
	base, wildcard := id.SplitWildcard()
	a := &acme.Authorization{ID: acme.AuthzID("authz-" + rand.Text()), AccountID: c.Account.ID, Identifier: base, Wildcard: wildcard,
		Status: acme.StatusValid, Expires: now.Add(30 * 24 * time.Hour), CreatedAt: now}
	method := acme.ChallengeHTTP01
	if wildcard {
		method = acme.ChallengeDNS01 // RFC 8555 §7.1.3
	}
	a.Challenges = []*acme.Challenge{{ID: acme.ChallengeID("chall-" + rand.Text()), AuthzID: a.ID, Type: method,
		Token: rand.Text(), Status: acme.StatusValid, Validated: now, UpdatedAt: now}}
	o := &acme.Order{ID: acme.OrderID("order-" + rand.Text()), AccountID: c.Account.ID, Status: acme.StatusPending,
		Identifiers: []acme.Identifier{id}, AuthzIDs: []acme.AuthzID{a.ID}, Expires: now.Add(24 * time.Hour), CreatedAt: now}
	if err := st.CreateOrder(t.Context(), o, []*acme.Authorization{a}); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func dnsIdents(names ...string) []acme.Identifier {
	out := make([]acme.Identifier, len(names))
	for i, n := range names {
		out[i] = acme.Identifier{Type: acme.IdentifierDNS, Value: n}
	}
	return out
}

// manyNames returns n DNS names under example.com.
func manyNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("n%d.example.com", i)
	}
	return out
}

// denyDomain sets a naming policy that denies the names under domain.
func denyDomain(t *testing.T, svc *acme.Service, domain string) {
	t.Helper()
	p, err := acme.NewPolicy(acme.PolicyConfig{DeniedDomains: []string{domain}})
	if err != nil {
		t.Fatal(err)
	}
	svc.SetLive(acme.Live{Policy: p})
}

// refusingLimits refuses every new order with a rateLimited problem.
type refusingLimits struct{ acme.NoLimits }

func (refusingLimits) NewOrder(context.Context, *acme.Account, *acme.Order, []*acme.Authorization) (func(), error) {
	return nil, acme.RateLimited(time.Minute, "", "order-creation limit exceeded")
}

// TestNewOrder: a new order stores the order and one pending
// authorization per identifier it cannot reuse, and is answered with
// the status its authorizations give it; a refused one is a precise
// problem, with nothing stored.
func TestNewOrder(t *testing.T) {
	twoHours := (2 * time.Hour).Truncate(time.Second)
	for _, tc := range []struct {
		name    string
		req     acme.NewOrderRequest
		reuse   []string // valid authorizations of the account before the order
		limits  acme.Limits
		wantErr acme.ProblemType
		// On success: the order's status, its identifiers in order, and
		// the challenge types of each new authorization by identifier.
		wantStatus acme.Status
		wantIDs    []string
		wantFresh  map[string][]acme.ChallengeType
	}{
		{name: "one name", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com")},
			wantStatus: acme.StatusPending, wantIDs: []string{"www.example.com"},
			wantFresh: map[string][]acme.ChallengeType{"www.example.com": {acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01}}},
		{name: "canonical and deduplicated", req: acme.NewOrderRequest{Identifiers: dnsIdents("WWW.Example.COM.", "www.example.com")},
			wantStatus: acme.StatusPending, wantIDs: []string{"www.example.com"},
			wantFresh: map[string][]acme.ChallengeType{"www.example.com": {acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01}}},
		{name: "a wildcard is authorized by dns-01 only", req: acme.NewOrderRequest{Identifiers: dnsIdents("*.example.com")},
			wantStatus: acme.StatusPending, wantIDs: []string{"*.example.com"},
			wantFresh: map[string][]acme.ChallengeType{"*.example.com": {acme.ChallengeDNS01}}},
		{name: "a valid authorization is reused", req: acme.NewOrderRequest{Identifiers: dnsIdents("a.example.com", "b.example.com")},
			reuse: []string{"a.example.com"}, wantStatus: acme.StatusPending, wantIDs: []string{"a.example.com", "b.example.com"},
			wantFresh: map[string][]acme.ChallengeType{"b.example.com": {acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01}}},
		{name: "every authorization reused: ready", req: acme.NewOrderRequest{Identifiers: dnsIdents("a.example.com", "*.a.example.com")},
			reuse: []string{"a.example.com", "*.a.example.com"}, wantStatus: acme.StatusReady, wantIDs: []string{"*.a.example.com", "a.example.com"}},
		{name: "a wildcard's authorization does not cover its base", req: acme.NewOrderRequest{Identifiers: dnsIdents("a.example.com")},
			reuse: []string{"*.a.example.com"}, wantStatus: acme.StatusPending, wantIDs: []string{"a.example.com"},
			wantFresh: map[string][]acme.ChallengeType{"a.example.com": {acme.ChallengeHTTP01, acme.ChallengeDNS01, acme.ChallengeTLSALPN01}}},

		{name: "no identifiers", req: acme.NewOrderRequest{}, wantErr: acme.ProbMalformed},
		{name: "over the identifier cap", req: acme.NewOrderRequest{Identifiers: dnsIdents(manyNames(101)...)}, wantErr: acme.ProbRejectedIdentifier},
		{name: "a malformed name", req: acme.NewOrderRequest{Identifiers: dnsIdents("bad_name.example.com")}, wantErr: acme.ProbMalformed},
		{name: "a denied name", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.denied.example")}, wantErr: acme.ProbRejectedIdentifier},
		{name: "an IP address the policy does not allow", req: acme.NewOrderRequest{Identifiers: []acme.Identifier{{Type: acme.IdentifierIP, Value: "127.0.0.1"}}},
			wantErr: acme.ProbRejectedIdentifier},
		{name: "a profile not offered", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"), Profile: "nope"}, wantErr: acme.ProbInvalidProfile},
		{name: "notAfter beyond the longest lifetime", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"),
			NotAfter: newFakeClock().now().Add(twoHours).Format(time.RFC3339)}, wantErr: acme.ProbMalformed},
		{name: "notBefore more than an hour ago", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"),
			NotBefore: newFakeClock().now().Add(-twoHours).Format(time.RFC3339)}, wantErr: acme.ProbMalformed},
		{name: "notAfter not a date", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com"), NotAfter: "tomorrow"}, wantErr: acme.ProbMalformed},
		{name: "rate limited", req: acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com")}, limits: refusingLimits{}, wantErr: acme.ProbRateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openSQLite(t)
			clock := newFakeClock()
			cs := &countingStore{st: st}
			svc := limitedReplica(t, cs, "replica-a", clock.now, &recorder{}, tc.limits)
			denyDomain(t, svc, "denied.example")
			c := newAccount(t, st, clock.now())
			reused := map[string]acme.AuthzID{}
			for _, n := range tc.reuse {
				reused[n] = seedValidAuthz(t, st, c, clock.now(), n)
			}
			_, writes := cs.count()
			o, err := svc.NewOrder(t.Context(), c, tc.req)
			if tc.wantErr != "" {
				p := acme.AsProblem(err)
				if p == nil || p.Type != tc.wantErr {
					t.Fatalf("NewOrder: %v, want %s", err, tc.wantErr)
				}
				if want := map[acme.ProblemType]int{acme.ProbRateLimited: 429}[tc.wantErr]; want == 0 && p.Status != 400 || want != 0 && p.Status != want {
					t.Errorf("status %d for %s", p.Status, p.Type)
				}
				if _, w := cs.count(); w != writes {
					t.Errorf("%d writes to the store for a refused order, want 0", w-writes)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewOrder: %v", err)
			}
			if o.Status != tc.wantStatus {
				t.Errorf("status %s, want %s", o.Status, tc.wantStatus)
			}
			if read, err := svc.GetOrder(t.Context(), c, o.ID); err != nil {
				t.Errorf("GetOrder: %v", err)
			} else if read.Status != o.Status {
				t.Errorf("GetOrder: status %s; new-order answered %s", read.Status, o.Status)
			}
			var got []string
			for _, id := range o.Identifiers {
				got = append(got, id.Value)
			}
			if !slices.Equal(got, tc.wantIDs) {
				t.Errorf("identifiers %v, want %v", got, tc.wantIDs)
			}
			if _, w := cs.count(); w != writes+1 {
				t.Errorf("%d writes to the store, want 1 (the order with its new authorizations)", w-writes)
			}
			stored, err := st.GetOrder(t.Context(), o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status != acme.StatusPending || !slices.Equal(stored.AuthzIDs, o.AuthzIDs) || len(o.AuthzIDs) != len(o.Identifiers) {
				t.Errorf("stored order %s with authorizations %v; answered %v for %d identifiers", stored.Status, stored.AuthzIDs, o.AuthzIDs, len(o.Identifiers))
			}
			fresh := map[string][]acme.ChallengeType{}
			for i, aid := range o.AuthzIDs {
				name := o.Identifiers[i].Value
				if id, ok := reused[name]; ok {
					if aid != id {
						t.Errorf("%s: authorization %s, want the valid %s reused", name, aid, id)
					}
					continue
				}
				a, err := st.GetAuthz(t.Context(), aid)
				if err != nil {
					t.Fatal(err)
				}
				if a.Status != acme.StatusPending || a.AccountID != c.Account.ID {
					t.Errorf("%s: new authorization %s of account %s, want pending of %s", name, a.Status, a.AccountID, c.Account.ID)
				}
				for _, ch := range a.Challenges {
					fresh[name] = append(fresh[name], ch.Type)
				}
			}
			if len(fresh) != len(tc.wantFresh) {
				t.Errorf("new authorizations %v, want %v", fresh, tc.wantFresh)
			}
			for name, want := range tc.wantFresh {
				if !slices.Equal(fresh[name], want) {
					t.Errorf("%s: challenges %v, want %v", name, fresh[name], want)
				}
			}
		})
	}
}

// failingCreate is a store whose CreateOrder fails.
type failingCreate struct{ countingStore }

func (f *failingCreate) CreateOrder(context.Context, *acme.Order, []*acme.Authorization) error {
	return errors.New("the disk is full")
}

// refundingLimits allows new orders and counts what is spent and not
// refunded.
type refundingLimits struct {
	acme.NoLimits
	spent int
}

func (r *refundingLimits) NewOrder(context.Context, *acme.Account, *acme.Order, []*acme.Authorization) (func(), error) {
	r.spent++
	return func() { r.spent-- }, nil
}

// TestNewOrderRefundsOnStoreFailure: an order the store fails to create
// gives back what it spent, and is a serverInternal problem.
func TestNewOrderRefundsOnStoreFailure(t *testing.T) {
	st := openSQLite(t)
	clock := newFakeClock()
	lim := &refundingLimits{}
	svc := limitedReplica(t, &failingCreate{countingStore{st: st}}, "replica-a", clock.now, &recorder{}, lim)
	c := newAccount(t, st, clock.now())
	_, err := svc.NewOrder(t.Context(), c, acme.NewOrderRequest{Identifiers: dnsIdents("www.example.com")})
	if p := acme.AsProblem(err); p == nil || p.Type != acme.ProbServerInternal {
		t.Fatalf("NewOrder: %v, want serverInternal", err)
	}
	if lim.spent != 0 {
		t.Errorf("%d spends left after the failed order, want 0 (refunded)", lim.spent)
	}
}
