// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
)

// refusalLog is an Observer that keeps the tenant refusals.
type refusalLog struct {
	acme.NopObserver
	mu   sync.Mutex
	seen []acme.TenantRefusal
}

func (r *refusalLog) TenantRefused(x acme.TenantRefusal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, x)
}

// actions lists the action of each refusal of rule, in order.
func (r *refusalLog) actions(rule string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, x := range r.seen {
		if x.Rule == rule {
			out = append(out, x.Action)
		}
	}
	return out
}

// challengeChange narrows what may validate an authorization after it
// offered http-01.
type challengeChange struct {
	name string
	// tenant is the account's tenant; nil: the default tenant.
	tenant *acme.Tenant
	// change makes the change and returns the Service that serves after
	// it: before itself, or a replica started with other switches.
	change func(t *testing.T, before *acme.Service, st acme.Store, obs acme.Observer, now func() time.Time) *acme.Service
	// want is the refusal's detail; "" when http-01 is still allowed.
	want string
	// rule is whether the refusals are the tenant's (challenge-types).
	rule bool
}

func challengeChanges() []challengeChange {
	tenant := acme.Tenant{Name: "tc", AllowedNames: []string{".tc.example"}}
	narrow := func(types ...acme.ChallengeType) func(*testing.T, *acme.Service, acme.Store, acme.Observer, func() time.Time) *acme.Service {
		return func(t *testing.T, before *acme.Service, _ acme.Store, _ acme.Observer, _ func() time.Time) *acme.Service {
			n := tenant
			n.ChallengeTypes = types
			if _, err := before.UpdateTenant(t.Context(), n); err != nil {
				t.Fatal(err)
			}
			return before
		}
	}
	return []challengeChange{
		{name: "tenant narrowed to dns-01", tenant: &tenant, change: narrow(acme.ChallengeDNS01),
			want: `challenge type http-01 is no longer allowed for tenant "tc" (its challenge-types: dns-01)`, rule: true},
		{name: "tenant narrowed, http-01 kept", tenant: &tenant, change: narrow(acme.ChallengeDNS01, acme.ChallengeHTTP01)},
		{name: "the server's http-01 switched off (restart)",
			change: func(t *testing.T, _ *acme.Service, st acme.Store, obs acme.Observer, now func() time.Time) *acme.Service {
				return newService(t, acme.Config{Owner: "restarted", ValidationWorkers: 1, ValidationTimeout: 10 * time.Second,
					ClaimInterval: 5 * time.Millisecond, ChallengeWait: -1, Challenges: []acme.ChallengeType{acme.ChallengeDNS01, acme.ChallengeTLSALPN01}},
					acme.Deps{Store: st, Validator: &recorder{}, Observer: obs, Now: now})
			},
			want: "challenge type http-01 is no longer enabled on this server (it offers dns-01, tls-alpn-01)"},
	}
}

// TestChallengeTypeNoLongerAllowed: an authorization offered http-01,
// then the account's tenant, or the server's switches, stop allowing it.
// The rules in force decide everywhere the authorization is used:
// answering its http-01 challenge is refused (403 unauthorized naming the
// rule, nothing written); a validation queued before the change is not
// run and fails with that problem; an order whose authorization http-01
// made valid is refused at finalize and becomes invalid, with nothing
// issued; a new order does not reuse that authorization. A tenant's
// refusals are reported by rule. A change that keeps http-01 refuses
// nothing.
func TestChallengeTypeNoLongerAllowed(t *testing.T) {
	for _, tc := range challengeChanges() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			f := newRuleFixture(t, "before", tc.tenant)
			st, clock, obs, rec, before, c := f.st, f.clock, f.obs, f.rec, f.svc, f.c
			httpOf := func(o *acme.Order) (*acme.Authorization, *acme.Challenge) {
				t.Helper()
				return http01Of(t, st, o.AuthzIDs[0])
			}
			order := func(svc *acme.Service, name string) *acme.Order {
				t.Helper()
				o, err := svc.NewOrder(ctx, c, acme.NewOrderRequest{Identifiers: dnsIdents(name)})
				if err != nil {
					t.Fatalf("new-order for %s: %v", name, err)
				}
				return o
			}
			pending := order(before, "p.tc.example")
			queued := order(before, "q.tc.example")
			_, qch := httpOf(queued)
			if ch, _, err := before.RespondChallenge(ctx, c, qch.ID); err != nil || ch.Status != acme.StatusProcessing {
				t.Fatalf("answering http-01 before the change: %+v, %v; want processing", ch, err)
			}
			ready := order(before, "v.tc.example")
			va, vch := httpOf(ready)
			vch.Status, vch.Validated = acme.StatusValid, clock.now()
			va.Status, va.Expires = acme.StatusValid, clock.now().Add(30*24*time.Hour)
			if err := st.UpdateAuthz(ctx, va, acme.StatusPending); err != nil {
				t.Fatal(err)
			}

			after := tc.change(t, before, st, obs, clock.now)

			// Answering the pending authorization's http-01.
			_, pch := httpOf(pending)
			_, _, err := after.RespondChallenge(ctx, c, pch.ID)
			wantRefusal(t, "answering http-01", err, tc.want)
			if stored, err := st.GetChallenge(ctx, pch.ID); err != nil || tc.want != "" && stored.Status != acme.StatusPending {
				t.Errorf("the refused challenge: %+v, %v; want still pending", stored, err)
			}

			// The validation queued before the change.
			clock.advance(after.Config().ValidationLease)
			start(t, after)
			var done *acme.Challenge
			waitFor(t, "the queued validation", func() bool {
				if done, err = st.GetChallenge(ctx, qch.ID); err != nil {
					t.Fatal(err)
				}
				return done.Status != acme.StatusProcessing
			})
			if tc.want == "" {
				if done.Status != acme.StatusValid {
					t.Errorf("the queued validation: %s, %v; want valid", done.Status, done.Error)
				}
			} else {
				if done.Status != acme.StatusInvalid || done.Error == nil || done.Error.Type != acme.ProbUnauthorized || !strings.Contains(done.Error.Detail, tc.want) {
					t.Errorf("the queued validation: %s, %v; want invalid, unauthorized: %s", done.Status, done.Error, tc.want)
				}
				if s := authzStatus(t, st, queued.AuthzIDs[0]); s != acme.StatusInvalid {
					t.Errorf("its authorization: %s, want invalid", s)
				}
				if slices.Contains(rec.seen(), qch.Token) {
					t.Error("the validator ran for the refused challenge")
				}
			}

			// Finalizing the order its http-01 made ready.
			got, err := after.Finalize(ctx, c, ready.ID, challengeCSR(t, "v.tc.example"))
			if tc.want == "" {
				if err != nil || got.Status != acme.StatusValid {
					t.Errorf("finalize: %+v, %v; want valid", got, err)
				}
			} else {
				wantRefusal(t, "finalize", err, `the authorization of "v.tc.example" was fulfilled by http-01, and `+tc.want)
				if s := orderStatus(t, st, ready.ID); s != acme.StatusInvalid {
					t.Errorf("the refused order: %s, want invalid", s)
				}
				if n := certificatesOf(t, st, c.Account.ID); n != 0 {
					t.Errorf("%d certificates issued, want none", n)
				}
			}

			// A new order for the name: the valid authorization is reused
			// only while http-01 may still validate it.
			again := order(after, "v.tc.example")
			reused := again.AuthzIDs[0] == va.ID
			if reused != (tc.want == "") {
				t.Errorf("a new order reused the authorization http-01 made valid: %v, want %v", reused, tc.want == "")
			}
			if !reused {
				a, err := st.GetAuthz(ctx, again.AuthzIDs[0])
				if err != nil {
					t.Fatal(err)
				}
				for _, ch := range a.Challenges {
					if ch.Type == acme.ChallengeHTTP01 {
						t.Errorf("the new authorization offers http-01")
					}
				}
			}

			var want []string
			if tc.rule {
				want = []string{"challenge", "challenge", "finalize"}
			}
			if got := obs.actions(acme.TenantRuleChallengeTypes); !slices.Equal(got, want) {
				t.Errorf("challenge-types refusals reported for %v, want %v", got, want)
			}
		})
	}
}

// ruleFixture is a Service on a store of its own, with a fake clock, an
// observer keeping the tenant refusals, a validator that passes and
// records, and an account (of tenant, when set).
type ruleFixture struct {
	st    acme.Store
	clock *fakeClock
	obs   *refusalLog
	rec   *recorder
	svc   *acme.Service
	c     acme.Caller
}

func newRuleFixture(t *testing.T, owner string, tenant *acme.Tenant) ruleFixture {
	f := ruleFixture{st: openSQLite(t), clock: newFakeClock(), obs: &refusalLog{}, rec: &recorder{}}
	f.svc = newService(t, acme.Config{Owner: owner, ValidationWorkers: 1, ValidationTimeout: 10 * time.Second,
		ClaimInterval: 5 * time.Millisecond, ChallengeWait: -1}, acme.Deps{Store: f.st, Validator: f.rec, Observer: f.obs, Now: f.clock.now})
	f.c = challengeAccount(t, f.svc, f.st, tenant, f.clock.now())
	return f
}

// http01Of returns authorization id as stored and its http-01 challenge.
func http01Of(t *testing.T, st acme.Store, id acme.AuthzID) (*acme.Authorization, *acme.Challenge) {
	t.Helper()
	a, err := st.GetAuthz(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range a.Challenges {
		if ch.Type == acme.ChallengeHTTP01 {
			return a, ch
		}
	}
	t.Fatalf("authorization of %s offers no http-01", a.Identifier.Value)
	return nil, nil
}

// wantRefusal checks that err is the unauthorized problem (403) whose
// detail holds want, or nil when want is "".
func wantRefusal(t *testing.T, what string, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s: %v; want no refusal", what, err)
		}
		return
	}
	p := acme.AsProblem(err)
	if p == nil || p.Type != acme.ProbUnauthorized || p.Status != 403 || !strings.Contains(p.Detail, want) {
		t.Errorf("%s: %v; want 403 unauthorized: %s", what, err, want)
	}
}

// challengeAccount stores a valid account: of tenant, created through
// svc with an EAB key of it, when tenant is set.
func challengeAccount(t *testing.T, svc *acme.Service, st acme.Store, tenant *acme.Tenant, now time.Time) acme.Caller {
	t.Helper()
	if tenant == nil {
		return newAccount(t, st, now)
	}
	if _, err := svc.CreateTenant(t.Context(), *tenant); err != nil {
		t.Fatal(err)
	}
	key := &acme.EABKey{ID: "kid-" + rand.Text(), Label: tenant.Name, Tenant: tenant.Name, HMACKey: []byte("k"), CreatedAt: now}
	if err := st.(acme.EABStore).CreateEABKey(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	acct := &acme.Account{Key: []byte(`{"kty":"EC"}`), KeyThumbprint: acme.Thumbprint("thumb-" + rand.Text()), Status: acme.StatusValid,
		CreatedAt: now, EABKeyID: key.ID}
	if err := st.CreateAccount(t.Context(), acct); err != nil {
		t.Fatal(err)
	}
	return acme.Caller{Account: acct}
}

// challengeCSR is a CSR for the DNS names with a new key.
func challengeCSR(t *testing.T, names ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{DNSNames: names}, key)
	if err != nil {
		t.Fatal(err)
	}
	return csr
}
