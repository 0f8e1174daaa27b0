// SPDX-License-Identifier: Apache-2.0

package acme_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weir-pki/weir/acme"
	"github.com/weir-pki/weir/acme/transparency"
)

// issuedLog is an Auditor that keeps the certificates of the issuances.
type issuedLog struct {
	acme.NopAuditor
	mu    sync.Mutex
	certs []*acme.Certificate
}

func (l *issuedLog) Issued(_ context.Context, c *acme.Certificate, _ *acme.Order, _ acme.Actor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.certs = append(l.certs, c)
}

func (l *issuedLog) last() *acme.Certificate {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.certs) == 0 {
		return nil
	}
	return l.certs[len(l.certs)-1]
}

// TestIssuanceRecordsValidations: a certificate records how each of its
// names was validated, in the audit record and in the store with it: a
// name under the tenant's delegated zone by the zone, a name by the
// challenge its new authorization was validated with, when, and a name
// by the authorization an earlier order validated, marked reused. A
// finalization a replica takes over records the same.
func TestIssuanceRecordsValidations(t *testing.T) {
	for _, takeover := range []bool{false, true} {
		name := "finalize"
		if takeover {
			name = "taken over"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := openSQLite(t)
			clock := newFakeClock()
			audit := &issuedLog{}
			svc := newService(t, acme.Config{Owner: "a", ValidationWorkers: 1, ValidationTimeout: 10 * time.Second,
				ClaimInterval: 5 * time.Millisecond, ChallengeWait: -1, Log: true}, acme.Deps{Store: st, Validator: &recorder{}, Audit: audit, Now: clock.now})
			c := challengeAccount(t, svc, st, &acme.Tenant{Name: "t", AllowedNames: []string{".t.example"},
				DelegatedZones: []string{".auto.t.example"}}, clock.now())
			order := func(names ...string) *acme.Order {
				t.Helper()
				o, err := svc.NewOrder(ctx, c, acme.NewOrderRequest{Identifiers: dnsIdents(names...)})
				if err != nil {
					t.Fatalf("new-order for %v: %v", names, err)
				}
				return o
			}
			authz := func(id acme.AuthzID) *acme.Authorization {
				t.Helper()
				a, err := st.GetAuthz(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			// answer answers the challenge of type typ of authorization id.
			answer := func(id acme.AuthzID, typ acme.ChallengeType) {
				t.Helper()
				for _, ch := range authz(id).Challenges {
					if ch.Type == typ {
						if _, _, err := svc.RespondChallenge(ctx, c, ch.ID); err != nil {
							t.Fatal(err)
						}
					}
				}
			}

			// An earlier order's authorization, validated by http-01.
			earlierAt := clock.now()
			earlier := seedValidAuthz(t, st, c, earlierAt, "r.t.example")

			clock.advance(time.Hour)
			o := order("d.auto.t.example", "f.t.example", "r.t.example")
			if o.AuthzIDs[2] != earlier {
				t.Fatalf("the order did not reuse the earlier order's authorization")
			}
			answer(o.AuthzIDs[1], acme.ChallengeDNS01)
			freshAt := clock.now()
			start(t, svc)
			waitFor(t, "the validation", func() bool { return authz(o.AuthzIDs[1]).Status == acme.StatusValid })
			csr := challengeCSR(t, "d.auto.t.example", "f.t.example", "r.t.example")
			if takeover {
				// A replica moved it to processing and stopped: svc takes
				// the finalization over once its lease ends.
				if err := st.StartFinalize(ctx, o.ID, "gone", csr, clock.now(), time.Minute); err != nil {
					t.Fatal(err)
				}
				clock.advance(2 * time.Minute)
				// The take-over runs in the background and audits the
				// issuance after storing it: wait for both.
				waitFor(t, "the take-over", func() bool {
					return orderStatus(t, st, o.ID) == acme.StatusValid && audit.last() != nil
				})
			} else if _, err := svc.Finalize(ctx, c, o.ID, csr); err != nil {
				t.Fatalf("finalize: %v", err)
			}

			want := []acme.NameValidation{
				{Name: "d.auto.t.example", Method: "delegated-zone:.auto.t.example", AuthzID: o.AuthzIDs[0], ValidatedAt: o.CreatedAt},
				{Name: "f.t.example", Method: "dns-01", AuthzID: o.AuthzIDs[1], ValidatedAt: freshAt},
				{Name: "r.t.example", Method: "http-01", AuthzID: earlier, ValidatedAt: earlierAt, Reused: true},
			}
			stored, err := st.GetOrder(ctx, o.ID)
			if err != nil {
				t.Fatal(err)
			}
			cert, err := st.GetCertificate(ctx, stored.CertSerial)
			if err != nil {
				t.Fatal(err)
			}
			checkValidations(t, "the stored certificate", cert.Validations, want)
			if a := audit.last(); a == nil || a.Serial != cert.Serial {
				t.Fatalf("audited %+v, want the issuance of %s", a, cert.Serial)
			} else {
				checkValidations(t, "the audit record", a.Validations, want)
			}
			actor := transparency.Actor{Kind: "account", ID: string(c.Account.ID)}
			if takeover {
				actor = transparency.Actor{Kind: "system", ID: "a"}
			}
			checkLogged(t, st, cert, o, "t", want, actor)
		})
	}
}

// checkValidations compares validations, their times by time.Equal.
func checkValidations(t *testing.T, what string, got, want []acme.NameValidation) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: validations %+v, want %+v", what, got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.ValidatedAt.Equal(w.ValidatedAt) {
			t.Errorf("%s: %s validated at %v, want %v", what, g.Name, g.ValidatedAt, w.ValidatedAt)
		}
		g.ValidatedAt, w.ValidatedAt = time.Time{}, time.Time{}
		if g != w {
			t.Errorf("%s: validation %+v, want %+v", what, g, w)
		}
	}
}
