// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/weir-pki/weir/acme"
)

// TestNameNoLongerAdmitted: an authorization is pending for a name, then
// the CA's naming policy (a live reload) or the account's tenant (an
// update) stops admitting the name. Answering its challenge is refused
// with new-order's problem for the name (rejectedIdentifier, the rule in
// the detail), nothing is written and the challenge stays pending; a
// validation queued before the change is not run (no connection is made
// for a name the CA no longer issues for) and fails with that problem. A
// name the change still admits is validated.
func TestNameNoLongerAdmitted(t *testing.T) {
	tenant := acme.Tenant{Name: "tn", AllowedNames: []string{".a.example", ".b.example"}}
	tests := []struct {
		name   string
		tenant *acme.Tenant
		change func(t *testing.T, svc *acme.Service)
		want   string // the refusal's detail, of the name
		rule   bool   // the refusals are the tenant's (allowed-names)
	}{
		{name: "ca.policy narrowed", change: func(t *testing.T, svc *acme.Service) {
			rules{policy: acme.PolicyConfig{AllowedDomains: []string{"a.example"}}}.apply(t, svc)
		}, want: `policy forbids issuing for %q: it is not under any of ca.policy.allowed-domains`},
		{name: "tenant names narrowed", tenant: &tenant, change: func(t *testing.T, svc *acme.Service) {
			n := tenant
			n.AllowedNames = []string{".a.example"}
			if _, err := svc.UpdateTenant(t.Context(), n); err != nil {
				t.Fatal(err)
			}
		}, want: `tenant "tn" forbids %q: it matches none of the tenant's allowed-names`, rule: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			f := newRuleFixture(t, "one", tc.tenant)
			st, obs, rec, svc, c := f.st, f.obs, f.rec, f.svc, f.c
			http01 := func(name string) *acme.Challenge {
				t.Helper()
				o, err := svc.NewOrder(ctx, c, acme.NewOrderRequest{Identifiers: dnsIdents(name)})
				if err != nil {
					t.Fatalf("new-order for %s: %v", name, err)
				}
				_, ch := http01Of(t, st, o.AuthzIDs[0])
				return ch
			}
			pending, queued, kept := http01("p.b.example"), http01("q.b.example"), http01("k.a.example")
			if ch, _, err := svc.RespondChallenge(ctx, c, queued.ID); err != nil || ch.Status != acme.StatusProcessing {
				t.Fatalf("answering q.b.example before the change: %+v, %v; want processing", ch, err)
			}

			tc.change(t, svc)

			_, _, err := svc.RespondChallenge(ctx, c, pending.ID)
			want := fmt.Sprintf(tc.want, "p.b.example")
			if p := acme.AsProblem(err); p == nil || p.Type != acme.ProbRejectedIdentifier || !strings.Contains(p.Detail, want) {
				t.Errorf("answering p.b.example after the change: %v; want rejectedIdentifier: %s", err, want)
			}
			if stored, err := st.GetChallenge(ctx, pending.ID); err != nil || stored.Status != acme.StatusPending {
				t.Errorf("the refused challenge: %+v, %v; want still pending", stored, err)
			}
			if _, _, err := svc.RespondChallenge(ctx, c, kept.ID); err != nil {
				t.Errorf("answering k.a.example, which the change keeps: %v", err)
			}

			start(t, svc)
			waitFor(t, "the validations", func() bool {
				for _, id := range []acme.ChallengeID{queued.ID, kept.ID} {
					ch, err := st.GetChallenge(ctx, id)
					if err != nil {
						t.Fatal(err)
					}
					if ch.Status == acme.StatusProcessing {
						return false
					}
				}
				return true
			})
			done, err := st.GetChallenge(ctx, queued.ID)
			if err != nil {
				t.Fatal(err)
			}
			want = fmt.Sprintf(tc.want, "q.b.example")
			if done.Status != acme.StatusInvalid || done.Error == nil || done.Error.Type != acme.ProbRejectedIdentifier || !strings.Contains(done.Error.Detail, want) {
				t.Errorf("the validation queued before the change: %s, %v; want invalid, rejectedIdentifier: %s", done.Status, done.Error, want)
			}
			if slices.Contains(rec.seen(), queued.Token) {
				t.Error("the validator ran for q.b.example, which the change no longer admits")
			}
			if ch, err := st.GetChallenge(ctx, kept.ID); err != nil || ch.Status != acme.StatusValid {
				t.Errorf("k.a.example's challenge: %+v, %v; want valid", ch, err)
			}

			var actions []string
			if tc.rule {
				actions = []string{"challenge", "challenge"}
			}
			if got := obs.actions(acme.TenantRuleAllowed); !slices.Equal(got, actions) {
				t.Errorf("allowed-names refusals reported for %v, want %v", got, actions)
			}
		})
	}
}
